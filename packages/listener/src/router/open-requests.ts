/**
 * Requests in flight per upstream target, so a switch can wait until the old
 * revision has finished everything it was given (streams included) before it
 * is stopped.
 */
export class OpenRequests {
  private readonly counts = new Map<string, number>();
  private readonly waiters = new Map<string, Array<() => void>>();

  /** Counts a request to `target`; the returned release (idempotent) ends it. */
  acquire(target: string): () => void {
    this.counts.set(target, (this.counts.get(target) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.counts.get(target) ?? 1) - 1;
      if (left > 0) return void this.counts.set(target, left);
      this.counts.delete(target);
      const waiting = this.waiters.get(target) ?? [];
      this.waiters.delete(target);
      for (const resolve of waiting) resolve();
    };
  }

  count(target: string): number {
    return this.counts.get(target) ?? 0;
  }

  /** Resolves once no request to `target` is open (at once when none is). */
  drained(target: string): Promise<void> {
    if (!this.counts.has(target)) return Promise.resolve();
    return new Promise((resolve) => {
      const waiting = this.waiters.get(target) ?? [];
      waiting.push(resolve);
      this.waiters.set(target, waiting);
    });
  }
}
