import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { type BuildLog, BuildError } from "../build/build.js";
import { DeployError } from "../compute/types.js";
import { buildRevisionImage } from "../build/image/revision-image.js";
import { type ContainerEngine, imageExists, imageIdOf, listImages, pullImage, removeImage } from "../engine/docker-engine.js";
import type { RegistryCredentials } from "./secret-source.js";
import type { AssignedRevision } from "@berth/listener-protocol";
import type { Logger } from "@berth/service-kit";
import { secretEnvOf } from "./revision-spec.js";

/** The engine's errors when a layer it was using as cache was removed under it. */
const LOST_LAYER = /failed to get digest|No such image|no such file or directory.*image\/|unknown parent image ID/;

/**
 * A container listener's builds: `internal_source` revisions become images in
 * the engine, tagged per deployment and build key, so a revision with the
 * same source (a secrets or resources change, a rollback) reuses its image.
 */
export class ImageBuilds {
  constructor(
    private readonly engine: ContainerEngine,
    private readonly workDir: string,
  ) {}

  /** The image's tag for a build key (`<deployment id>/<hash>`). */
  tagOf(deploymentId: string, key: string): string {
    return `berth/deployment-${deploymentId}:${key.split("/").at(-1)}`;
  }

  /** The tag of the key's image, when the engine has it. */
  async find(deploymentId: string, key: string): Promise<string | undefined> {
    const image = this.tagOf(deploymentId, key);
    return (await imageExists(this.engine, image)) ? image : undefined;
  }

  /** The content id of an image the engine has (recorded on the revision that runs it). */
  async digestOf(image: string): Promise<string | undefined> {
    return imageIdOf(this.engine, image);
  }

  async build(
    deploymentId: string,
    key: string,
    revision: AssignedRevision,
    tarball: string,
    log: BuildLog,
    signal: AbortSignal,
  ): Promise<string> {
    const workDir = join(this.workDir, revision.id);
    await rm(workDir, { recursive: true, force: true });
    await mkdir(workDir, { recursive: true });
    const buildOnce = () =>
      buildRevisionImage(this.engine, {
        tarball,
        graphConfigPath: revision.spec.build.graph_config_path ?? "langgraph.json",
        installCommand: revision.spec.build.install_command,
        buildCommand: revision.spec.build.build_command,
        workDir,
        tag: this.tagOf(deploymentId, key),
        labels: { "berth.managed": "image", "berth.deployment": deploymentId, "berth.revision": revision.id },
        checkEnv: secretEnvOf(revision),
        log,
        signal,
      });
    try {
      let built: Awaited<ReturnType<typeof buildOnce>>;
      try {
        built = await buildOnce();
      } catch (error) {
        // Removing another deployment's image prunes its untagged parents, which a build running beside it may have
        // been reusing as cache: the engine then loses a layer mid-build. Once more finds a consistent cache.
        if (signal.aborted || !LOST_LAYER.test((error as Error).message)) throw error;
        log({
          level: "info",
          message: "The engine lost a cached layer during the build (an image was removed meanwhile): building again",
        });
        await rm(workDir, { recursive: true, force: true });
        await mkdir(workDir, { recursive: true });
        built = await buildOnce();
      }
      return built.tag;
    } catch (error) {
      if (error instanceof BuildError || signal.aborted) throw error;
      throw new BuildError(`The image build failed: ${(error as Error).message}`);
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  }

  /**
   * Pulls an external image. When the registry cannot be reached but the
   * engine has the image already, that copy runs (logged as a warning);
   * otherwise the engine's reason fails the deploy.
   */
  async pull(image: string, auth: RegistryCredentials | undefined, log: BuildLog): Promise<void> {
    try {
      await pullImage(this.engine, image, { auth, log });
    } catch (error) {
      if (!(await imageExists(this.engine, image))) throw new DeployError(`Pulling ${image} failed: ${(error as Error).message}`);
      log({ level: "error", message: `Pulling ${image} failed (${(error as Error).message}): running the engine's copy` });
    }
  }

  /** Removes the deleted deployment's images (removeAll); those that stay are logged. */
  async removeDeployment(deploymentId: string, logger: Logger): Promise<void> {
    const kept = await this.removeAll(deploymentId);
    if (kept.length > 0)
      logger.warn(
        { deployment_id: deploymentId, images: kept },
        "the deleted deployment's images stay: other containers use them",
      );
  }

  /**
   * Removes the deployment's own image tags and its named volumes (it was deleted). Tags go by name, so a retag or a
   * pulled copy sharing an image's id keeps it. An image some other container still runs stays: removing it is
   * refused for as long as that container runs, and the teardown goes on without it. Answers what stayed, and why.
   */
  async removeAll(deploymentId: string): Promise<string[]> {
    const label = { label: [`berth.deployment=${deploymentId}`] };
    // Its own repositories: berth/deployment-<id> here, and <registry>/<path>/deployment-<id> it was pushed as (a cluster's).
    const isOwn = (tag: string) => tag.slice(0, tag.lastIndexOf(":")).split("/").at(-1) === `deployment-${deploymentId}`;
    const kept: string[] = [];
    for (const image of await listImages(this.engine, label)) {
      const tags = (image.RepoTags ?? []).filter((name) => name !== "<none>:<none>");
      // An untagged one (a build's tag moved on) goes by its id.
      const refs = tags.length === 0 ? [image.Id] : tags.filter(isOwn);
      for (const ref of refs) {
        try {
          await removeImage(this.engine, ref, { force: false });
        } catch (error) {
          if ((error as { statusCode?: number }).statusCode !== 409) throw error;
          kept.push(`${ref}: ${(error as Error).message}`);
        }
      }
    }
    const { Volumes: volumes } = await this.engine.docker.listVolumes({ filters: label });
    for (const volume of volumes ?? []) await this.engine.docker.getVolume(volume.Name).remove();
    return kept;
  }
}
