/** What stops a started part. */
export type Stop = () => Promise<void> | void;

/**
 * The one owner of a service's shutdown: parts are started in order and
 * stopped in reverse, whether the service closes or a later part fails to
 * start. Every part is stopped even when another's stop fails; the first
 * failure is thrown once all are stopped.
 */
export class Lifecycle {
  private readonly stops: Stop[] = [];
  private closing: Promise<void> | undefined;

  /** A part just started: closed at close, after the parts started after it. */
  own<T extends { close(): Promise<void> | void }>(part: T): T {
    this.stops.push(() => part.close());
    return part;
  }

  /** Runs `stop` at close, after the parts started after this call. */
  defer(stop: Stop): void {
    this.stops.push(stop);
  }

  /** Runs `build` (which starts parts); if it throws, what it started is stopped before the error goes on. */
  async run<T>(build: (lifecycle: Lifecycle) => Promise<T>): Promise<T> {
    try {
      return await build(this);
    } catch (error) {
      await this.close().catch(() => {});
      throw error;
    }
  }

  /** Whether close was called: a part that finished starting after it must stop itself. */
  get closed(): boolean {
    return this.closing !== undefined;
  }

  /** Stops every part, the last started first; once, however often it is called. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      let failure: { error: unknown } | undefined;
      for (const stop of this.stops.splice(0).reverse()) {
        try {
          await stop();
        } catch (error) {
          failure ??= { error };
        }
      }
      if (failure) throw failure.error;
    })();
    return this.closing;
  }
}
