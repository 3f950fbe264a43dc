import { NotFoundError } from "@berth/service-kit";
import type { FastifyRequest } from "fastify";
import { z } from "zod";
import type { UiBundle, UiBundles } from "../../graphs/ui-bundle.js";
import type { AssistantService } from "../../services/assistants.js";
import { accessOf } from "../auth/access.js";
import { type RouteDef, route } from "./route-table.js";

const UiParams = z.object({ assistant_id: z.string().min(1) });
const UiBody = z.looseObject({
  name: z.string().min(1).describe("The component's name in the bundle's default export (a UI message's `name`)"),
  props: z.unknown().optional().describe("The message's props (the page renders them; the server ignores them)"),
});
const UiAssetParams = z.object({ agent: z.string().min(1), file: z.string().min(1) });

const CONTENT_TYPES: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  map: "application/json; charset=utf-8",
  json: "application/json; charset=utf-8",
};

export interface UiRouteOptions {
  /** `http.mount_prefix`: the asset URLs the fragment names carry it, as the browser sees the server. */
  mountPrefix?: string;
}

/**
 * The routes the SDK's `LoadExternalComponent` calls: `POST /ui/{assistant_id}` answers the HTML
 * fragment it inserts in a shadow root (its `{{shadowRootId}}` replaced by the client), whose script
 * renders the component; `GET /ui/{agent}/{file}` serves the bundle's files.
 */
export function uiRoutes(bundles: UiBundles, assistants: AssistantService, options: UiRouteOptions = {}): RouteDef[] {
  return [
    route(
      {
        method: "POST",
        path: "/ui/:assistant_id",
        summary: "The HTML fragment that loads a `ui` bundle's component (by `ui` name, assistant id or graph id)",
        params: UiParams,
        body: UiBody,
        responses: {
          200: { description: "text/html: the bundle's stylesheets and its script, which renders the component once loaded" },
          404: { description: "No `ui` entry for this assistant" },
        },
      },
      async ({ params, body, request, reply }) => {
        const bundle = await bundleFor(params.assistant_id, bundles, assistants, request);
        return reply.type("text/html; charset=utf-8").send(fragment(bundle, body.name, baseUrl(request, options.mountPrefix)));
      },
    ),

    route(
      {
        method: "GET",
        path: "/ui/:agent/:file",
        summary: "A file of a `ui` bundle (served without authentication, as the reference server does)",
        params: UiAssetParams,
        responses: { 200: { description: "The file (JavaScript or CSS)" }, 404: { description: "No such bundle or file" } },
      },
      async ({ params, reply }) => {
        const asset = bundles.get(params.agent)?.assets.find((item) => item.basename === params.file);
        if (!asset) throw new NotFoundError(`UI file "${params.file}" not found for "${params.agent}"`);
        const extension = asset.basename.slice(asset.basename.lastIndexOf(".") + 1);
        return reply.type(CONTENT_TYPES[extension] ?? "application/octet-stream").send(Buffer.from(asset.contents));
      },
    ),
  ];
}

/** The `ui` name itself, else the assistant's graph id, as the reference names bundles by graph. */
async function bundleFor(
  id: string,
  bundles: UiBundles,
  assistants: AssistantService,
  request: FastifyRequest,
): Promise<UiBundle> {
  const named = bundles.get(id);
  if (named) return named;
  const notFound = new NotFoundError(`UI not found for agent "${id}"`);
  const assistant = await assistants.get(id, accessOf(request)).catch((error: unknown) => {
    if (error instanceof NotFoundError) throw notFound;
    throw error;
  });
  const bundle = bundles.get(assistant.graph_id);
  if (!bundle) throw notFound;
  return bundle;
}

/** Where the browser reaches this server, from the request as it arrived (a proxy's forwarded scheme first). */
function baseUrl(request: FastifyRequest, mountPrefix = ""): string {
  const forwarded = request.headers["x-forwarded-proto"];
  const scheme = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(",")[0]?.trim() || request.protocol;
  return `${scheme}://${request.headers.host ?? "localhost"}${mountPrefix}`;
}

/** The reference's fragment: a stylesheet link per CSS file, then the script whose onload renders `name`. */
function fragment(bundle: UiBundle, name: string, base: string): string {
  const url = (file: string) => quoted(`${base}/ui/${encodeURIComponent(bundle.name)}/${encodeURIComponent(file)}`, '"');
  const lines = bundle.assets
    .filter((asset) => asset.basename.endsWith(".css"))
    .map((asset) => `<link rel="stylesheet" href="${url(asset.basename)}" />`);
  const script = bundle.assets.find((asset) => asset.basename.endsWith(".js"));
  if (script) {
    // The client replaces the first `{{shadowRootId}}` with the id of the element it attached the shadow root to.
    const onload = `${bundle.globalName}.render(${JSON.stringify(name)}, "{{shadowRootId}}")`;
    lines.push(`<script src="${url(script.basename)}" onload='${quoted(onload, "'")}'></script>`);
  }
  return lines.join("\n");
}

/** Safe in an attribute quoted with `quote`: a component name is the client's, and must not end the attribute. */
function quoted(text: string, quote: '"' | "'"): string {
  return text.replace(/&/g, "&amp;").replaceAll(quote, quote === '"' ? "&quot;" : "&#39;");
}
