import { NotFoundError, UnprocessableError } from "@berth/service-kit";
import type { Assistant, JsonObject } from "../storage/types.js";
import type { AssistantService } from "./assistants.js";
import type { Access } from "./authorization.js";
import type { RunCreateInput, RunService } from "./runs.js";

/** Assistants per `tools/list` page. */
export const TOOLS_PAGE_SIZE = 100;

/** An assistant as a tool: its name, its description, and what its graph takes as input. */
export interface AssistantTool {
  name: string;
  description: string;
  /** A JSON Schema whose root is an object (MCP requires it). */
  inputSchema: JsonObject & { type: "object" };
}

export interface AssistantToolPage {
  tools: AssistantTool[];
  /** The offset of the next page, when there is one. */
  next?: number;
}

/** How a tool call ended: the run's output, or its error (or the input its graph refused) as text. */
export type ToolOutcome = { ok: true; output: unknown } | { ok: false; error: string };

export interface ToolCallOptions {
  access: Access;
  /** The run's config (the request's forwarded headers and user, in `configurable`). */
  config?: JsonObject | null;
  /** The caller left: the run is cancelled. */
  signal?: AbortSignal;
}

/** No assistant the caller may see has the name, or more than one has it. */
export class ToolLookupError extends Error {}

/**
 * The assistants as MCP tools (each one, the graphs' own and those users created), and a tool call as a
 * stateless run waited for. No JSON-RPC here: the MCP route speaks the protocol.
 */
export class McpToolService {
  constructor(
    private readonly assistants: AssistantService,
    private readonly runs: RunService,
  ) {}

  /** A page of the assistants the caller may search (oldest first, so pages stay put as assistants are added). */
  async list(offset: number, access: Access): Promise<AssistantToolPage> {
    const { items, total } = await this.assistants.search(
      { limit: TOOLS_PAGE_SIZE, offset, sort_by: "created_at", sort_order: "asc" },
      access,
    );
    const schemas = new Map<string, Promise<JsonObject | null>>();
    const tools = await Promise.all(
      items.map(async (assistant) => ({
        name: assistant.name,
        description: assistant.description ?? "",
        inputSchema: toolInputSchema(await this.inputSchemaOf(assistant, access, schemas)),
      })),
    );
    const seen = offset + items.length;
    return { tools, ...(items.length > 0 && seen < total ? { next: seen } : {}) };
  }

  /**
   * Starts a stateless run of the one assistant named `name`, with the arguments as its input. Resolves once the run
   * exists (an authorization refusal rejects here, before anything waits); `outcome` resolves when it ends.
   */
  async call(
    name: string,
    args: JsonObject,
    { access, config, signal }: ToolCallOptions,
  ): Promise<{ outcome: Promise<ToolOutcome> }> {
    const assistant = await this.findByName(name, access);
    const input: RunCreateInput = {
      assistant_id: assistant.assistant_id,
      input: args,
      config: config ?? null,
      stream_mode: ["values"],
      stream_subgraphs: false,
      stream_resumable: false,
      multitask_strategy: "reject",
      if_not_exists: "reject",
      on_disconnect: "cancel",
    };
    let started: Awaited<ReturnType<RunService["startWaiting"]>>;
    try {
      started = await this.runs.startWaiting(undefined, input, { access });
    } catch (error) {
      // Input the graph refuses is the tool's error to report, so the model can correct its arguments.
      if (error instanceof UnprocessableError) return { outcome: Promise.resolve({ ok: false, error: error.message }) };
      if (error instanceof NotFoundError) throw new ToolLookupError(`Tool "${name}" not found`);
      throw error;
    }
    const { run, ended } = started;
    const cancel = () => void this.runs.cancel(run, "interrupt", false).catch(() => {});
    signal?.addEventListener("abort", cancel, { once: true });
    const outcome = this.runs
      .output(run, ended)
      .then(outcomeOf)
      .finally(() => signal?.removeEventListener("abort", cancel));
    return { outcome };
  }

  /** The single assistant the caller may search whose name is exactly `name`. */
  private async findByName(name: string, access: Access): Promise<Assistant> {
    const matches: Assistant[] = [];
    // The storage's name filter is a case-insensitive substring: page through it, keep the exact matches.
    for (let offset = 0; ; offset += TOOLS_PAGE_SIZE) {
      const { items } = await this.assistants.search(
        { name, limit: TOOLS_PAGE_SIZE, offset, sort_by: "created_at", sort_order: "asc" },
        access,
      );
      matches.push(...items.filter((assistant) => assistant.name === name));
      if (items.length < TOOLS_PAGE_SIZE) break;
    }
    if (matches.length === 0) throw new ToolLookupError(`Tool "${name}" not found`);
    if (matches.length > 1) {
      throw new ToolLookupError(`Tool name "${name}" is ambiguous: ${matches.length} assistants have it; rename all but one`);
    }
    return matches[0]!;
  }

  /** The assistant's input schema; assistants of one graph with the same configurable share one resolution. */
  private inputSchemaOf(
    assistant: Assistant,
    access: Access,
    cache: Map<string, Promise<JsonObject | null>>,
  ): Promise<JsonObject | null> {
    const key = JSON.stringify([assistant.graph_id, assistant.config.configurable ?? null]);
    let schema = cache.get(key);
    if (!schema) {
      // A graph that fails to load still lists its assistants, with a schema that takes any object.
      schema = this.assistants.schemas(assistant.assistant_id, access).then(
        (schemas) => schemas.input_schema as JsonObject | null,
        () => null,
      );
      cache.set(key, schema);
    }
    return schema;
  }
}

/** MCP wants an object at the root of a tool's input schema: a schema without a type gets it, any other is replaced. */
export function toolInputSchema(schema: JsonObject | null): AssistantTool["inputSchema"] {
  if (schema && (schema.type === undefined || schema.type === "object")) return { ...schema, type: "object" };
  return { type: "object" };
}

function outcomeOf(output: unknown): ToolOutcome {
  if (typeof output === "object" && output !== null && "__error__" in output) {
    const { error, message } = (output as { __error__: { error?: string; message?: string } }).__error__;
    return { ok: false, error: error && message ? `${error}: ${message}` : (message ?? error ?? "The run failed") };
  }
  return { ok: true, output };
}
