import type { AssignedRevision, Assignment, DeploymentReport, RevisionFacts, RevisionStatus } from "@berth/listener-protocol";
import type { LogShipper } from "./log-shipper.js";

/** The work on a revision was abandoned: the control plane moved it (superseded, interrupted) or the listener stops. */
export class Abandoned extends Error {}

export type LogWriter = ReturnType<LogShipper["writer"]>;

/** Moves the revision (compare-and-set from where the work found it); throws Abandoned when it was moved meanwhile. */
export type Move = (to: RevisionStatus, message: string, report?: DeploymentReport, facts?: RevisionFacts) => Promise<void>;

/** One revision being brought up: what it is, how it moves on, where its build log goes, and when to give up. */
export interface RevisionWork {
  assignment: Assignment;
  revision: AssignedRevision;
  /** Records nothing when the work only restores what served before a listener restart. */
  move: Move;
  buildLog: LogWriter;
  signal: AbortSignal;
  /** The deployed revision starts again after a listener restart (what it did then, e.g. sleep, it does again). */
  restore?: boolean;
}
