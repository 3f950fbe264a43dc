import { EnvError } from "@berth/service-kit";
import { remoteHead } from "../build/git/fetch.js";
import type { AssignedRevision, Assignment } from "@berth/listener-protocol";
import { buildKeyOf } from "./artifacts.js";
import { repositoryOf } from "./revision-spec.js";

/** Where a cluster listener pushes the images it builds (`--image-registry HOST[:PORT]/PATH`, docs/cluster.md). */
export interface ImageRegistry {
  /** HOST[:PORT]: what the engine pushes to and the registry's API answers at. */
  host: string;
  /** The prefix of the deployments' repositories in it ("" for none). */
  path: string;
}

/** A component of a repository path, as registries accept them (lower case). */
const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const HOST = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:]+\])(?::\d{1,5})?$/;

/** Reads `--image-registry`; throws with what is wrong (an EnvError: the CLI prints it), so the listener does not start. */
export function parseImageRegistry(value: string): ImageRegistry {
  const wrong = (why: string) =>
    new EnvError(
      `--image-registry (BERTH_CLUSTER_IMAGE_REGISTRY) must be HOST[:PORT]/PATH, such as registry.example.com/berth: ${why}`,
    );
  const [host = "", ...rest] = value.trim().replace(/\/+$/, "").split("/");
  if (!HOST.test(host)) throw wrong(`"${host}" is not a host name with an optional port`);
  // Without a dot, a port or "localhost", engines take the first component for a Docker Hub namespace.
  if (!/[.:]/.test(host) && host !== "localhost") throw wrong(`"${host}" would be read as a Docker Hub namespace`);
  const bad = rest.find((component) => !PATH_COMPONENT.test(component));
  if (bad !== undefined) throw wrong(`"${bad}" is not a repository path component (lower-case letters, digits, . _ -)`);
  return { host, path: rest.join("/") };
}

/** The deployment's repository in the registry (its API's name for it): every build of the deployment is a tag of it. */
export function registryRepositoryOf(registry: ImageRegistry, deploymentId: string): string {
  return registry.path ? `${registry.path}/deployment-${deploymentId}` : `deployment-${deploymentId}`;
}

/** The reference a build is pushed as: tagged with its build key's hash, as the engine's local image is. */
export function pushedRefOf(registry: ImageRegistry, deploymentId: string, key: string): string {
  return `${registry.host}/${registryRepositoryOf(registry, deploymentId)}:${key.split("/").at(-1)}`;
}

/**
 * The reference a built revision runs on the cluster, without building
 * (`berth listener --render`): from its build key, which needs the upload's
 * hash, or for repo_host the commit (the one it was built at, else where its
 * ref points now, asked with `git ls-remote`).
 */
export async function plannedRefOf(registry: ImageRegistry, assignment: Assignment, revision: AssignedRevision): Promise<string> {
  let hash = revision.tarball_sha256;
  if (revision.source === "repo_host") {
    const { repo_commit_sha: recorded, repository } = revision.spec;
    const commit = recorded ?? (repository ? await remoteHead(repositoryOf(repository)) : undefined);
    if (!commit) throw new Error(`The repository of revision ${revision.number} or its ref cannot be found`);
    hash = `git:${commit}`;
  }
  if (!hash) throw new Error(`Revision ${revision.number} has no uploaded source tarball`);
  const key = buildKeyOf({ tenantId: assignment.tenant_id, deploymentId: assignment.id }, revision, hash);
  return pushedRefOf(registry, assignment.id, key);
}
