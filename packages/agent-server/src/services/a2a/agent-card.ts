import type { GraphSchemas, JsonSchema } from "../../graphs/schemas.js";
import type { Assistant } from "../../storage/types.js";
import { isObject } from "./messages.js";

const MODES = ["application/json", "text/plain"];

/** The property names of a JSON schema, and those it requires. */
function shapeOf(schema: JsonSchema | null | undefined): { properties: string[]; required: string[] } {
  const properties = isObject(schema) && isObject(schema.properties) ? Object.keys(schema.properties) : [];
  const required =
    isObject(schema) && Array.isArray(schema.required) ? schema.required.filter((key) => typeof key === "string") : [];
  return { properties: properties.sort(), required };
}

/** Whether the graph takes chat messages (text parts need them), by its input schema or else its state. */
export function takesMessages(schemas: Pick<GraphSchemas, "input_schema" | "state_schema">): boolean {
  return [schemas.input_schema, schemas.state_schema].some((schema) => shapeOf(schema).properties.includes("messages"));
}

/** An assistant as an A2A agent: one skill, JSON-RPC at `url`, streaming. */
export function agentCard(assistant: Assistant, schemas: GraphSchemas, url: string, version: string) {
  const name = assistant.name || assistant.graph_id;
  const description = assistant.description || `${name} assistant`;
  const input = shapeOf(schemas.input_schema ?? schemas.state_schema);
  return {
    protocolVersion: "0.3.0",
    name,
    description,
    url,
    preferredTransport: "JSONRPC",
    version,
    capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
    defaultInputModes: MODES,
    defaultOutputModes: MODES,
    skills: [
      {
        id: `${assistant.assistant_id}-main`,
        name: `${name} Capabilities`,
        description,
        tags: ["assistant", "langgraph"],
        examples: [],
        inputModes: MODES,
        outputModes: MODES,
        metadata: { inputSchema: { ...input, supportsA2A: takesMessages(schemas) } },
      },
    ],
  };
}
