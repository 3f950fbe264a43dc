import {
  BadRequestError,
  ConflictError,
  ForbiddenError,
  HttpStatusError,
  NotFoundError,
  RequestValidationError,
  UnauthorizedError,
  UnprocessableError,
} from "@berth/service-kit";
import { A2aError } from "./protocol.js";

const CLIENT_ERRORS = [
  BadRequestError,
  UnauthorizedError,
  ForbiddenError,
  NotFoundError,
  ConflictError,
  UnprocessableError,
  RequestValidationError,
];

/** What the API would answer with a 4xx: the caller's doing, told back as a JSON-RPC error. */
function isClientError(error: unknown): error is Error {
  if (error instanceof HttpStatusError) return error.status < 500;
  return CLIENT_ERRORS.some((type) => error instanceof type);
}

/** Runs `work`, turning the API's client errors into the JSON-RPC error `code`; anything else passes (a -32603). */
export async function asA2aError<T>(code: number, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof A2aError) && isClientError(error)) throw new A2aError(code, error.message);
    throw error;
  }
}
