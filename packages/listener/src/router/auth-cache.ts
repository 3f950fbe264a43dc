export type Authorization = "allowed" | "denied" | "unknown_key";
export type Authorize = (deploymentId: string, apiKey: string) => Promise<Authorization>;

interface Entry {
  answer: Promise<Authorization>;
  expiresAt: number;
}

/** Above this many entries, expired ones are swept (and the oldest dropped): random keys must not grow memory without bound. */
const MAX_ENTRIES = 10_000;

/**
 * Answers of `authorize` per (deployment, key), kept for `ttlMs`: each request
 * does not cost a control-plane round trip, and a revoked key still stops
 * working within the TTL. Concurrent checks of one pair share one call;
 * failures are not cached.
 */
export class AuthCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly authorize: Authorize,
    private readonly ttlMs: number,
  ) {}

  check(deploymentId: string, apiKey: string): Promise<Authorization> {
    const id = `${deploymentId}\n${apiKey}`;
    const now = Date.now();
    const cached = this.entries.get(id);
    if (cached && cached.expiresAt > now) return cached.answer;
    const entry: Entry = { answer: this.authorize(deploymentId, apiKey), expiresAt: now + this.ttlMs };
    this.entries.delete(id); // re-inserted last: the Map's order is the age order
    this.entries.set(id, entry);
    entry.answer.catch(() => {
      if (this.entries.get(id) === entry) this.entries.delete(id);
    });
    if (this.entries.size > MAX_ENTRIES) this.sweep(now);
    return entry.answer;
  }

  /** Forgets a deployment's answers (it was removed). */
  forget(deploymentId: string): void {
    const prefix = `${deploymentId}\n`;
    for (const id of this.entries.keys()) if (id.startsWith(prefix)) this.entries.delete(id);
  }

  private sweep(now: number): void {
    for (const [id, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(id);
    for (const id of this.entries.keys()) {
      if (this.entries.size <= MAX_ENTRIES) break;
      this.entries.delete(id);
    }
  }
}
