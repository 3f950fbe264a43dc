/**
 * Request bodies of the tracing routes: JSON (also as text/plain, what fetch
 * sends for a string body without headers) and multipart/form-data, either
 * possibly gzip- (or, where this Node has it, zstd-) compressed, as the
 * langsmith client sends them when /info allows. The limit applies to the
 * decompressed size, so a small compressed body cannot expand without bound.
 */
import { PayloadTooLargeError, RequestValidationError } from "@berth/service-kit";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Readable, Transform } from "node:stream";
import * as zlib from "node:zlib";
import { boundaryOf, MultipartBody, parseMultipart } from "./multipart.js";

/** The most a decompressed body may hold; /info asks the client for batches well under it. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;

type ZstdZlib = typeof zlib & { createZstdDecompress?: () => Transform };

/** zlib has zstd from Node 22.15 / 23.8; /info advertises it only then. */
export const ZSTD_AVAILABLE = typeof (zlib as ZstdZlib).createZstdDecompress === "function";

class UnsupportedMediaTypeError extends Error {
  readonly statusCode = 415;
}

function decoder(encoding: string): Transform | undefined {
  switch (encoding) {
    case "":
    case "identity":
      return undefined;
    case "gzip":
    case "x-gzip":
      return zlib.createGunzip();
    case "deflate":
      return zlib.createInflate();
    case "br":
      return zlib.createBrotliDecompress();
    case "zstd":
      if (ZSTD_AVAILABLE) return (zlib as ZstdZlib).createZstdDecompress!();
  }
  throw new UnsupportedMediaTypeError(`Unsupported Content-Encoding: ${encoding}`);
}

async function readAll(request: FastifyRequest, payload: Readable): Promise<Buffer> {
  const encoding = String(request.headers["content-encoding"] ?? "")
    .trim()
    .toLowerCase();
  const decode = decoder(encoding);
  const stream = (decode ? payload.pipe(decode) : payload) as AsyncIterable<Buffer>;
  // pipe() does not forward errors: a broken request must end the decompressor's iteration too.
  if (decode) payload.on("error", (error) => decode.destroy(error));
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream) {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) throw new PayloadTooLargeError(`Request body over ${MAX_BODY_BYTES} bytes`);
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof PayloadTooLargeError) throw error;
    throw new RequestValidationError([
      { loc: ["body"], msg: `Unreadable ${encoding || "request"} body: ${(error as Error).message}`, type: "body_invalid" },
    ]);
  }
  return Buffer.concat(chunks);
}

function parseJson(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === "") return undefined;
  try {
    return JSON.parse(trimmed);
  } catch (error) {
    throw new RequestValidationError([{ loc: ["body"], msg: `Invalid JSON: ${(error as Error).message}`, type: "json_invalid" }]);
  }
}

async function parseBody(request: FastifyRequest, payload: Readable): Promise<unknown> {
  const contentType = String(request.headers["content-type"] ?? "").toLowerCase();
  const bytes = await readAll(request, payload);
  if (contentType.startsWith("multipart/form-data")) {
    return new MultipartBody(parseMultipart(bytes, boundaryOf(String(request.headers["content-type"]))));
  }
  const mime = contentType.split(";")[0]!.trim();
  if (mime === "" || mime === "text/plain" || mime === "application/json" || mime.endsWith("+json"))
    return parseJson(bytes.toString("utf8"));
  throw new UnsupportedMediaTypeError(`Unsupported Content-Type: ${mime}; send application/json or multipart/form-data`);
}

/** Replaces the scope's body parsers (the app's JSON parser has Fastify's 1 MiB limit and no decompression). */
export function installTracingBodyParser(scope: FastifyInstance): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser("*", (request, payload, done) => {
    parseBody(request, payload).then(
      (body) => done(null, body),
      (error: Error) => done(error, undefined),
    );
  });
}
