import { useSession } from "../api/context";
import type { Deployment, Page, Revision } from "../api/types";
import { usePolling } from "../hooks/usePolling";
import { hrefOf } from "../router";
import { ErrorNote } from "../ui/ErrorNote";
import { PageTitle } from "../ui/PageTitle";
import { StatusBadge } from "../ui/StatusBadge";
import { formatTime } from "../ui/time";

interface Row {
  deployment: Deployment;
  latest?: Revision;
}

const REFRESH_MS = 2000;

export function DeploymentList() {
  const { api } = useSession();
  const { data: rows, error } = usePolling<Row[]>(
    async () => {
      const page = await api.get<Page<Deployment>>("v2/deployments?limit=100");
      return Promise.all(
        page.resources.map(async (deployment) => ({
          deployment,
          latest: deployment.latest_revision_id
            ? await api
                .get<Revision>(`v2/deployments/${deployment.id}/revisions/${deployment.latest_revision_id}`)
                .catch(() => undefined)
            : undefined,
        })),
      );
    },
    REFRESH_MS,
    [api],
  );

  return (
    <>
      <PageTitle title="Deployments" />
      <p>
        <a className="button" href={hrefOf.new()}>
          New deployment
        </a>
      </p>
      <ErrorNote error={error} />
      {rows === undefined && !error && <p aria-live="polite">Loading…</p>}
      {rows?.length === 0 && <p>No deployments yet in this workspace.</p>}
      {rows && rows.length > 0 && (
        <table>
          <caption className="visually-hidden">Deployments, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">URL</th>
              <th scope="col">Last revision</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {rows.map(({ deployment, latest }) => (
              <tr key={deployment.id} data-deployment={deployment.name}>
                <th scope="row">
                  <a href={hrefOf.deployment(deployment.id)}>{deployment.name}</a>
                </th>
                <td>
                  <StatusBadge status={deployment.status} />
                </td>
                <td>{deployment.source_config.custom_url ?? "—"}</td>
                <td>
                  <StatusBadge status={latest?.status} />
                  {latest?.status_message && <span className="reason">{latest.status_message}</span>}
                </td>
                <td>
                  <time dateTime={deployment.updated_at}>{formatTime(deployment.updated_at)}</time>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
