import type { JsonSchema } from "./types.js";

/**
 * How message fields appear in schemas read from TypeScript types, named as the
 * reference server's generator names them for @langchain/core 1.x: an array of
 * `#/definitions/BaseMessage<MessageStructure<MessageToolSet>,MessageType>`, a
 * oneOf of `RemoveMessage` (the one class that extends the plain base there).
 * That one definition describes any serialized message, so every kind validates.
 */
const BASE_MESSAGE = "BaseMessage<MessageStructure<MessageToolSet>,MessageType>";
export const BASE_MESSAGE_REF = `#/definitions/${BASE_MESSAGE}`;

const MESSAGE_TYPES = ["ai", "human", "system", "tool", "function", "generic", "remove", "developer"];

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

/** A serialized message of any kind: the common fields, and those of AI, tool and chat messages as optional. */
const message: JsonSchema = {
  type: "object",
  properties: {
    content: { anyOf: [{ type: "string" }, { type: "array", items: { type: "object", additionalProperties: true } }] },
    id: { type: "string" },
    name: { type: "string" },
    type: { type: "string", enum: MESSAGE_TYPES },
    additional_kwargs: { type: "object", additionalProperties: true },
    response_metadata: { type: "object", additionalProperties: true },
    tool_calls: { type: "array", items: toolCall },
    invalid_tool_calls: { type: "array", items: { type: "object", additionalProperties: true } },
    usage_metadata: {
      type: "object",
      properties: { input_tokens: { type: "number" }, output_tokens: { type: "number" }, total_tokens: { type: "number" } },
    },
    tool_call_id: { type: "string" },
    status: { type: "string", enum: ["error", "success"] },
    artifact: {},
    role: { type: "string" },
  },
  required: ["content"],
};

/** The definitions a schema with message fields carries. */
export const MESSAGE_DEFINITIONS: Record<string, JsonSchema> = {
  [BASE_MESSAGE]: {
    description: "Base class for all types of messages in a conversation.",
    oneOf: [{ $ref: "#/definitions/RemoveMessage" }],
  },
  RemoveMessage: message,
};
