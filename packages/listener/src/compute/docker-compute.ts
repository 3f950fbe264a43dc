import type { ContainerEngine } from "../engine/docker-engine.js";
import { launchContainer } from "./container/container-launch.js";
import { SupervisedCompute, type SupervisedComputeOptions } from "./supervised-compute.js";

/**
 * Runs revisions as containers through a Docker Engine API (Docker Engine or
 * podman's service) and keeps them running exactly as local processes are:
 * health check, restarts with backoff, status events, graceful stop.
 */
export class DockerCompute extends SupervisedCompute {
  constructor(
    private readonly engine: ContainerEngine,
    /** Identifies this listener's containers (its data dir): the leftovers of a crash are its own to remove. */
    private readonly owner: string,
    options: SupervisedComputeOptions & { bindAllowList?: readonly string[] },
  ) {
    super(options, (spec, launchOptions) =>
      launchContainer(engine, spec, {
        ...launchOptions,
        ownerLabels: { "berth.listener": owner },
        bindAllowList: options.bindAllowList ?? [],
      }),
    );
  }

  /** Removes the containers (servers, sidecars, init containers) a previous run of this listener left; returns how many. */
  async removeLeftovers(): Promise<number> {
    const containers = await this.engine.docker.listContainers({
      all: true,
      filters: { label: [`berth.listener=${this.owner}`] },
    });
    // Sidecars and init containers first: podman's engine refuses to remove a container whose network another one joined.
    const companionsFirst = [
      containers.filter((info) => info.Labels["berth.managed"] !== "server"),
      containers.filter((info) => info.Labels["berth.managed"] === "server"),
    ];
    for (const group of companionsFirst)
      await Promise.all(group.map((info) => this.engine.docker.getContainer(info.Id).remove({ force: true })));
    return containers.length;
  }
}
