import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import type {
  AssignedRevision,
  Assignment,
  DeploymentReport,
  RevisionEventInput,
  RevisionStatus,
} from "@berth/listener-protocol";
import pino from "pino";
import { DeploymentRunner } from "../../src/listener/deployment-runner.js";
import type { ControlPlaneLink } from "../../src/listener/link.js";
import { LogShipper } from "../../src/listener/log-shipper.js";
import type { Placement, Preparation, Serving } from "../../src/listener/placements/placement.js";
import type { RevisionWork } from "../../src/listener/revision-work.js";
import { specWith } from "../helpers/revision-specs.js";

// The deployment runner's state machine over a placement that starts nothing:
// what it records, and in which order it switches the deployment's traffic.

const dir = mkdtempSync(join(tmpdir(), "berth-runner-unit-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A link that records every call; `loseMovesTo` makes those moves lose their compare-and-set. */
class RecordingLink implements ControlPlaneLink {
  readonly calls: string[] = [];
  readonly reports: DeploymentReport[] = [];
  loseMovesTo: RevisionStatus | undefined;
  onMove: (to: RevisionStatus) => void = () => {};

  async assignments(): Promise<Assignment[]> {
    return [];
  }
  async transition(
    _revisionId: string,
    _from: readonly RevisionStatus[],
    to: RevisionStatus,
    _message: string,
    report?: DeploymentReport,
  ) {
    this.onMove(to);
    this.calls.push(`move ${to}`);
    if (to === this.loseMovesTo) return false;
    if (report) this.reports.push(report);
    return true;
  }
  async report(_deploymentId: string, report: DeploymentReport): Promise<void> {
    this.calls.push("report");
    this.reports.push(report);
  }
  async recordEvent(_revisionId: string, event: RevisionEventInput): Promise<void> {
    this.calls.push(`event ${event.reason}`);
  }
  async branchMoved(): Promise<void> {}
  async purge(): Promise<void> {}
  async fetchSource(): Promise<void> {}
  async appendLogs(): Promise<void> {}
  async pushMetrics(): Promise<void> {}
  async authorize() {
    return "allowed" as const;
  }
  tracingEndpoint(): string | undefined {
    return undefined;
  }
}

/** Serves the revision it was prepared for; records what happens to its servings. */
class FakePlacement implements Placement {
  readonly steps: string[] = [];

  refusal(): string | undefined {
    return undefined;
  }
  async prepare({ revision, move }: RevisionWork): Promise<Preparation> {
    await move("AWAITING_DEPLOY", "Nothing to build");
    return { kind: "ready", starting: "Starting", start: async () => this.serving(revision.id), discard: async () => {} };
  }
  adopt(): Serving | undefined {
    return undefined;
  }
  async remove(): Promise<void> {}
  async forget(): Promise<void> {}
  async close(): Promise<void> {}

  private serving(revisionId: string): Serving {
    const step = (what: string) => () => void this.steps.push(`${what} ${revisionId}`);
    return {
      revisionId,
      summary: `Serving ${revisionId}`,
      url: `http://router/d/${revisionId}`,
      imageDigest: undefined,
      activate: step("activate"),
      deactivate: step("deactivate"),
      healthy: () => true,
      retire: async () => step("retire")(),
      stop: async () => step("stop")(),
      scaling: () => undefined,
      openRequests: () => 0,
      queueDepth: () => Promise.reject(new Error("no queue")),
      scaleTo: async () => {},
    };
  }
}

function revision(id: string, status: RevisionStatus): AssignedRevision {
  return {
    id,
    number: 1,
    status,
    status_message: "",
    source: "internal_source",
    spec: specWith(),
    source_revision_config: {},
    source_config: {},
    secret_references: null,
    secrets: [],
    artifact_revision_id: null,
    tarball_sha256: null,
  };
}

function assignment(latest: AssignedRevision, active: AssignedRevision | null = null): Assignment {
  return {
    id: "d-1",
    tenant_id: "t-1",
    name: "d",
    source: "internal_source",
    status: "READY",
    deleted: false,
    active_revision_id: active?.id ?? null,
    latest,
    active,
    in_progress_revision_ids: [],
    tracing: { project: "p", api_key: "k" },
    auth_service: { api_key: "k" },
  };
}

function runnerWith(link: RecordingLink, placement: FakePlacement): DeploymentRunner {
  const logs = new LogShipper(link, () => {});
  const context = { link, logs, logger: pino({ level: "silent" }), placement, deploymentsDir: dir, serverVersion: "0" };
  return new DeploymentRunner("d-1", context);
}

test("a revision is recorded DEPLOYED only once its servers have the deployment's traffic", async () => {
  const link = new RecordingLink();
  const placement = new FakePlacement();
  let servedAtDeployed = false;
  link.onMove = (to) => {
    if (to === "DEPLOYED") servedAtDeployed = placement.steps.includes("activate r-1");
  };
  const runner = runnerWith(link, placement);
  runner.reconcile(assignment(revision("r-1", "QUEUED")));
  await runner.idle();
  assert.equal(runner.servingRevisionId(), "r-1");
  assert.ok(servedAtDeployed, "the router served r-1 before DEPLOYED was recorded");
  assert.deepEqual(link.calls, ["move AWAITING_DEPLOY", "move DEPLOYING", "move DEPLOYED"]);
  const deployed = link.reports.at(-1);
  assert.equal(deployed?.status, "READY");
  assert.deepEqual(deployed?.observed, {
    serving_revision_id: "r-1",
    healthy: true,
    reason: "Healthy",
    message: "Serving r-1",
  });
});

test("a DEPLOYED move that loses puts the previous revision back and stops the new one", async () => {
  const link = new RecordingLink();
  const placement = new FakePlacement();
  const runner = runnerWith(link, placement);
  const first = revision("r-1", "QUEUED");
  runner.reconcile(assignment(first));
  await runner.idle();
  link.loseMovesTo = "DEPLOYED";
  runner.reconcile(assignment(revision("r-2", "QUEUED"), { ...first, status: "DEPLOYED" }));
  await runner.idle();
  assert.deepEqual(placement.steps, ["activate r-1", "activate r-2", "activate r-1", "stop r-2"]);
  assert.equal(runner.servingRevisionId(), "r-1");
});

test("a first DEPLOYED move that loses leaves the deployment's URL as it was", async () => {
  const link = new RecordingLink();
  link.loseMovesTo = "DEPLOYED";
  const placement = new FakePlacement();
  const runner = runnerWith(link, placement);
  runner.reconcile(assignment(revision("r-1", "QUEUED")));
  await runner.idle();
  assert.deepEqual(placement.steps, ["activate r-1", "deactivate r-1", "stop r-1"]);
  assert.equal(runner.servingRevisionId(), undefined);
});

test("after a listener start, a deployment with nothing to run reports once that nothing runs", async () => {
  const link = new RecordingLink();
  const runner = runnerWith(link, new FakePlacement());
  const failed = assignment(revision("r-1", "BUILD_FAILED"));
  // With no work to do, the runner tells at once (the report is sent before reconcile returns).
  runner.reconcile(failed);
  runner.reconcile(failed);
  assert.deepEqual(link.calls, ["report"]);
  assert.equal(link.reports[0]?.observed?.serving_revision_id, null);
});
