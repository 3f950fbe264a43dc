import { type LookupAddress, lookup } from "node:dns";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import { isPrivateAddress, isPrivateHost } from "../../config/private-address.js";

export interface PostOptions {
  timeoutMs: number;
  /** Private and loopback targets are allowed (berth dev, BERTH_WEBHOOK_ALLOW_PRIVATE). */
  allowPrivate: boolean;
  headers: Record<string, string>;
}

/** What one POST got: the receiver's status, or no answer (`refused`: the target is not allowed, retrying cannot help). */
export type PostAnswer = { kind: "answered"; status: number } | { kind: "no_answer"; error: string; refused: boolean };

const REFUSED = "EBERTH_PRIVATE_TARGET";

/**
 * Resolves as dns.lookup does, but fails when any address the name resolves
 * to is private: checked on the addresses the connection then uses, so a
 * name cannot resolve to a public address for a check and a private one for
 * the request.
 */
function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, "", 0);
      const blocked = allowPrivate ? undefined : addresses.find((entry) => isPrivateAddress(entry.address));
      if (blocked) {
        const error = Object.assign(new Error(`${hostname} resolves to a private or loopback address (${blocked.address})`), {
          code: REFUSED,
        });
        return callback(error, "", 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      return callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

/** POSTs `body` once; redirects are not followed (a 3xx is the answer). */
export function postOnce(url: string, body: string, options: PostOptions): Promise<PostAnswer> {
  const target = new URL(url);
  if (!options.allowPrivate && isPrivateHost(target.hostname)) {
    return Promise.resolve({ kind: "no_answer", error: `${target.hostname} is a private or loopback address`, refused: true });
  }
  const send = target.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const req = send(
      target,
      {
        method: "POST",
        headers: { ...options.headers, "content-length": Buffer.byteLength(body) },
        lookup: guardedLookup(options.allowPrivate),
        signal: AbortSignal.timeout(options.timeoutMs),
      },
      (res) => {
        res.resume(); // the answer's body is not used
        res.on("end", () => resolve({ kind: "answered", status: res.statusCode ?? 0 }));
        res.on("error", (error) => resolve({ kind: "no_answer", error: error.message, refused: false }));
      },
    );
    req.on("error", (error: NodeJS.ErrnoException) => {
      const timedOut = error.name === "AbortError";
      resolve({
        kind: "no_answer",
        error: timedOut ? `no answer within ${options.timeoutMs} ms` : error.message,
        refused: error.code === REFUSED,
      });
    });
    req.end(body);
  });
}
