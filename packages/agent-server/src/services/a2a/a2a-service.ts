import { randomUUID } from "node:crypto";
import type { Assistant, JsonObject, Run, Thread } from "../../storage/types.js";
import { TERMINAL_RUN_STATUSES } from "../../storage/types.js";
import type { AssistantService } from "../assistants.js";
import type { Access } from "../authorization.js";
import type { GraphStateService } from "../graph-state.js";
import type { RunCreateInput, RunService } from "../runs.js";
import type { ThreadService } from "../threads.js";
import { agentCard, takesMessages } from "./agent-card.js";
import { asA2aError } from "./client-errors.js";
import { agentMessage, chunkMessage, finalText, inputOf, isObject, messagesOf, toA2aMessage } from "./messages.js";
import {
  A2aError,
  A2aErrorCode,
  type A2aMessage,
  type Artifact,
  type MessageSendParams,
  type StreamResult,
  type Task,
  type TaskIdParams,
  type TaskQueryParams,
} from "./protocol.js";
import { isUuid } from "../assistant-ids.js";
import { awaitsInput, parseTaskId, taskIdOf, taskStateOf } from "./task-ids.js";

/** Who asks, and what the request adds to every run it creates (its headers and user in `configurable`). */
export interface A2aCaller {
  access: Access;
  withRequest(body: RunCreateInput): RunCreateInput;
}

/** Run metadata naming the task a resumed run continues: the task keeps its id across the runs of its thread. */
const TASK_METADATA_KEY = "a2a_task_id";
/** How many of a thread's latest runs are searched for a task's latest run. */
const TASK_RUNS_SEARCHED = 100;

interface StartedRun {
  run: Run;
  contextId: string;
  taskId: string;
  sent: A2aMessage;
}

/**
 * Each assistant as an A2A agent: a context is a thread, a task a run on it
 * (or the runs resuming it), built on the API's own services and authorization.
 */
export class A2aService {
  constructor(
    private readonly assistants: AssistantService,
    private readonly threads: ThreadService,
    private readonly graphState: GraphStateService,
    private readonly runs: RunService,
  ) {}

  async card(assistantId: string, access: Access, url: string, version: string) {
    const assistant = await this.assistant(assistantId, access);
    return agentCard(assistant, await this.assistants.schemas(assistant.assistant_id, access), url, version);
  }

  /** `message/send`: a new run on the context's thread, answered once it ended (or at once when not blocking). */
  async send(assistantId: string, params: MessageSendParams, caller: A2aCaller): Promise<Task> {
    if (params.configuration?.blocking === false) {
      const started = await this.start(assistantId, params, caller, (body) =>
        this.runs.create(body.threadId, body.input, caller.access),
      );
      return submittedTask(started);
    }
    let output: Promise<unknown> | undefined;
    const started = await this.start(assistantId, params, caller, async ({ threadId, input }) => {
      const { run, ended } = await this.runs.startWaiting(threadId, input, { access: caller.access });
      output = this.runs.output(run, ended);
      return run;
    });
    await output;
    return this.endedTask(started, caller.access, params.configuration?.historyLength);
  }

  /** `message/stream`: the submitted task, a working update per streamed message chunk, then the final update. */
  async *stream(
    assistantId: string,
    params: MessageSendParams,
    caller: A2aCaller,
    signal: AbortSignal,
  ): AsyncGenerator<StreamResult> {
    let events: AsyncGenerator<{ event: string; data: string }> | undefined;
    const started = await this.start(assistantId, params, caller, async ({ threadId, input }) => {
      const streaming = await this.runs.startStreaming(threadId, input, { signal, access: caller.access });
      events = streaming.events;
      return streaming.run;
    });
    const { contextId, taskId } = started;
    try {
      yield submittedTask(started);
      yield { kind: "status-update", taskId, contextId, status: { state: "working", timestamp: now() }, final: false };
      for await (const event of events ?? []) {
        if (event.event !== "messages") continue;
        const [chunk] = JSON.parse(event.data) as unknown[];
        const message = chunkMessage(chunk, contextId, taskId);
        if (message) yield { kind: "status-update", taskId, contextId, status: { state: "working", message }, final: false };
      }
    } finally {
      await events?.return(undefined);
    }
    const task = await this.endedTask(started, caller.access, 0);
    for (const artifact of task.artifacts ?? []) {
      if (artifact.name === INTERRUPT_ARTIFACT) yield { kind: "artifact-update", taskId, contextId, artifact };
    }
    yield { kind: "status-update", taskId, contextId, status: task.status, final: true };
  }

  /** `tasks/get`: the task's latest run as a task, with the messages of its last checkpoint. */
  async getTask(assistantId: string, params: TaskQueryParams, access: Access): Promise<Task> {
    await this.assistant(assistantId, access);
    const { threadId, run } = await this.taskRun(params, access, "read");
    return this.taskOf(params.id, threadId, run, access, params.historyLength);
  }

  /** `tasks/cancel`: a pending or running run is interrupted, and the task answered `canceled`; a finished one cannot be. */
  async cancelTask(assistantId: string, params: TaskIdParams, access: Access): Promise<Task> {
    await this.assistant(assistantId, access);
    const { threadId, run } = await this.taskRun(params, access, "update");
    if (run.status === "pending" || run.status === "running") {
      await this.runs.cancel(run, "interrupt", true);
    } else {
      const task = await this.taskOf(params.id, threadId, run, access, 0);
      if (task.status.state !== "canceled") {
        throw new A2aError(A2aErrorCode.taskNotCancelable, `Task ${params.id} is ${task.status.state}: it cannot be canceled`);
      }
    }
    const canceled = await this.taskOf(params.id, threadId, await this.runs.get(threadId, run.run_id, access), access);
    return { ...canceled, status: { state: "canceled", timestamp: now() } };
  }

  /** The assistant the request names; unknown (or out of the caller's reach): invalid params. */
  private assistant(assistantId: string, access: Access): Promise<Assistant> {
    return asA2aError(A2aErrorCode.invalidParams, () => this.assistants.get(assistantId, access)).catch((error: unknown) => {
      if (error instanceof A2aError) throw new A2aError(error.code, `Assistant ${assistantId} not found`);
      throw error;
    });
  }

  /** Maps the message onto a run of the context's thread (created if missing), resuming an interrupted task when asked. */
  private async start(
    assistantId: string,
    params: MessageSendParams,
    caller: A2aCaller,
    create: (request: { threadId: string; input: RunCreateInput }) => Promise<Run>,
  ): Promise<StartedRun> {
    const { message } = params;
    const assistant = await this.assistant(assistantId, caller.access);
    const contextId = message.contextId ?? randomUUID();
    if (!isUuid(contextId)) throw new A2aError(A2aErrorCode.invalidParams, "contextId must be a UUID (it is the thread's id)");
    const { input, hasText, resumeValue } = inputOf(message);
    const resumed = message.taskId ? await this.resumption(message.taskId, contextId, caller.access) : undefined;
    let command: JsonObject | undefined;
    if (message.command) command = message.command;
    else if (resumed?.interrupted && resumeValue) command = { resume: resumeValue.value };
    else if (resumed && !resumed.interrupted && resumeValue?.from === "data") {
      throw new A2aError(A2aErrorCode.invalidParams, `Task ${message.taskId} is not awaiting input`);
    }
    if (!command && hasText) {
      const schemas = await asA2aError(A2aErrorCode.invalidParams, () =>
        this.assistants.schemas(assistant.assistant_id, caller.access),
      );
      if (!takesMessages(schemas)) {
        throw new A2aError(A2aErrorCode.invalidParams, `Assistant ${assistantId} does not take messages: send a data part`);
      }
    }
    const continued = command && resumed ? message.taskId : undefined;
    const body = caller.withRequest({
      assistant_id: assistant.assistant_id,
      ...(command ? { command } : { input }),
      ...(params.context ? { context: params.context as JsonObject } : {}),
      ...(continued ? { metadata: { [TASK_METADATA_KEY]: continued } } : {}),
      stream_mode: ["messages-tuple", "values"],
      stream_subgraphs: false,
      stream_resumable: false,
      multitask_strategy: "enqueue",
      if_not_exists: "create",
      on_disconnect: "continue",
    });
    const run = await asA2aError(A2aErrorCode.invalidParams, () => create({ threadId: contextId, input: body }));
    const taskId = continued ?? taskIdOf(contextId, run.run_id);
    const sent: A2aMessage = { ...(message as A2aMessage), kind: "message", contextId, taskId };
    return { run, contextId, taskId, sent };
  }

  /** The task a message continues, and whether its thread waits for input. */
  private async resumption(taskId: string, contextId: string, access: Access): Promise<{ interrupted: boolean }> {
    const { threadId } = parseTaskId(taskId, contextId);
    if (threadId !== contextId) throw new A2aError(A2aErrorCode.invalidParams, `Task ${taskId} is not of context ${contextId}`);
    const thread = await asA2aError(A2aErrorCode.taskNotFound, () => this.threads.get(threadId, access));
    return { interrupted: awaitsInput(thread) };
  }

  /** The latest run of the task `params.id` names (a resumed task's runs carry its id), if the caller may see it. */
  private async taskRun(params: TaskIdParams, access: Access, action: "read" | "update") {
    const { threadId, runId } = parseTaskId(params.id, params.contextId);
    const first = await asA2aError(A2aErrorCode.taskNotFound, () => this.runs.get(threadId, runId, access, action));
    const recent = await this.runs.list(threadId, { limit: TASK_RUNS_SEARCHED, offset: 0 }, access);
    const latest = recent.find((run) => run.run_id === runId || run.metadata[TASK_METADATA_KEY] === params.id) ?? first;
    return { threadId, run: latest };
  }

  /** The task of a run that just ended, from its thread's state now. */
  private async endedTask(started: StartedRun, access: Access, historyLength: number | undefined): Promise<Task> {
    const { run, contextId, taskId } = started;
    const current = await this.runs.get(contextId, run.run_id, access);
    const thread = await this.threads.get(contextId, access);
    return this.buildTask(taskId, contextId, current, thread, thread.values, access, true, historyLength);
  }

  /** A run as a task: its state from the run and its thread, its messages from the run's last checkpoint. */
  private async taskOf(taskId: string, threadId: string, run: Run, access: Access, historyLength?: number): Promise<Task> {
    const thread = await this.threads.get(threadId, access);
    const [latest] = await this.runs.list(threadId, { limit: 1, offset: 0 }, access);
    const [checkpoint] = await this.graphState.history(threadId, { limit: 1, metadata: { run_id: run.run_id } }, access);
    return this.buildTask(
      taskId,
      threadId,
      run,
      thread,
      checkpoint?.values,
      access,
      latest?.run_id === run.run_id,
      historyLength,
    );
  }

  private async buildTask(
    taskId: string,
    contextId: string,
    run: Run,
    thread: Thread,
    values: unknown,
    access: Access,
    latestOnThread: boolean,
    historyLength: number | undefined,
  ): Promise<Task> {
    const state = taskStateOf(run.status, latestOnThread && awaitsInput(thread));
    const messages = messagesOf(values).map((message) => toA2aMessage(message, contextId, taskId));
    const history = historyLength === undefined ? messages : historyLength === 0 ? [] : messages.slice(-historyLength);
    const task: Task = { kind: "task", id: taskId, contextId, status: { state, timestamp: now() }, history };
    if (state === "failed") {
      task.status.message = agentMessage(`Error executing assistant: ${await this.errorOf(run, access)}`, contextId, taskId);
    } else if (state === "input-required") {
      const interrupts = Object.values(thread.interrupts).flat();
      task.artifacts = [interruptArtifact(interrupts)];
      task.status.message = agentMessage(interruptText(interrupts), contextId, taskId);
    } else if (state === "completed") {
      const text = finalText(values);
      task.artifacts = [responseArtifact(text, run)];
      task.status.message = agentMessage(text, contextId, taskId);
    }
    return task;
  }

  /** A failed run's error message (its output holds `{__error__}`). */
  private async errorOf(run: Run, access: Access): Promise<string> {
    if (!TERMINAL_RUN_STATUSES.has(run.status)) return "unknown error";
    const output = await this.runs.join(await this.runs.get(run.thread_id, run.run_id, access));
    const error = isObject(output) && isObject(output.__error__) ? output.__error__ : undefined;
    if (run.status === "timeout") return "the run timed out";
    return typeof error?.message === "string" ? error.message : typeof error?.error === "string" ? error.error : "unknown error";
  }
}

const INTERRUPT_ARTIFACT = "Interrupt";

function submittedTask({ contextId, taskId, sent }: StartedRun): Task {
  return { kind: "task", id: taskId, contextId, status: { state: "submitted", timestamp: now() }, history: [sent] };
}

function responseArtifact(text: string, run: Run): Artifact {
  return {
    artifactId: randomUUID(),
    name: "Assistant Response",
    description: `Response from assistant ${run.assistant_id}`,
    parts: [{ kind: "text", text }],
  };
}

function interruptArtifact(interrupts: { id?: string; value: unknown }[]): Artifact {
  return {
    artifactId: randomUUID(),
    name: INTERRUPT_ARTIFACT,
    description: "The graph waits for input: send a message with this task's id and a data part {resume}",
    parts: interrupts.map((interrupt) => ({ kind: "data", data: { id: interrupt.id ?? null, value: interrupt.value } })),
  };
}

function interruptText(interrupts: { value: unknown }[]): string {
  const [first] = interrupts;
  if (!first) return "Input required";
  return typeof first.value === "string" ? first.value : JSON.stringify(first.value);
}

function now(): string {
  return new Date().toISOString();
}
