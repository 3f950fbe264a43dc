import { type FormEvent, useRef, useState } from "react";
import { putTarball } from "../api/client";
import { useSession } from "../api/context";
import type { Deployment, UploadUrl } from "../api/types";
import { useAction } from "../hooks/useAction";
import { hrefOf, navigate } from "../router";
import { ErrorNote } from "../ui/ErrorNote";
import { CONFIG, type Packed, packFolder } from "./pack";

/**
 * A deployment from a project folder, the way `berth deploy` makes one:
 * create it, ask for a signed upload URL, PUT the tarball there, and PATCH
 * its path in, which starts the revision that builds it.
 */
export function FolderForm() {
  const { api } = useSession();
  const [name, setName] = useState("");
  const [packed, setPacked] = useState<Packed>();
  const [progress, setProgress] = useState<string>();
  const { run, busy, error, setError } = useAction();
  // Made before a failed upload: a retry uploads to it rather than meeting its name taken.
  const created = useRef<Deployment>(undefined);

  const pick = async (files: FileList | null) => {
    setError(undefined);
    setPacked(undefined);
    if (!files || files.length === 0) return;
    setProgress("Packing the folder…");
    const result = await packFolder([...files]);
    setProgress(undefined);
    setPacked(result);
    if (!name && result.folder) setName(result.folder.replace(/[^A-Za-z0-9._-]/g, "-").replace(/^[^A-Za-z0-9]+/, ""));
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!packed?.ok) {
      setError(packed ? packed.problem : "Choose the project folder first.");
      return;
    }
    await run(async () => {
      setProgress("Creating the deployment…");
      if (created.current?.name !== name) {
        created.current = await api.post<Deployment>("v2/deployments", {
          name,
          source: "internal_source",
          source_config: {},
          source_revision_config: { graph_config_path: CONFIG },
          secrets: [],
        });
      }
      const { id } = created.current;
      setProgress(`Uploading ${(packed.tarball.length / 1024).toFixed(1)} KB…`);
      const { upload_url, object_path } = await api.post<UploadUrl>(`v2/deployments/${id}/upload-url`);
      await putTarball(upload_url, packed.tarball);
      await api.patch<Deployment>(`v2/deployments/${id}`, {
        source_revision_config: { source_tarball_path: object_path },
      });
      navigate(hrefOf.deployment(id));
    });
    setProgress(undefined);
  };

  return (
    <form onSubmit={submit} className="stack" aria-labelledby="folder-title">
      <h2 id="folder-title">From a folder</h2>
      <label htmlFor="folder">Project folder</label>
      <input
        id="folder"
        type="file"
        aria-describedby="folder-hint"
        // React does not know the attribute: a folder picker instead of a file picker.
        ref={(input) => input?.setAttribute("webkitdirectory", "")}
        onChange={(event) => void pick(event.target.files)}
      />
      <p id="folder-hint" className="hint">
        The folder with {CONFIG} at its top. node_modules, .git and .berth are left out; .env files and private keys are refused.
      </p>
      {packed?.ok && (
        <p>
          {packed.fileCount} files packed ({(packed.tarball.length / 1024).toFixed(1)} KB).
        </p>
      )}
      {packed && !packed.ok && (
        <div role="alert" className="error">
          <p>{packed.problem}</p>
          {packed.refused.length > 0 && (
            <ul>
              {packed.refused.map((file) => (
                <li key={file.path}>
                  <code>{file.path}</code>: {file.reason}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
      <label htmlFor="folder-name">Name</label>
      <input id="folder-name" required value={name} autoComplete="off" onChange={(event) => setName(event.target.value)} />
      <button type="submit" disabled={busy || progress !== undefined}>
        Deploy folder
      </button>
      {progress && <output>{progress}</output>}
      <ErrorNote error={error} />
    </form>
  );
}
