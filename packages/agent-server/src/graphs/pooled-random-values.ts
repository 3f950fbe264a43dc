import { randomFillSync } from "node:crypto";

/** Random bytes drawn from the system at a time. */
const POOL_BYTES = 8192;

/** Arrays up to this size are filled from the pool; larger ones straight from the system. */
const POOLED_MAX_BYTES = 256;

let pooled = false;

/**
 * Serves `crypto.getRandomValues` for small byte arrays from a pool of the
 * system's random bytes, each byte handed out once, as Node's own
 * `randomUUID` does. LangChain and langsmith draw 16 bytes for every UUID (a
 * run tree for each runnable call, the checkpoints' ids): dozens a run, each a
 * call into the system's generator that costs several µs once async hooks are
 * on (AsyncLocalStorage), ~10 % of a short run's CPU. Other arrays (larger,
 * not bytes) go to the original, which validates them as before.
 */
export function poolRandomValues(): void {
  if (pooled) return;
  pooled = true;
  const webcrypto = globalThis.crypto;
  const original = webcrypto.getRandomValues.bind(webcrypto);
  const pool = new Uint8Array(POOL_BYTES);
  let offset = POOL_BYTES;
  const getRandomValues: typeof original = (array) => {
    if (!(array instanceof Uint8Array) || array.byteLength > POOLED_MAX_BYTES) return original(array);
    if (offset + array.byteLength > POOL_BYTES) {
      randomFillSync(pool);
      offset = 0;
    }
    array.set(pool.subarray(offset, offset + array.byteLength));
    offset += array.byteLength;
    return array;
  };
  Object.defineProperty(webcrypto, "getRandomValues", { value: getRandomValues, writable: true, configurable: true });
}
