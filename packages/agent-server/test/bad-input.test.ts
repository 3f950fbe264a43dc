import assert from "node:assert/strict";
import { once } from "node:events";
import { request as httpRequest } from "node:http";
import { after, before, describe, it } from "node:test";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { type BerthProcess, request, startBerth } from "@berth/test-support";

// Fixed ids: every run gets a fresh data directory, so the table can name them statically.
const ASSISTANT = "a55e7a11-0000-4000-8000-000000000001";
const UNKNOWN = "0badc0de-0000-4000-8000-000000000000";
/** A thread without graph (no metadata.graph_id). */
const THREAD = "7e4d0000-0000-4000-8000-000000000001";
/** A thread of graph "agent", seeded with one superstep (it has checkpoints). */
const GRAPH_THREAD = "7e4d0000-0000-4000-8000-000000000002";
/** Like GRAPH_THREAD, for rows that may write (known server bugs). */
const SCRATCH_THREAD = "7e4d0000-0000-4000-8000-000000000003";
/** uuid5("agent", 6ba7b821-9dad-11d1-80b4-00c04fd430c8), as the official server derives it. */
const SYSTEM_AGENT = "fe096781-5601-53d2-b2f6-0d3403f7e9ca";

const PLACEHOLDERS: Record<string, string> = {
  [ASSISTANT]: "{assistant}",
  [UNKNOWN]: "{unknown}",
  [THREAD]: "{thread}",
  [GRAPH_THREAD]: "{graph-thread}",
  [SCRATCH_THREAD]: "{scratch-thread}",
  [SYSTEM_AGENT]: "{system-agent}",
};

/** Matches anything: for error texts LangGraph or a graph's schema words (long, version-dependent). */
const ANY: unknown = Symbol("any");

type Method = "GET" | "POST" | "PATCH" | "DELETE";

interface Row {
  name: string;
  method: Method;
  path: string;
  /** A string is sent as it is (raw text); anything else as JSON. */
  body?: unknown;
  /** Send a JSON body over the size limit, framed so, instead of `body`. */
  oversized?: Framing;
  headers?: Record<string, string>;
  status: number;
  /** The whole expected response body. */
  expected: unknown;
}

// ---- expected bodies -------------------------------------------------------

function detail(text: string) {
  return { detail: text };
}

function invalid(loc: (string | number)[], msg: unknown, type: unknown) {
  return { detail: [{ loc, msg, type }] };
}

/** The JSON.parse message of the same Node that runs the server (V8 wording varies by version). */
function parseMessage(text: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`${text} is valid JSON`);
}

const MALFORMED = '{"graph_id": "agent",';
const malformedJson = invalid(["body"], `Invalid JSON: ${parseMessage(MALFORMED)}`, "json_invalid");

function expected(loc: (string | number)[], type: string, received: string) {
  return invalid(loc, `Invalid input: expected ${type}, received ${received}`, "invalid_type");
}

function oneOf(loc: (string | number)[], ...values: string[]) {
  return invalid(
    loc,
    `Invalid option: expected one of ${values.map((value) => JSON.stringify(value)).join("|")}`,
    "invalid_value",
  );
}

const tooSmall = (loc: (string | number)[], min: number) =>
  invalid(loc, `Too small: expected number to be >=${min}`, "too_small");
const tooBig = (loc: (string | number)[], max: number) => invalid(loc, `Too big: expected number to be <=${max}`, "too_big");
const emptyString = (loc: (string | number)[]) => invalid(loc, "Too small: expected string to have >=1 characters", "too_small");
const notUuid = (loc: (string | number)[]) => invalid(loc, "must be a UUID", "invalid_format");
const notInt = (loc: (string | number)[]) => invalid(loc, "Invalid input: expected int, received number", "invalid_type");
/** Query booleans (zod lists the enum with integer-like keys first). */
const notQueryBoolean = (loc: (string | number)[]) =>
  oneOf(loc, "0", "1", "true", "false", "yes", "no", "True", "False", "TRUE", "FALSE");

// The reference server's texts, which clients may match on.
const assistantNotFound = detail("Assistant not found");
/** GET and DELETE of a thread. */
const noThreadWithId = (id: string) => detail(`Thread with ID ${id} not found`);
/** PATCH, copy and runs of a thread. */
const threadNotFound = detail("Thread not found");
/** State and history of a thread. */
const threadStateNotFound = (id: string) => detail(`Thread ${id} not found`);
const unsupportedMediaType = detail("Unsupported Media Type");
const tooLarge = detail("Request body is too large");

/** A JSON body just over the default 32 MiB limit. */
const hugeBody = (fields: Record<string, unknown> = {}) =>
  Buffer.from(JSON.stringify({ ...fields, metadata: { blob: "x".repeat(33 * 1024 * 1024) } }));

/**
 * How an oversized body is framed: with its Content-Length declared (as fetch
 * and the SDK send it; the server refuses it on the header), or chunked (the
 * server reads up to the limit before refusing).
 */
type Framing = "content-length" | "chunked";

interface Reply {
  status: number;
  headers: Headers;
  body: unknown;
}

const UPLOAD_CHUNK = 256 * 1024;

/**
 * Sends a body over the size limit. The server answers 413 and closes the
 * connection without reading the rest, so a client still writing can get
 * EPIPE/ECONNRESET before it reads the answer (fetch then just fails). The
 * upload goes in chunks, yielding to the event loop between them so that an
 * answer is read as soon as it arrives, and stops once answered; an attempt
 * that lost the race before any answer is retried.
 */
async function sendOversized(base: string, method: Method, path: string, body: Buffer, framing: Framing): Promise<Reply> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await uploadOnce(base, method, path, body, framing);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (attempt >= 3 || (code !== "EPIPE" && code !== "ECONNRESET")) throw error;
    }
  }
}

function uploadOnce(base: string, method: Method, path: string, body: Buffer, framing: Framing): Promise<Reply> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let answered = false;
    const headers: Record<string, string | number> = { "content-type": "application/json" };
    // With Expect: 100-continue, nothing is written before the server has read the headers.
    if (framing === "content-length") Object.assign(headers, { "content-length": body.length, expect: "100-continue" });
    const outgoing = httpRequest(new URL(path, base), { method, headers, agent: false }, (incoming) => {
      answered = true;
      const chunks: Buffer[] = [];
      incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
      incoming.on("error", settle);
      incoming.on("end", () => {
        const replyHeaders = new Headers();
        for (const [name, value] of Object.entries(incoming.headers)) {
          if (typeof value === "string") replyHeaders.set(name, value);
        }
        const text = Buffer.concat(chunks).toString("utf8");
        settle(null, { status: incoming.statusCode ?? 0, headers: replyHeaders, body: text ? JSON.parse(text) : null });
      });
    });
    function settle(error: Error | null, reply?: Reply) {
      if (settled) return;
      settled = true;
      outgoing.destroy();
      if (error) reject(error);
      else resolve(reply!);
    }
    outgoing.on("error", settle);
    const upload = async () => {
      await yieldToEventLoop();
      for (let offset = 0; offset < body.length && !answered && !settled; offset += UPLOAD_CHUNK) {
        if (!outgoing.write(body.subarray(offset, offset + UPLOAD_CHUNK))) await once(outgoing, "drain");
        await yieldToEventLoop();
      }
      if (!answered && !settled) outgoing.end();
    };
    const start = () => void upload().catch(() => {}); // an upload error surfaces as the request's "error"
    if (framing === "content-length") outgoing.once("continue", start);
    else start();
  });
}

const seedSuperstep = (graphId: string) => ({
  metadata: { graph_id: graphId },
  supersteps: [{ updates: [{ values: { messages: [{ type: "human", content: "hi" }] }, as_node: "__start__" }] }],
});

// ---- the table -------------------------------------------------------------

/** Endpoints that read a JSON body: each gets malformed JSON, a non-object body, and an unsupported content type. */
// biome-ignore format: a table, one case per line
const BODY_ENDPOINTS: { method: Method; path: string; objectBody: boolean }[] = [
  { method: "POST", path: "/assistants", objectBody: true },
  { method: "POST", path: "/assistants/search", objectBody: true },
  { method: "POST", path: "/assistants/count", objectBody: true },
  { method: "PATCH", path: `/assistants/${ASSISTANT}`, objectBody: true },
  { method: "POST", path: `/assistants/${ASSISTANT}/versions`, objectBody: true },
  { method: "POST", path: `/assistants/${ASSISTANT}/latest`, objectBody: true },
  { method: "POST", path: "/threads", objectBody: true },
  { method: "POST", path: "/threads/search", objectBody: true },
  { method: "POST", path: "/threads/count", objectBody: true },
  { method: "PATCH", path: `/threads/${THREAD}`, objectBody: true },
  // copy declares no body: it ignores a well-formed one, but the parser still refuses bad JSON
  { method: "POST", path: `/threads/${GRAPH_THREAD}/copy`, objectBody: false },
  { method: "POST", path: `/threads/${GRAPH_THREAD}/state/checkpoint`, objectBody: true },
  { method: "POST", path: `/threads/${GRAPH_THREAD}/state`, objectBody: true },
  { method: "POST", path: `/threads/${GRAPH_THREAD}/history`, objectBody: true },
];

// biome-ignore format: a table, one case per line
const genericRows: Row[] = BODY_ENDPOINTS.flatMap(({ method, path, objectBody }): Row[] => [
  { name: "malformed JSON", method, path, body: MALFORMED, status: 422, expected: malformedJson },
  ...(objectBody
    ? [
        {
          name: "a JSON array instead of an object",
          method,
          path,
          body: [],
          status: 422,
          expected: expected(["body"], "object", "array"),
        },
      ]
    : []),
  {
    name: "an XML body (unsupported content type)",
    method,
    path,
    body: "<thread/>",
    headers: { "content-type": "application/xml" },
    status: 415,
    expected: unsupportedMediaType,
  },
  {
    name: "a form body (unsupported content type)",
    method,
    path,
    body: "graph_id=agent",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    status: 415,
    expected: unsupportedMediaType,
  },
]);

// biome-ignore format: a table, one case per line
const assistantRows: Row[] = [
  // POST /assistants
  { name: "no body", method: "POST", path: "/assistants", status: 422, expected: expected(["body"], "object", "undefined") },
  {
    name: "a JSON null body",
    method: "POST",
    path: "/assistants",
    body: "null",
    status: 422,
    expected: expected(["body"], "object", "null"),
  },
  { name: "missing graph_id", method: "POST", path: "/assistants", body: {}, status: 422, expected: expected(["body", "graph_id"], "string", "undefined") },
  { name: "graph_id of the wrong type", method: "POST", path: "/assistants", body: { graph_id: 1 }, status: 422, expected: expected(["body", "graph_id"], "string", "number") },
  {
    name: "a name with a NUL character",
    method: "POST",
    path: "/assistants",
    body: { graph_id: "agent", name: "a\u0000b" },
    status: 422,
    expected: invalid(["body", "name"], "must not contain NUL characters", "custom"),
  },
  { name: "empty graph_id", method: "POST", path: "/assistants", body: { graph_id: "" }, status: 422, expected: emptyString(["body", "graph_id"]) },
  { name: "unknown graph_id", method: "POST", path: "/assistants", body: { graph_id: "no_such_graph" }, status: 404, expected: detail('Graph "no_such_graph" not found') },
  { name: "assistant_id not a UUID", method: "POST", path: "/assistants", body: { graph_id: "agent", assistant_id: "not-a-uuid" }, status: 422, expected: notUuid(["body", "assistant_id"]) },
  { name: "metadata an array", method: "POST", path: "/assistants", body: { graph_id: "agent", metadata: [] }, status: 422, expected: expected(["body", "metadata"], "record", "array") },
  { name: "config a string", method: "POST", path: "/assistants", body: { graph_id: "agent", config: "x" }, status: 422, expected: expected(["body", "config"], "record", "string") },
  { name: "name a number", method: "POST", path: "/assistants", body: { graph_id: "agent", name: 5 }, status: 422, expected: expected(["body", "name"], "string", "number") },
  { name: "invalid if_exists", method: "POST", path: "/assistants", body: { graph_id: "agent", if_exists: "update" }, status: 422, expected: oneOf(["body", "if_exists"], "raise", "do_nothing") },
  { name: "existing assistant_id, if_exists raise", method: "POST", path: "/assistants", body: { graph_id: "agent", assistant_id: ASSISTANT, if_exists: "raise" }, status: 409, expected: detail("Assistant already exists") },
  { name: "existing assistant_id, if_exists defaulted", method: "POST", path: "/assistants", body: { graph_id: "agent", assistant_id: ASSISTANT }, status: 409, expected: detail("Assistant already exists") },
  { name: "the id of a system assistant", method: "POST", path: "/assistants", body: { graph_id: "agent", assistant_id: SYSTEM_AGENT }, status: 409, expected: detail("Assistant already exists") },
  { name: "a body over the size limit (Content-Length)", method: "POST", path: "/assistants", oversized: "content-length", status: 413, expected: tooLarge },
  { name: "a body over the size limit (chunked)", method: "POST", path: "/assistants", oversized: "chunked", status: 413, expected: tooLarge },

  // POST /assistants/search
  { name: "limit 0", method: "POST", path: "/assistants/search", body: { limit: 0 }, status: 422, expected: tooSmall(["body", "limit"], 1) },
  { name: "limit 1001", method: "POST", path: "/assistants/search", body: { limit: 1001 }, status: 422, expected: tooBig(["body", "limit"], 1000) },
  { name: "limit not an integer", method: "POST", path: "/assistants/search", body: { limit: 1.5 }, status: 422, expected: notInt(["body", "limit"]) },
  { name: "limit a string", method: "POST", path: "/assistants/search", body: { limit: "5" }, status: 422, expected: expected(["body", "limit"], "number", "string") },
  { name: "offset -1", method: "POST", path: "/assistants/search", body: { offset: -1 }, status: 422, expected: tooSmall(["body", "offset"], 0) },
  {
    name: "offset beyond a safe integer",
    method: "POST",
    path: "/assistants/search",
    body: { offset: 2 ** 53 },
    status: 422,
    expected: invalid(["body", "offset"], "Too big: expected int to be <=9007199254740991", "too_big"),
  },
  {
    name: "invalid sort_by",
    method: "POST",
    path: "/assistants/search",
    body: { sort_by: "version" },
    status: 422,
    expected: oneOf(["body", "sort_by"], "assistant_id", "graph_id", "name", "created_at", "updated_at"),
  },
  { name: "invalid sort_order", method: "POST", path: "/assistants/search", body: { sort_order: "up" }, status: 422, expected: oneOf(["body", "sort_order"], "asc", "desc") },
  { name: "metadata a string", method: "POST", path: "/assistants/search", body: { metadata: "x" }, status: 422, expected: expected(["body", "metadata"], "record", "string") },
  { name: "graph_id a number", method: "POST", path: "/assistants/search", body: { graph_id: 7 }, status: 422, expected: expected(["body", "graph_id"], "string", "number") },

  // POST /assistants/count
  { name: "graph_id a number", method: "POST", path: "/assistants/count", body: { graph_id: 5 }, status: 422, expected: expected(["body", "graph_id"], "string", "number") },
  { name: "metadata a number", method: "POST", path: "/assistants/count", body: { metadata: 1 }, status: 422, expected: expected(["body", "metadata"], "record", "number") },
  { name: "name a boolean", method: "POST", path: "/assistants/count", body: { name: true }, status: 422, expected: expected(["body", "name"], "string", "boolean") },

  // GET /assistants/{id}
  { name: "unknown assistant", method: "GET", path: `/assistants/${UNKNOWN}`, status: 404, expected: assistantNotFound },
  // Not a UUID: it may be a graph id, so an unknown one is a 404 (as in the official JS server).
  { name: "neither a UUID nor a graph id", method: "GET", path: "/assistants/not-a-uuid", status: 404, expected: assistantNotFound },
  { name: "empty assistant id", method: "GET", path: "/assistants/", status: 422, expected: emptyString(["path", "assistant_id"]) },

  // PATCH /assistants/{id}
  { name: "unknown assistant", method: "PATCH", path: `/assistants/${UNKNOWN}`, body: { name: "x" }, status: 404, expected: assistantNotFound },
  { name: "neither a UUID nor a graph id", method: "PATCH", path: "/assistants/not-a-uuid", body: { name: "x" }, status: 404, expected: assistantNotFound },
  { name: "name a number", method: "PATCH", path: `/assistants/${ASSISTANT}`, body: { name: 5 }, status: 422, expected: expected(["body", "name"], "string", "number") },
  { name: "metadata an array", method: "PATCH", path: `/assistants/${ASSISTANT}`, body: { metadata: [] }, status: 422, expected: expected(["body", "metadata"], "record", "array") },
  { name: "config a string", method: "PATCH", path: `/assistants/${ASSISTANT}`, body: { config: "x" }, status: 422, expected: expected(["body", "config"], "record", "string") },
  { name: "description a number", method: "PATCH", path: `/assistants/${ASSISTANT}`, body: { description: 1 }, status: 422, expected: expected(["body", "description"], "string", "number") },
  { name: "empty graph_id", method: "PATCH", path: `/assistants/${ASSISTANT}`, body: { graph_id: "" }, status: 422, expected: emptyString(["body", "graph_id"]) },
  { name: "unknown graph_id", method: "PATCH", path: `/assistants/${ASSISTANT}`, body: { graph_id: "no_such_graph" }, status: 404, expected: detail('Graph "no_such_graph" not found') },

  // DELETE /assistants/{id}
  { name: "unknown assistant", method: "DELETE", path: `/assistants/${UNKNOWN}`, status: 404, expected: assistantNotFound },
  { name: "neither a UUID nor a graph id", method: "DELETE", path: "/assistants/not-a-uuid", status: 404, expected: assistantNotFound },
  { name: "unknown assistant with delete_threads", method: "DELETE", path: `/assistants/${UNKNOWN}?delete_threads=true`, status: 404, expected: assistantNotFound },
  { name: "invalid delete_threads boolean", method: "DELETE", path: `/assistants/${ASSISTANT}?delete_threads=maybe`, status: 422, expected: notQueryBoolean(["query", "delete_threads"]) },

  // POST /assistants/{id}/versions
  { name: "unknown assistant", method: "POST", path: `/assistants/${UNKNOWN}/versions`, body: {}, status: 404, expected: assistantNotFound },
  { name: "neither a UUID nor a graph id", method: "POST", path: "/assistants/not-a-uuid/versions", body: {}, status: 404, expected: assistantNotFound },
  { name: "limit 0", method: "POST", path: `/assistants/${ASSISTANT}/versions`, body: { limit: 0 }, status: 422, expected: tooSmall(["body", "limit"], 1) },
  { name: "limit 1001", method: "POST", path: `/assistants/${ASSISTANT}/versions`, body: { limit: 1001 }, status: 422, expected: tooBig(["body", "limit"], 1000) },
  { name: "limit a string", method: "POST", path: `/assistants/${ASSISTANT}/versions`, body: { limit: "x" }, status: 422, expected: expected(["body", "limit"], "number", "string") },
  { name: "offset -5", method: "POST", path: `/assistants/${ASSISTANT}/versions`, body: { offset: -5 }, status: 422, expected: tooSmall(["body", "offset"], 0) },
  { name: "metadata a number", method: "POST", path: `/assistants/${ASSISTANT}/versions`, body: { metadata: 3 }, status: 422, expected: expected(["body", "metadata"], "record", "number") },

  // POST /assistants/{id}/latest
  { name: "no body", method: "POST", path: `/assistants/${ASSISTANT}/latest`, status: 422, expected: expected(["body"], "object", "undefined") },
  { name: "missing version", method: "POST", path: `/assistants/${ASSISTANT}/latest`, body: {}, status: 422, expected: expected(["body", "version"], "number", "undefined") },
  { name: "version a string", method: "POST", path: `/assistants/${ASSISTANT}/latest`, body: { version: "1" }, status: 422, expected: expected(["body", "version"], "number", "string") },
  { name: "version 0", method: "POST", path: `/assistants/${ASSISTANT}/latest`, body: { version: 0 }, status: 422, expected: tooSmall(["body", "version"], 1) },
  { name: "version not an integer", method: "POST", path: `/assistants/${ASSISTANT}/latest`, body: { version: 1.5 }, status: 422, expected: notInt(["body", "version"]) },
  { name: "a version that does not exist", method: "POST", path: `/assistants/${ASSISTANT}/latest`, body: { version: 99 }, status: 404, expected: detail("Assistant version not found") },
  { name: "unknown assistant", method: "POST", path: `/assistants/${UNKNOWN}/latest`, body: { version: 1 }, status: 404, expected: assistantNotFound },
  { name: "neither a UUID nor a graph id", method: "POST", path: "/assistants/not-a-uuid/latest", body: { version: 1 }, status: 404, expected: assistantNotFound },

  // GET /assistants/{id}/graph
  { name: "unknown assistant", method: "GET", path: `/assistants/${UNKNOWN}/graph`, status: 404, expected: assistantNotFound },
  { name: "neither a UUID nor a graph id", method: "GET", path: "/assistants/not-a-uuid/graph", status: 404, expected: assistantNotFound },
  { name: "xray neither a boolean nor a depth", method: "GET", path: `/assistants/${ASSISTANT}/graph?xray=maybe`, status: 422, expected: invalid(["query", "xray"], "Invalid input", "invalid_union") },
  { name: "xray negative", method: "GET", path: `/assistants/${ASSISTANT}/graph?xray=-1`, status: 422, expected: invalid(["query", "xray"], "Invalid input", "invalid_union") },
  { name: "xray given twice", method: "GET", path: `/assistants/${ASSISTANT}/graph?xray=true&xray=false`, status: 422, expected: invalid(["query", "xray"], "Invalid input", "invalid_union") },

  // GET /assistants/{id}/schemas
  { name: "unknown assistant", method: "GET", path: `/assistants/${UNKNOWN}/schemas`, status: 404, expected: assistantNotFound },
  { name: "neither a UUID nor a graph id", method: "GET", path: "/assistants/not-a-uuid/schemas", status: 404, expected: assistantNotFound },

  // GET /assistants/{id}/subgraphs[/{namespace}]
  { name: "unknown assistant", method: "GET", path: `/assistants/${UNKNOWN}/subgraphs`, status: 404, expected: assistantNotFound },
  { name: "neither a UUID nor a graph id", method: "GET", path: "/assistants/not-a-uuid/subgraphs", status: 404, expected: assistantNotFound },
  { name: "unknown assistant, with a namespace", method: "GET", path: `/assistants/${UNKNOWN}/subgraphs/child`, status: 404, expected: assistantNotFound },
  { name: "invalid recurse boolean", method: "GET", path: "/assistants/nested/subgraphs?recurse=maybe", status: 422, expected: notQueryBoolean(["query", "recurse"]) },
];

// biome-ignore format: a table, one case per line
const threadRows: Row[] = [
  // POST /threads
  { name: "thread_id not a UUID", method: "POST", path: "/threads", body: { thread_id: "not-a-uuid" }, status: 422, expected: notUuid(["body", "thread_id"]) },
  { name: "metadata a string", method: "POST", path: "/threads", body: { metadata: "x" }, status: 422, expected: expected(["body", "metadata"], "record", "string") },
  { name: "invalid if_exists", method: "POST", path: "/threads", body: { if_exists: "update" }, status: 422, expected: oneOf(["body", "if_exists"], "raise", "do_nothing") },
  { name: "existing thread_id, if_exists raise", method: "POST", path: "/threads", body: { thread_id: THREAD, if_exists: "raise" }, status: 409, expected: detail("Thread already exists") },
  { name: "existing thread_id, if_exists defaulted", method: "POST", path: "/threads", body: { thread_id: THREAD }, status: 409, expected: detail("Thread already exists") },
  { name: "existing thread_id, with supersteps", method: "POST", path: "/threads", body: { thread_id: GRAPH_THREAD, ...seedSuperstep("agent") }, status: 409, expected: detail("Thread already exists") },
  { name: "supersteps a string", method: "POST", path: "/threads", body: { metadata: { graph_id: "agent" }, supersteps: "x" }, status: 422, expected: expected(["body", "supersteps"], "array", "string") },
  {
    name: "a superstep without updates",
    method: "POST",
    path: "/threads",
    body: { metadata: { graph_id: "agent" }, supersteps: [{ updates: [] }] },
    status: 422,
    expected: invalid(["body", "supersteps", 0, "updates"], "Too small: expected array to have >=1 items", "too_small"),
  },
  {
    name: "a superstep update without as_node",
    method: "POST",
    path: "/threads",
    body: { metadata: { graph_id: "agent" }, supersteps: [{ updates: [{ values: {} }] }] },
    status: 422,
    expected: expected(["body", "supersteps", 0, "updates", 0, "as_node"], "string", "undefined"),
  },
  {
    name: "a superstep update with an empty as_node",
    method: "POST",
    path: "/threads",
    body: { metadata: { graph_id: "agent" }, supersteps: [{ updates: [{ values: {}, as_node: "" }] }] },
    status: 422,
    expected: emptyString(["body", "supersteps", 0, "updates", 0, "as_node"]),
  },
  {
    name: "supersteps without metadata.graph_id",
    method: "POST",
    path: "/threads",
    body: { supersteps: seedSuperstep("agent").supersteps },
    status: 422,
    expected: invalid(["body", "metadata", "graph_id"], "supersteps need metadata.graph_id", "value_error"),
  },
  {
    name: "supersteps with a non-string metadata.graph_id",
    method: "POST",
    path: "/threads",
    body: { metadata: { graph_id: 5 }, supersteps: seedSuperstep("agent").supersteps },
    status: 422,
    expected: invalid(["body", "metadata", "graph_id"], "supersteps need metadata.graph_id", "value_error"),
  },
  { name: "supersteps of an unknown graph", method: "POST", path: "/threads", body: seedSuperstep("no_such_graph"), status: 404, expected: detail('Graph "no_such_graph" not found') },
  {
    name: "supersteps naming a node that does not exist",
    method: "POST",
    path: "/threads",
    body: { metadata: { graph_id: "agent" }, supersteps: [{ updates: [{ values: {}, as_node: "no_such_node" }] }] },
    status: 422,
    expected: invalid(["body", "supersteps"], 'InvalidUpdateError: Node "no_such_node" does not exist', "value_error"),
  },
  {
    name: "superstep values the graph's reducer rejects (not messages)",
    method: "POST",
    path: "/threads",
    body: { metadata: { graph_id: "agent" }, supersteps: [{ updates: [{ values: { messages: 5 }, as_node: "__start__" }] }] },
    status: 422,
    expected: invalid(["body", "supersteps"], ANY, "value_error"),
  },
  {
    name: "superstep values the graph's zod state schema rejects",
    method: "POST",
    path: "/threads",
    body: { metadata: { graph_id: "zod_state" }, supersteps: [{ updates: [{ values: { topic: 5 }, as_node: "__start__" }] }] },
    status: 422,
    expected: invalid(["body", "supersteps"], ANY, "value_error"),
  },
  { name: "a body over the size limit (Content-Length)", method: "POST", path: "/threads", oversized: "content-length", status: 413, expected: tooLarge },
  { name: "a body over the size limit (chunked)", method: "POST", path: "/threads", oversized: "chunked", status: 413, expected: tooLarge },

  // POST /threads/search
  { name: "limit 0", method: "POST", path: "/threads/search", body: { limit: 0 }, status: 422, expected: tooSmall(["body", "limit"], 1) },
  { name: "limit 1001", method: "POST", path: "/threads/search", body: { limit: 1001 }, status: 422, expected: tooBig(["body", "limit"], 1000) },
  { name: "limit a string", method: "POST", path: "/threads/search", body: { limit: "10" }, status: 422, expected: expected(["body", "limit"], "number", "string") },
  { name: "offset -1", method: "POST", path: "/threads/search", body: { offset: -1 }, status: 422, expected: tooSmall(["body", "offset"], 0) },
  { name: "offset not an integer", method: "POST", path: "/threads/search", body: { offset: 0.5 }, status: 422, expected: notInt(["body", "offset"]) },
  { name: "invalid status", method: "POST", path: "/threads/search", body: { status: "sleeping" }, status: 422, expected: oneOf(["body", "status"], "idle", "busy", "interrupted", "error") },
  { name: "invalid sort_by", method: "POST", path: "/threads/search", body: { sort_by: "name" }, status: 422, expected: oneOf(["body", "sort_by"], "thread_id", "status", "created_at", "updated_at") },
  { name: "invalid sort_order", method: "POST", path: "/threads/search", body: { sort_order: "sideways" }, status: 422, expected: oneOf(["body", "sort_order"], "asc", "desc") },
  { name: "ids not UUIDs", method: "POST", path: "/threads/search", body: { ids: [THREAD, "not-a-uuid"] }, status: 422, expected: notUuid(["body", "ids", 1]) },
  { name: "ids a string", method: "POST", path: "/threads/search", body: { ids: THREAD }, status: 422, expected: expected(["body", "ids"], "array", "string") },
  { name: "metadata an array", method: "POST", path: "/threads/search", body: { metadata: [] }, status: 422, expected: expected(["body", "metadata"], "record", "array") },
  { name: "values a number", method: "POST", path: "/threads/search", body: { values: 1 }, status: 422, expected: expected(["body", "values"], "record", "number") },

  // POST /threads/count
  { name: "invalid status", method: "POST", path: "/threads/count", body: { status: "sleeping" }, status: 422, expected: oneOf(["body", "status"], "idle", "busy", "interrupted", "error") },
  { name: "metadata a string", method: "POST", path: "/threads/count", body: { metadata: "x" }, status: 422, expected: expected(["body", "metadata"], "record", "string") },
  { name: "values an array", method: "POST", path: "/threads/count", body: { values: [] }, status: 422, expected: expected(["body", "values"], "record", "array") },

  // GET /threads/{id}
  { name: "thread id not a UUID", method: "GET", path: "/threads/not-a-uuid", status: 422, expected: notUuid(["path", "thread_id"]) },
  { name: "unknown thread", method: "GET", path: `/threads/${UNKNOWN}`, status: 404, expected: noThreadWithId(UNKNOWN) },

  // PATCH /threads/{id}
  { name: "thread id not a UUID", method: "PATCH", path: "/threads/not-a-uuid", body: { metadata: {} }, status: 422, expected: notUuid(["path", "thread_id"]) },
  { name: "unknown thread", method: "PATCH", path: `/threads/${UNKNOWN}`, body: { metadata: {} }, status: 404, expected: threadNotFound },
  { name: "no body", method: "PATCH", path: `/threads/${THREAD}`, status: 422, expected: expected(["body"], "object", "undefined") },
  { name: "missing metadata", method: "PATCH", path: `/threads/${THREAD}`, body: {}, status: 422, expected: expected(["body", "metadata"], "record", "undefined") },
  { name: "metadata a string", method: "PATCH", path: `/threads/${THREAD}`, body: { metadata: "x" }, status: 422, expected: expected(["body", "metadata"], "record", "string") },

  // DELETE /threads/{id}
  { name: "thread id not a UUID", method: "DELETE", path: "/threads/not-a-uuid", status: 422, expected: notUuid(["path", "thread_id"]) },
  { name: "unknown thread", method: "DELETE", path: `/threads/${UNKNOWN}`, status: 404, expected: noThreadWithId(UNKNOWN) },

  // POST /threads/{id}/copy
  { name: "thread id not a UUID", method: "POST", path: "/threads/not-a-uuid/copy", status: 422, expected: notUuid(["path", "thread_id"]) },
  { name: "unknown thread (as another user's)", method: "POST", path: `/threads/${UNKNOWN}/copy`, status: 409, expected: threadNotFound },

  // GET /threads/{id}/state
  { name: "thread id not a UUID", method: "GET", path: "/threads/not-a-uuid/state", status: 422, expected: notUuid(["path", "thread_id"]) },
  { name: "unknown thread", method: "GET", path: `/threads/${UNKNOWN}/state`, status: 404, expected: threadStateNotFound(UNKNOWN) },
  { name: "invalid subgraphs boolean", method: "GET", path: `/threads/${GRAPH_THREAD}/state?subgraphs=maybe`, status: 422, expected: notQueryBoolean(["query", "subgraphs"]) },

  // GET /threads/{id}/state/{checkpoint_id}
  { name: "thread id not a UUID", method: "GET", path: "/threads/not-a-uuid/state/some-checkpoint", status: 422, expected: notUuid(["path", "thread_id"]) },
  { name: "unknown thread", method: "GET", path: `/threads/${UNKNOWN}/state/some-checkpoint`, status: 404, expected: threadStateNotFound(UNKNOWN) },
  { name: "unknown checkpoint of a thread without graph", method: "GET", path: `/threads/${THREAD}/state/no-such-checkpoint`, status: 404, expected: detail("Checkpoint no-such-checkpoint not found") },
  {
    name: "unknown checkpoint of a thread with a graph",
    method: "GET",
    path: `/threads/${GRAPH_THREAD}/state/no-such-checkpoint`,
    status: 404,
    expected: detail("Checkpoint no-such-checkpoint not found"),
  },
  { name: "invalid subgraphs boolean", method: "GET", path: `/threads/${GRAPH_THREAD}/state/some-checkpoint?subgraphs=maybe`, status: 422, expected: notQueryBoolean(["query", "subgraphs"]) },

  // POST /threads/{id}/state/checkpoint
  { name: "thread id not a UUID", method: "POST", path: "/threads/not-a-uuid/state/checkpoint", body: { checkpoint: {} }, status: 422, expected: notUuid(["path", "thread_id"]) },
  { name: "unknown thread", method: "POST", path: `/threads/${UNKNOWN}/state/checkpoint`, body: { checkpoint: {} }, status: 404, expected: threadStateNotFound(UNKNOWN) },
  { name: "no body", method: "POST", path: `/threads/${GRAPH_THREAD}/state/checkpoint`, status: 422, expected: expected(["body"], "object", "undefined") },
  { name: "missing checkpoint", method: "POST", path: `/threads/${GRAPH_THREAD}/state/checkpoint`, body: {}, status: 422, expected: expected(["body", "checkpoint"], "object", "undefined") },
  { name: "checkpoint a string", method: "POST", path: `/threads/${GRAPH_THREAD}/state/checkpoint`, body: { checkpoint: "x" }, status: 422, expected: expected(["body", "checkpoint"], "object", "string") },
  { name: "checkpoint_id a number", method: "POST", path: `/threads/${GRAPH_THREAD}/state/checkpoint`, body: { checkpoint: { checkpoint_id: 5 } }, status: 422, expected: expected(["body", "checkpoint", "checkpoint_id"], "string", "number") },
  { name: "checkpoint_map of numbers", method: "POST", path: `/threads/${GRAPH_THREAD}/state/checkpoint`, body: { checkpoint: { checkpoint_map: { "": 1 } } }, status: 422, expected: expected(["body", "checkpoint", "checkpoint_map", ""], "string", "number") },
  { name: "subgraphs a string", method: "POST", path: `/threads/${GRAPH_THREAD}/state/checkpoint`, body: { checkpoint: {}, subgraphs: "yes" }, status: 422, expected: expected(["body", "subgraphs"], "boolean", "string") },
  { name: "unknown checkpoint of a thread without graph", method: "POST", path: `/threads/${THREAD}/state/checkpoint`, body: { checkpoint: { checkpoint_id: "no-such-checkpoint" } }, status: 404, expected: detail("Checkpoint no-such-checkpoint not found") },
  {
    name: "unknown checkpoint of a thread with a graph",
    method: "POST",
    path: `/threads/${GRAPH_THREAD}/state/checkpoint`,
    body: { checkpoint: { checkpoint_id: "no-such-checkpoint" } },
    status: 404,
    expected: detail("Checkpoint no-such-checkpoint not found"),
  },

  // POST /threads/{id}/state
  { name: "thread id not a UUID", method: "POST", path: "/threads/not-a-uuid/state", body: { values: {} }, status: 422, expected: notUuid(["path", "thread_id"]) },
  { name: "unknown thread", method: "POST", path: `/threads/${UNKNOWN}/state`, body: { values: {} }, status: 404, expected: threadStateNotFound(UNKNOWN) },
  {
    name: "a thread without graph",
    method: "POST",
    path: `/threads/${THREAD}/state`,
    body: { values: { messages: [] } },
    status: 422,
    expected: invalid(["body"], `Thread ${THREAD} has no graph: create it with metadata.graph_id or run it first`, "value_error"),
  },
  { name: "as_node a number", method: "POST", path: `/threads/${GRAPH_THREAD}/state`, body: { values: {}, as_node: 5 }, status: 422, expected: expected(["body", "as_node"], "string", "number") },
  { name: "empty as_node", method: "POST", path: `/threads/${GRAPH_THREAD}/state`, body: { values: {}, as_node: "" }, status: 422, expected: emptyString(["body", "as_node"]) },
  { name: "checkpoint_id a number", method: "POST", path: `/threads/${GRAPH_THREAD}/state`, body: { checkpoint_id: 5 }, status: 422, expected: expected(["body", "checkpoint_id"], "string", "number") },
  { name: "checkpoint a string", method: "POST", path: `/threads/${GRAPH_THREAD}/state`, body: { checkpoint: "x" }, status: 422, expected: expected(["body", "checkpoint"], "object", "string") },
  {
    name: "as_node naming a node that does not exist",
    method: "POST",
    path: `/threads/${GRAPH_THREAD}/state`,
    body: { values: {}, as_node: "no_such_node" },
    status: 422,
    expected: invalid(["body", "values"], 'InvalidUpdateError: Node "no_such_node" does not exist', "value_error"),
  },
  {
    name: "values the graph's reducer rejects",
    method: "POST",
    path: `/threads/${SCRATCH_THREAD}/state`,
    body: { values: { messages: 5 }, as_node: "respond" },
    status: 422,
    expected: invalid(["body", "values"], ANY, "value_error"),
  },
  {
    name: "a checkpoint_ns naming a subgraph that does not exist",
    method: "POST",
    path: `/threads/${SCRATCH_THREAD}/state`,
    body: { values: { messages: [] }, as_node: "respond", checkpoint: { checkpoint_ns: "no_such_subgraph" } },
    status: 422,
    expected: invalid(ANY as (string | number)[], ANY, "value_error"),
  },
  {
    name: "a checkpoint_id that does not exist",
    method: "POST",
    path: `/threads/${SCRATCH_THREAD}/state`,
    body: { values: { messages: [] }, as_node: "respond", checkpoint_id: "no-such-checkpoint" },
    status: 404,
    expected: detail("Checkpoint no-such-checkpoint not found"),
  },
  { name: "a body over the size limit (chunked)", method: "POST", path: `/threads/${GRAPH_THREAD}/state`, oversized: "chunked", status: 413, expected: tooLarge },

  // POST /threads/{id}/history
  { name: "thread id not a UUID", method: "POST", path: "/threads/not-a-uuid/history", body: {}, status: 422, expected: notUuid(["path", "thread_id"]) },
  { name: "unknown thread", method: "POST", path: `/threads/${UNKNOWN}/history`, body: {}, status: 404, expected: threadStateNotFound(UNKNOWN) },
  { name: "limit 0", method: "POST", path: `/threads/${GRAPH_THREAD}/history`, body: { limit: 0 }, status: 422, expected: tooSmall(["body", "limit"], 1) },
  { name: "limit 1001", method: "POST", path: `/threads/${GRAPH_THREAD}/history`, body: { limit: 1001 }, status: 422, expected: tooBig(["body", "limit"], 1000) },
  { name: "limit a string", method: "POST", path: `/threads/${GRAPH_THREAD}/history`, body: { limit: "3" }, status: 422, expected: expected(["body", "limit"], "number", "string") },
  { name: "before a number", method: "POST", path: `/threads/${GRAPH_THREAD}/history`, body: { before: 5 }, status: 422, expected: invalid(["body", "before"], "Invalid input", "invalid_union") },
  { name: "metadata a string", method: "POST", path: `/threads/${GRAPH_THREAD}/history`, body: { metadata: "x" }, status: 422, expected: expected(["body", "metadata"], "record", "string") },
  { name: "checkpoint a string", method: "POST", path: `/threads/${GRAPH_THREAD}/history`, body: { checkpoint: "x" }, status: 422, expected: expected(["body", "checkpoint"], "object", "string") },

  // GET /threads/{id}/history
  { name: "thread id not a UUID", method: "GET", path: "/threads/not-a-uuid/history", status: 422, expected: notUuid(["path", "thread_id"]) },
  { name: "unknown thread", method: "GET", path: `/threads/${UNKNOWN}/history`, status: 404, expected: threadStateNotFound(UNKNOWN) },
  { name: "limit 0", method: "GET", path: `/threads/${GRAPH_THREAD}/history?limit=0`, status: 422, expected: tooSmall(["query", "limit"], 1) },
  { name: "limit 1001", method: "GET", path: `/threads/${GRAPH_THREAD}/history?limit=1001`, status: 422, expected: tooBig(["query", "limit"], 1000) },
  { name: "limit not a number", method: "GET", path: `/threads/${GRAPH_THREAD}/history?limit=abc`, status: 422, expected: expected(["query", "limit"], "number", "NaN") },
  { name: "limit not an integer", method: "GET", path: `/threads/${GRAPH_THREAD}/history?limit=1.5`, status: 422, expected: notInt(["query", "limit"]) },
  { name: "before given twice", method: "GET", path: `/threads/${GRAPH_THREAD}/history?before=a&before=b`, status: 422, expected: expected(["query", "before"], "string", "array") },
];

const noAssistantForRun = (id: string) =>
  detail(`No assistant found for "${id}". Make sure the assistant ID is for a valid assistant or a valid graph ID.`);

// biome-ignore format: a table, one case per line
const runRows: Row[] = [
  { name: "unknown assistant", method: "POST", path: "/runs/wait", body: { assistant_id: UNKNOWN }, status: 404, expected: noAssistantForRun(UNKNOWN) },
  { name: "unknown graph as assistant", method: "POST", path: `/threads/${THREAD}/runs`, body: { assistant_id: "no_such_graph" }, status: 404, expected: noAssistantForRun("no_such_graph") },
  { name: "unknown thread", method: "POST", path: `/threads/${UNKNOWN}/runs`, body: { assistant_id: "agent" }, status: 404, expected: threadNotFound },
  { name: "unknown thread", method: "GET", path: `/threads/${UNKNOWN}/runs`, status: 404, expected: threadNotFound },
  { name: "unknown run", method: "GET", path: `/threads/${THREAD}/runs/${UNKNOWN}`, status: 404, expected: detail("Run not found") },
  { name: "unknown run", method: "POST", path: `/threads/${THREAD}/runs/${UNKNOWN}/cancel`, status: 404, expected: detail("Run not found") },
  { name: "unknown run", method: "DELETE", path: `/threads/${THREAD}/runs/${UNKNOWN}`, status: 404, expected: detail("Run not found") },
];

const ROWS: Row[] = [...genericRows, ...assistantRows, ...threadRows, ...runRows];

// ---- running rows ----------------------------------------------------------

function display(path: string): string {
  return path.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (id) => PLACEHOLDERS[id] ?? id);
}

/** `expected` with every ANY replaced by what `actual` holds there. */
function fillWildcards(expectedValue: unknown, actual: unknown): unknown {
  if (expectedValue === ANY) return actual;
  if (Array.isArray(expectedValue)) {
    return expectedValue.map((item, index) => fillWildcards(item, Array.isArray(actual) ? actual[index] : undefined));
  }
  if (typeof expectedValue === "object" && expectedValue !== null) {
    const source = typeof actual === "object" && actual !== null ? (actual as Record<string, unknown>) : {};
    return Object.fromEntries(Object.entries(expectedValue).map(([key, value]) => [key, fillWildcards(value, source[key])]));
  }
  return expectedValue;
}

describe("bad input: exact status and body per endpoint", () => {
  let berth: BerthProcess;
  const call = (method: Method, path: string, body?: unknown, headers?: Record<string, string>) =>
    request(berth.url, method, path, body, headers);

  before(async () => {
    berth = await startBerth();
    const seeds: [Method, string, unknown][] = [
      ["POST", "/assistants", { assistant_id: ASSISTANT, graph_id: "agent", name: "bad-input" }],
      ["POST", "/threads", { thread_id: THREAD, metadata: { suite: "bad-input" } }],
      ["POST", "/threads", { thread_id: GRAPH_THREAD, ...seedSuperstep("agent") }],
      ["POST", "/threads", { thread_id: SCRATCH_THREAD, ...seedSuperstep("agent") }],
    ];
    for (const [method, path, body] of seeds) {
      const response = await call(method, path, body);
      assert.equal(response.status, 200, `seeding ${method} ${path}: ${JSON.stringify(response.body)}`);
    }
    const system = await call("GET", "/assistants/agent");
    assert.equal((system.body as { assistant_id: string }).assistant_id, SYSTEM_AGENT);
  });
  after(() => berth.stop());

  for (const row of ROWS) {
    const title = `${row.method} ${display(row.path)}: ${row.name} → ${row.status}`;
    it(title, async () => {
      const response = row.oversized
        ? await sendOversized(berth.url, row.method, row.path, hugeBody(), row.oversized)
        : await call(row.method, row.path, row.body, row.headers);
      assert.notEqual(response.status, 500, `answered 500: ${JSON.stringify(response.body)}`);
      assert.equal(response.status, row.status, `body: ${JSON.stringify(response.body)}`);
      assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
      assert.deepEqual(response.body, fillWildcards(row.expected, response.body));
    });
  }

  describe("never a half-written record", () => {
    it("a thread whose supersteps name a node that does not exist is not created", async () => {
      const threadId = "4a1f0000-0000-4000-8000-000000000001";
      const created = await call("POST", "/threads", {
        thread_id: threadId,
        metadata: { graph_id: "agent", marker: "half-written" },
        supersteps: [{ updates: [{ values: {}, as_node: "no_such_node" }] }],
      });
      assert.equal(created.status, 422);
      assert.deepEqual(
        created.body,
        invalid(["body", "supersteps"], 'InvalidUpdateError: Node "no_such_node" does not exist', "value_error"),
      );
      const got = await call("GET", `/threads/${threadId}`);
      assert.deepEqual([got.status, got.body], [404, noThreadWithId(threadId)]);
      const count = await call("POST", "/threads/count", { metadata: { marker: "half-written" } });
      assert.deepEqual([count.status, count.body], [200, 0]);
    });

    it("a thread whose second superstep fails keeps no checkpoint of the first", async () => {
      const threadId = "4a1f0000-0000-4000-8000-000000000002";
      const created = await call("POST", "/threads", {
        thread_id: threadId,
        metadata: { graph_id: "agent" },
        supersteps: [
          { updates: [{ values: { messages: [{ type: "human", content: "hi" }] }, as_node: "__start__" }] },
          { updates: [{ values: {}, as_node: "ghost" }] },
        ],
      });
      assert.equal(created.status, 422);
      assert.deepEqual(
        created.body,
        invalid(["body", "supersteps"], 'InvalidUpdateError: Node "ghost" does not exist', "value_error"),
      );
      const got = await call("GET", `/threads/${threadId}`);
      assert.deepEqual([got.status, got.body], [404, noThreadWithId(threadId)]);
      const history = await call("POST", `/threads/${threadId}/history`, {});
      assert.deepEqual([history.status, history.body], [404, threadStateNotFound(threadId)]);
      // The same id again, without supersteps: it must start with no checkpoints left over.
      const again = await call("POST", "/threads", { thread_id: threadId, metadata: { graph_id: "agent" } });
      assert.equal(again.status, 200);
      const fresh = await call("POST", `/threads/${threadId}/history`, {});
      assert.deepEqual([fresh.status, fresh.body], [200, []]);
    });

    it("a thread whose supersteps fail inside the graph's reducer is not created either", async () => {
      const threadId = "4a1f0000-0000-4000-8000-000000000003";
      const created = await call("POST", "/threads", {
        thread_id: threadId,
        metadata: { graph_id: "agent" },
        supersteps: [{ updates: [{ values: { messages: 5 }, as_node: "__start__" }] }],
      });
      assert.equal(created.status, 422);
      const got = await call("GET", `/threads/${threadId}`);
      assert.deepEqual([got.status, got.body], [404, noThreadWithId(threadId)]);
    });

    for (const [framing, threadId] of [
      ["content-length", "4a1f0000-0000-4000-8000-000000000004"],
      ["chunked", "4a1f0000-0000-4000-8000-000000000005"],
    ] as const) {
      it(`a thread create over the size limit (${framing}) creates nothing`, async () => {
        const created = await sendOversized(berth.url, "POST", "/threads", hugeBody({ thread_id: threadId }), framing);
        assert.deepEqual([created.status, created.body], [413, tooLarge]);
        const got = await call("GET", `/threads/${threadId}`);
        assert.deepEqual([got.status, got.body], [404, noThreadWithId(threadId)]);
      });
    }

    it("a rejected state update writes no checkpoint and leaves the thread as it was", async () => {
      const threadBefore = await call("GET", `/threads/${GRAPH_THREAD}`);
      const historyBefore = await call("POST", `/threads/${GRAPH_THREAD}/history`, { limit: 100 });
      assert.equal((historyBefore.body as unknown[]).length, 1);
      const update = await call("POST", `/threads/${GRAPH_THREAD}/state`, { values: {}, as_node: "no_such_node" });
      assert.equal(update.status, 422);
      assert.deepEqual(await call("GET", `/threads/${GRAPH_THREAD}`).then((r) => r.body), threadBefore.body);
      assert.deepEqual(
        await call("POST", `/threads/${GRAPH_THREAD}/history`, { limit: 100 }).then((r) => r.body),
        historyBefore.body,
      );
    });

    /** A fresh agent thread with one checkpoint, and what the API shows of it. */
    async function seededThread(threadId: string) {
      const created = await call("POST", "/threads", { thread_id: threadId, ...seedSuperstep("agent") });
      assert.equal(created.status, 200);
      const history = await call("POST", `/threads/${threadId}/history`, { limit: 100 });
      assert.equal((history.body as unknown[]).length, 1);
      return { thread: created.body, history: history.body };
    }

    async function assertUnchanged(threadId: string, seeded: { thread: unknown; history: unknown }) {
      assert.deepEqual((await call("GET", `/threads/${threadId}`)).body, seeded.thread);
      assert.deepEqual((await call("POST", `/threads/${threadId}/history`, { limit: 100 })).body, seeded.history);
    }

    it("a state update failing inside the graph's reducer writes nothing", async () => {
      const threadId = "4a1f0000-0000-4000-8000-000000000006";
      const seeded = await seededThread(threadId);
      const update = await call("POST", `/threads/${threadId}/state`, { values: { messages: 5 }, as_node: "respond" });
      assert.equal(update.status, 422);
      await assertUnchanged(threadId, seeded);
    });

    it("a state update from a checkpoint that does not exist writes nothing", async () => {
      const threadId = "4a1f0000-0000-4000-8000-000000000007";
      const seeded = await seededThread(threadId);
      const update = await call("POST", `/threads/${threadId}/state`, {
        values: { messages: [] },
        as_node: "respond",
        checkpoint_id: "no-such-checkpoint",
      });
      assert.deepEqual([update.status, update.body], [404, detail("Checkpoint no-such-checkpoint not found")]);
      await assertUnchanged(threadId, seeded);
    });

    it("a conflicting thread create (409) leaves the existing thread and its state untouched", async () => {
      const threadBefore = await call("GET", `/threads/${GRAPH_THREAD}`);
      const stateBefore = await call("GET", `/threads/${GRAPH_THREAD}/state`);
      const created = await call("POST", "/threads", {
        thread_id: GRAPH_THREAD,
        metadata: { graph_id: "agent", overwritten: true },
        supersteps: [{ updates: [{ values: { messages: [{ type: "human", content: "again" }] }, as_node: "__start__" }] }],
      });
      assert.deepEqual([created.status, created.body], [409, detail("Thread already exists")]);
      assert.deepEqual((await call("GET", `/threads/${GRAPH_THREAD}`)).body, threadBefore.body);
      assert.deepEqual((await call("GET", `/threads/${GRAPH_THREAD}/state`)).body, stateBefore.body);
    });

    it("a conflicting assistant create (409) or a rejected patch leaves the assistant and its versions untouched", async () => {
      const assistantBefore = await call("GET", `/assistants/${ASSISTANT}`);
      const versionsBefore = await call("POST", `/assistants/${ASSISTANT}/versions`, {});
      const created = await call("POST", "/assistants", { assistant_id: ASSISTANT, graph_id: "hitl", name: "overwritten" });
      assert.deepEqual([created.status, created.body], [409, detail("Assistant already exists")]);
      const patched = await call("PATCH", `/assistants/${ASSISTANT}`, { graph_id: "no_such_graph", name: "overwritten" });
      assert.deepEqual([patched.status, patched.body], [404, detail('Graph "no_such_graph" not found')]);
      assert.deepEqual((await call("GET", `/assistants/${ASSISTANT}`)).body, assistantBefore.body);
      assert.deepEqual((await call("POST", `/assistants/${ASSISTANT}/versions`, {})).body, versionsBefore.body);
    });
  });
});
