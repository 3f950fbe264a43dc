/** An unbounded queue consumed by one async iterator; `close` ends the iteration. */
export class AsyncQueue<T> {
  private readonly items: T[] = [];
  private waiting: (() => void) | undefined;
  private closed = false;
  /**
   * Takes an item instead of the iterator while the iterator waits with
   * nothing queued, so everything handed out before it was consumed first;
   * returns false to leave the item to the iterator.
   */
  direct: ((item: T) => boolean) | undefined;
  /** Called whenever the iterator has consumed everything and is about to wait for more. */
  onWait: (() => void) | undefined;

  push(item: T): void {
    if (this.waiting && this.items.length === 0 && !this.closed && this.direct?.(item)) return;
    this.items.push(item);
    this.wake();
  }

  close(): void {
    this.closed = true;
    this.wake();
  }

  /**
   * Hands what is queued to `direct` while it takes it, for an iterator that
   * has consumed everything it was handed before. True when it took it all.
   */
  offerQueued(): boolean {
    let taken = 0;
    while (taken < this.items.length && this.direct?.(this.items[taken])) taken++;
    if (taken > 0) this.items.splice(0, taken);
    return this.items.length === 0;
  }

  /** The item `drain` would yield next, if one is queued. */
  peek(): T | undefined {
    return this.items[0];
  }

  isClosed(): boolean {
    return this.closed;
  }

  async *drain(): AsyncGenerator<T> {
    while (true) {
      while (this.items.length > 0) yield this.items.shift()!;
      if (this.closed) return;
      this.onWait?.();
      if (this.items.length > 0 || this.closed) continue;
      await new Promise<void>((resolve) => (this.waiting = resolve));
    }
  }

  private wake(): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.();
  }
}
