/**
 * A multipart/form-data body, as the langsmith client builds it
 * (`_createMultipartStream`): parts with a Content-Disposition name and a
 * Content-Type, CRLF line ends. Parsed from a whole buffer: bodies are
 * bounded (see request-body.ts) and every part is needed anyway.
 */
import { RequestValidationError } from "@berth/service-kit";

export interface MultipartPart {
  name: string;
  contentType: string;
  data: Buffer;
}

/** The parsed body of a multipart request (the tracing scope's parser puts it in request.body). */
export class MultipartBody {
  constructor(readonly parts: MultipartPart[]) {}
}

function invalid(message: string): RequestValidationError {
  return new RequestValidationError([{ loc: ["body"], msg: `Invalid multipart body: ${message}`, type: "multipart_invalid" }]);
}

/** The boundary parameter of a multipart Content-Type header. */
export function boundaryOf(contentType: string): string {
  const match = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const boundary = match?.[1] ?? match?.[2];
  if (!boundary) throw invalid("no boundary in Content-Type");
  return boundary;
}

function parseHeaders(text: string): { name: string; contentType: string } {
  let name: string | undefined;
  let contentType = "application/octet-stream";
  for (const line of text.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon === -1) continue;
    const header = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (header === "content-disposition") {
      const match = /;\s*name="((?:[^"\\]|\\.)*)"/i.exec(value) ?? /;\s*name=([^;\s]+)/i.exec(value);
      name = match?.[1]?.replace(/\\(.)/g, "$1");
    } else if (header === "content-type") {
      contentType = value;
    }
  }
  if (name === undefined) throw invalid("a part has no Content-Disposition name");
  return { name, contentType };
}

export function parseMultipart(body: Buffer, boundary: string): MultipartPart[] {
  const delimiter = Buffer.from(`--${boundary}`);
  const nextDelimiter = Buffer.from(`\r\n--${boundary}`);
  let position = body.indexOf(delimiter);
  if (position === -1) throw invalid("boundary not found");
  const parts: MultipartPart[] = [];
  for (;;) {
    position += delimiter.length;
    if (body[position] === 0x2d && body[position + 1] === 0x2d) return parts; // "--": the closing delimiter
    // Transport padding (spaces, tabs) may follow a delimiter before its CRLF (RFC 2046).
    while (body[position] === 0x20 || body[position] === 0x09) position += 1;
    if (body[position] !== 0x0d || body[position + 1] !== 0x0a) throw invalid("expected CRLF after a boundary");
    const headersEnd = body.indexOf("\r\n\r\n", position);
    if (headersEnd === -1) throw invalid("a part's headers do not end");
    const { name, contentType } = parseHeaders(body.subarray(position + 2, headersEnd).toString("utf8"));
    const dataStart = headersEnd + 4;
    const dataEnd = body.indexOf(nextDelimiter, dataStart);
    if (dataEnd === -1) throw invalid("no closing boundary");
    parts.push({ name, contentType, data: body.subarray(dataStart, dataEnd) });
    position = dataEnd + 2;
  }
}
