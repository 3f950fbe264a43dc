import { FeedbackService, type FeedbackSettings } from "./feedback.js";
import { TracingIngest } from "./ingest.js";
import { TracingReader } from "./reads.js";
import type { Caller } from "../api-keys/authenticate.js";
import type { TracingStore } from "../storage/tracing-types.js";
import type { DeploymentStore } from "../storage/types.js";
import { type TracingScope, tracingScopeOf } from "./scope.js";

export type TracingSettings = FeedbackSettings;

/** The tracing service of the control plane: ingestion, feedback (and its tokens), reads. */
export interface TracingService {
  ingest: TracingIngest;
  feedback: FeedbackService;
  reader: TracingReader;
  /** What the caller may reach: its workspace, or a deployment's tracing key its deployment's project only. */
  scopeOf(caller: Caller): Promise<TracingScope>;
}

export function createTracingService(
  store: TracingStore,
  deployments: Pick<DeploymentStore, "getAny">,
  settings: TracingSettings,
): TracingService {
  return {
    ingest: new TracingIngest(store),
    feedback: new FeedbackService(store, settings),
    reader: new TracingReader(store),
    scopeOf: (caller) => tracingScopeOf(caller, deployments),
  };
}
