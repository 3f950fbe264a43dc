import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { type Client, RunTree } from "langsmith";
import { type ControlPlane, startControlPlane } from "@berth/test-support";
import { flatten, listRuns, runTree, threadUsage, tracingClient, type RunTree as Tree } from "./helpers/tracing.js";

/**
 * A trace as an instrumented app makes it: a chain with an LLM call (reporting
 * its tokens as `traceable` does) and a tool that calls a retriever.
 */
async function traceConversationTurn(
  client: Client,
  project: string,
  threadId: string,
  tokens: { input: number; output: number },
) {
  const root = new RunTree({
    name: "agent",
    run_type: "chain",
    inputs: { question: "hi" },
    project_name: project,
    client,
    extra: { metadata: { thread_id: threadId } },
  });
  await root.postRun();
  const llm = root.createChild({ name: "model", run_type: "llm", inputs: { messages: ["hi"] } });
  await llm.postRun();
  await llm.end({
    answer: "hello",
    usage_metadata: { input_tokens: tokens.input, output_tokens: tokens.output, total_tokens: tokens.input + tokens.output },
  });
  await llm.patchRun();
  const tool = root.createChild({ name: "search", run_type: "tool", inputs: { query: "x" } });
  await tool.postRun();
  const retriever = tool.createChild({ name: "retriever", run_type: "retriever", inputs: { query: "x" } });
  await retriever.postRun();
  await retriever.end({ documents: [] });
  await retriever.patchRun();
  await tool.end(undefined, "tool failed: boom");
  await tool.patchRun();
  await root.end({ answer: "hello" });
  await root.patchRun();
  return { root, llm, tool, retriever };
}

function assertTurnTree(tree: Tree, ids: { root: RunTree; llm: RunTree; tool: RunTree; retriever: RunTree }, threadId: string) {
  assert.equal(tree.id, ids.root.id);
  assert.equal(tree.parent_run_id, null);
  assert.equal(tree.trace_id, ids.root.id);
  assert.deepEqual(tree.inputs, { question: "hi" });
  assert.deepEqual(tree.outputs, { answer: "hello" });
  assert.equal(tree.status, "success");
  assert.deepEqual(
    tree.child_runs.map((run) => run.name),
    ["model", "search"],
    "children in dotted order",
  );
  const [llm, tool] = tree.child_runs;
  assert.equal(llm!.id, ids.llm.id);
  assert.equal(llm!.run_type, "llm");
  assert.equal(llm!.parent_run_id, ids.root.id);
  assert.deepEqual(llm!.child_runs, []);
  assert.equal(tool!.status, "error");
  assert.equal(tool!.error, "tool failed: boom");
  assert.deepEqual(
    tool!.child_runs.map((run) => [run.id, run.name, run.dotted_order]),
    [[ids.retriever.id, "retriever", ids.retriever.dotted_order]],
  );
  for (const run of flatten(tree)) {
    assert.equal(run.trace_id, ids.root.id);
    assert.equal(run.thread_id, threadId, `${run.name} carries the thread`);
    assert.equal(run.extra.metadata?.thread_id, threadId);
    assert.ok(run.start_time && run.end_time, `${run.name} has its timings`);
  }
}

describe("tracing: what the langsmith client sends", () => {
  let cp: ControlPlane;

  before(async () => {
    cp = await startControlPlane();
  });
  after(() => cp.stop());

  test("GET /api/v1/info is open and steers the client to multipart ingestion", async () => {
    const response = await fetch(`${cp.url}/api/v1/info`);
    assert.equal(response.status, 200);
    const info = (await response.json()) as {
      batch_ingest_config: { use_multipart_endpoint: boolean; size_limit_bytes: number };
    };
    assert.equal(info.batch_ingest_config.use_multipart_endpoint, true);
    assert.ok(info.batch_ingest_config.size_limit_bytes > 0);
    assert.equal((await fetch(`${cp.url}/api-host/api/v1/info`)).status, 200);
  });

  for (const autoBatchTracing of [true, false]) {
    test(`autoBatchTracing ${autoBatchTracing ? "on (multipart)" : "off (POST /runs, PATCH /runs/{id})"}: the tree reads back nested`, async () => {
      const client = tracingClient(cp.url, cp.adminKey, { autoBatchTracing });
      const project = `proj-${autoBatchTracing}-${randomUUID().slice(0, 8)}`;
      const threadId = randomUUID();
      const ids = await traceConversationTurn(client, project, threadId, { input: 7, output: 3 });
      await client.awaitPendingTraceBatches();

      assertTurnTree(await runTree(cp.admin, ids.root.id), ids, threadId);
      // Any run's tree is its subtree.
      const sub = await runTree(cp.admin, ids.tool.id);
      assert.deepEqual(
        flatten(sub).map((run) => run.name),
        ["search", "retriever"],
      );
      const single = await cp.admin.get<Tree>(`/api/v1/runs/${ids.llm.id}`);
      assert.equal(single.status, 200);
      assert.equal(single.body.prompt_tokens, 7);
      assert.equal(single.body.completion_tokens, 3);
      assert.equal(single.body.total_tokens, 10);
    });
  }

  test("runs filtered by thread_id, token totals per thread", async () => {
    const client = tracingClient(cp.url, cp.adminKey);
    const project = `threads-${randomUUID().slice(0, 8)}`;
    const [threadA, threadB] = [randomUUID(), randomUUID()];
    const first = await traceConversationTurn(client, project, threadA, { input: 10, output: 5 });
    const second = await traceConversationTurn(client, project, threadA, { input: 20, output: 8 });
    const other = await traceConversationTurn(client, project, threadB, { input: 1, output: 1 });
    await client.awaitPendingTraceBatches();

    const inA = await listRuns(cp.admin, project, `?thread_id=${threadA}`);
    assert.equal(inA.length, 8, "4 runs per turn");
    assert.ok(inA.every((run) => run.thread_id === threadA));
    const roots = await listRuns(cp.admin, project, `?thread_id=${threadA}&root_only=true&order=asc`);
    assert.deepEqual(
      roots.map((run) => run.id),
      [first.root.id, second.root.id],
    );
    const page = await listRuns(cp.admin, project, `?thread_id=${threadA}&limit=3&offset=6`);
    assert.equal(page.length, 2);
    assert.deepEqual(
      (await listRuns(cp.admin, project, `?thread_id=${threadB}&root_only=1`)).map((run) => run.id),
      [other.root.id],
    );

    const usage = await threadUsage(cp.admin, project, threadA);
    assert.deepEqual(
      {
        prompt: usage.prompt_tokens,
        completion: usage.completion_tokens,
        total: usage.total_tokens,
        runs: usage.runs,
        traces: usage.traces,
      },
      { prompt: 30, completion: 13, total: 43, runs: 2, traces: 2 },
    );
    // By project id too; an unknown thread counts nothing.
    const project_id = inA[0]!.project_id;
    assert.equal((await threadUsage(cp.admin, project_id, threadB)).total_tokens, 2);
    assert.deepEqual(
      { ...(await threadUsage(cp.admin, project, "nobody")), project_id: undefined, thread_id: undefined },
      {
        project_id: undefined,
        thread_id: undefined,
        prompt_tokens: 0,
        completion_tokens: 0,
        total_tokens: 0,
        runs: 0,
        traces: 0,
      },
    );
  });

  test("the /api-host prefix serves the same API", async () => {
    const client = tracingClient(cp.url, cp.adminKey, { prefix: "/api-host" });
    const project = `prefixed-${randomUUID().slice(0, 8)}`;
    const ids = await traceConversationTurn(client, project, "t-prefix", { input: 1, output: 2 });
    await client.awaitPendingTraceBatches();
    const tree = await cp.admin.get<Tree>(`/api-host/api/v1/runs/${ids.root.id}/tree`);
    assert.equal(tree.status, 200);
    assert.equal(flatten(tree.body).length, 4);
  });

  test("a project name never seen is created in the workspace; project readable by id and name", async () => {
    const client = tracingClient(cp.url, cp.adminKey, { autoBatchTracing: false });
    const project = `fresh-${randomUUID().slice(0, 8)}`;
    await traceConversationTurn(client, project, "t", { input: 1, output: 1 });
    const byName = await cp.admin.get<{ id: string; name: string; tenant_id: string; deployment_id: string | null }>(
      `/api/v1/projects/${project}`,
    );
    assert.equal(byName.status, 200);
    assert.equal(byName.body.name, project);
    assert.equal(byName.body.tenant_id, cp.defaultTenantId);
    assert.equal(byName.body.deployment_id, null);
    assert.deepEqual((await cp.admin.get(`/api/v1/projects/${byName.body.id}`)).body, byName.body);
    assert.equal((await cp.admin.get(`/api/v1/projects/no-such-project/runs`)).status, 404);
  });
});
