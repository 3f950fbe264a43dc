import type { FastifyRequest } from "fastify";
import { type Access, UNRESTRICTED } from "../../services/authorization.js";

/** What the request's user may do; unrestricted when the server authenticates nobody (or the route is public). */
export function accessOf(request: FastifyRequest): Access {
  return request.access ?? UNRESTRICTED;
}
