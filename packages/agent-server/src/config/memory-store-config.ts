import { isAbsolute, resolve } from "node:path";
import { z } from "zod";

/** langgraph.json's `store` section, as the official CLI documents it. */
export const StoreJson = z.object({
  index: z
    .object({
      dims: z.int().positive(),
      embed: z.string().min(1),
      fields: z.array(z.string().min(1)).min(1).nullish(),
    })
    .nullish(),
  ttl: z
    .object({
      default_ttl: z.number().positive().nullish(),
      refresh_on_read: z.boolean().nullish(),
      sweep_interval_minutes: z.number().positive().nullish(),
    })
    .nullish(),
});

/** Where item texts are embedded: a module of the project, or a provider's hosted model. */
export type EmbedSpec =
  | { kind: "module"; file: string; exportName: string; spec: string }
  | { kind: "provider"; provider: string; model: string; spec: string };

export interface StoreIndexSettings {
  dims: number;
  embed: EmbedSpec;
  /** Paths of the value embedded by default ("$": the whole value). */
  fields: string[];
}

export interface StoreSettings {
  /** Semantic search; undefined: items are never embedded and `query` is ignored. */
  index?: StoreIndexSettings;
  /** Minutes an item lives when its put gives no ttl; null: forever. */
  defaultTtlMinutes: number | null;
  /** Reads push an item's expiry unless the request says otherwise. */
  refreshOnRead: boolean;
  /** How often expired items are deleted. */
  sweepIntervalMinutes: number;
}

const DEFAULT_SWEEP_MINUTES = 60;

export function storeSettings(json: z.infer<typeof StoreJson> | undefined, projectDir: string): StoreSettings {
  const index = json?.index;
  return {
    index: index
      ? { dims: index.dims, embed: parseEmbedSpec(index.embed, projectDir), fields: index.fields ?? ["$"] }
      : undefined,
    defaultTtlMinutes: json?.ttl?.default_ttl ?? null,
    refreshOnRead: json?.ttl?.refresh_on_read ?? true,
    sweepIntervalMinutes: json?.ttl?.sweep_interval_minutes ?? DEFAULT_SWEEP_MINUTES,
  };
}

/**
 * `provider:model` (no "/" nor "." before the colon, e.g. `openai:text-embedding-3-small`)
 * names a hosted model; anything else is a module path like a graph's, `./embed.ts:embed`.
 */
function parseEmbedSpec(spec: string, projectDir: string): EmbedSpec {
  const providerMatch = /^([a-z][a-z0-9_-]*):(.+)$/i.exec(spec);
  if (providerMatch) {
    return { kind: "provider", provider: providerMatch[1]!.toLowerCase(), model: providerMatch[2]!, spec };
  }
  // The export follows the last colon, unless that colon belongs to a Windows drive letter.
  const colon = spec.lastIndexOf(":");
  const hasExport = colon > 1;
  const modulePath = hasExport ? spec.slice(0, colon) : spec;
  const exportName = (hasExport ? spec.slice(colon + 1) : "") || "default";
  return { kind: "module", file: isAbsolute(modulePath) ? modulePath : resolve(projectDir, modulePath), exportName, spec };
}
