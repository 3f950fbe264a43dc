import { useSession } from "../api/context";
import { type Deployment, holds, type Page, type Revision } from "../api/types";
import { usePolling } from "../hooks/usePolling";
import { hrefOf } from "../router";
import { ErrorNote } from "../ui/ErrorNote";
import { PageTitle } from "../ui/PageTitle";
import { StatusBadge } from "../ui/StatusBadge";
import { Time } from "../ui/Time";
import { SourceSummary } from "./source";

interface Row {
  deployment: Deployment;
  latest?: Revision;
}

const REFRESH_MS = 2000;
/** The table's columns and the classes that size them (the table lays out fixed, so long values cut with an ellipsis). */
const COLUMNS: [label: string, className: string | undefined][] = [
  ["Name", "col-name"],
  ["Status", "col-status"],
  ["Source", "col-source"],
  ["URL", "col-url"],
  ["Last revision", undefined],
  ["Updated", "col-updated"],
];

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
        <table className="deployments">
          <caption className="visually-hidden">Deployments, newest first</caption>
          <thead>
            <tr>
              {COLUMNS.map(([label, className]) => (
                <th key={label} scope="col" className={className}>
                  {label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map(({ deployment, latest }) => (
              <tr key={deployment.id} data-deployment={deployment.name}>
                <th scope="row">
                  {/* One line however long: the full name in the tooltip. */}
                  <a href={hrefOf.deployment(deployment.id)} title={deployment.name}>
                    {deployment.name}
                  </a>
                </th>
                <td>
                  <StatusBadge status={deployment.status} />
                  {holds(deployment, "Sleeping") && <span className="tag">sleeping</span>}
                </td>
                <td className="source-cell">
                  <SourceSummary deployment={deployment} revision={latest} short />
                </td>
                <td>
                  <span className="url-cell" title={deployment.source_config.custom_url ?? undefined}>
                    {deployment.source_config.custom_url ?? "—"}
                  </span>
                </td>
                <td>
                  <StatusBadge status={latest?.status} />
                  {latest?.status_message && <span className="reason">{latest.status_message}</span>}
                </td>
                <td>
                  <Time iso={deployment.updated_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
