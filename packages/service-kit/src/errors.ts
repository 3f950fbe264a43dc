/** Domain errors; the HTTP layer maps each to its status code with a `{detail}` body. */
export class NotFoundError extends Error {}

export class ConflictError extends Error {}

/** A request that breaks a rule of the API (HTTP 400). */
export class BadRequestError extends Error {}

/** No credentials, or credentials that identify nobody (HTTP 401). */
export class UnauthorizedError extends Error {}

/** Credentials that are valid but not for this (HTTP 403). */
export class ForbiddenError extends Error {}

/** A body larger than allowed (HTTP 413). */
export class PayloadTooLargeError extends Error {}

/** A request that is well-formed but cannot be applied (HTTP 422). */
export class UnprocessableError extends Error {
  constructor(
    message: string,
    readonly loc: (string | number)[] = [],
  ) {
    super(message);
  }
}

/** A service this one called on the request's behalf failed or answered nonsense (HTTP 502). */
export class BadGatewayError extends Error {}

/** Something the service depends on (its database, a broker) cannot be reached for now (HTTP 503, with Retry-After). */
export class ServiceUnavailableError extends Error {
  constructor(
    message: string,
    readonly retryAfterSeconds = 5,
  ) {
    super(message);
  }
}

/** The disk under the service's data is full (HTTP 507): nothing was written. */
export class InsufficientStorageError extends Error {}

/** An error the deployed project's own code raised with its HTTP status, message and headers (an auth handler's `HTTPException`). */
export class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}
