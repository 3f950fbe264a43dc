/*
 * What the remote commands print when the control plane refuses them or cannot be reached: each message says what
 * to do next, in words, rather than quoting an HTTP answer.
 */

/** Where a connection setting came from, as `resolveConnection` found it. */
export type SettingSource = "flag" | "environment" | "login" | "admin-key-file" | "default";

const KEY_SOURCES: Record<Exclude<SettingSource, "default">, string> = {
  flag: "the key given with --api-key",
  environment: "the key in BERTH_API_KEY",
  login: "the key `berth login` saved",
  "admin-key-file": "the admin key in ./.berth/control-plane/admin.key",
};

const URL_SOURCES: Record<SettingSource, string> = {
  flag: "given with --url",
  environment: "from BERTH_URL",
  login: "saved by `berth login`",
  "admin-key-file": "",
  default: "the default",
};

const WHERE_KEYS_COME_FROM =
  "A control plane writes its admin key to <data-dir>/admin.key when it first starts (./.berth/control-plane/admin.key by " +
  "default, which is used when the command runs in that folder); `berth control-plane keys create --tenant <id>` makes a " +
  "workspace's key on the control plane's machine. Save one with `berth login --url <url>`, or pass --api-key or BERTH_API_KEY.";

/** A 401's message: which key was refused (or that none was sent), and where keys come from. */
export function unauthorizedMessage(url: string, detail: string, keySource: SettingSource | undefined): string {
  const sent =
    keySource === undefined || keySource === "default"
      ? `${url} needs an API key and none was sent (${detail}).`
      : `${url} refused ${KEY_SOURCES[keySource]} (${detail}).`;
  return `${sent}\n${WHERE_KEYS_COME_FROM}`;
}

/** A control plane that did not answer: the URL tried, where that URL came from, and how to name another. */
export function unreachableMessage(url: string, cause: unknown, urlSource: SettingSource): string {
  const reason = cause instanceof Error ? ((cause as NodeJS.ErrnoException).code ?? cause.message) : String(cause);
  const from = URL_SOURCES[urlSource];
  return (
    `cannot reach the control plane at ${url}${from ? ` (${from})` : ""}: ${reason}.\n` +
    "Is it running (`berth control-plane`, or `npm start` in a Berth checkout)? Another control plane: --url <url>, " +
    "BERTH_URL, or `berth login --url <url>` to save it."
  );
}

/** One entry of a 422's `detail`, as the control plane (and FastAPI) write them. */
interface FieldError {
  loc: (string | number)[];
  msg: string;
  type?: string;
}

function isFieldErrors(detail: unknown): detail is FieldError[] {
  return (
    Array.isArray(detail) &&
    detail.length > 0 &&
    detail.every(
      (entry) =>
        typeof entry === "object" &&
        entry !== null &&
        Array.isArray((entry as FieldError).loc) &&
        typeof (entry as FieldError).msg === "string",
    )
  );
}

const PLACES: Record<string, string> = {
  body: "field",
  query: "query parameter",
  path: "path parameter",
  header: "header",
  headers: "header",
};

/** `["body", "secrets", 0, "name"]` → `field secrets[0].name`. */
function fieldName(loc: (string | number)[]): string {
  const [first, ...rest] = loc;
  const place = typeof first === "string" ? PLACES[first] : undefined;
  const path = (place === undefined ? loc : rest).reduce<string>(
    (text, part) => (typeof part === "number" ? `${text}[${part}]` : text ? `${text}.${part}` : part),
    "",
  );
  return place === undefined ? path || "the request" : `${place} ${path || "(whole)"}`;
}

/** `Invalid input: expected string, received number` → `expected string, received number`. */
function reasonText(message: string): string {
  const reason = message.replace(/^Invalid input: /, "");
  return reason.endsWith(".") ? reason : `${reason}.`;
}

/**
 * A 422's `{"detail": [{loc, msg, type}]}` as one sentence a line (`field name: expected string, received number.`),
 * or undefined when `detail` is not such a list.
 */
export function fieldErrorLines(detail: unknown): string[] | undefined {
  if (!isFieldErrors(detail)) return undefined;
  return detail.map((entry) => `${fieldName(entry.loc)}: ${reasonText(entry.msg)}`);
}
