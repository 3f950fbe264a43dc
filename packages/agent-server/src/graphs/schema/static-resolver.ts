import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Logger } from "../../logger.js";
import { SchemaDiskCache } from "./disk-cache.js";
import { analyzeInWorker } from "./static-worker.js";
import type { StaticGraphSchemas } from "./types.js";

/** Modules with types to read; plain JavaScript has none. */
const TYPED_MODULE = /\.[cm]?tsx?$/;

export interface StaticResolverOptions {
  timeoutMs: number;
  /** Where the schemas of the graph in this file are cached on disk. */
  cacheDirFor(file: string): string;
  logger: Logger;
}

/**
 * Schemas from the graphs' TypeScript types, read once per graph and process
 * on first request (not at start, which stays fast), in a worker thread,
 * one analysis at a time, and cached on disk for the next start. A failure
 * or timeout is logged and remembered: that graph keeps its runtime schemas.
 */
export class StaticSchemaResolver {
  private readonly results = new Map<string, Promise<StaticGraphSchemas | undefined>>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: StaticResolverOptions) {}

  /** `cacheDir`, else `.berth/schema-cache/` beside langgraph.json. */
  static create(logger: Logger, options: { cacheDir?: string; timeoutMs: number }): StaticSchemaResolver {
    const { cacheDir, timeoutMs } = options;
    return new StaticSchemaResolver({
      timeoutMs,
      cacheDirFor: (file) => cacheDir || join(projectDir(file), ".berth", "schema-cache"),
      logger,
    });
  }

  resolve(graphId: string, file: string, exportName: string): Promise<StaticGraphSchemas | undefined> {
    if (!TYPED_MODULE.test(file)) return Promise.resolve(undefined);
    const key = `${file}\0${exportName}`;
    let result = this.results.get(key);
    if (!result) {
      result = this.load(graphId, file, exportName);
      this.results.set(key, result);
    }
    return result;
  }

  private async load(graphId: string, file: string, exportName: string): Promise<StaticGraphSchemas | undefined> {
    const { logger, timeoutMs } = this.options;
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const cache = new SchemaDiskCache(this.options.cacheDirFor(file));
    const cached = cache.read(file, exportName);
    if (cached) {
      logger.info({ graph_id: graphId, ms: elapsed() }, "schemas read from cache");
      return cached;
    }
    try {
      const analysis = await this.oneAtATime(() => analyzeInWorker(file, exportName, timeoutMs));
      logger.info(
        { graph_id: graphId, ms: elapsed(), subgraphs: Object.keys(analysis.schemas).filter(Boolean) },
        "schemas read from types",
      );
      try {
        cache.write(file, exportName, analysis);
      } catch (err) {
        logger.warn({ graph_id: graphId, err }, "could not cache the graph's schemas on disk");
      }
      return analysis.schemas;
    } catch (err) {
      logger.warn(
        { graph_id: graphId, err, ms: elapsed() },
        "could not read the graph's schemas from its types: serving its runtime schemas",
      );
      return undefined;
    }
  }

  /** Each analysis takes a core for seconds: they run in turn, and the timeout counts from each one's start. */
  private oneAtATime<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

/** The directory of the langgraph.json above a graph file (the file's own directory when none is found). */
function projectDir(file: string): string {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    if (existsSync(join(dir, "langgraph.json"))) return dir;
    if (dirname(dir) === dir) return dirname(file);
  }
}
