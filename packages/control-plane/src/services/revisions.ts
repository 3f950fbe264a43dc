import { NotFoundError } from "@berth/service-kit";
import type { ControlPlaneStorage, RevisionFilter } from "../storage/types.js";
import { notFound } from "./deployments.js";
import { presentRevision } from "./present.js";

export type Revision = ReturnType<typeof presentRevision>;

export class RevisionService {
  constructor(private readonly storage: ControlPlaneStorage) {}

  async list(tenantId: string, deploymentId: string, filter: RevisionFilter): Promise<{ resources: Revision[]; offset: number }> {
    if (!(await this.storage.deployments.get(tenantId, deploymentId))) throw notFound(deploymentId);
    const revisions = await this.storage.revisions.list(tenantId, deploymentId, filter);
    return { resources: revisions.map(presentRevision), offset: filter.offset + revisions.length };
  }

  async get(tenantId: string, deploymentId: string, revisionId: string): Promise<Revision> {
    if (!(await this.storage.deployments.get(tenantId, deploymentId))) throw notFound(deploymentId);
    const revision = await this.storage.revisions.get(tenantId, deploymentId, revisionId);
    if (!revision) throw new NotFoundError(`Revision ${revisionId} not found`);
    return presentRevision(revision);
  }
}
