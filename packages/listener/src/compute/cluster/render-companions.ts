import type { V1Container, V1LocalObjectReference, V1SecurityContext, V1Volume, V1VolumeMount } from "@kubernetes/client-node";
import { DeployError } from "../types.js";
import { companionResourcesOf } from "./render-spec.js";

/*
 * The object fields of resource_spec (volumes, volume_mounts,
 * init_containers, sidecars, image_pull_secrets, service_account_name),
 * checked for the shape the pod needs and copied, so that the rendered
 * objects share nothing with the input.
 */

/** The pod's own volumes; resource_spec may not take their names or mount over their paths. */
export const TMP_VOLUME = "berth-tmp";
export const DATA_VOLUME = "berth-data";
const RESERVED_VOLUMES = [TMP_VOLUME, DATA_VOLUME];
const RESERVED_PATHS = ["/data", "/tmp"];
/** The user Berth's images run as (nobody), as on the docker listener. */
export const NOBODY = 65534;

export interface PodExtras {
  volumes: V1Volume[];
  volumeMounts: V1VolumeMount[];
  initContainers: V1Container[];
  sidecars: V1Container[];
  imagePullSecrets: V1LocalObjectReference[];
  serviceAccountName: string | null;
}

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value);

function objectsOf(raw: JsonObject, field: string): JsonObject[] {
  const value = raw[field];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every(isObject)) throw new DeployError(`resource_spec.${field} must be a list of objects`);
  return value.map((item) => structuredClone(item));
}

function nameOf(item: JsonObject, field: string, index: number): string {
  if (typeof item.name !== "string" || item.name === "") throw new DeployError(`resource_spec.${field}[${index}] needs a name`);
  return item.name;
}

export function podExtrasOf(resourceSpec: JsonObject | null): PodExtras {
  const raw = resourceSpec ?? {};
  const volumes = objectsOf(raw, "volumes");
  const volumeNames = volumes.map((volume, index) => {
    const name = nameOf(volume, "volumes", index);
    if (RESERVED_VOLUMES.includes(name)) throw new DeployError(`resource_spec.volumes: the name ${name} is the platform's own`);
    // A node's file system is not a deployment's to mount (the docker listener refuses it unless allowed).
    if (volume.hostPath !== undefined)
      throw new DeployError(`resource_spec.volumes: ${name}: hostPath is not allowed on a cluster`);
    return name;
  });
  const volumeMounts = objectsOf(raw, "volume_mounts").map((mount, index) => {
    const name = nameOf(mount, "volume_mounts", index);
    if (!volumeNames.includes(name))
      throw new DeployError(`resource_spec.volume_mounts: no volume named "${name}" in resource_spec.volumes`);
    if (typeof mount.mountPath !== "string" || !mount.mountPath.startsWith("/"))
      throw new DeployError(`resource_spec.volume_mounts: ${name} needs an absolute mountPath`);
    const path = mount.mountPath.replace(/\/+$/, "") || "/";
    if (path === "/" || RESERVED_PATHS.some((reserved) => path === reserved || path.startsWith(`${reserved}/`)))
      throw new DeployError(`resource_spec.volume_mounts: ${name} may not be mounted at ${path} (the platform's own)`);
    return mount as unknown as V1VolumeMount;
  });
  const imagePullSecrets = objectsOf(raw, "image_pull_secrets").map((entry, index) => ({
    name: nameOf(entry, "image_pull_secrets", index),
  }));
  const account = raw.service_account_name;
  if (account !== undefined && account !== null && (typeof account !== "string" || account === ""))
    throw new DeployError("resource_spec.service_account_name must be a name");
  return {
    volumes: volumes as unknown as V1Volume[],
    volumeMounts,
    initContainers: containersOf(raw, "init_containers"),
    sidecars: containersOf(raw, "sidecars"),
    imagePullSecrets,
    serviceAccountName: typeof account === "string" ? account : null,
  };
}

/**
 * Init containers and sidecars: Kubernetes containers, given the platform's protections unless they set their own,
 * and every limit their resources leave out.
 */
function containersOf(raw: JsonObject, field: "init_containers" | "sidecars"): V1Container[] {
  return objectsOf(raw, field).map((container, index) => {
    const name = nameOf(container, field, index);
    if (typeof container.image !== "string" || container.image === "")
      throw new DeployError(`resource_spec.${field}[${index}] (${name}) needs an image`);
    if (container.securityContext !== undefined && !isObject(container.securityContext))
      throw new DeployError(`resource_spec.${field}[${index}].securityContext must be an object`);
    if (container.resources !== undefined && !isObject(container.resources))
      throw new DeployError(`resource_spec.${field}[${index}].resources must be an object`);
    return {
      ...container,
      securityContext: container.securityContext ?? companionSecurity(),
      resources: companionResourcesOf(container.resources as V1Container["resources"]),
    } as unknown as V1Container;
  });
}

/** What every container gets: no privilege gained through setuid binaries, every capability dropped. */
export function companionSecurity(): V1SecurityContext {
  return { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } };
}

/**
 * The server's: the companions' protections, and for Berth's images (which
 * write only /data and /tmp) a read-only root as nobody, as the docker listener
 * runs them. An external image keeps its user and a writable root: where it
 * writes is unknown.
 */
export function serverSecurity(berthImage: boolean): V1SecurityContext {
  if (!berthImage) return companionSecurity();
  return { ...companionSecurity(), runAsNonRoot: true, runAsUser: NOBODY, runAsGroup: NOBODY, readOnlyRootFilesystem: true };
}
