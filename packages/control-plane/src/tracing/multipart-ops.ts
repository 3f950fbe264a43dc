/**
 * The operations of a POST /runs/multipart body (langsmith's
 * `multipartIngestRuns`): parts named `post.<run id>` and `patch.<run id>`
 * (the run without its large fields), `post|patch.<run id>.<field>` (inputs,
 * outputs, events, extra, error, serialized: each its own JSON part),
 * `feedback.<id>`, and `attachment.<run id>.<name>` (files; not kept).
 */
import { RequestValidationError, zodDetails } from "@berth/service-kit";
import type { z } from "zod";
import type { MultipartBody } from "./multipart.js";
import { FeedbackCreate, RunCreate, RunUpdate, Uuid } from "./wire.js";

export interface IngestBatch {
  creates: RunCreate[];
  updates: RunUpdate[];
  feedback: FeedbackCreate[];
}

function invalid(loc: (string | number)[], msg: string): RequestValidationError {
  return new RequestValidationError([{ loc: ["body", ...loc], msg, type: "value_error" }]);
}

function json(name: string, contentType: string, data: Buffer): unknown {
  const mime = contentType.split(";")[0]!.trim().toLowerCase();
  if (mime !== "application/json" && mime !== "text/plain") throw invalid([name], `must be application/json, not ${mime}`);
  try {
    return JSON.parse(data.toString("utf8"));
  } catch (error) {
    throw invalid([name], `Invalid JSON: ${(error as Error).message}`);
  }
}

/** Validates one assembled object, reporting errors at `body.<part name>.<field>`. */
function validated<T extends z.ZodType>(schema: T, value: unknown, name: string): z.infer<T> {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new RequestValidationError(
      zodDetails("body", result.error).map((detail) => ({ ...detail, loc: ["body", name, ...detail.loc.slice(1)] })),
    );
  }
  return result.data;
}

export function multipartBatch(body: MultipartBody): IngestBatch {
  const runs = new Map<string, Record<string, unknown>>(); // "post.<id>" → the run assembled from its parts
  const feedback: FeedbackCreate[] = [];
  for (const part of body.parts) {
    const [kind, id, field, ...rest] = part.name.split(".");
    if (kind === "attachment") continue;
    if (!id || !Uuid.safeParse(id).success) throw invalid([part.name], "part names are <kind>.<uuid>[.<field>]");
    if (kind === "feedback" && field === undefined) {
      const value = json(part.name, part.contentType, part.data);
      feedback.push(validated(FeedbackCreate, { ...(value as object), id }, part.name));
      continue;
    }
    if ((kind !== "post" && kind !== "patch") || rest.length > 0)
      throw invalid(
        [part.name],
        "unknown part: expected post.<id>, patch.<id>[.<field>], feedback.<id> or attachment.<id>.<name>",
      );
    const run = runs.get(`${kind}.${id}`) ?? {};
    runs.set(`${kind}.${id}`, run);
    const value = json(part.name, part.contentType, part.data);
    if (field === undefined) {
      if (typeof value !== "object" || value === null || Array.isArray(value))
        throw invalid([part.name], "must be a JSON object");
      if ("id" in value && value.id !== id) throw invalid([part.name, "id"], "must be the run id of the part name");
      Object.assign(run, value, { id });
    } else {
      run[field] = value;
    }
  }
  const batch: IngestBatch = { creates: [], updates: [], feedback };
  for (const [name, run] of runs) {
    if (name.startsWith("post.")) batch.creates.push(validated(RunCreate, run, name));
    else batch.updates.push(validated(RunUpdate, run, name));
  }
  return batch;
}
