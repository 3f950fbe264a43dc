import { isAbsolute, resolve } from "node:path";
import { z } from "zod";

/** `auth` in langgraph.json, as the official CLI's schema has it. */
export const AuthJson = z
  .object({
    path: z.string().min(1).optional(),
    disable_studio_auth: z.boolean().optional(),
    openapi: z
      .object({
        securitySchemes: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
        security: z.array(z.record(z.string(), z.array(z.string()))).optional(),
      })
      .optional(),
    cache: z.unknown().optional(),
  })
  .loose();

export interface AuthModuleSpec {
  /** Absolute path of the module exporting the `Auth` object. */
  file: string;
  exportName: string;
}

export interface AuthSettings {
  /** The project's handlers (`auth.path`), when it has any. */
  module?: AuthModuleSpec;
  /** Requests Studio marks (`x-auth-scheme: langsmith`) go through the project's handlers like any other. */
  disableStudioAuth: boolean;
  /** Security schemes `/openapi.json` declares (`auth.openapi`). */
  openapi?: { securitySchemes?: Record<string, Record<string, unknown>>; security?: Record<string, string[]>[] };
}

/** `auth.path` is `./file.ts:export`, split at its last colon like a graph path (the export defaults to `default`). */
export function authSettings(json: z.infer<typeof AuthJson> | undefined, projectDir: string): AuthSettings {
  const settings: AuthSettings = { disableStudioAuth: json?.disable_studio_auth ?? false, openapi: json?.openapi };
  if (json?.path) {
    const colon = json.path.lastIndexOf(":");
    const hasExport = colon > 1;
    const modulePath = hasExport ? json.path.slice(0, colon) : json.path;
    settings.module = {
      file: isAbsolute(modulePath) ? modulePath : resolve(projectDir, modulePath),
      exportName: (hasExport ? json.path.slice(colon + 1) : "") || "default",
    };
  }
  return settings;
}
