import type { RevisionEventInput } from "@berth/listener-protocol";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { SupervisedCompute, SupervisedComputeOptions } from "../../../compute/supervised-compute.js";
import type { ComputeEvent, ServerInstance, ServerSpec } from "../../../compute/types.js";
import { forgetPid, recordPid } from "../../orphans.js";
import {
  companionContainersOf,
  labelsOf,
  resourcesOf,
  runWebhookEnvOf,
  tracingEnvOf,
  volumesOf,
  secretEnvOf,
} from "../../revision-spec.js";
import type { RevisionWork } from "../../revision-work.js";
import { upstreamKeyOf } from "../../upstream-key.js";
import type { Due, PlacementContext } from "../placement-context.js";

/** The compute that runs the servers (local processes, containers), told where their output and events go. */
export type ComputeOf<Compute extends SupervisedCompute> = (events: Pick<SupervisedComputeOptions, "log" | "onEvent">) => Compute;

/** A supervised server's crash, restart or give-up, as its revision's event and the health of what serves. */
const SERVER_EVENTS: Record<ComputeEvent["kind"], Pick<RevisionEventInput, "type" | "reason"> & { healthy: boolean }> = {
  crashed: { type: "Warning", reason: "ServerExited", healthy: false },
  restarted: { type: "Normal", reason: "ServerRestarted", healthy: true },
  gave_up: { type: "Warning", reason: "RestartLimitReached", healthy: false },
};

/** What a sleeping deployment's file says: which revision sleeps, and what wakes it. */
export interface AsleepMark {
  revision_id: string;
  next_due?: Due;
}

/** In the deployment's directory while its servers sleep: a listener restart keeps it asleep. */
const ASLEEP_FILE = "asleep.json";

/** A revision the router sends its deployment's requests to. */
export interface RoutedRevision {
  readonly deploymentId: string;
  readonly revisionId: string;
  /** The key its servers require, sent by the router. */
  readonly upstreamKey: string;
  apiReplicas(): ServerInstance[];
  activate(): void;
}

/** What runs: a built project (its langgraph.json) or an image. */
export type ServerRuns = Pick<ServerSpec, "configFile" | "image" | "externalImage">;

/**
 * Agent servers on supervised compute (local processes, containers) behind
 * the listener's router: how a revision's servers are specified, started,
 * routed to, followed through restarts, and stopped. Shared by the local and
 * container placements.
 */
export class SupervisedServers<Compute extends SupervisedCompute = SupervisedCompute> {
  readonly compute: Compute;
  /** Per deployment: the revision its requests go to. */
  private readonly routed = new Map<string, RoutedRevision>();
  /** The deployment of each revision started here (its servers' output goes to that deployment's log). */
  private readonly owners = new Map<string, string>();

  constructor(
    private readonly context: PlacementContext,
    computeOf: ComputeOf<Compute>,
  ) {
    this.compute = computeOf({
      log: (entry) => {
        const deploymentId = this.owners.get(entry.revisionId);
        if (deploymentId) context.logs.writer(deploymentId, entry.revisionId, "deploy")(entry);
      },
      onEvent: (event) => this.onComputeEvent(event),
    });
  }

  /** The deployment's own database is made by its first server (before the build on local compute: its graph check may start it). */
  noteDatabase({ assignment, buildLog }: RevisionWork): void {
    if (assignment.status === "AWAITING_DATABASE") buildLog({ level: "info", message: "Creating the deployment's database" });
  }

  /** What the revision's agent servers run, with the deployment's data dir made and the key its servers require. */
  async specOf(
    { assignment, revision }: RevisionWork,
    runs: ServerRuns,
    referenced: Record<string, string>,
  ): Promise<{ spec: ServerSpec; upstreamKey: string }> {
    const dataDir = join(this.deploymentDir(assignment.id), "data");
    await mkdir(dataDir, { recursive: true });
    const upstreamKey = await upstreamKeyOf(this.deploymentDir(assignment.id));
    const spec: ServerSpec = {
      deploymentId: assignment.id,
      revisionId: revision.id,
      ...runs,
      dataDir,
      env: {
        ...referenced,
        ...secretEnvOf(revision),
        // Every run is traced into the deployment's project on the control plane (the standard LangChain variables).
        ...tracingEnvOf(assignment, this.context.link.tracingEndpoint()),
        ...runWebhookEnvOf(assignment),
        BERTH_API_KEY: upstreamKey,
      },
      resources: resourcesOf(revision),
      labels: labelsOf(revision),
      volumes: volumesOf(revision),
      companions: companionContainersOf(revision),
    };
    return { spec, upstreamKey };
  }

  /** Starts one server of the spec; resolves once it is healthy. */
  startOne(spec: ServerSpec, signal: AbortSignal): Promise<ServerInstance> {
    this.owners.set(spec.revisionId, spec.deploymentId);
    return this.compute.start(spec, signal);
  }

  /** Starts `count` servers of the spec in parallel; if one fails, the others are stopped and its error thrown. */
  async startReplicas(spec: ServerSpec, count: number, signal: AbortSignal): Promise<ServerInstance[]> {
    const started = await Promise.allSettled(Array.from({ length: count }, () => this.startOne(spec, signal)));
    const failed = started.find((result): result is PromiseRejectedResult => result.status === "rejected");
    const instances = started.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
    if (!failed) return instances;
    await Promise.all(instances.map((instance) => instance.stop()));
    throw failed.reason;
  }

  /** Sends the deployment's new requests to the serving revision's API replicas. */
  route(serving: RoutedRevision): void {
    this.routed.set(serving.deploymentId, serving);
    const urls = serving.apiReplicas().map((instance) => instance.url);
    this.context.router.setTargets(serving.deploymentId, urls, serving.upstreamKey);
  }

  /** `serving` sleeps: the deployment's next request calls `wake`, which routes to its servers again. */
  routeAsleep(serving: RoutedRevision, wake: () => Promise<void>): void {
    this.routed.set(serving.deploymentId, serving);
    this.context.router.setAsleep(serving.deploymentId, wake);
  }

  /** When the deployment last had a request through the router (ms since the epoch). */
  lastRequestAt(deploymentId: string): number | undefined {
    return this.context.router.lastRequestAt(deploymentId);
  }

  /** The deployment's URL answers as before `serving` was routed to, when none took its place. */
  unroute(serving: RoutedRevision): void {
    if (!this.routes(serving)) return;
    this.routed.delete(serving.deploymentId);
    this.context.router.remove(serving.deploymentId);
  }

  /** Whether the deployment's requests go to `serving`. */
  routes(serving: RoutedRevision): boolean {
    return this.routed.get(serving.deploymentId) === serving;
  }

  /** The deployment's stable URL at the router. */
  urlOf(deploymentId: string): string {
    return this.context.router.urlOf(deploymentId);
  }

  deployLog(deploymentId: string, revisionId: string) {
    return this.context.logs.writer(deploymentId, revisionId, "deploy");
  }

  openRequests(deploymentId: string): number {
    return this.context.router.openRequests(deploymentId);
  }

  /** Lets a replaced revision's server finish what it serves, then stops it. */
  async retire(deploymentId: string, instance: ServerInstance): Promise<void> {
    const drained = this.context.router.drained(instance.url);
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, this.context.drainTimeoutMs).unref());
    await Promise.race([drained, timeout]);
    await this.stopInstance(deploymentId, instance);
  }

  async stopInstance(deploymentId: string, instance: ServerInstance): Promise<void> {
    await instance.stop();
    await forgetPid(this.deploymentDir(deploymentId), instance.pid);
  }

  /** Records the servers' pids, for a listener killed without stopping them (orphans.ts). */
  async recordPids(deploymentId: string, instances: readonly ServerInstance[]): Promise<void> {
    for (const instance of instances) await recordPid(this.deploymentDir(deploymentId), instance.pid);
  }

  /** Notes on disk that the deployment's `revisionId` sleeps, so the listener's next start leaves it asleep. */
  async markAsleep(deploymentId: string, mark: AsleepMark): Promise<void> {
    await writeFile(join(this.deploymentDir(deploymentId), ASLEEP_FILE), JSON.stringify(mark), { mode: 0o600 });
  }

  /** The deployment woke (or serves another way): its next start runs its servers. */
  async clearAsleep(deploymentId: string): Promise<void> {
    await rm(join(this.deploymentDir(deploymentId), ASLEEP_FILE), { force: true });
  }

  /** The deployment's sleep as noted before a restart, when it is `revisionId` that sleeps. */
  async asleepMark(deploymentId: string, revisionId: string): Promise<AsleepMark | undefined> {
    try {
      const mark = JSON.parse(await readFile(join(this.deploymentDir(deploymentId), ASLEEP_FILE), "utf8")) as AsleepMark;
      return mark.revision_id === revisionId ? mark : undefined;
    } catch {
      return undefined; // none (or unreadable): it runs
    }
  }

  /** The deleted deployment's URL answers 404. */
  remove(deploymentId: string): void {
    this.routed.delete(deploymentId);
    this.context.router.remove(deploymentId);
  }

  private deploymentDir(deploymentId: string): string {
    return join(this.context.dirs.deployments, deploymentId);
  }

  /** A crash, restart or give-up: logged, and, for the serving revision, rerouted and reported. */
  private onComputeEvent(event: ComputeEvent): void {
    const { logs, logger, link } = this.context;
    const line = logs.writer(event.deploymentId, event.revisionId, "deploy");
    line({ level: event.kind === "restarted" ? "warn" : "error", message: event.message });
    logger.warn({ deployment_id: event.deploymentId, revision_id: event.revisionId, kind: event.kind }, event.message);
    const serving = this.routed.get(event.deploymentId);
    if (serving?.revisionId !== event.revisionId) return;
    if (event.kind === "restarted") {
      serving.activate();
      void this.recordPids(event.deploymentId, serving.apiReplicas());
    }
    // The serving revision stays DEPLOYED: the step goes into its timeline, and what runs to its conditions.
    const { type, reason, healthy } = SERVER_EVENTS[event.kind];
    const { message } = event;
    const observed = { serving_revision_id: event.revisionId, healthy, reason, message };
    void link
      .recordEvent(event.revisionId, { type, reason, message })
      .then(() => link.report(event.deploymentId, { status: healthy ? "READY" : "UNKNOWN", observed }))
      .catch((err: unknown) => logger.warn({ err }, "reporting a deployment's status failed"));
  }
}
