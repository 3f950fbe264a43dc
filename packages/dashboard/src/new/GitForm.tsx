import { type FormEvent, useState } from "react";
import { useSession } from "../api/context";
import type { Deployment, Integration, Repository } from "../api/types";
import { useAction } from "../hooks/useAction";
import { usePolling } from "../hooks/usePolling";
import { hrefOf, navigate } from "../router";
import { ErrorNote } from "../ui/ErrorNote";
import { CONFIG } from "./pack";

/** A deployment of a repository an integration reaches: the control plane clones, builds and deploys its branch. */
export function GitForm() {
  const { api } = useSession();
  const { data: integrations, error: loadError } = usePolling(
    () => api.get<Integration[]>("v1/integrations/repo_host/install"),
    null,
    [api],
  );
  const [integrationId, setIntegrationId] = useState("");
  const [repoUrl, setRepoUrl] = useState("");
  // Branch and name follow the chosen repository until typed in, also when its listing arrives after the URL.
  const [typedBranch, setBranch] = useState<string | null>(null);
  const [configPath, setConfigPath] = useState(CONFIG);
  const [typedName, setName] = useState<string | null>(null);
  const { run, busy, error } = useAction();

  const integration = integrations?.find((candidate) => candidate.id === integrationId) ?? integrations?.[0];
  // Its registered repositories and those its host lists (the URL may be typed in all the same).
  const { data: repos, error: reposError } = usePolling(
    () => (integration ? api.get<Repository[]>(`v1/integrations/repo_host/${integration.id}/repos`) : Promise.resolve([])),
    null,
    [api, integration?.id],
  );

  const knownRepo = repos?.find((candidate) => candidate.url === repoUrl);
  const branch = typedBranch ?? knownRepo?.default_branch ?? "main";
  const name = typedName ?? knownRepo?.name ?? "";

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!integration) return;
    await run(async () => {
      const created = await api.post<Deployment>("v2/deployments", {
        name,
        source: "repo_host",
        source_config: { integration_id: integration.id, repo_url: repoUrl },
        source_revision_config: { repo_ref: branch, graph_config_path: configPath },
        secrets: [],
      });
      navigate(hrefOf.deployment(created.id));
    });
  };

  return (
    <form onSubmit={submit} className="stack" aria-labelledby="git-title">
      <h2 id="git-title">From a git repository</h2>
      <ErrorNote error={loadError} />
      {integrations?.length === 0 && (
        <p>
          No git integration in this workspace yet: add one with <code>berth control-plane integrations add</code> or the API.
        </p>
      )}
      <label htmlFor="integration">Integration</label>
      <select
        id="integration"
        value={integration?.id ?? ""}
        disabled={!integrations?.length}
        onChange={(event) => setIntegrationId(event.target.value)}
      >
        {integrations?.map((candidate) => (
          <option key={candidate.id} value={candidate.id}>
            {candidate.name} ({candidate.kind})
          </option>
        ))}
      </select>
      <label htmlFor="repo-url">Repository URL</label>
      <input
        id="repo-url"
        required
        list="known-repos"
        value={repoUrl}
        autoComplete="off"
        onChange={(event) => setRepoUrl(event.target.value)}
      />
      <datalist id="known-repos">
        {repos?.map((repo) => (
          <option key={repo.url} value={repo.url}>
            {repo.owner}/{repo.name}
          </option>
        ))}
      </datalist>
      {reposError && <p className="hint">Its repositories could not be listed ({reposError}): type the URL.</p>}
      <label htmlFor="branch">Branch</label>
      <input id="branch" required value={branch} autoComplete="off" onChange={(event) => setBranch(event.target.value)} />
      <label htmlFor="config-path">Graph config path</label>
      <input
        id="config-path"
        required
        value={configPath}
        autoComplete="off"
        onChange={(event) => setConfigPath(event.target.value)}
      />
      <label htmlFor="git-name">Name</label>
      <input id="git-name" required value={name} autoComplete="off" onChange={(event) => setName(event.target.value)} />
      <button type="submit" disabled={busy || !integration}>
        Deploy repository
      </button>
      <ErrorNote error={error} />
    </form>
  );
}
