import { NotFoundError } from "@berth/service-kit";
import type { ControlPlaneStorage, LogFilter, LogKind } from "../storage/types.js";
import { notFound } from "./deployments.js";

export type LogQuery = Omit<LogFilter, "deployment_id" | "revision_id" | "kind">;

/** Build logs and server (deploy) logs of a deployment's revisions, as listeners reported them. */
export class LogService {
  constructor(private readonly storage: ControlPlaneStorage) {}

  async query(tenantId: string, deploymentId: string, revisionId: string | undefined, kind: LogKind, query: LogQuery) {
    if (!(await this.storage.deployments.get(tenantId, deploymentId))) throw notFound(deploymentId);
    if (revisionId && !(await this.storage.revisions.get(tenantId, deploymentId, revisionId))) {
      throw new NotFoundError(`Revision ${revisionId} not found`);
    }
    const logs = await this.storage.logs.query({ ...query, deployment_id: deploymentId, revision_id: revisionId, kind });
    return {
      logs: logs.map(({ id, timestamp, level, message }) => ({ id: String(id), timestamp, level, message })),
      next_offset: logs.length === query.limit ? query.offset + logs.length : null,
    };
  }
}
