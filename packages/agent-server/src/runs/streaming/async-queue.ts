/** An unbounded queue consumed by one async iterator; `close` ends the iteration. */
export class AsyncQueue<T> {
  private readonly items: T[] = [];
  private waiting: (() => void) | undefined;
  private closed = false;

  push(item: T): void {
    this.items.push(item);
    this.wake();
  }

  close(): void {
    this.closed = true;
    this.wake();
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
      await new Promise<void>((resolve) => (this.waiting = resolve));
    }
  }

  private wake(): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.();
  }
}
