import type { BaseStore } from "@langchain/langgraph-checkpoint";
import type { Logger } from "pino";
import type { GraphRegistry } from "../../graphs/registry.js";
import type { Storage } from "../../storage/types.js";
import type { Tracing } from "../../tracing/tracing.js";
import type { RunBroker } from "../brokers/broker.js";
import type { WebhookQueue } from "../webhooks/payload.js";
import type { RunControl } from "./run-control.js";
import type { RunStats } from "./run-stats.js";

/** What executing a run needs from the process around it. */
export interface ExecutorDeps {
  storage: Storage;
  graphs: GraphRegistry;
  broker: RunBroker;
  control: RunControl;
  logger: Logger;
  maxAttempts: number;
  /** Runs taking longer end as `timeout`; 0 disables the limit. */
  runTimeoutMs: number;
  /**
   * When the broker cannot carry a run's output and events to other processes
   * (LISTEN/NOTIFY mode), a stateless run is logged like any other and its
   * thread deleted this long after its end, so followers elsewhere can read it.
   */
  statelessKeepMs?: number;
  /** How long a run's events may wait before they are written to its log (see EVENT_LOG_INTERVAL_MS). */
  eventLogIntervalMs?: number;
  /** The long-term memory store graphs see as `config.store` / `getStore()`. */
  store?: BaseStore;
  /** Traces runs and makes their feedback URLs, when tracing is configured. */
  tracing?: Tracing;
  /** Runs with a webhook get their delivery written with their end (the outbox); without it, none. */
  webhooks?: WebhookQueue;
  /** The address runs name as their server's (`langgraph_api_url`): LANGGRAPH_API_URL, else this server's once it listens (a worker has none). */
  apiUrl?: () => string | undefined;
  /** Counts the runs whose end this process recorded, with their durations (GET /metrics). */
  stats?: RunStats;
}
