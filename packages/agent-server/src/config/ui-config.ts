import { isAbsolute, resolve } from "node:path";
import { z } from "zod";

/** `ui` in langgraph.json: a name (usually a graph id) for each component file. */
export const UiJson = z.record(z.string().min(1), z.string().min(1));

/** `ui_config` in langgraph.json: the libraries the client shares with the bundles (kept out of them). */
export const UiConfigJson = z.looseObject({ shared: z.array(z.string().min(1)).nullish() });

export interface UiEntry {
  name: string;
  /** Absolute path of the component file. */
  file: string;
}

export interface UiSettings {
  entries: UiEntry[];
  /** `ui_config.shared`: imported from the page's copy, not bundled. */
  shared: string[];
}

export function uiSettings(
  ui: z.infer<typeof UiJson> | undefined,
  uiConfig: z.infer<typeof UiConfigJson> | undefined,
  projectDir: string,
): UiSettings {
  const entries = Object.entries(ui ?? {}).map(([name, path]) => ({
    name,
    file: isAbsolute(path) ? path : resolve(projectDir, path),
  }));
  return { entries, shared: uiConfig?.shared ?? [] };
}
