import { z } from "zod";

export const Uuid = z.uuid({ message: "must be a UUID" });

/** A string stored in a text column: no NUL character (PostgreSQL refuses it). */
export const Text = z.string().refine((value) => !value.includes("\u0000"), { message: "must not contain NUL characters" });

/** A field the server sets: accepted by the schema so the rule check can refuse it with a 400 naming it. */
export const ReadOnly = z.unknown().optional().describe("Read-only: a request that sets it is refused (400)");

// The reference grammar of the distribution project (what Docker Engine and registries accept): an optional registry
// host (a domain or IPv4 address, or a bracketed IPv6 one, with an optional port), lowercase path components, an
// optional tag and an optional digest.
const registryHost = String.raw`(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::[0-9]+)?`;
const pathComponent = `[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*`;
const imageName = `(?:${registryHost}/)?${pathComponent}(?:/${pathComponent})*`;
const imageReferencePattern = new RegExp(
  `^(${imageName})(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9A-Fa-f]{32,})?$`,
);

/** An image reference an engine can pull, such as `registry.example/agent:1` or `agent@sha256:…`. */
export const ImageReference = z.string().refine(
  (value) => {
    const name = imageReferencePattern.exec(value)?.[1];
    return name !== undefined && name.length <= 255;
  },
  { message: "must be an image reference such as registry.example/agent:1 (lowercase name, optional tag and digest)" },
);
