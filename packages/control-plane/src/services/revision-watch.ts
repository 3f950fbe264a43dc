import { EventEmitter } from "node:events";

/** Changes made in another control-plane process are not announced here: waiters also look again this often. */
const RECHECK_MS = 250;

/**
 * Wakes long-polls of a revision (`GET …/revisions/{id}?wait_seconds=`)
 * when its status changes in this process.
 */
export class RevisionWatch {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  changed(revisionId: string): void {
    this.emitter.emit(revisionId);
  }

  /** Resolves at the next change of the revision, or after at most `ms`. */
  next(revisionId: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.emitter.off(revisionId, done);
        resolve();
      };
      const timer = setTimeout(done, Math.min(ms, RECHECK_MS));
      this.emitter.once(revisionId, done);
    });
  }
}
