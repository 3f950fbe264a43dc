/** Domain errors; the HTTP layer maps each to its status code. */
export class NotFoundError extends Error {}

export class ConflictError extends Error {}

/** A request that is well-formed but cannot be applied (HTTP 422). */
export class UnprocessableError extends Error {
  constructor(
    message: string,
    readonly loc: (string | number)[] = [],
  ) {
    super(message);
  }
}
