import { createRequire } from "node:module";
import type { FastifyServerOptions } from "fastify";

const fastifyRequire = createRequire(createRequire(import.meta.url).resolve("fastify"));

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions["schemaController"]>["compilersFactory"]>;
type Factory = (...args: unknown[]) => unknown;

/** Requires fastify's own compiler factory the first time fastify asks for one. */
function onFirstUse(module: string): Factory {
  return (...args) => (fastifyRequire(module) as () => Factory)()(...args);
}

/**
 * Fastify's schema controller with its Ajv validator and serializer compilers
 * loaded only if a route declares a JSON Schema (the API validates with zod):
 * by default fastify loads them when it is created, a noticeable part of a start.
 */
export const lazySchemaCompilers: { compilersFactory: CompilersFactory } = {
  compilersFactory: {
    buildValidator: onFirstUse("@fastify/ajv-compiler") as CompilersFactory["buildValidator"],
    buildSerializer: onFirstUse("@fastify/fast-json-stringify-compiler") as CompilersFactory["buildSerializer"],
  },
};
