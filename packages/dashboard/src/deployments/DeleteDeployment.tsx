import { useState } from "react";
import { useSession } from "../api/context";
import { useAction } from "../hooks/useAction";
import { hrefOf, navigate } from "../router";
import { ErrorNote } from "../ui/ErrorNote";

/** Delete, behind an in-page confirmation that names what goes away. */
export function DeleteDeployment({ deploymentId, name }: { deploymentId: string; name: string }) {
  const { api } = useSession();
  const [confirming, setConfirming] = useState(false);
  const { run, busy, error } = useAction();
  const remove = () =>
    run(async () => {
      await api.delete(`v2/deployments/${deploymentId}`);
      navigate(hrefOf.list());
    });

  return (
    <section aria-labelledby="delete-title" className="danger">
      <h2 id="delete-title">Delete</h2>
      {confirming ? (
        <div role="alertdialog" aria-labelledby="delete-question" className="confirm">
          <p id="delete-question">
            Delete <strong>{name}</strong>? Its server stops and its revisions, logs and secrets are removed.
          </p>
          <div className="actions">
            <button type="button" className="destructive" disabled={busy} onClick={remove}>
              Yes, delete {name}
            </button>
            {/* biome-ignore lint/a11y/noAutofocus: the safe choice takes the focus when the question opens */}
            <button type="button" autoFocus onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </div>
        </div>
      ) : (
        <button type="button" className="destructive" onClick={() => setConfirming(true)}>
          Delete deployment
        </button>
      )}
      <ErrorNote error={error} />
    </section>
  );
}
