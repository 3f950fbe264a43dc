import type { FastifyInstance } from "fastify";
import { RequestValidationError } from "./errors.js";

/** JSON bodies (also sent as text/plain); an empty body counts as absent; bad JSON is a 422. */
export function installJsonParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(["application/json", "text/plain"], { parseAs: "string" }, (_request, body, done) => {
    const text = (body as string).trim();
    if (text === "") return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (error) {
      done(
        new RequestValidationError([{ loc: ["body"], msg: `Invalid JSON: ${(error as Error).message}`, type: "json_invalid" }]),
        undefined,
      );
    }
  });
}
