import type { BaseChannel } from "@langchain/langgraph";
import { UnprocessableError } from "@berth/service-kit";
import type { CompiledGraph } from "../graphs/compiled-graph.js";

/** What Berth reads of a compiled state graph to check input: LangGraph's own input validation and the state's channels. */
interface InputChecks {
  _validateInput?: (input: unknown) => Promise<unknown>;
  builder?: { channels?: Record<string, BaseChannel> };
}

/**
 * Refuses, before a run is created, input its graph would reject as it
 * starts: what the graph's input schema (zod) refuses, and values a state
 * channel's reducer rejects, applied to a fresh copy of the channel (the
 * reducer sees the channel's default, not the thread's state). Without this,
 * the run would fail with the input written into the thread's checkpoint,
 * where it keeps failing every read of the thread's state.
 */
export async function checkRunInput(graph: CompiledGraph, input: unknown, command: Record<string, unknown> | null | undefined) {
  if (isPlainObject(input)) await checkValues(graph, input, ["body", "input"]);
  const update = command?.update;
  if (isPlainObject(update)) await checkValues(graph, update, ["body", "command", "update"]);
}

async function checkValues(graph: CompiledGraph, values: Record<string, unknown>, loc: string[]): Promise<void> {
  const checks = graph as unknown as InputChecks;
  let parsed: unknown = values;
  if (typeof checks._validateInput === "function") {
    try {
      parsed = await checks._validateInput(structuredClone(values));
    } catch (error) {
      throw new UnprocessableError(describe(error), loc);
    }
  }
  const channels = checks.builder?.channels;
  if (!channels || !isPlainObject(parsed)) return;
  for (const [key, value] of Object.entries(parsed)) {
    const channel = Object.hasOwn(channels, key) ? channels[key] : undefined;
    if (!channel || typeof channel.fromCheckpoint !== "function") continue;
    try {
      channel.fromCheckpoint(undefined).update([value]);
    } catch (error) {
      throw new UnprocessableError(`Invalid value for "${key}": ${describe(error)}`, [...loc, key]);
    }
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
