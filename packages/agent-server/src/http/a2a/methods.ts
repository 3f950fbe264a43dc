import type { z } from "zod";
import type { A2aCaller, A2aService } from "../../services/a2a/a2a-service.js";
import {
  A2aError,
  A2aErrorCode,
  MessageSendParamsSchema,
  TaskIdParamsSchema,
  TaskQueryParamsSchema,
} from "../../services/a2a/protocol.js";

/** One JSON-RPC call, ready to run: a single result, or a stream of them (`message/stream`). */
export type MethodCall =
  | { kind: "result"; run(): Promise<unknown> }
  | { kind: "stream"; run(signal: AbortSignal): AsyncGenerator<unknown> };

export interface MethodContext {
  service: A2aService;
  assistantId: string;
  caller: A2aCaller;
  /** The assistant's card (for `agent/getAuthenticatedExtendedCard`). */
  card(): Promise<unknown>;
}

const STREAMING_METHODS = new Set(["message/stream", "tasks/resubscribe"]);

/** Whether the method answers with Server-Sent Events (so the request must accept them). */
export function isStreamingMethod(method: string): boolean {
  return STREAMING_METHODS.has(method);
}

function paramsOf<T extends z.ZodType>(schema: T, params: unknown): z.infer<T> {
  const parsed = schema.safeParse(params ?? {});
  if (parsed.success) return parsed.data;
  const detail = parsed.error.issues.map((issue) => `${issue.path.join(".") || "params"}: ${issue.message}`).join("; ");
  throw new A2aError(A2aErrorCode.invalidParams, `Invalid params: ${detail}`);
}

/** The call `method` makes with `params`; undefined for a method the endpoint does not have (-32601). */
export function methodCall(method: string, params: unknown, context: MethodContext): MethodCall | undefined {
  const { service, assistantId, caller } = context;
  switch (method) {
    case "message/send":
      return { kind: "result", run: () => service.send(assistantId, paramsOf(MessageSendParamsSchema, params), caller) };
    case "message/stream":
      return {
        kind: "stream",
        run: (signal) => service.stream(assistantId, paramsOf(MessageSendParamsSchema, params), caller, signal),
      };
    case "tasks/get":
      return { kind: "result", run: () => service.getTask(assistantId, paramsOf(TaskQueryParamsSchema, params), caller.access) };
    case "tasks/cancel":
      return { kind: "result", run: () => service.cancelTask(assistantId, paramsOf(TaskIdParamsSchema, params), caller.access) };
    case "agent/getAuthenticatedExtendedCard":
      return { kind: "result", run: () => context.card() };
    case "tasks/resubscribe":
    case "tasks/pushNotificationConfig/set":
    case "tasks/pushNotificationConfig/get":
    case "tasks/pushNotificationConfig/list":
    case "tasks/pushNotificationConfig/delete":
      return { kind: "result", run: () => unsupported(method) };
    default:
      return undefined;
  }
}

async function unsupported(method: string): Promise<never> {
  const push = method.startsWith("tasks/pushNotificationConfig/");
  throw new A2aError(
    push ? A2aErrorCode.pushNotificationNotSupported : A2aErrorCode.unsupportedOperation,
    push ? "Push notifications are not supported" : `${method} is not supported`,
  );
}
