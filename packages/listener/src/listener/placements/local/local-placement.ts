import type { Assignment } from "@berth/listener-protocol";
import { LocalCompute } from "../../../compute/local-compute.js";
import { type LimitedIsolation, withResourceLimits } from "../../../sandbox/limited-isolation.js";
import type { Artifact, ArtifactStore } from "../../artifacts.js";
import type { Builds, RevisionPreparation } from "../../revision-preparation.js";
import type { RevisionWork } from "../../revision-work.js";
import { deployErrorOf, type Placement, type Preparation, type Serving } from "../placement.js";
import { buildsOf, type PlacementContext, startSandbox } from "../placement-context.js";
import { servingOf } from "../supervised/supervised-serving.js";
import { SupervisedServers } from "../supervised/supervised-servers.js";
import { BuildStartsServer } from "./build-starts-server.js";

const SOURCES = ["internal_source", "repo_host"];

/**
 * Revisions as local agent-server processes, in the listener's sandbox with
 * the kernel's resource limits: built into projects, one server each, whose
 * start is the build's graph check (build-starts-server.ts).
 */
export class LocalPlacement implements Placement {
  private readonly servers: SupervisedServers;
  private readonly artifacts: ArtifactStore;
  private readonly preparation: RevisionPreparation;

  constructor(
    private readonly context: PlacementContext,
    /** The listener's sandbox, with the kernel's limits (cgroups, disks). */
    private readonly isolation: LimitedIsolation,
  ) {
    this.servers = new SupervisedServers(context, (events) => new LocalCompute({ ...events, sandbox: isolation.server }));
    ({ artifacts: this.artifacts, preparation: this.preparation } = buildsOf(context, isolation));
  }

  refusal({ revision }: RevisionWork): string | undefined {
    if (SOURCES.includes(revision.source)) return undefined;
    return `This listener runs local processes: it deploys internal_source and repo_host revisions, not ${revision.source} (container images need a docker or cluster listener)`;
  }

  async prepare(work: RevisionWork): Promise<Preparation> {
    // Before the build: its graph check may start the server, which creates the database.
    this.servers.noteDatabase(work);
    const serverStart = new BuildStartsServer(async (configFile) => {
      const { spec } = await this.servers.specOf(work, { configFile }, {});
      const instance = await this.servers.startOne(spec, work.signal);
      await this.servers.recordPids(work.assignment.id, [instance]);
      return instance;
    });
    const discard = async () => {
      const unused = serverStart.take();
      if (unused) await this.servers.stopInstance(work.assignment.id, unused);
    };
    const outcome = await this.preparation.buildSource(work, this.builds(serverStart)).catch(async (error: unknown) => {
      await discard();
      throw error;
    });
    if (outcome.kind !== "built") {
      await discard();
      return outcome;
    }
    const { configFile } = outcome.build;
    return {
      kind: "ready",
      starting: serverStart.hasServer ? "The agent server the graph check started takes over" : "Starting the agent server",
      start: () => this.start(work, configFile, serverStart),
      discard,
    };
  }

  adopt(): Serving | undefined {
    return undefined;
  }

  async remove(assignment: Assignment): Promise<void> {
    this.servers.remove(assignment.id);
    await this.isolation.release(assignment.id);
  }

  forget(deploymentId: string): Promise<void> {
    return this.artifacts.forget(deploymentId);
  }

  async close(): Promise<void> {
    await this.servers.compute.stopAll();
    await this.isolation.close();
  }

  /** Built projects, whose graph check starts the server that will serve. */
  private builds(serverStart: BuildStartsServer): Builds<Artifact> {
    const { artifacts } = this;
    const cacheDir = this.context.dirs.installCache;
    return {
      building: (what) => `Building ${what}`,
      find: (key) => artifacts.find(key),
      build: (key, revision, tarball, log, signal) =>
        artifacts.build(key, revision, tarball, cacheDir, log, signal, serverStart.check),
    };
  }

  /** The server the build started serves; else (a reused build) one starts now. */
  private async start(work: RevisionWork, configFile: string, serverStart: BuildStartsServer): Promise<Serving> {
    const checked = serverStart.take();
    try {
      const { spec, upstreamKey } = await this.servers.specOf(work, { configFile }, {});
      if (serverStart.startFailure) throw serverStart.startFailure;
      // Asleep before a listener restart: it stays so, its first request (or what is due) wakes it.
      const { sleeper } = this.context;
      const mark =
        !checked && work.restore && sleeper ? await this.servers.asleepMark(work.assignment.id, work.revision.id) : undefined;
      const instances = checked ? [checked] : mark ? [] : await this.servers.startReplicas(spec, 1, work.signal);
      const how = { upstreamKey, bounds: { min: 1, max: 1 }, imageDigest: undefined };
      const serving = await servingOf(this.servers, work, { instances, workers: [], spec }, how);
      if (mark) sleeper?.adoptAsleep(serving, mark.next_due);
      return serving;
    } catch (error) {
      if (checked) await this.servers.stopInstance(work.assignment.id, checked);
      throw deployErrorOf(error, "Starting the agent server failed");
    }
  }
}

/** The local placement: its sandbox gets the kernel's limits (containers and pods have the engine's). */
export async function startLocalPlacement(context: PlacementContext): Promise<LocalPlacement> {
  const { dirs, logger } = context;
  const sandbox = await startSandbox(context);
  try {
    const limited = await withResourceLimits(sandbox, { dataDir: dirs.dataDir, deploymentsDir: dirs.deployments, logger });
    return new LocalPlacement(context, limited);
  } catch (error) {
    await sandbox.close();
    throw error;
  }
}
