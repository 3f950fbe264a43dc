import { useState } from "react";
import { useSession } from "../api/context";
import { type Deployment, isFinal, type Page, type Revision } from "../api/types";
import { usePolling } from "../hooks/usePolling";
import { hrefOf } from "../router";
import { ErrorNote } from "../ui/ErrorNote";
import { PageTitle } from "../ui/PageTitle";
import { StatusBadge } from "../ui/StatusBadge";
import { formatTime } from "../ui/time";
import { DeleteDeployment } from "./DeleteDeployment";
import { LogViewer } from "./LogViewer";
import { ProtocolAddresses } from "./ProtocolAddresses";
import { RevisionEvents } from "./RevisionEvents";
import { RevisionTimeline } from "./RevisionTimeline";
import { SecretsEditor } from "./SecretsEditor";

const REFRESH_MS = 2000;

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
  const url = deployment.source_config.custom_url;
  const latest = revisions.find((revision) => revision.id === deployment.latest_revision_id);

  return (
    <>
      <nav aria-label="Breadcrumb" className="crumbs">
        <a href={hrefOf.list()}>Deployments</a> / {deployment.name}
      </nav>
      <PageTitle title={deployment.name} />
      <ErrorNote error={error} />
      <dl className="facts">
        <dt>Status</dt>
        <dd>
          <StatusBadge status={deployment.status} />
        </dd>
        <dt>Latest revision</dt>
        <dd>
          <StatusBadge status={latest?.status} />
        </dd>
        <dt>URL</dt>
        <dd>
          {url ? (
            <a href={url} rel="noreferrer">
              {url}
            </a>
          ) : (
            "none yet"
          )}
        </dd>
        {url && <ProtocolAddresses url={url} />}
        <dt>Source</dt>
        <dd>
          {deployment.source}
          {deployment.source_config.repo_url &&
            ` · ${deployment.source_config.repo_url}@${deployment.source_revision_config.repo_ref ?? ""}`}
        </dd>
        <dt>Updated</dt>
        <dd>
          <time dateTime={deployment.updated_at}>{formatTime(deployment.updated_at)}</time>
        </dd>
      </dl>
      <p>
        <a className="button" href={hrefOf.conversations(deployment.id)}>
          Conversations
        </a>
      </p>
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
              Revision <code>{selected.id.slice(0, 8)}</code>
            </h2>
            <RevisionEvents deploymentId={deployment.id} revisionId={selected.id} final={isFinal(selected.status)} />
            <LogViewer deploymentId={deployment.id} revisionId={selected.id} kind="build" />
            <LogViewer deploymentId={deployment.id} revisionId={selected.id} kind="deploy" />
          </section>
        )}
      </div>
      <SecretsEditor deploymentId={deployment.id} secrets={deployment.secrets} onSaved={refresh} />
      <DeleteDeployment deploymentId={deployment.id} name={deployment.name} />
    </>
  );
}
