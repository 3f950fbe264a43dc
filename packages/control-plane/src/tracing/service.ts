import { FeedbackService, type FeedbackSettings } from "./feedback.js";
import { TracingIngest } from "./ingest.js";
import { TracingReader } from "./reads.js";
import type { TracingStore } from "../storage/tracing-types.js";

export type TracingSettings = FeedbackSettings;

/** The tracing service of the control plane: ingestion, feedback (and its tokens), reads. */
export interface TracingService {
  ingest: TracingIngest;
  feedback: FeedbackService;
  reader: TracingReader;
}

export function createTracingService(store: TracingStore, settings: TracingSettings): TracingService {
  return { ingest: new TracingIngest(store), feedback: new FeedbackService(store, settings), reader: new TracingReader(store) };
}
