import type { Assignment } from "@berth/listener-protocol";
import { DockerCompute } from "../../../compute/docker-compute.js";
import { PLATFORM_WORKER_SLOTS, type ServerSpec } from "../../../compute/types.js";
import { type ContainerEngine, connectEngine } from "../../../engine/docker-engine.js";
import { engineSettings } from "../../settings.js";
import type { Isolation } from "../../../sandbox/isolation.js";
import type { ArtifactStore } from "../../artifacts.js";
import { type AutoscaleSettings, Autoscaler, type Scalable } from "../../autoscaler.js";
import { ImageBuilds } from "../../image-builds.js";
import type { Builds, RevisionPreparation } from "../../revision-preparation.js";
import { maxReplicasOf, replicasOf, scaleOutOf } from "../../revision-spec.js";
import type { RevisionWork } from "../../revision-work.js";
import { deployErrorOf, type Placement, type Preparation, type Ready, type Serving } from "../placement.js";
import { buildsOf, type PlacementContext, startSandbox } from "../placement-context.js";
import { type ServerSet, servingOf } from "../supervised/supervised-serving.js";
import { SupervisedServers } from "../supervised/supervised-servers.js";
import { ScaleOutServices } from "./scale-out.js";

/** What a container listener runs. */
const SOURCES = ["internal_source", "repo_host", "external_image", "internal_image"];

/** What an image revision runs: the user's image (external_image, internal_image), pulled, or one built here. */
interface ImageToRun {
  image: string;
  external: boolean;
}

export interface ContainerPlacementOptions {
  /** The Docker Engine API (default DOCKER_HOST, else the standard socket). */
  engine?: string;
  /** Host paths resource_spec volumes may bind (BERTH_CONTAINER_BIND_ALLOW). */
  bindAllowList?: string[];
  /** How deployments grow from min_scale toward max_scale. */
  autoscale: AutoscaleSettings;
  /** The deployments the autoscaler resizes. */
  scalables: () => Iterable<Scalable>;
}

/**
 * Revisions as containers through a Docker Engine API: sources built into
 * images, images pulled; min_scale to max_scale API replicas, resized by the
 * autoscaler; in scale-out mode, workers beside them and the deployment's own
 * PostgreSQL and Redis.
 */
export class ContainerPlacement implements Placement {
  private readonly servers: SupervisedServers<DockerCompute>;
  private readonly images: ImageBuilds;
  private readonly scaleOut: ScaleOutServices;
  private readonly artifacts: ArtifactStore;
  private readonly preparation: RevisionPreparation;
  private readonly autoscaler: Autoscaler;

  constructor(
    private readonly context: PlacementContext,
    engine: ContainerEngine,
    private readonly isolation: Isolation,
    options: ContainerPlacementOptions,
  ) {
    const owner = context.dirs.dataDir;
    const bindAllowList = options.bindAllowList;
    this.servers = new SupervisedServers(context, (events) => new DockerCompute(engine, owner, { ...events, bindAllowList }));
    this.images = new ImageBuilds(engine, context.dirs.imageBuilds);
    this.scaleOut = new ScaleOutServices(engine, context.dirs.deployments);
    ({ artifacts: this.artifacts, preparation: this.preparation } = buildsOf(context, isolation));
    this.autoscaler = new Autoscaler(options.autoscale, options.scalables, context.logger);
  }

  /** Removes what a previous run of this listener left, and starts resizing deployments. */
  async open(): Promise<void> {
    const leftovers = await this.servers.compute.removeLeftovers();
    if (leftovers > 0) this.context.logger.warn({ count: leftovers }, "removed containers left running by a previous listener");
    this.autoscaler.start();
  }

  refusal({ revision }: RevisionWork): string | undefined {
    if (SOURCES.includes(revision.source)) return undefined;
    return `This listener deploys ${SOURCES.join(" and ")} revisions, not ${revision.source} yet`;
  }

  async prepare(work: RevisionWork): Promise<Preparation> {
    const { revision, move } = work;
    this.servers.noteDatabase(work);
    if (revision.source === "external_image" || revision.source === "internal_image") {
      const image = String(revision.spec.image_uri);
      await move("AWAITING_DEPLOY", `An image to pull (${image}): nothing to build`);
      return this.ready(work, { image, external: true });
    }
    const outcome = await this.preparation.buildSource(work, this.builds(work.assignment.id));
    if (outcome.kind !== "built") return outcome;
    return this.ready(work, { image: outcome.build, external: false });
  }

  adopt(): Serving | undefined {
    return undefined;
  }

  async remove(assignment: Assignment): Promise<void> {
    this.servers.remove(assignment.id);
    await this.scaleOut.remove(assignment.id);
    await this.images.removeDeployment(assignment.id, this.context.logger);
  }

  forget(deploymentId: string): Promise<void> {
    return this.artifacts.forget(deploymentId);
  }

  async close(): Promise<void> {
    this.autoscaler.stop();
    await this.servers.compute.stopAll();
    await this.isolation.close();
  }

  /** Sources built into images in the engine, tagged per deployment and build key. */
  private builds(deploymentId: string): Builds<string> {
    const { images } = this;
    return {
      building: (what) => `Building ${what} into an image`,
      find: (key) => images.find(deploymentId, key),
      build: (key, revision, tarball, log, signal) => images.build(deploymentId, key, revision, tarball, log, signal),
    };
  }

  private ready(work: RevisionWork, runs: ImageToRun): Ready {
    return { kind: "ready", starting: "Starting the agent server", start: () => this.start(work, runs), discard: async () => {} };
  }

  private async start(work: RevisionWork, { image, external }: ImageToRun): Promise<Serving> {
    const { revision } = work;
    try {
      const referenced = external ? await this.pullExternal(work, image) : {};
      const { spec, upstreamKey } = await this.servers.specOf(work, { image, externalImage: external }, referenced);
      const servers = await this.startServers(work, spec);
      const imageDigest = await this.images.digestOf(image).catch(async (error: unknown) => {
        await Promise.all([...servers.instances, ...servers.workers].map((instance) => instance.stop()));
        throw error;
      });
      const bounds = { min: replicasOf(revision), max: maxReplicasOf(revision) };
      return await servingOf(this.servers, work, servers, { upstreamKey, bounds, imageDigest });
    } catch (error) {
      throw deployErrorOf(error, "Starting the agent server failed");
    }
  }

  /** Pulls an external image (with its image_pull_secrets) and resolves its secret_references, from the listener's secret source. */
  private async pullExternal({ assignment, revision }: RevisionWork, image: string): Promise<Record<string, string>> {
    const { secrets, logs } = this.context;
    const log = logs.writer(assignment.id, revision.id, "deploy");
    const environment = await secrets.environment(revision.spec.secret_references);
    log({ level: "info", message: `Pulling ${image}` });
    // An internal_image comes from the platform's registry, with a pull token scoped to this deployment.
    const auth = revision.registry_auth ?? (await secrets.registryCredentials(revision.spec.resources.image_pull_secrets, image));
    await this.images.pull(image, auth, log);
    return environment;
  }

  /**
   * Starts the revision's API replicas (min_scale) and, in scale-out mode,
   * its deployment's PostgreSQL and Redis first, then its worker containers
   * beside the replicas.
   */
  private async startServers({ assignment, revision, signal }: RevisionWork, base: ServerSpec): Promise<ServerSet> {
    const replicas = replicasOf(revision);
    const plan = scaleOutOf(revision);
    if (!plan) return { instances: await this.servers.startReplicas(base, replicas, signal), workers: [], spec: base };
    const deployLog = this.context.logs.writer(assignment.id, revision.id, "deploy");
    const endpoints = await this.scaleOut.prepare(assignment.id, plan, deployLog, signal);
    const spec: ServerSpec = {
      ...base,
      role: "api",
      network: endpoints.network,
      env: { ...base.env, ...endpoints.env, BERTH_ROLE: "api" },
    };
    const workerSpec: ServerSpec = {
      ...spec,
      role: "worker",
      // The platform's run slots unless the spec says (resources.workers still wins, in serverEnv).
      env: { BERTH_WORKERS: String(PLATFORM_WORKER_SLOTS), ...spec.env, BERTH_ROLE: "worker" },
      resources: plan.workerResources,
    };
    const [instances, workers] = await Promise.allSettled([
      this.servers.startReplicas(spec, replicas, signal),
      this.servers.startReplicas(workerSpec, plan.workers, signal),
    ]);
    if (instances.status === "fulfilled" && workers.status === "fulfilled") {
      const workerPool = { spec: workerSpec, bounds: { min: plan.workers, max: plan.maxWorkers } };
      return { instances: instances.value, workers: workers.value, spec, workerPool };
    }
    const failed = [instances, workers].find((result) => result.status === "rejected") as PromiseRejectedResult;
    const up = [instances, workers].flatMap((result) => (result.status === "fulfilled" ? result.value : []));
    await Promise.all(up.map((instance) => instance.stop()));
    throw failed.reason;
  }
}

/** The container placement, on the engine at `options.engine`, connected now. */
export async function startContainerPlacement(
  context: PlacementContext,
  options: ContainerPlacementOptions,
): Promise<ContainerPlacement> {
  const { logger } = context;
  const engine = await connectEngine(options.engine, engineSettings());
  const sandbox = await startSandbox(context);
  const placement = new ContainerPlacement(context, engine, sandbox, options);
  await placement.open().catch(async (error: unknown) => {
    await sandbox.close();
    throw error;
  });
  logger.info({ engine: engine.address }, "running revisions as containers");
  if (engine.firewallOff)
    logger.warn(
      { reason: engine.firewallOff },
      "containers get networks of their own, but no host firewall rules: they can reach the host's services and private ranges (docs/containers.md)",
    );
  return placement;
}
