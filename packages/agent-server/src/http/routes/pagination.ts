import type { FastifyReply } from "fastify";

/** `X-Pagination-Total`, and `X-Pagination-Next` (the next offset) while more items remain. */
export function setPaginationHeaders(
  reply: FastifyReply,
  page: { limit: number; offset: number },
  returned: number,
  total: number,
): void {
  reply.header("X-Pagination-Total", String(total));
  if (page.offset + returned < total) reply.header("X-Pagination-Next", String(page.offset + page.limit));
}
