import type Docker from "dockerode";
import { isAbsolute, normalize, sep } from "node:path";
import type { ContainerEngine } from "../../engine/docker-engine.js";
import { DeployError } from "../types.js";

/** A mount as the Engine API takes it. */
export type EngineMount = Docker.MountSettings;

/** Where the platform mounts its own things: a volume may not hide them. */
const RESERVED_TARGETS = ["/data", "/tmp", "/proc", "/sys", "/dev"];

/**
 * resource_spec.volumes and volume_mounts (Kubernetes' shapes) as engine
 * mounts: `emptyDir` → a tmpfs of each container; `persistentVolumeClaim` →
 * a named volume of the deployment (`berth-<deployment id>-<claimName>`,
 * kept across revisions, removed with the deployment); `hostPath` → a bind
 * mount, only under a folder of the listener's allow-list. Anything else is
 * refused with the reason, before a container is created.
 */
export function volumeMounts(
  deploymentId: string,
  volumes: unknown,
  mounts: unknown,
  bindAllowList: readonly string[],
): EngineMount[] {
  const declared = new Map<string, Record<string, unknown>>();
  for (const volume of asObjects(volumes, "volumes")) {
    const name = volume.name;
    if (typeof name !== "string" || name === "") throw new DeployError("resource_spec.volumes: every volume needs a name");
    declared.set(name, volume);
  }
  return asObjects(mounts, "volume_mounts").map((mount) => {
    const name = String(mount.name ?? "");
    const volume = declared.get(name);
    if (!volume) throw new DeployError(`resource_spec.volume_mounts: no volume named "${name}" in resource_spec.volumes`);
    const target = mount.mountPath;
    if (typeof target !== "string" || !isAbsolute(target))
      throw new DeployError(`resource_spec.volume_mounts: ${name} needs an absolute mountPath`);
    const clean = normalize(target);
    if (RESERVED_TARGETS.some((reserved) => clean === reserved || clean.startsWith(`${reserved}/`)))
      throw new DeployError(`resource_spec.volume_mounts: ${name} may not be mounted at ${clean} (the platform's own)`);
    if (mount.subPath !== undefined) throw new DeployError(`resource_spec.volume_mounts: ${name}: subPath is not supported`);
    const readOnly = mount.readOnly === true;
    if (isObject(volume.emptyDir)) {
      const size = volume.emptyDir.sizeLimit;
      const tmpfs: EngineMount = { Type: "tmpfs", Source: "", Target: clean };
      if (typeof size === "string") tmpfs.TmpfsOptions = { SizeBytes: bytes(size, name), Mode: 0o1777 };
      return tmpfs;
    }
    if (isObject(volume.persistentVolumeClaim)) {
      const claim = volume.persistentVolumeClaim.claimName;
      if (typeof claim !== "string" || !/^[a-z0-9][a-z0-9_.-]*$/i.test(claim))
        throw new DeployError(`resource_spec.volumes: ${name}: persistentVolumeClaim.claimName must be a plain name`);
      return {
        Type: "volume",
        Source: `berth-${deploymentId}-${claim}`,
        Target: clean,
        ReadOnly: readOnly,
        VolumeOptions: {
          NoCopy: false,
          Labels: { "berth.managed": "volume", "berth.deployment": deploymentId },
          DriverConfig: { Name: "local", Options: {} },
        },
      };
    }
    if (isObject(volume.hostPath)) {
      const path = volume.hostPath.path;
      const allowed =
        typeof path === "string" &&
        isAbsolute(path) &&
        bindAllowList.some(
          (folder) => normalize(path) === folder || normalize(path).startsWith(folder.endsWith(sep) ? folder : folder + sep),
        );
      if (!allowed)
        throw new DeployError(
          `resource_spec.volumes: ${name}: hostPath ${String(path)} is not under a folder this listener allows (BERTH_CONTAINER_BIND_ALLOW)`,
        );
      return { Type: "bind", Source: normalize(path), Target: clean, ReadOnly: readOnly };
    }
    const kind = Object.keys(volume).find((key) => key !== "name") ?? "none";
    throw new DeployError(
      `resource_spec.volumes: ${name}: volume type ${kind} is not supported by container compute (emptyDir, persistentVolumeClaim and hostPath are)`,
    );
  });
}

/**
 * Creates the named volumes of `mounts` with their labels before a container uses them (at once when they
 * exist): podman's engine creates a mount's volume without its VolumeOptions.Labels, and the labels are
 * how the deployment's volumes are found to remove them.
 */
export async function createNamedVolumes(engine: ContainerEngine, mounts: readonly EngineMount[]): Promise<void> {
  for (const mount of mounts) {
    if (mount.Type !== "volume" || !mount.Source) continue;
    try {
      await engine.docker.createVolume({
        Name: mount.Source,
        Driver: mount.VolumeOptions?.DriverConfig?.Name ?? "local",
        Labels: mount.VolumeOptions?.Labels ?? {},
      });
    } catch (error) {
      // Docker answers an existing volume as created; an engine that says it exists is saying the same.
      if ((error as { statusCode?: number }).statusCode !== 409) throw error;
    }
  }
}

function asObjects(value: unknown, field: string): Record<string, unknown>[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every(isObject)) throw new DeployError(`resource_spec.${field} must be a list of objects`);
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Kubernetes quantities as emptyDir.sizeLimit takes them: 64Mi, 1Gi, 500M, or bytes. */
function bytes(quantity: string, name: string): number {
  const match = /^(\d+)(Ki|Mi|Gi|K|M|G)?$/.exec(quantity);
  if (!match) throw new DeployError(`resource_spec.volumes: ${name}: emptyDir.sizeLimit ${quantity} is not a quantity like 64Mi`);
  const unit = { Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, K: 1e3, M: 1e6, G: 1e9 }[match[2] ?? ""] ?? 1;
  return Number(match[1]) * unit;
}
