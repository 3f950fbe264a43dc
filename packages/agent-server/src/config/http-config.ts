import { isAbsolute, resolve } from "node:path";
import { z } from "zod";

/** A header name, or a pattern of one where `*` stands for any run of characters: nothing else (no regular expressions). */
const HeaderPattern = z
  .string()
  .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, "a header name, with `*` as the only wildcard")
  .transform((pattern) => pattern.toLowerCase());
const PatternList = z.array(HeaderPattern).nullish();

/** `includes`/`excludes`, as the official schema names them; its docs also show `include`/`exclude`, so both spellings count. */
const HeaderPatternsJson = z.strictObject({
  includes: PatternList,
  include: PatternList,
  excludes: PatternList,
  exclude: PatternList,
});

const CorsJson = z.strictObject({
  allow_origins: z.array(z.string().min(1)).nullish(),
  allow_methods: z.array(z.string().min(1)).nullish(),
  allow_headers: z.array(z.string().min(1)).nullish(),
  allow_credentials: z.boolean().nullish(),
  allow_origin_regex: z
    .string()
    .min(1)
    .refine((source) => compiles(source), "not a valid regular expression")
    .nullish(),
  expose_headers: z.array(z.string().min(1)).nullish(),
  max_age: z.int().nonnegative().nullish(),
});

/** `http` in langgraph.json, as the official CLI's schema has it. */
export const HttpJson = z.looseObject({
  app: z.string().min(1).nullish(),
  disable_assistants: z.boolean().nullish(),
  disable_threads: z.boolean().nullish(),
  disable_runs: z.boolean().nullish(),
  disable_store: z.boolean().nullish(),
  disable_meta: z.boolean().nullish(),
  disable_mcp: z.boolean().nullish(),
  disable_a2a: z.boolean().nullish(),
  disable_ui: z.boolean().nullish(),
  disable_webhooks: z.boolean().nullish(),
  cors: CorsJson.nullish(),
  configurable_headers: HeaderPatternsJson.nullish(),
  logging_headers: HeaderPatternsJson.nullish(),
  middleware_order: z.enum(["auth_first", "middleware_first"]).nullish(),
  enable_custom_route_auth: z.boolean().nullish(),
  mount_prefix: z
    .string()
    .regex(/^(\/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)+$/, 'a path such as "/api": a leading "/", no trailing "/", no query')
    .nullish(),
});

export type HttpJsonSection = z.infer<typeof HttpJson>;

/** Families of routes a project may switch off (`http.disable_*`). */
export type RouteFamily = "assistants" | "threads" | "runs" | "store" | "meta" | "webhooks" | "ui" | "mcp" | "a2a";

export interface HeaderPatterns {
  /** Lower-case patterns; undefined: the key's default. */
  includes?: string[];
  excludes: string[];
}

export interface CorsSettings {
  /** Exact origins; `*` allows any. */
  allowOrigins: string[];
  /** Matched against the whole origin. */
  allowOriginRegex?: RegExp;
  /** Undefined: every method the API uses. */
  allowMethods?: string[];
  /** Undefined: whatever a preflight asks for. */
  allowHeaders?: string[];
  allowCredentials: boolean;
  /** In addition to the headers clients always need to read. */
  exposeHeaders: string[];
  maxAgeSeconds?: number;
}

export interface HttpSettings {
  /** Undefined: any origin, as without the section. */
  cors?: CorsSettings;
  disabled: ReadonlySet<RouteFamily>;
  /** Every route is also served under this path (`/ok` stays at the root too). */
  mountPrefix?: string;
  /** Which request headers reach a run's `config.configurable`; undefined: `x-*` and `user-agent`, credentials withheld. */
  configurableHeaders?: HeaderPatterns;
  /** Which request headers are written on each request's log line; undefined: no request log line. */
  loggingHeaders?: HeaderPatterns;
  /** `http.app`: the project's web app (routes and middleware) served in front of the API. */
  app?: CustomAppSpec;
  /** `http.enable_custom_route_auth`: Berth authenticates requests before the project's app sees them. */
  enableCustomRouteAuth?: boolean;
  /** `http.middleware_order`; `auth_first` also has Berth authenticate before the project's app (default: `middleware_first`). */
  middlewareOrder?: "auth_first" | "middleware_first";
}

/** Where `http.app` is: a module and its export. */
export interface CustomAppSpec {
  /** As written in langgraph.json, for messages. */
  spec: string;
  /** Absolute path of the module. */
  file: string;
  /** "default" when the spec names none. */
  exportName: string;
}

const KNOWN_KEYS = new Set(Object.keys(HttpJson.shape));

/** `projectDir`: where langgraph.json is, which `http.app`'s path is relative to. */
export function httpSettings(json: HttpJsonSection | undefined, projectDir: string): HttpSettings {
  const disabled = new Set<RouteFamily>();
  const switches: [boolean | null | undefined, RouteFamily][] = [
    [json?.disable_assistants, "assistants"],
    [json?.disable_threads, "threads"],
    [json?.disable_runs, "runs"],
    [json?.disable_store, "store"],
    [json?.disable_meta, "meta"],
    [json?.disable_webhooks, "webhooks"],
    [json?.disable_ui, "ui"],
    [json?.disable_mcp, "mcp"],
    [json?.disable_a2a, "a2a"],
  ];
  for (const [off, family] of switches) if (off) disabled.add(family);
  return {
    cors: json?.cors ? corsSettings(json.cors) : undefined,
    disabled,
    mountPrefix: json?.mount_prefix ?? undefined,
    configurableHeaders: headerPatterns(json?.configurable_headers),
    loggingHeaders: headerPatterns(json?.logging_headers),
    app: json?.app ? customAppSpec(json.app, projectDir) : undefined,
    enableCustomRouteAuth: json?.enable_custom_route_auth ?? false,
    middlewareOrder: json?.middleware_order ?? "middleware_first",
  };
}

/** `./src/app.ts:app`, as graphs are written: the export follows the last colon (not a Windows drive letter's). */
function customAppSpec(spec: string, projectDir: string): CustomAppSpec {
  const colon = spec.lastIndexOf(":");
  const modulePath = colon > 1 ? spec.slice(0, colon) : spec;
  const exportName = (colon > 1 ? spec.slice(colon + 1) : "") || "default";
  return { spec, file: isAbsolute(modulePath) ? modulePath : resolve(projectDir, modulePath), exportName };
}

/** Keys of the section Berth neither applies nor knows, for the start's warnings. */
export function unknownHttpKeys(json: HttpJsonSection | undefined): string[] {
  return Object.keys(json ?? {}).filter((key) => !KNOWN_KEYS.has(key));
}

function corsSettings(cors: z.infer<typeof CorsJson>): CorsSettings {
  const regex = cors.allow_origin_regex ?? undefined;
  return {
    // Without a list, any origin, as without the section; a regex alone allows only what it matches.
    allowOrigins: cors.allow_origins ?? (regex ? [] : ["*"]),
    allowOriginRegex: regex ? new RegExp(`^(?:${regex})$`) : undefined,
    allowMethods: cors.allow_methods?.map((method) => method.toUpperCase()),
    allowHeaders: cors.allow_headers ?? undefined,
    allowCredentials: cors.allow_credentials ?? false,
    exposeHeaders: cors.expose_headers ?? [],
    maxAgeSeconds: cors.max_age ?? undefined,
  };
}

function headerPatterns(json: z.infer<typeof HeaderPatternsJson> | null | undefined): HeaderPatterns | undefined {
  if (!json) return undefined;
  const includes = json.includes || json.include ? [...(json.includes ?? []), ...(json.include ?? [])] : undefined;
  return { includes, excludes: [...(json.excludes ?? []), ...(json.exclude ?? [])] };
}

function compiles(source: string): boolean {
  try {
    new RegExp(source);
    return true;
  } catch {
    return false;
  }
}
