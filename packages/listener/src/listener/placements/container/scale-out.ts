import { join } from "node:path";
import { ensureScaleOutImage, POSTGRES_DATA } from "../../../build/image/scale-out-image.js";
import {
  ensureScaleOutServices,
  removeScaleOutServices,
  type ScaleOutEndpoints,
} from "../../../compute/container/scale-out-services.js";
import type { ContainerEngine, EngineLog } from "../../../engine/docker-engine.js";
import type { ScaleOutPlan } from "../../revision-spec.js";
import { deploymentSecretOf } from "../../upstream-key.js";

/**
 * The PostgreSQL and Redis of scale-out deployments on a container listener:
 * their image built once per engine, their passwords kept in the deployment's
 * directory (which no deployment sees), their containers kept while the
 * deployment exists.
 */
export class ScaleOutServices {
  constructor(
    private readonly engine: ContainerEngine,
    private readonly deploymentsDir: string,
  ) {}

  async prepare(deploymentId: string, plan: ScaleOutPlan, log: EngineLog, signal: AbortSignal): Promise<ScaleOutEndpoints> {
    const image = await ensureScaleOutImage(this.engine, log);
    const dir = join(this.deploymentsDir, deploymentId);
    const passwords = {
      db: await deploymentSecretOf(dir, "postgres.password"),
      cache: await deploymentSecretOf(dir, "redis.password"),
    };
    log({ level: "info", message: "Starting the deployment's PostgreSQL and Redis (scale-out: max_scale is above 1)" });
    return ensureScaleOutServices(
      this.engine,
      { deploymentId, image, postgresData: POSTGRES_DATA, passwords, db: plan.db, cache: plan.cache },
      signal,
    );
  }

  remove(deploymentId: string): Promise<void> {
    return removeScaleOutServices(this.engine, deploymentId);
  }
}
