import { randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import type { SystemAssistantDefaults } from "../config/assistant-defaults.js";
import type { GraphRegistry } from "../graphs/registry.js";
import { type GraphSchemas, resolveGraphSchemas, resolveSubgraphSchemas, type SubgraphSchemas } from "../graphs/schemas.js";
import type {
  Assistant,
  AssistantFilter,
  AssistantPatch,
  AssistantQuery,
  AssistantVersion,
  JsonObject,
  Storage,
} from "../storage/types.js";
import { isUuid, systemAssistantId } from "./assistant-ids.js";
import { type Access, metadataOf } from "./authorization.js";
import { ConflictError, NotFoundError } from "@berth/service-kit";

export interface CreateAssistantInput {
  assistant_id?: string;
  graph_id: string;
  config?: JsonObject;
  context?: JsonObject;
  metadata?: JsonObject;
  name?: string;
  description?: string | null;
  if_exists?: "raise" | "do_nothing";
}

export class AssistantService {
  constructor(
    private readonly storage: Storage,
    private readonly graphs: GraphRegistry,
  ) {}

  /**
   * One assistant per graph, created at start if missing, with its config and
   * context from `LANGGRAPH_CONFIG`. An existing one is kept as it is, unless
   * `LANGGRAPH_CONFIG` names its graph with other values: then they become a
   * new version (a deployment whose environment changed gets the new defaults).
   */
  async ensureSystemAssistants(defaults: SystemAssistantDefaults = {}): Promise<void> {
    for (const graphId of this.graphs.ids()) {
      const assistantId = systemAssistantId(graphId);
      const wanted = defaults[graphId];
      const created = await this.storage.assistants.create({
        assistant_id: assistantId,
        graph_id: graphId,
        name: graphId,
        description: this.graphs.spec(graphId)?.description ?? null,
        config: wanted?.config ?? {},
        context: wanted?.context ?? {},
        metadata: { created_by: "system" },
      });
      if (created || !wanted) continue;
      const existing = await this.storage.assistants.get(assistantId);
      if (
        existing &&
        !(isDeepStrictEqual(existing.config, wanted.config) && isDeepStrictEqual(existing.context, wanted.context))
      ) {
        await this.storage.assistants.patch(assistantId, { config: wanted.config, context: wanted.context });
      }
    }
  }

  /** Maps a graph id to its system assistant's id; a uuid stays as it is. */
  resolveId(assistantIdOrGraphId: string): string {
    if (this.graphs.has(assistantIdOrGraphId)) return systemAssistantId(assistantIdOrGraphId);
    if (isUuid(assistantIdOrGraphId)) return assistantIdOrGraphId;
    throw new NotFoundError("Assistant not found");
  }

  /** The assistant (by id, or its graph's id), if the user may read it: another user's is not found. */
  async get(assistantIdOrGraphId: string, access: Access): Promise<Assistant> {
    const assistantId = this.resolveId(assistantIdOrGraphId);
    const { scope } = await access.authorize("assistants:read", { assistant_id: assistantId });
    const assistant = await this.storage.assistants.get(assistantId, scope);
    if (!assistant) throw new NotFoundError("Assistant not found");
    return assistant;
  }

  /**
   * The assistant a run (or a cron) names. The graphs' own assistants are every
   * user's to run, as the reference server resolves a graph id: a run is
   * authorized through its thread (`threads:create_run`), and an owner filter on
   * assistants must not hide the graphs. An assistant a user created is found
   * only if `assistants:read` lets the user see it.
   */
  async forRun(assistantIdOrGraphId: string, access: Access): Promise<Assistant> {
    const assistantId = this.resolveId(assistantIdOrGraphId);
    const stored = await this.storage.assistants.get(assistantId);
    if (stored && stored.assistant_id === systemAssistantId(stored.graph_id)) return stored;
    return this.get(assistantId, access);
  }

  async create(input: CreateAssistantInput, access: Access): Promise<Assistant> {
    this.requireGraph(input.graph_id);
    const assistantId = input.assistant_id ?? randomUUID();
    const { scope, value } = await access.authorize("assistants:create", {
      assistant_id: assistantId,
      graph_id: input.graph_id,
      config: input.config ?? {},
      context: input.context ?? {},
      metadata: { ...input.metadata },
      if_exists: input.if_exists ?? "raise",
      name: input.name ?? "Untitled",
      description: input.description ?? null,
    });
    const created = await this.storage.assistants.create({
      assistant_id: assistantId,
      graph_id: input.graph_id,
      name: input.name ?? "Untitled",
      description: input.description ?? null,
      config: input.config ?? {},
      context: input.context ?? {},
      metadata: metadataOf(value),
    });
    if (created) return created;
    // Another user's assistant is taken all the same, and stays out of reach.
    const existing = await this.storage.assistants.get(assistantId, scope);
    if (input.if_exists === "do_nothing" && existing) return existing;
    throw new ConflictError("Assistant already exists");
  }

  async patch(assistantIdOrGraphId: string, patch: AssistantPatch, access: Access): Promise<Assistant> {
    if (patch.graph_id !== undefined) this.requireGraph(patch.graph_id);
    const assistantId = this.resolveId(assistantIdOrGraphId);
    const { scope, value } = await access.authorize("assistants:update", {
      assistant_id: assistantId,
      ...patch,
      metadata: patch.metadata && { ...patch.metadata },
    });
    const metadata = value.metadata === undefined ? undefined : metadataOf(value);
    const updated = await this.storage.assistants.patch(assistantId, { ...patch, metadata }, scope);
    if (!updated) throw new NotFoundError("Assistant not found");
    return updated;
  }

  /** Deletes the assistant; with `deleteThreads`, also the threads created for it that the user may delete. */
  async delete(assistantIdOrGraphId: string, deleteThreads: boolean, access: Access): Promise<void> {
    const assistantId = this.resolveId(assistantIdOrGraphId);
    const { scope } = await access.authorize("assistants:delete", { assistant_id: assistantId });
    if (!(await this.storage.assistants.delete(assistantId, scope))) {
      throw new NotFoundError("Assistant not found");
    }
    if (deleteThreads) {
      const threads = await access.authorize("threads:delete", { assistant_id: assistantId });
      for (const threadId of await this.storage.threads.idsByMetadata({ assistant_id: assistantId })) {
        await this.storage.threads.delete(threadId, threads.scope);
      }
    }
  }

  async search(query: AssistantQuery, access: Access): Promise<{ items: Assistant[]; total: number }> {
    const { scope } = await access.authorize("assistants:search", searchValue(query));
    return this.storage.assistants.search({ ...query, scope });
  }

  async count(filter: AssistantFilter, access: Access): Promise<number> {
    const { scope } = await access.authorize("assistants:search", searchValue(filter));
    return this.storage.assistants.count({ ...filter, scope });
  }

  async versions(
    assistantIdOrGraphId: string,
    query: { limit: number; offset: number; metadata?: JsonObject },
    access: Access,
  ): Promise<AssistantVersion[]> {
    const assistant = await this.get(assistantIdOrGraphId, access);
    return this.storage.assistants.versions(assistant.assistant_id, query);
  }

  async setLatest(assistantIdOrGraphId: string, version: number, access: Access): Promise<Assistant> {
    const assistantId = this.resolveId(assistantIdOrGraphId);
    const { scope } = await access.authorize("assistants:update", { assistant_id: assistantId, version });
    if (!(await this.storage.assistants.get(assistantId, scope))) throw new NotFoundError("Assistant not found");
    const updated = await this.storage.assistants.setLatest(assistantId, version, scope);
    if (!updated) throw new NotFoundError("Assistant version not found");
    return updated;
  }

  async drawing(assistantIdOrGraphId: string, xray: boolean | number, access: Access): Promise<unknown> {
    const graph = await this.graphOf(await this.get(assistantIdOrGraphId, access));
    const drawable = await graph.getGraphAsync({ xray } as Parameters<typeof graph.getGraphAsync>[0]);
    return drawable.toJSON();
  }

  async schemas(assistantIdOrGraphId: string, access: Access): Promise<GraphSchemas & { graph_id: string }> {
    const assistant = await this.get(assistantIdOrGraphId, access);
    const graph = await this.graphOf(assistant);
    return { graph_id: assistant.graph_id, ...(await resolveGraphSchemas(this.graphs.spec(assistant.graph_id), graph)) };
  }

  async subgraphs(
    assistantIdOrGraphId: string,
    namespace: string | undefined,
    recurse: boolean,
    access: Access,
  ): Promise<Record<string, SubgraphSchemas>> {
    const assistant = await this.get(assistantIdOrGraphId, access);
    const graph = await this.graphOf(assistant);
    return resolveSubgraphSchemas(this.graphs.spec(assistant.graph_id), graph, namespace, recurse);
  }

  private graphOf(assistant: Assistant) {
    this.requireGraph(assistant.graph_id);
    return this.graphs.get(assistant.graph_id, {
      configurable: { ...(assistant.config.configurable as JsonObject | undefined), assistant_id: assistant.assistant_id },
    });
  }

  private requireGraph(graphId: string): void {
    if (!this.graphs.has(graphId)) throw new NotFoundError(`Graph "${graphId}" not found`);
  }
}

/** The `assistants:search` value handlers see (the SDK's AssistantSearch). */
function searchValue(filter: AssistantFilter & { limit?: number; offset?: number }) {
  return { graph_id: filter.graph_id, name: filter.name, metadata: filter.metadata, limit: filter.limit, offset: filter.offset };
}
