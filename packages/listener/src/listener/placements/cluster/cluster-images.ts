import type { Logger } from "@berth/service-kit";
import { pushImage } from "../../../build/image/push-image.js";
import { RegistryApi } from "../../../build/image/registry-api.js";
import { DeployError } from "../../../compute/types.js";
import { type ContainerEngine, connectEngine, type EngineLog } from "../../../engine/docker-engine.js";
import { engineSettings } from "../../settings.js";
import { ImageBuilds } from "../../image-builds.js";
import type { Builds } from "../../revision-preparation.js";
import { type ImageRegistry, pushedRefOf, registryRepositoryOf } from "../../image-registry.js";
import type { SecretSource } from "../../secret-source.js";

/** The secret of the listener's secret source holding the registry's login (docs/cluster.md). */
export const REGISTRY_SECRET = "berth-image-registry";

/** A build as the cluster pulls it. */
export interface PushedImage {
  ref: string;
  /** The image's config digest, as the registry has it: the engine's image id. */
  imageId?: string;
}

/** A cluster listener's build of a revision: in the registry already, or in the engine, to push. */
export type ClusterBuild = { kind: "pushed"; pushed: PushedImage } | { kind: "local"; image: string };

export interface ClusterImagesOptions {
  /** --image-registry: none, and built sources cannot be deployed. */
  registry?: ImageRegistry;
  /** The engine that builds and pushes; none when it did not answer (engineProblem says why). */
  engine?: ContainerEngine;
  engineProblem?: string;
  /** Where the engine's builds are prepared. */
  workDir: string;
  secrets: SecretSource;
  logger: Logger;
}

/**
 * A cluster listener's built images in the registry the cluster pulls from:
 * each build pushed as `<registry>/deployment-<id>:<build key hash>`, found
 * there again by a revision of the same source, deleted with the deployment.
 */
export class ClusterImages {
  /** Builds as a docker listener makes them (the same Dockerfile, build key and reuse). */
  private readonly local: ImageBuilds | undefined;

  constructor(private readonly options: ClusterImagesOptions) {
    this.local = options.engine && new ImageBuilds(options.engine, options.workDir);
  }

  /** Why this listener cannot deploy a built revision of `source` (undefined: it can). */
  unavailable(source: string): string | undefined {
    if (!this.options.registry)
      return `This cluster listener deploys ${source} revisions only with a registry the cluster pulls from to push their images to: start it with --image-registry HOST[:PORT]/PATH (BERTH_CLUSTER_IMAGE_REGISTRY, docs/cluster.md)`;
    if (!this.options.engine)
      return `This cluster listener has no container engine to build ${source} revisions with (${this.options.engineProblem}): give it one with --engine (BERTH_CONTAINER_ENGINE, else DOCKER_HOST) and restart it`;
    return undefined;
  }

  /** The deployment's builds: found in the registry, else in the engine, else built there (once unavailable() says none is missing). */
  builds(deploymentId: string): Builds<ClusterBuild> {
    return {
      building: (what) => `Building ${what} into an image`,
      find: async (key, log) => {
        const pushed = await this.findPushed(deploymentId, key, log);
        if (pushed) return { kind: "pushed", pushed };
        const image = await this.engineBuilds().find(deploymentId, key);
        return image ? { kind: "local", image } : undefined;
      },
      build: async (key, revision, tarball, log, signal) => {
        const image = await this.engineBuilds().build(deploymentId, key, revision, tarball, log, signal);
        return { kind: "local", image };
      },
    };
  }

  /** The key's image, when the registry has it already (a failed look-up is logged, and the image built). */
  private async findPushed(deploymentId: string, key: string, log: EngineLog): Promise<PushedImage | undefined> {
    const registry = this.registry();
    const ref = pushedRefOf(registry, deploymentId, key);
    try {
      const manifest = await (await this.api()).manifest(registryRepositoryOf(registry, deploymentId), tagOf(ref));
      return manifest && { ref, imageId: manifest.configDigest };
    } catch (error) {
      log({ level: "error", message: `Looking for ${ref} in the registry failed (${(error as Error).message})` });
      return undefined;
    }
  }

  /** Pushes the engine's build of the key to the registry; throws a DeployError with the engine's reason. */
  async push(deploymentId: string, key: string, local: string, log: EngineLog, signal: AbortSignal): Promise<PushedImage> {
    const registry = this.registry();
    const engine = this.options.engine;
    if (!engine) throw new DeployError(this.unavailable("built")!);
    const ref = pushedRefOf(registry, deploymentId, key);
    log({ level: "info", message: `==> Pushing ${ref}` });
    try {
      await pushImage(engine, local, ref, { auth: await this.login(), log, signal });
    } catch (error) {
      if (signal.aborted || error instanceof DeployError) throw error;
      throw new DeployError(`Pushing ${ref} failed: ${(error as Error).message}`);
    }
    // The config digest is the image id the pods run; a registry that hides it only costs the revision that fact.
    const manifest = await (await this.api())
      .manifest(registryRepositoryOf(registry, deploymentId), tagOf(ref))
      .catch(() => undefined);
    log({ level: "info", message: `Pushed ${ref}` });
    return { ref, imageId: manifest?.configDigest };
  }

  /** The local builds of the deleted deployment (as removeDeployment of ImageBuilds), once its tags are gone from the registry. */
  async removeLocal(deploymentId: string): Promise<void> {
    await this.local?.removeDeployment(deploymentId, this.options.logger);
  }

  /**
   * Deletes the deployment's tags from the registry (it was deleted). Best
   * effort: a registry that refuses deletes, or cannot be reached, keeps
   * them, and the listener's log says so; the deployment is removed anyway.
   */
  async removeAll(deploymentId: string): Promise<void> {
    const { registry, logger } = this.options;
    if (!registry) return;
    const repository = registryRepositoryOf(registry, deploymentId);
    const where = { deployment_id: deploymentId, repository: `${registry.host}/${repository}` };
    try {
      const api = await this.api();
      const tags = await api.tags(repository);
      const digests = new Set<string>();
      for (const tag of tags) {
        const manifest = await api.manifest(repository, tag);
        if (manifest) digests.add(manifest.digest);
      }
      for (const digest of digests) {
        if (!(await api.deleteManifest(repository, digest))) {
          logger.warn(where, "the registry does not allow deletes: the deployment's pushed images stay");
          return;
        }
      }
      if (tags.length > 0) logger.info({ ...where, tags }, "deleted the deployment's pushed images from the registry");
    } catch (err) {
      logger.warn({ ...where, err }, "deleting the deployment's pushed images from the registry failed: they stay");
    }
  }

  private engineBuilds(): ImageBuilds {
    if (!this.local) throw new DeployError(this.unavailable("built")!);
    return this.local;
  }

  private registry(): ImageRegistry {
    if (!this.options.registry) throw new DeployError(this.unavailable("built")!);
    return this.options.registry;
  }

  private async api(): Promise<RegistryApi> {
    return new RegistryApi(this.registry().host, await this.login());
  }

  /** The registry's login from the secret source, read at each use (a changed file needs no restart); none: anonymous. */
  private login() {
    return this.options.secrets.optionalLogin(REGISTRY_SECRET, "--image-registry");
  }
}

function tagOf(ref: string): string {
  return ref.slice(ref.lastIndexOf(":") + 1);
}

/**
 * A cluster listener's builds: with --image-registry, built on the engine at
 * `engine` (default DOCKER_HOST, else the standard socket), connected now. An
 * engine that does not answer does not stop the listener (external images
 * need none): each built revision fails with the reason instead.
 */
export async function connectClusterImages(
  registry: ImageRegistry | undefined,
  engineAddress: string | undefined,
  workDir: string,
  secrets: SecretSource,
  logger: Logger,
): Promise<ClusterImages> {
  if (!registry) return new ClusterImages({ workDir, secrets, logger });
  try {
    const engine = await connectEngine(engineAddress, engineSettings());
    const where = `${registry.host}/${registry.path}`;
    logger.info({ engine: engine.address, registry: where }, "building revision images for the cluster");
    return new ClusterImages({ registry, engine, workDir, secrets, logger });
  } catch (error) {
    const engineProblem = (error as Error).message;
    logger.warn({ err: error }, "no container engine: internal_source and repo_host revisions will fail");
    return new ClusterImages({ registry, engineProblem, workDir, secrets, logger });
  }
}
