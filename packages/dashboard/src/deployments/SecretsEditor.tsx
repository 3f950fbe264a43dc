import { type FormEvent, useEffect, useState } from "react";
import { useSession } from "../api/context";
import type { Secret } from "../api/types";
import { useAction } from "../hooks/useAction";
import { ErrorNote } from "../ui/ErrorNote";

/** The control plane answers every secret value as this, and keeps the stored value when it is sent back. */
const MASKED = "********";

interface Row {
  key: number;
  name: string;
  /** Empty: keep the stored value (sent back masked). */
  value: string;
  stored: boolean;
}

let nextKey = 0;
const rowsOf = (secrets: Secret[]): Row[] => secrets.map(({ name }) => ({ key: nextKey++, name, value: "", stored: true }));

/**
 * The deployment's secrets: names in the clear, values never shown (the API
 * does not answer them; new ones are typed into password fields). Saving
 * PATCHes the whole list, which makes a new revision.
 */
export function SecretsEditor({
  deploymentId,
  secrets,
  onSaved,
}: {
  deploymentId: string;
  secrets: Secret[];
  onSaved: () => void;
}) {
  const { api } = useSession();
  const [rows, setRows] = useState<Row[]>(() => rowsOf(secrets));
  const { run, busy, error, setError } = useAction();
  const [saved, setSaved] = useState<string>();
  const names = secrets.map((secret) => secret.name).join("\n");
  // biome-ignore lint/correctness/useExhaustiveDependencies: reset when the stored names change, not on every poll
  useEffect(() => setRows(rowsOf(secrets)), [names]);

  // An edit makes the last "saved" note stale.
  const edit = (change: (all: Row[]) => Row[]) => {
    setSaved(undefined);
    setRows(change);
  };
  const update = (key: number, change: Partial<Row>) =>
    edit((all) => all.map((row) => (row.key === key ? { ...row, ...change } : row)));

  const save = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    setSaved(undefined);
    const missing = rows.find((row) => !row.stored && (!row.name.trim() || !row.value));
    if (missing) {
      setError("A new secret needs a name and a value.");
      return;
    }
    await run(async () => {
      await api.patch(`v2/deployments/${deploymentId}`, {
        secrets: rows.map((row) => ({ name: row.name.trim(), value: row.value || MASKED })),
      });
      setSaved("Secrets saved: a new revision deploys them.");
      onSaved();
    });
  };

  return (
    <section aria-labelledby="secrets-title">
      <h2 id="secrets-title">Secrets</h2>
      <form onSubmit={save} className="secrets">
        {rows.length === 0 && <p>No secrets.</p>}
        {rows.map((row, index) => {
          const label = row.stored ? row.name : `new secret ${index + 1}`;
          return (
            <div className="secret-row" key={row.key}>
              {row.stored ? (
                <span className="secret-name">{row.name}</span>
              ) : (
                <input
                  aria-label={`Name of ${label}`}
                  value={row.name}
                  autoComplete="off"
                  onChange={(event) => update(row.key, { name: event.target.value })}
                />
              )}
              <input
                type="password"
                aria-label={`Value of ${label}`}
                autoComplete="new-password"
                placeholder={row.stored ? "unchanged" : "value"}
                value={row.value}
                onChange={(event) => update(row.key, { value: event.target.value })}
              />
              <button
                type="button"
                aria-label={`Remove ${label}`}
                onClick={() => edit((all) => all.filter((other) => other.key !== row.key))}
              >
                Remove
              </button>
            </div>
          );
        })}
        <div className="actions">
          <button type="button" onClick={() => edit((all) => [...all, { key: nextKey++, name: "", value: "", stored: false }])}>
            Add secret
          </button>
          <button type="submit" disabled={busy}>
            Save secrets
          </button>
        </div>
        <ErrorNote error={error} />
        {saved && <output>{saved}</output>}
      </form>
    </section>
  );
}
