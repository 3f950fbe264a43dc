import type { JsonSchema } from "./types.js";

/**
 * How message fields appear in schemas read from TypeScript types: like the
 * reference server, an array of `#/definitions/BaseMessage`, itself a oneOf of
 * the concrete message classes. Their bodies describe the serialized message
 * (what clients send and receive), not the classes' internals.
 */
export const BASE_MESSAGE_REF = "#/definitions/BaseMessage";

const MESSAGE_CLASSES = {
  AIMessage: "ai",
  BaseMessageChunk: undefined,
  ChatMessage: "generic",
  FunctionMessage: "function",
  HumanMessage: "human",
  RemoveMessage: "remove",
  SystemMessage: "system",
  ToolMessage: "tool",
} as const;

const content: JsonSchema = {
  anyOf: [{ type: "string" }, { type: "array", items: { type: "object", additionalProperties: true } }],
};

const common: Record<string, JsonSchema> = {
  content,
  id: { type: "string" },
  name: { type: "string" },
  additional_kwargs: { type: "object", additionalProperties: true },
  response_metadata: { type: "object", additionalProperties: true },
};

const toolCall: JsonSchema = {
  type: "object",
  properties: {
    name: { type: "string" },
    args: { type: "object", additionalProperties: true },
    id: { type: "string" },
    type: { type: "string", const: "tool_call" },
  },
  required: ["args", "name"],
};

const extra: Record<keyof typeof MESSAGE_CLASSES, { properties?: Record<string, JsonSchema>; required?: string[] }> = {
  AIMessage: {
    properties: {
      tool_calls: { type: "array", items: toolCall },
      invalid_tool_calls: { type: "array", items: { type: "object", additionalProperties: true } },
      usage_metadata: {
        type: "object",
        properties: { input_tokens: { type: "number" }, output_tokens: { type: "number" }, total_tokens: { type: "number" } },
      },
    },
  },
  BaseMessageChunk: {},
  ChatMessage: { properties: { role: { type: "string" } }, required: ["content", "role"] },
  FunctionMessage: { required: ["content", "name"] },
  HumanMessage: {},
  RemoveMessage: { required: ["id"] },
  SystemMessage: {},
  ToolMessage: {
    properties: {
      tool_call_id: { type: "string" },
      status: { type: "string", enum: ["error", "success"] },
      artifact: {},
    },
    required: ["content", "tool_call_id"],
  },
};

function messageDefinition(name: keyof typeof MESSAGE_CLASSES): JsonSchema {
  const type = MESSAGE_CLASSES[name];
  return {
    type: "object",
    properties: {
      ...common,
      ...extra[name].properties,
      type: type === undefined ? { type: "string" } : { type: "string", const: type },
    },
    required: extra[name].required ?? ["content"],
  };
}

/** The definitions a schema with message fields carries. */
export const MESSAGE_DEFINITIONS: Record<string, JsonSchema> = {
  BaseMessage: {
    description: "Base class for all types of messages in a conversation.",
    oneOf: Object.keys(MESSAGE_CLASSES).map((name) => ({ $ref: `#/definitions/${name}` })),
  },
  ...Object.fromEntries(
    (Object.keys(MESSAGE_CLASSES) as (keyof typeof MESSAGE_CLASSES)[]).map((name) => [name, messageDefinition(name)]),
  ),
};
