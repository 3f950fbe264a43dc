import { MemorySaver } from "@langchain/langgraph";
import { pino } from "pino";
import { ConfigError, loadProjectConfig } from "./config/langgraph-config.js";
import {
  applyProjectEnv,
  environment,
  logLevelFromEnv,
  openAiSettingsFromEnv,
  schemaSettingsFromEnv,
} from "./config/settings.js";
import { AuthLoadError, loadAuthHandlers } from "./graphs/auth-module.js";
import { CustomAppLoadError, loadCustomApp } from "./graphs/custom-app-module.js";
import { pinLangChainPackages, projectModuleDirs } from "./graphs/pin-packages.js";
import { GraphRegistry } from "./graphs/registry.js";
import { configureSchemaReading } from "./graphs/schemas.js";
import { bundleUi } from "./graphs/ui-bundle.js";
import type { BerthCheckpointer } from "./storage/types.js";
import { loadEmbedder } from "./memory/load-embedder.js";

export interface CheckResult {
  /** Ids of the graphs that loaded, in langgraph.json's order. */
  graphs: string[];
  /** Keys of langgraph.json that are valid but ignored by Berth. */
  warnings: string[];
}

/**
 * Loads a project's graphs exactly as the server does at start (its env
 * applied, LangChain packages pinned to Berth's copy, every module imported),
 * without storage: checkpoints go to memory and are never written. Throws the
 * server's ConfigError or GraphLoadError, whose messages say what is wrong.
 *
 * Exported graph factories are not called: they need a run's config, and the
 * server calls them per run too.
 */
export async function checkProject(config: string): Promise<CheckResult> {
  const project = loadProjectConfig(config, environment());
  applyProjectEnv(project.env);
  configureSchemaReading(schemaSettingsFromEnv());
  pinLangChainPackages(projectModuleDirs(project));
  // What graphs log while loading goes to stderr: stdout carries the check's answer.
  const logger = pino({ level: logLevelFromEnv(), base: { service: "berth-check" } }, pino.destination(2));
  const registry = await GraphRegistry.load(project.graphs, async () => new CheckCheckpointer(), logger);
  // The store's embedder module loads as the server would load it (a provider model is not called).
  if (project.store.index) await loadEmbedder(project.store.index, openAiSettingsFromEnv());
  // So does the auth module: a build catches a broken auth.path, not the first start.
  if (project.auth.module) {
    try {
      await loadAuthHandlers(project.auth.module);
    } catch (error) {
      if (error instanceof AuthLoadError) throw new ConfigError(error.message);
      throw error;
    }
  }
  // And http.app, whose export must be a web app (`fetch`).
  if (project.http.app) {
    try {
      await loadCustomApp(project.http.app);
    } catch (error) {
      if (error instanceof CustomAppLoadError) throw new ConfigError(error.message);
      throw error;
    }
  }
  // And every `ui` component bundles (in memory), so a build fails on a broken one, not the first start.
  await bundleUi(project.ui);
  return { graphs: registry.ids(), warnings: project.warnings };
}

/** MemorySaver with the operations Berth's API adds; nothing calls them while checking. */
class CheckCheckpointer extends MemorySaver implements BerthCheckpointer {
  copyThread(): void {}

  deleteRun(): void {}

  async keepLatest(): Promise<void> {}
}
