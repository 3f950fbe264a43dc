import { z } from "zod";

/**
 * The A2A objects Berth reads and writes, in the protocol's JSON-RPC form with
 * slash-named methods (`kind` discriminators, lowercase states and roles).
 */

const MetadataSchema = z.record(z.string(), z.unknown());

export const TextPartSchema = z.object({ kind: z.literal("text"), text: z.string(), metadata: MetadataSchema.optional() });
export const DataPartSchema = z.object({ kind: z.literal("data"), data: z.unknown(), metadata: MetadataSchema.optional() });
/** Files and kinds Berth does not take are still valid parts: refused with -32005, not -32602. */
const OtherPartSchema = z.looseObject({ kind: z.string() });
export const PartSchema = z.union([TextPartSchema, DataPartSchema, OtherPartSchema]);
export type Part = z.infer<typeof TextPartSchema> | z.infer<typeof DataPartSchema>;

export const RoleSchema = z.enum(["user", "agent"]);

export const MessageSchema = z.object({
  kind: z.literal("message").optional(),
  messageId: z.string().min(1),
  role: RoleSchema,
  parts: z.array(PartSchema),
  contextId: z.string().optional(),
  taskId: z.string().optional(),
  metadata: MetadataSchema.optional(),
  referenceTaskIds: z.array(z.string()).optional(),
  extensions: z.array(z.string()).optional(),
  /** A LangGraph command (`{resume}`, `{update}`, `{goto}`): LGP's extension for resuming an interrupted task. */
  command: z.record(z.string(), z.unknown()).optional(),
});
export type IncomingMessage = z.infer<typeof MessageSchema>;

export const MessageSendParamsSchema = z.object({
  message: MessageSchema,
  configuration: z
    .object({
      acceptedOutputModes: z.array(z.string()).optional(),
      historyLength: z.int().min(0).optional(),
      /** false: answer at once with the submitted task (A2A's non-blocking send). */
      blocking: z.boolean().optional(),
      pushNotificationConfig: z.unknown().optional(),
    })
    .optional(),
  metadata: MetadataSchema.optional(),
  /** The run's `context` (LGP's extension). */
  context: z.record(z.string(), z.unknown()).optional(),
});
export type MessageSendParams = z.infer<typeof MessageSendParamsSchema>;

export const TaskQueryParamsSchema = z.object({
  id: z.string().min(1),
  contextId: z.string().optional(),
  historyLength: z.int().min(0).max(10).optional(),
  metadata: MetadataSchema.optional(),
});
export type TaskQueryParams = z.infer<typeof TaskQueryParamsSchema>;

export const TaskIdParamsSchema = z.object({
  id: z.string().min(1),
  contextId: z.string().optional(),
  metadata: MetadataSchema.optional(),
});
export type TaskIdParams = z.infer<typeof TaskIdParamsSchema>;

export type TaskState =
  | "submitted"
  | "working"
  | "input-required"
  | "completed"
  | "canceled"
  | "failed"
  | "rejected"
  | "auth-required";

export interface A2aMessage {
  kind: "message";
  messageId: string;
  role: "user" | "agent";
  parts: Part[];
  contextId?: string;
  taskId?: string;
}

export interface TaskStatus {
  state: TaskState;
  message?: A2aMessage;
  timestamp?: string;
}

export interface Artifact {
  artifactId: string;
  name: string;
  description?: string;
  parts: Part[];
}

export interface Task {
  kind: "task";
  id: string;
  contextId: string;
  status: TaskStatus;
  history: A2aMessage[];
  artifacts?: Artifact[];
}

export interface TaskStatusUpdateEvent {
  kind: "status-update";
  taskId: string;
  contextId: string;
  status: TaskStatus;
  final: boolean;
}

export interface TaskArtifactUpdateEvent {
  kind: "artifact-update";
  taskId: string;
  contextId: string;
  artifact: Artifact;
}

/** What a `message/stream` sends, one JSON-RPC result each. */
export type StreamResult = Task | TaskStatusUpdateEvent | TaskArtifactUpdateEvent;

/** JSON-RPC and A2A error codes. */
export const A2aErrorCode = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  taskNotFound: -32001,
  taskNotCancelable: -32002,
  pushNotificationNotSupported: -32003,
  unsupportedOperation: -32004,
  contentTypeNotSupported: -32005,
  invalidAgentResponse: -32006,
} as const;

/** An error the JSON-RPC answer carries (with HTTP 200: the request itself was understood). */
export class A2aError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}
