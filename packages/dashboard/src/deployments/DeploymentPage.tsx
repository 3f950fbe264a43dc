import { useState } from "react";
import { useSession } from "../api/context";
import { type Deployment, holds, isFinal, type Page, type Revision } from "../api/types";
import { usePolling } from "../hooks/usePolling";
import { hrefOf } from "../router";
import { ErrorNote } from "../ui/ErrorNote";
import { PageTitle } from "../ui/PageTitle";
import { StatusBadge } from "../ui/StatusBadge";
import { CopyButton } from "../ui/CopyButton";
import { Time } from "../ui/Time";
import { DeleteDeployment } from "./DeleteDeployment";
import { LogViewer } from "./LogViewer";
import { ProtocolAddresses } from "./ProtocolAddresses";
import { RevisionEvents } from "./RevisionEvents";
import { RevisionTimeline } from "./RevisionTimeline";
import { revisionNumber, stillServing } from "./revisions";
import { SecretsEditor } from "./SecretsEditor";
import { SourceSummary } from "./source";

const REFRESH_MS = 2000;
/** The deployment's other pages, linked at the top of its own. */
const TOOLS: [label: string, href: (id: string) => string][] = [
  ["Studio", (id) => hrefOf.studio(id)],
  ["Conversations", hrefOf.conversations],
  ["Traces", hrefOf.traces],
  ["Metrics", hrefOf.metrics],
];

interface Loaded {
  deployment: Deployment;
  revisions: Revision[];
}

export function DeploymentPage({ id }: { id: string }) {
  const { api } = useSession();
  const { data, error, refresh } = usePolling<Loaded>(
    async () => {
      const [deployment, page] = await Promise.all([
        api.get<Deployment>(`v2/deployments/${id}`),
        api.get<Page<Revision>>(`v2/deployments/${id}/revisions?limit=100`),
      ]);
      return { deployment, revisions: page.resources };
    },
    REFRESH_MS,
    [api, id],
  );
  const [chosen, setChosen] = useState<string>();

  if (!data) {
    return (
      <>
        <PageTitle title="Deployment" />
        <ErrorNote error={error} />
        {!error && <p aria-live="polite">Loading…</p>}
      </>
    );
  }
  const { deployment, revisions } = data;
  const selected = revisions.find((revision) => revision.id === chosen) ?? revisions[0];
  const url = deployment.source_config.custom_url?.replace(/\/+$/, "");
  const latest = revisions.find((revision) => revision.id === deployment.latest_revision_id);
  const fallback = stillServing(deployment, revisions);
  const label = (revision: Revision) => `revision ${revisionNumber(revision) ?? revision.id.slice(0, 8)}`;

  return (
    <>
      <nav aria-label="Breadcrumb" className="crumbs">
        <a href={hrefOf.list()}>Deployments</a> / {deployment.name}
      </nav>
      <PageTitle title={deployment.name} />
      <ErrorNote error={error} />
      {fallback && (
        <div role="status" className="notice" data-testid="still-serving">
          <p>
            <strong>Still serving {label(fallback.serving)}</strong>: the latest, {label(fallback.latest)}, ended{" "}
            {fallback.latest.status}
            {fallback.latest.status_message && ` (${fallback.latest.status_message})`}.
          </p>
          <button type="button" onClick={() => setChosen(fallback.latest.id)}>
            Show the logs of {label(fallback.latest)}
          </button>
        </div>
      )}
      <nav aria-label="Deployment tools" className="tools">
        {TOOLS.map(([label, href]) => (
          <a key={label} className="button" href={href(deployment.id)}>
            {label}
          </a>
        ))}
        {url && (
          <a className="button" href={`${url}/docs`} target="_blank" rel="noreferrer">
            API docs
          </a>
        )}
      </nav>
      <dl className="facts">
        <dt>Status</dt>
        <dd>
          <StatusBadge status={deployment.status} />
          {holds(deployment, "Sleeping") && <span className="tag">sleeping</span>}
        </dd>
        <dt>Latest revision</dt>
        <dd>
          <StatusBadge status={latest?.status} /> {latest && label(latest)}
        </dd>
        <dt>URL</dt>
        <dd className="address">
          {url ? (
            <>
              <a href={url} rel="noreferrer" data-testid="deployment-url">
                {url}
              </a>
              <CopyButton value={url} label="Copy the URL" />
            </>
          ) : (
            "none yet"
          )}
        </dd>
        {url && (
          <>
            <dt>API docs</dt>
            <dd>
              <a href={`${url}/docs`} target="_blank" rel="noreferrer" data-testid="api-docs">
                {`${url}/docs`}
              </a>
            </dd>
            <ProtocolAddresses url={url} deployment={deployment} />
          </>
        )}
        <dt>Deployment id</dt>
        <dd className="address">
          <code>{deployment.id}</code>
          <CopyButton value={deployment.id} label="Copy the deployment id" />
        </dd>
        <dt>Source</dt>
        <dd>
          <SourceSummary deployment={deployment} revision={latest} />
        </dd>
        <dt>Created</dt>
        <dd>
          <Time iso={deployment.created_at} />
        </dd>
        <dt>Updated</dt>
        <dd>
          <Time iso={deployment.updated_at} />
        </dd>
      </dl>
      <div className="columns">
        <RevisionTimeline
          deploymentId={deployment.id}
          revisions={revisions}
          selectedId={selected?.id}
          onSelect={setChosen}
          onChanged={refresh}
        />
        {selected && (
          <section aria-labelledby="logs-title" className="logs">
            <h2 id="logs-title">
              Revision {revisionNumber(selected) ?? ""} <code>{selected.id.slice(0, 8)}</code>
            </h2>
            <RevisionEvents deploymentId={deployment.id} revisionId={selected.id} final={isFinal(selected.status)} />
            <LogViewer deploymentId={deployment.id} revisionId={selected.id} kind="build" name={deployment.name} />
            <LogViewer deploymentId={deployment.id} revisionId={selected.id} kind="deploy" name={deployment.name} />
          </section>
        )}
      </div>
      <SecretsEditor deploymentId={deployment.id} secrets={deployment.secrets} onSaved={refresh} />
      <DeleteDeployment deploymentId={deployment.id} name={deployment.name} />
    </>
  );
}
