import { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type ControlPlane, type Deployment, startControlPlane } from "@berth/test-support";
import { deployTarball, finalRevision, packFixture } from "@berth/test-support";
import type { Feedback, RunTree, TracedRun } from "./helpers/tracing.js";

function flatten(tree: RunTree): RunTree[] {
  return [tree, ...tree.child_runs.flatMap(flatten)];
}

describe("a deployment's runs are traced into its project", () => {
  let cp: ControlPlane;
  let deployment: Deployment;
  let client: Client;

  before(async () => {
    cp = await startControlPlane({ listener: true });
    const deployed = await deployTarball(cp.admin, "traced", packFixture("deploy-app"));
    const revision = await finalRevision(cp.admin, deployed.deployment.id, deployed.revisionId);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    deployment = (await cp.admin.get<Deployment>(`/v2/deployments/${deployed.deployment.id}`)).body;
    client = new Client({ apiUrl: deployment.source_config.custom_url!, apiKey: cp.adminKey });
  });
  after(() => cp?.stop());

  /**
   * The trace is sent in the background after the run (batched): nothing
   * announces its arrival, so the read API is asked until the whole tree is
   * there (the deadline only bounds a failure).
   */
  async function traceOf(runId: string): Promise<RunTree[]> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const response = await cp.admin.get<RunTree>(`/api/v1/runs/${runId}/tree`);
      if (response.status === 200 && response.body.end_time && flatten(response.body).every((run) => run.end_time)) {
        return flatten(response.body);
      }
      assert.ok(Date.now() < deadline, `the trace of run ${runId} did not arrive: ${response.status}`);
    }
  }

  test("every run of the tree carries thread_id, run_id, graph_id and assistant_id", async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "agent", {
      input: { messages: [{ type: "human", content: "trace me" }] },
    });
    await client.runs.join(thread.thread_id, run.run_id);
    const runs = await traceOf(run.run_id);
    assert.ok(runs.length >= 2, `a tree, not a lone run: ${runs.length}`);
    for (const traced of runs) {
      const metadata = traced.extra.metadata ?? {};
      assert.equal(metadata.thread_id, thread.thread_id, `${traced.name} carries thread_id`);
      assert.equal(metadata.run_id, run.run_id, `${traced.name} carries run_id`);
      assert.equal(metadata.graph_id, "agent");
      assert.ok(metadata.assistant_id);
    }
    const listed = await cp.admin.get<{ resources: TracedRun[] }>(
      `/api/v1/projects/${deployment.name}/runs?thread_id=${thread.thread_id}&root_only=true`,
    );
    assert.deepEqual(
      listed.body.resources.map((traced) => traced.id),
      [run.run_id],
    );
  });

  test("feedback_keys: a feedback event with one URL per key, and feedback lands on the run by POST and GET", async () => {
    const thread = await client.threads.create();
    const events: { event: string; data: unknown }[] = [];
    let runId = "";
    for await (const part of client.runs.stream(thread.thread_id, "agent", {
      input: { messages: [{ type: "human", content: "rate me" }] },
      feedbackKeys: ["helpful", "correct"],
      onRunCreated: ({ run_id }) => void (runId = run_id),
    })) {
      events.push(part);
    }
    const feedbackEvent = events.find((part) => part.event === "feedback");
    assert.ok(feedbackEvent, events.map((part) => part.event).join(","));
    const urls = feedbackEvent.data as Record<string, string>;
    assert.deepEqual(Object.keys(urls).sort(), ["correct", "helpful"]);
    assert.match(urls.helpful!, /\/api\/v1\/feedback\/tokens\/[^/]+$/);
    await traceOf(runId);

    const posted = await fetch(urls.helpful!, { method: "POST", body: JSON.stringify({ score: 1, comment: "great" }) });
    assert.equal(posted.status, 200, await posted.clone().text());
    const got = await fetch(`${urls.correct}?score=0&comment=${encodeURIComponent("wrong answer")}`);
    assert.equal(got.status, 200, await got.clone().text());
    const feedback = await cp.admin.get<{ resources: Feedback[] }>(`/api/v1/runs/${runId}/feedback`);
    assert.deepEqual(feedback.body.resources.map(({ key, score, comment }) => [key, score, comment]).sort(), [
      ["correct", 0, "wrong answer"],
      ["helpful", 1, "great"],
    ]);
  });
});
