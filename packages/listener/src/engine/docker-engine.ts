import Docker from "dockerode";
import type { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { type HostFirewall, hostFirewallFor } from "./host-firewall.js";
import { BUILD_NETWORK, ensureIsolatedNetwork } from "./isolated-network.js";

/** A line of an image build or pull, for the build log. */
export type EngineLog = (line: { level: "info" | "error"; message: string }) => void;

/** A Docker Engine API (Docker Engine, or podman's compatible service) the container compute and image builds use. */
export interface ContainerEngine {
  readonly docker: Docker;
  /** `unix:///path` or `tcp://host:port`, for messages. */
  readonly address: string;
  /** Keeps containers of Berth's networks off the host and private ranges (none: the reason is in firewallOff). */
  readonly firewall?: HostFirewall;
  readonly firewallOff?: string;
  /** The Node base image every image built on this engine starts from (scripts/node-base-image.sh makes the default). */
  readonly baseImage: string;
}

/** How a listener uses an engine (read by its settings module). */
export interface EngineOptions {
  /** BERTH_CONTAINER_FIREWALL: `iptables`, `off`, or empty (iptables when it can). */
  firewall?: string;
  /** BERTH_NODE_BASE_IMAGE; default `berth/node-base:<node major>`. */
  baseImage?: string;
}

/**
 * Connects to the engine at `address` (default: DOCKER_HOST, else the
 * standard socket) and checks that it answers, so that a listener configured
 * for containers fails at start with the reason rather than at each deploy.
 */
export async function connectEngine(
  address = process.env.DOCKER_HOST || "unix:///var/run/docker.sock",
  options: EngineOptions = {},
): Promise<ContainerEngine> {
  const docker = new Docker(connectionOf(address));
  try {
    await docker.ping();
  } catch (error) {
    throw new Error(`The container engine at ${address} does not answer: ${(error as Error).message}`);
  }
  const { firewall, reason } = await hostFirewallFor(address, options.firewall ?? "");
  const baseImage = options.baseImage || `berth/node-base:${process.versions.node.split(".")[0]}`;
  return { docker, address, firewall, firewallOff: reason, baseImage };
}

function connectionOf(address: string): Docker.DockerOptions {
  if (address.startsWith("unix://")) return { socketPath: address.slice("unix://".length) };
  if (address.startsWith("/")) return { socketPath: address };
  const url = new URL(address.replace(/^tcp:/, "http:"));
  return { host: url.hostname, port: Number(url.port || 2375), protocol: "http" };
}

export async function imageExists(engine: ContainerEngine, ref: string): Promise<boolean> {
  return (await imageIdOf(engine, ref)) !== undefined;
}

/** The image's content id (`sha256:…`), or undefined when the engine does not have it. */
export async function imageIdOf(engine: ContainerEngine, ref: string): Promise<string | undefined> {
  try {
    return (await engine.docker.getImage(ref).inspect()).Id;
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) return undefined;
    throw error;
  }
}

/**
 * Builds `context` (a tar stream with a Dockerfile at its root) into `tag`,
 * passing the engine's output to `log`; resolves with the image id, rejects
 * with the failed step's message. Its steps run on the build network: the
 * internet, not the host nor private ranges, nor another build's containers.
 */
export async function buildImage(
  engine: ContainerEngine,
  context: Readable,
  options: { tag: string; labels?: Record<string, string>; log: EngineLog; signal?: AbortSignal },
): Promise<string> {
  await ensureIsolatedNetwork(engine, BUILD_NETWORK, {
    labels: { "berth.managed": "network" },
    interContainer: false,
  });
  // A context that fails while it is read (a file removed meanwhile) reaches the engine cut short, which builds and
  // tags what it got: such an image is removed, and the build fails.
  let packing: Error | undefined;
  context.once("error", (error) => {
    packing = error;
  });
  const stream = await engine.docker.buildImage(context, {
    t: options.tag,
    networkmode: BUILD_NETWORK,
    labels: options.labels,
    rm: true,
    forcerm: true,
    abortSignal: options.signal,
  });
  await followProgress(engine, stream as Readable, options.log).catch((error: Error) => {
    throw packing ?? error;
  });
  if (packing) {
    await removeImage(engine, options.tag).catch(() => {});
    throw new Error(`Packing the build context failed: ${packing.message}`);
  }
  const image = await engine.docker.getImage(options.tag).inspect();
  return image.Id;
}

/**
 * Runs `cmd` in a container of `image` to its end, as an unprivileged user with a read-only root and a /tmp of its
 * own, on the build network; answers its exit code and output (stdout and stderr, in order). The container is removed.
 */
export async function runToCompletion(
  engine: ContainerEngine,
  options: { image: string; cmd: string[]; env: Record<string, string>; labels: Record<string, string>; timeoutMs: number },
): Promise<{ code: number | null; output: string; timedOut: boolean }> {
  const container = await engine.docker.createContainer({
    Image: options.image,
    Cmd: options.cmd,
    Env: Object.entries({ ...options.env, HOME: "/tmp" }).map(([name, value]) => `${name}=${value}`),
    User: "65534:65534",
    Labels: options.labels,
    HostConfig: {
      NetworkMode: BUILD_NETWORK,
      ReadonlyRootfs: true,
      Tmpfs: { "/tmp": "rw,noexec,nosuid,nodev,size=512m" },
      SecurityOpt: ["no-new-privileges"],
      CapDrop: ["ALL"],
      PidsLimit: 1024,
    },
  });
  try {
    const exited = container.wait({ condition: "next-exit" }) as Promise<{ StatusCode: number }>;
    await container.start();
    const timer = new AbortController();
    const exit = await Promise.race([
      exited,
      sleep(options.timeoutMs, undefined, { signal: timer.signal }).catch(() => undefined),
    ]).finally(() => timer.abort());
    if (!exit) await container.kill().catch(() => {});
    const output = demultiplexed(await container.logs({ stdout: true, stderr: true }));
    return { code: exit?.StatusCode ?? null, output, timedOut: !exit };
  } finally {
    await container.remove({ force: true }).catch(() => {});
  }
}

/** The text of a non-following log read: frames of an 8-byte header (stream, 0, 0, 0, length) and their payload. */
export function demultiplexed(frames: Buffer): string {
  const parts: Buffer[] = [];
  for (let at = 0; at + 8 <= frames.length; ) {
    const length = frames.readUInt32BE(at + 4);
    parts.push(frames.subarray(at + 8, at + 8 + length));
    at += 8 + length;
  }
  return Buffer.concat(parts).toString("utf8");
}

/** Pulls `ref` (with registry credentials when given); rejects with the engine's reason. */
export async function pullImage(
  engine: ContainerEngine,
  ref: string,
  options: { auth?: { username: string; password: string; serveraddress: string }; log: EngineLog },
): Promise<void> {
  const stream = (await engine.docker.pull(ref, options.auth ? { authconfig: options.auth } : {})) as Readable;
  await followProgress(engine, stream, options.log);
}

/**
 * The engine's images matching `filters`. podman's engine before 4.6 fails a listing when one of the images
 * it lists is removed meanwhile ("image not known"): the listing is asked for again.
 */
export async function listImages(engine: ContainerEngine, filters: Record<string, string[]>): Promise<Docker.ImageInfo[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await engine.docker.listImages({ filters });
    } catch (error) {
      if (attempt >= 5 || !/image not known/.test((error as Error).message)) throw error;
    }
  }
}

/**
 * Removes an image, quietly when it is gone already; rejects while a container still uses it. With `force` (the
 * default) an id removes every tag of the image; without it a tag of an image that has others only loses that tag.
 */
export async function removeImage(engine: ContainerEngine, ref: string, options: { force?: boolean } = {}): Promise<void> {
  try {
    await engine.docker.getImage(ref).remove({ force: options.force ?? true });
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode !== 404) throw error;
  }
}

interface ProgressEvent {
  stream?: string;
  status?: string;
  error?: string;
  errorDetail?: { message?: string };
}

function followProgress(engine: ContainerEngine, stream: Readable, log: EngineLog): Promise<void> {
  return new Promise((resolve, reject) => {
    let failure: string | undefined;
    engine.docker.modem.followProgress(
      stream,
      (error: Error | null) => {
        if (error) reject(error);
        else if (failure) reject(new Error(failure));
        else resolve();
      },
      (event: ProgressEvent) => {
        if (event.error) {
          failure = event.errorDetail?.message ?? event.error;
          log({ level: "error", message: failure });
          return;
        }
        const text = (event.stream ?? event.status ?? "").trimEnd();
        for (const line of text.split("\n")) if (line.trim()) log({ level: "info", message: line });
      },
    );
  });
}
