import type { Logger } from "@berth/service-kit";
import type { Router } from "../../router/router.js";
import { type Isolation, type IsolationOptions, type Owner, startIsolation } from "../../sandbox/isolation.js";
import { ArtifactStore } from "../artifacts.js";
import type { ControlPlaneLink } from "../link.js";
import type { LogShipper } from "../log-shipper.js";
import { RevisionPreparation } from "../revision-preparation.js";
import type { SecretSource } from "../secret-source.js";
import type { Serving } from "./placement.js";

/** The listener's directories, under its data directory. */
export interface ListenerDirs {
  dataDir: string;
  sources: string;
  installCache: string;
  deployments: string;
  artifacts: string;
  gitCache: string;
  imageBuilds: string;
}

/** What the listener gives the placement it starts. */
export interface PlacementContext {
  link: ControlPlaneLink;
  router: Router;
  logs: LogShipper;
  logger: Logger;
  /** The operator's secrets, for external images' secret_references and image_pull_secrets, and registry logins. */
  secrets: SecretSource;
  dirs: ListenerDirs;
  /** How builds and local servers are sandboxed (the dirs and logger come from here). */
  sandbox: Pick<IsolationOptions, "trustAllCode" | "egressAllow" | "tenantOf" | "forceUnavailable">;
  /** Whose revision it is; always known for the revisions of the listener's assignments. */
  ownerOf(revisionId: string): Owner | undefined;
  /** How long an old revision may finish its open requests after a switch. */
  drainTimeoutMs: number;
  /** Scale-to-zero of local agent servers (idle-sleeper.ts); absent where nothing sleeps. */
  sleeper?: { adoptAsleep(serving: Serving, nextDue: Due | undefined): void };
}

/** Something a sleeping deployment wakes for before it is due (a cron, a delayed run). */
export interface Due {
  /** ms since the epoch */
  at: number;
  /** For the Woke event: "a cron", "a delayed run". */
  what: string;
}

/** Probes for a sandbox and says at start how code will run (sandbox/isolation.ts); closed with the placement. */
export function startSandbox({ dirs, logger, sandbox }: PlacementContext): Promise<Isolation> {
  return startIsolation({ ...sandbox, dataDir: dirs.dataDir, artifacts: dirs.artifacts, deployments: dirs.deployments, logger });
}

/** A placement's builds (keyed, found and made in `isolation`) and the preparation of its built sources. */
export function buildsOf(
  context: PlacementContext,
  isolation: Isolation,
): { artifacts: ArtifactStore; preparation: RevisionPreparation } {
  const { link, dirs, ownerOf } = context;
  const artifacts = new ArtifactStore(dirs.artifacts, { isolation, ownerOf });
  return { artifacts, preparation: new RevisionPreparation({ link, artifacts, dirs }) };
}
