import { z } from "zod";
import type { RouteCatalog } from "./route.js";

function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  return z.toJSONSchema(schema, { io, unrepresentable: "any", target: "openapi-3.0" }) as Record<string, unknown>;
}

function parametersOf(schema: z.ZodType | undefined, location: "path" | "query") {
  if (!schema) return [];
  const described = jsonSchema(schema, "input") as { properties?: Record<string, unknown>; required?: string[] };
  return Object.entries(described.properties ?? {}).map(([name, property]) => ({
    name,
    in: location,
    required: location === "path" || (described.required ?? []).includes(name),
    schema: property,
  }));
}

/** The OpenAPI 3 document of the declared routes, from the same zod schemas that validate requests. */
export function buildOpenApiDocument(catalog: RouteCatalog, info: { title: string; version: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of catalog) {
    const path = route.path.replace(/:([A-Za-z_]+)/g, "{$1}");
    const responses: Record<string, unknown> = {};
    for (const [status, response] of Object.entries(route.responses)) {
      responses[status] = {
        description: response.description,
        ...(response.schema ? { content: { "application/json": { schema: jsonSchema(response.schema, "output") } } } : {}),
      };
    }
    responses[String(route.invalidStatus ?? 422)] ??= { description: "Validation error: `{detail: [{loc, msg, type}]}`" };
    (paths[path] ??= {})[route.method.toLowerCase()] = {
      summary: route.summary,
      tags: [route.tag],
      parameters: [...parametersOf(route.params, "path"), ...parametersOf(route.query, "query")],
      ...(route.body
        ? {
            requestBody: {
              required: !route.bodyOptional,
              content: { "application/json": { schema: jsonSchema(route.body, "input") } },
            },
          }
        : {}),
      responses,
    };
  }
  return { openapi: "3.0.3", info, paths };
}
