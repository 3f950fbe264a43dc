import type { CustomAppSpec } from "../config/http-config.js";
import { importProjectModule } from "./project-module.js";

/** A web-standard app: what `http.app` must export (a Hono app is one). */
export interface CustomApp {
  fetch(request: Request): Response | Promise<Response>;
}

/** A Hono app: routes may be added to it, which is how requests it has no route for reach the API. */
export interface RoutableApp extends CustomApp {
  all(path: string, handler: (context: RoutedContext) => Response | Promise<Response>): unknown;
}

/** What a Hono handler receives, as far as Berth reads it: the request as the app's middleware left it. */
export interface RoutedContext {
  req: {
    raw: Request;
    /** Hono keeps bodies its middleware read here (parsed JSON as a promise), which they may have changed. */
    bodyCache?: Partial<Record<"json" | "text" | "arrayBuffer", Promise<unknown>>>;
  };
  /** Hono's response builder: it adds the headers middleware set before calling `next()`. */
  body?(data: ReadableStream<Uint8Array> | null, init: { status: number; headers: Headers }): Response;
}

export class CustomAppLoadError extends Error {
  constructor(spec: CustomAppSpec, reason: string) {
    super(`failed to load http.app from ${spec.file} (export "${spec.exportName}"): ${reason}`);
    this.name = "CustomAppLoadError";
  }
}

/** Imports the module `http.app` names (TypeScript too: tsx is loaded, as for graphs) and checks its export. */
export async function loadCustomApp(spec: CustomAppSpec): Promise<CustomApp> {
  let module: Record<string, unknown>;
  try {
    module = await importProjectModule(spec.file);
  } catch (error) {
    throw new CustomAppLoadError(spec, (error as Error).message);
  }
  const exported = module[spec.exportName];
  if (exported === undefined || exported === null) {
    throw new CustomAppLoadError(spec, `the module has no export "${spec.exportName}"`);
  }
  if (typeof (exported as { fetch?: unknown }).fetch !== "function") {
    throw new CustomAppLoadError(spec, "the export has no fetch(request) method (a Hono app, or any web-standard app)");
  }
  return exported as CustomApp;
}

export function isRoutable(app: CustomApp): app is RoutableApp {
  return typeof (app as { all?: unknown }).all === "function";
}
