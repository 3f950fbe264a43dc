import { type ConfigurationOptions, Observable, type ObservableMiddleware } from "@kubernetes/client-node";
import type { ClusterConnection } from "./cluster-connection.js";
import { apiErrorMessage, apiStatusCode } from "./delete-objects.js";

export interface PodLogOptions {
  /** RFC 3339 time: only lines from then on. */
  sinceTime?: string;
  /** The last lines of each container. */
  tailLines?: number;
}

/**
 * The logs of every container (init containers too) of every pod of a
 * deployment, one string a line: `<timestamp> [<pod>/<container>] <text>`,
 * merged across containers in time order. A container that has not started
 * yet (or a pod gone meanwhile) contributes nothing.
 */
export async function readPodLogs(
  connection: ClusterConnection,
  namespace: string,
  deploymentId: string,
  options: PodLogOptions = {},
): Promise<string[]> {
  const pods = await connection.core.listNamespacedPod({ namespace, labelSelector: `berth.dev/deployment=${deploymentId}` });
  const reads: Promise<string[]>[] = [];
  for (const pod of pods.items) {
    const podName = pod.metadata?.name ?? "";
    const containers = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
    for (const container of containers) {
      reads.push(readContainerLog(connection, namespace, podName, container.name, options));
    }
  }
  const lines = (await Promise.all(reads)).flat();
  // Stable: lines of one container with the same timestamp keep their order.
  return lines.sort((a, b) => compareTimestamps(a.slice(0, a.indexOf(" ")), b.slice(0, b.indexOf(" "))));
}

async function readContainerLog(
  connection: ClusterConnection,
  namespace: string,
  pod: string,
  container: string,
  options: PodLogOptions,
): Promise<string[]> {
  let text: string;
  try {
    text = await connection.core.readNamespacedPodLog(
      { name: pod, namespace, container, timestamps: true, tailLines: options.tailLines },
      options.sinceTime ? withQueryParam("sinceTime", options.sinceTime) : undefined,
    );
  } catch (error) {
    // 400: the container is waiting to start; 404: the pod is gone.
    const code = apiStatusCode(error);
    if (code === 400 || code === 404) return [];
    throw new Error(`Could not read the logs of ${pod}/${container}: ${apiErrorMessage(error)}`, { cause: error });
  }
  const lines: string[] = [];
  for (const line of text.split("\n")) {
    if (!line) continue;
    const space = line.indexOf(" ");
    const timestamp = space < 0 ? line : line.slice(0, space);
    const rest = space < 0 ? "" : line.slice(space + 1);
    lines.push(`${timestamp} [${pod}/${container}] ${rest}`);
  }
  return lines;
}

/** The generated client (1.4) has no sinceTime parameter though the API has: add it to the request's query. */
function withQueryParam(name: string, value: string): ConfigurationOptions {
  const addParam: ObservableMiddleware = {
    pre: (context) => {
      context.setQueryParam(name, value);
      return new Observable(Promise.resolve(context));
    },
    post: (context) => new Observable(Promise.resolve(context)),
  };
  return { middleware: [addParam], middlewareMergeStrategy: "append" };
}

/** RFC 3339 times compared exactly: Go trims trailing zeros of the fraction, so text order is not time order. */
export function compareTimestamps(a: string, b: string): number {
  const [secondsA = "", fractionA = ""] = a.replace(/Z$/, "").split(".");
  const [secondsB = "", fractionB = ""] = b.replace(/Z$/, "").split(".");
  const bySeconds = Date.parse(`${secondsA}Z`) - Date.parse(`${secondsB}Z`);
  if (bySeconds || Number.isNaN(bySeconds)) return Number.isNaN(bySeconds) ? 0 : bySeconds;
  return fractionA.padEnd(9, "0").localeCompare(fractionB.padEnd(9, "0"));
}
