import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import type { Logger } from "pino";
import type { ServerSettings } from "../../config/settings.js";
import type { ExecutableRun } from "./executor.js";
import type { FromExecution, MainSideBroker, ToExecution } from "../brokers/thread-port-broker.js";
import type { RunStatsSnapshot } from "./run-stats.js";
import { RunStats } from "./run-stats.js";
import type { SlotReservation, WorkerSlots } from "./worker.js";

/**
 * Where an embedded SQLite server executes runs: on its main thread (`main`), in an execution thread only (`thread`),
 * or on both (`beside`: the main thread's worker, and an execution thread beside it once runs keep the main thread
 * busy), which `auto` means when the host has a second core.
 */
export type ExecutionPlacement = "main" | "thread" | "beside";

export function executionPlacement(setting: "auto" | "on" | "off"): ExecutionPlacement {
  if (setting === "on") return "thread";
  return setting === "auto" && availableParallelism() >= 2 ? "beside" : "main";
}

/** What the execution thread starts from (its workerData): it opens its own storage, graphs and worker. */
export interface ExecutionThreadData {
  configFile: string;
  dataDir: string;
  settings: ServerSettings;
  /** TestFaults' spec, when the tests inject faults. */
  faults?: string;
  /** Runs' webhook deliveries are sent by the main thread (undefined when webhooks are disabled). */
  webhooks: boolean;
  /** The SQLite write lock's memory, shared with the main thread's connection. */
  writeLock?: SharedArrayBuffer;
  /** The main thread executes runs too: the thread does not own the file's runs (it requeues only `requeueOwners`'). */
  beside: boolean;
  /** The lease owner of the thread this one replaces (crashed), whose runs it requeues at its start. */
  requeueOwners?: string[];
}

/** What the main thread tells the execution thread. */
export type ToThread =
  | { k: "broker"; m: ToExecution[]; url?: string }
  | { k: "run"; run: ExecutableRun }
  | { k: "stop"; graceMs: number };

/** What the execution thread tells the main thread. */
export type FromThread =
  | { k: "broker"; m: FromExecution[]; slots?: WorkerSlots; runs?: RunStatsSnapshot; adopted?: number }
  | { k: "ready"; owner: string; slots: WorkerSlots }
  | { k: "webhooks" }
  | { k: "stopped" };

/**
 * The Worker's module. Loader hooks do not reach worker threads (Node 20):
 * when the project has TypeScript modules, or Berth runs from its sources
 * (the tests), the thread registers tsx's first.
 */
function workerSource(entry: URL, typescript: boolean): [string | URL, { eval?: boolean }] {
  if (!typescript && !entry.pathname.endsWith(".ts")) return [entry, {}];
  // Both of tsx's hooks, before anything loads: a CommonJS TypeScript module keeps its named exports only so.
  const [cjs, esm] = [import.meta.resolve("tsx/cjs/api"), import.meta.resolve("tsx/esm/api")].map((url) => JSON.stringify(url));
  const code =
    `Promise.all([import(${cjs}), import(${esm})])` +
    `.then(([cjs, esm]) => { cjs.register(); esm.register(); return import(${JSON.stringify(entry.href)}); });`;
  return [code, { eval: true }];
}

/** A crashed execution thread is replaced after this long (a thread crashing at once does not spin). */
const RESTART_DELAY_MS = 1_000;
/** Beyond the grace period and the handover, how long a stopping thread may take before it is terminated. */
const STOP_MARGIN_MS = 5_000;
const HANDOVER_WAIT_MS = 2_000;

export interface ExecutionThreadOptions {
  /** The thread's entry module (execution-thread-main.ts). */
  entry: URL;
  data: ExecutionThreadData;
  broker: MainSideBroker;
  logger: Logger;
  /** The address runs name as their server's, once it is known. */
  apiUrl: () => string | undefined;
  /** A run wrote a webhook delivery: the main thread's deliverer sends it. */
  webhooksQueued?: () => void;
  /** The project has TypeScript modules the thread loads (graphs, an embedder). */
  typescript: boolean;
}

/**
 * The main thread's handle on the execution thread: the run worker (claims,
 * execution, checkpoints, event logs) runs there on its own SQLite
 * connection, the HTTP side here. Crashes are survived: the thread's runs
 * stay `running` in the database until the next thread starts, which (the
 * process owning its database) requeues them at once, as a restarted process
 * would; their followers here are told their live events may be lost.
 */
export class ExecutionThread {
  owner = "";
  private thread: Worker | undefined;
  private stopping = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private lastSlots: WorkerSlots = { max: 0, active: 0 };
  private lastRuns: RunStatsSnapshot = new RunStats().snapshot();
  private sentUrl: string | undefined;
  /** Slots reserved for runs being created; runs handed to the current thread, and how many it took (reported back). */
  private reserved = 0;
  private handed = 0;
  private adopted = 0;
  private stopped: (() => void) | undefined;
  /** Lease owners of crashed threads whose runs the next thread requeues (beside the main thread's worker). */
  private crashedOwners: string[] = [];

  constructor(private readonly options: ExecutionThreadOptions) {}

  /** Starts the thread; resolves once its worker runs (rejects when it fails to start: the server does not start). */
  async start(): Promise<void> {
    await this.spawn();
  }

  /** The slots the thread last reported, with the runs handed to it since (claimed here, already `running`). */
  slots(): WorkerSlots {
    return { ...this.lastSlots, active: this.lastSlots.active + this.handed - this.adopted };
  }

  runStats(): RunStatsSnapshot {
    return this.lastRuns;
  }

  /**
   * A slot of the thread for a run being created here: its creation claims
   * the run for the thread, which gets it at once (no claim of its own, no
   * wake-up). Counted against the slots the thread reported, those in
   * transit and those reserved. A run claimed for a thread that dies before
   * getting it is requeued by the next one (or, claimed after that one
   * started, once its lease lapsed).
   */
  reserveSlot(): SlotReservation | undefined {
    const thread = this.thread;
    if (!thread || !this.owner || this.stopping) return undefined;
    const inTransit = this.handed - this.adopted;
    if (this.lastSlots.active + inTransit + this.reserved >= this.lastSlots.max) return undefined;
    this.reserved++;
    return {
      claimant: { owner: this.owner, leaseMs: this.options.data.settings.leaseMs },
      execute: (run) => {
        this.reserved--;
        if (this.thread !== thread) return;
        this.handed++;
        this.post([]); // the server's address first, should this be the first message since it listens
        thread.postMessage({ k: "run", run } satisfies ToThread);
      },
      release: () => {
        this.reserved--;
      },
    };
  }

  /** Asks the thread to stop its worker (executing runs finish within `graceMs`, the rest go back to the queue). */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    const thread = this.thread;
    if (!thread) return;
    const done = new Promise<void>((resolve) => {
      this.stopped = resolve;
      thread.once("exit", () => resolve());
    });
    thread.postMessage({ k: "stop", graceMs } satisfies ToThread);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>(
      (resolve) => (timer = setTimeout(() => resolve(true), graceMs + HANDOVER_WAIT_MS + STOP_MARGIN_MS)),
    );
    if (await Promise.race([done.then(() => false), late])) {
      this.options.logger.error("the execution thread did not stop in time: terminating it (its leases lapse)");
    }
    clearTimeout(timer);
    this.options.broker.attach(undefined);
    await thread.terminate();
  }

  private spawn(requeueOwners: string[] = []): Promise<void> {
    const { entry, broker, logger } = this.options;
    const data: ExecutionThreadData = { ...this.options.data, requeueOwners };
    const [source, how] = workerSource(entry, this.options.typescript);
    const thread = new Worker(source, { ...how, workerData: data });
    this.thread = thread;
    return new Promise<void>((resolve, reject) => {
      let ready = false;
      thread.on("message", (message: FromThread) => {
        switch (message.k) {
          case "broker":
            if (message.slots) this.lastSlots = message.slots;
            if (message.runs) this.lastRuns = message.runs;
            if (message.adopted !== undefined) this.adopted = message.adopted;
            broker.receive(message.m);
            return;
          case "ready":
            ready = true;
            this.crashedOwners = [];
            this.owner = message.owner;
            this.handed = 0;
            this.adopted = 0;
            this.lastSlots = message.slots;
            broker.attach((messages) => this.post(messages));
            this.sentUrl = undefined;
            this.post([]); // the server's address, when known already
            resolve();
            return;
          case "webhooks":
            this.options.webhooksQueued?.();
            return;
          case "stopped":
            this.stopped?.();
            return;
        }
      });
      thread.on("error", (err) => {
        if (!ready) reject(err);
        else logger.error({ err }, "the execution thread failed");
      });
      thread.on("exit", (code) => {
        if (this.thread !== thread) return;
        this.thread = undefined;
        if (this.owner) this.crashedOwners.push(this.owner);
        this.owner = "";
        broker.attach(undefined);
        if (!ready) {
          reject(new Error(`the execution thread exited (code ${code}) before it started`));
          return;
        }
        if (this.stopping) return;
        // Its runs' events since their last logged batch are gone; the next thread requeues and resumes the runs.
        broker.executionLost();
        this.lastSlots = { ...this.lastSlots, active: 0 };
        this.handed = 0;
        this.adopted = 0;
        logger.error({ code }, "the execution thread exited: starting another one");
        this.restartTimer = setTimeout(() => {
          if (this.stopping) return;
          this.respawn();
        }, RESTART_DELAY_MS);
      });
    });
  }

  /** Replaces a crashed thread, retrying until one starts (or the server stops). */
  private respawn(): void {
    if (this.stopping) return;
    this.spawn(this.crashedOwners).catch((err) => {
      this.options.logger.error({ err }, "restarting the execution thread failed: retrying");
      this.restartTimer = setTimeout(() => this.respawn(), RESTART_DELAY_MS);
    });
  }

  private post(messages: ToExecution[]): void {
    const url = this.options.apiUrl();
    const message: ToThread = { k: "broker", m: messages };
    if (url !== this.sentUrl) {
      message.url = url;
      this.sentUrl = url;
    } else if (messages.length === 0) return;
    this.thread?.postMessage(message);
  }
}
