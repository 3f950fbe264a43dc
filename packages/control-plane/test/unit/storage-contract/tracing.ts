// The tracing store: projects, traced runs merged under concurrency, thread
// usage, feedback and feedback tokens.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { beforeEach, describe, it } from "node:test";
import type { FeedbackRecord, RunFilter, TracedRunRecord } from "../../../src/storage/tracing-types.js";
import type { ControlPlaneStorage, TracingProjectRecord } from "../../../src/storage/types.js";
import { type Backend, databasePerTest } from "./backends.js";
import { created, newTenant, newTracedRun, tick } from "./fixtures.js";

export function tracingContract(backend: Backend): void {
  describe("tracing", () => {
    const db = databasePerTest(backend);
    let a: ControlPlaneStorage;
    let b: ControlPlaneStorage;

    beforeEach(() => {
      ({ a, b } = db);
    });

    /** A project as ingestion creates one (no deployment). */
    const projectRecord = (tenantId: string, name = `p-${randomUUID()}`): TracingProjectRecord => ({
      id: randomUUID(),
      tenant_id: tenantId,
      name,
      deployment_id: null,
      created_at: tick(),
    });
    const newProject = (tenantId: string) => a.tracing.ensureProject(projectRecord(tenantId));

    /** Stores runs as given (a merge that ignores what is stored). */
    const put = (storage: ControlPlaneStorage, tenantId: string, runs: TracedRunRecord[]) =>
      storage.tracing.upsertRuns(
        tenantId,
        runs.map((run) => run.id),
        () => runs,
      );

    it("finds projects by id and name, and creates a missing one once under concurrent calls", async () => {
      const t = await newTenant(a);
      const made = await created(a, t, "traced");
      assert.deepEqual(await b.tracing.projectById(t, made.project.id), made.project);
      assert.deepEqual(await b.tracing.projectByName(t, "traced"), made.project);
      assert.equal(await b.tracing.projectById("other", made.project.id), undefined);
      assert.equal(await b.tracing.projectByName(t, "missing"), undefined);
      // A project of that name exists: it is the one returned, untouched.
      assert.deepEqual(await a.tracing.ensureProject(projectRecord(t, "traced")), made.project);

      const attempts = Array.from({ length: 8 }, () => projectRecord(t, "ingested"));
      const results = await Promise.all(attempts.map((project, i) => (i % 2 ? b : a).tracing.ensureProject(project)));
      assert.ok(attempts.some((project) => project.id === results[0].id));
      for (const result of results) assert.deepEqual(result, results[0]);
      assert.deepEqual(await a.tracingProjects.getByName(t, "ingested"), results[0]);
      assert.deepEqual(await a.tracing.projectById(t, results[0].id), results[0]);
    });

    it("merges run operations atomically, concurrent merges of the same runs taking turns", async () => {
      const t = await newTenant(a);
      const project = await newProject(t);
      const ids = [randomUUID(), randomUUID()];
      const seen: string[][] = [];
      // Every merge adds one to each run's count, creating the run when it is not stored yet.
      await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          (i % 2 ? b : a).tracing.upsertRuns(t, ids, (current) => {
            seen.push([...current.keys()].sort());
            return ids.map((id) => {
              const run = current.get(id) ?? newTracedRun(t, project.id, { id, trace_id: ids[0], extra: { count: 0 } });
              return { ...run, extra: { count: (run.extra?.count as number) + 1 } };
            });
          }),
        ),
      );
      for (const id of ids) assert.deepEqual((await a.tracing.getRun(t, id))?.extra, { count: 10 });
      // A merge sees the stored runs among those asked for, and only them.
      assert.ok(seen.every((keys) => keys.length === 0 || keys.join() === [...ids].sort().join()));
      const other = randomUUID();
      await a.tracing.upsertRuns(t, [ids[0], other], (current) => {
        assert.deepEqual([...current.keys()], [ids[0]]);
        return [];
      });
      assert.equal(await a.tracing.getRun(t, other), undefined);
    });

    it("gets a run, a trace's runs in dotted order, and lists a project's runs with every filter", async () => {
      const t = await newTenant(a);
      const project = await newProject(t);
      const otherProject = await newProject(t);
      const [root, childA, childB, loose, second, elsewhere] = Array.from({ length: 6 }, () => randomUUID());
      const at = (seconds: number) => new Date(Date.parse("2025-03-01T00:00:00.000Z") + seconds * 1000).toISOString();
      const runs = [
        newTracedRun(t, project.id, {
          id: root,
          dotted_order: `20250301T000001000000Z${root}`,
          start_time: at(1),
          end_time: at(9),
          inputs: { question: "why?", nested: { list: [1, "two", null] } },
          outputs: { answer: 42 },
          extra: { metadata: { thread_id: "thread-1" } },
          tags: ["a", "b"],
          events: [{ name: "start", time: at(1) }],
          thread_id: "thread-1",
        }),
        newTracedRun(t, project.id, {
          id: childB,
          trace_id: root,
          parent_run_id: root,
          dotted_order: `20250301T000001000000Z${root}.20250301T000003000000Z${childB}`,
          start_time: at(3),
          run_type: "llm",
          error: "boom",
          prompt_tokens: 3_000_000_000,
          completion_tokens: 2,
          total_tokens: 3_000_000_002,
          thread_id: "thread-1",
        }),
        newTracedRun(t, project.id, {
          id: childA,
          trace_id: root,
          parent_run_id: root,
          dotted_order: `20250301T000001000000Z${root}.20250301T000002000000Z${childA}`,
          start_time: at(2),
          thread_id: "thread-1",
        }),
        // Not started yet as far as the store knows: no dotted order nor start time.
        newTracedRun(t, project.id, { id: loose, trace_id: root, parent_run_id: root, start_time: null, thread_id: "thread-1" }),
        newTracedRun(t, project.id, { id: second, start_time: at(5), thread_id: "thread-2" }),
        newTracedRun(t, otherProject.id, { id: elsewhere, start_time: at(4) }),
      ];
      await put(a, t, runs);
      assert.deepEqual(await b.tracing.getRun(t, root), runs[0]);
      assert.deepEqual(await b.tracing.getRun(t, childB), runs[1]);
      assert.equal(await b.tracing.getRun("other", root), undefined);
      assert.equal(await b.tracing.getRun(t, "missing"), undefined);

      const ids = (records: TracedRunRecord[]) => records.map((run) => run.id);
      // Runs without a dotted order first, then in dotted order.
      assert.deepEqual(ids(await b.tracing.traceRuns(t, root)), [loose, root, childA, childB]);
      assert.deepEqual(await b.tracing.traceRuns("other", root), []);

      const list = async (filter: Partial<RunFilter>) =>
        ids(
          await b.tracing.listRuns(t, {
            project_id: project.id,
            root_only: false,
            order: "asc",
            limit: 50,
            offset: 0,
            ...filter,
          }),
        );
      // By start time; a run without one comes first in ascending order, last in descending.
      assert.deepEqual(await list({}), [loose, root, childA, childB, second]);
      assert.deepEqual(await list({ order: "desc" }), [second, childB, childA, root, loose]);
      assert.deepEqual(await list({ limit: 2, offset: 1 }), [root, childA]);
      assert.deepEqual(await list({ root_only: true }), [root, second]);
      assert.deepEqual(await list({ thread_id: "thread-2" }), [second]);
      assert.deepEqual(await list({ trace_id: root, order: "desc", root_only: false }), [childB, childA, root, loose]);
      assert.deepEqual(await list({ thread_id: "thread-1", root_only: true }), [root]);
      assert.deepEqual(await list({ project_id: otherProject.id }), [elsewhere]);
      assert.deepEqual(await list({ project_id: "missing" }), []);
    });

    it("sums a thread's token usage over its LLM runs", async () => {
      const t = await newTenant(a);
      const project = await newProject(t);
      const root = randomUUID();
      const tokens = (prompt: number | null, completion: number | null, total: number | null) => ({
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: total,
      });
      const llmChild = (usage: Partial<TracedRunRecord> = {}) =>
        newTracedRun(t, project.id, {
          id: randomUUID(),
          trace_id: root,
          parent_run_id: root,
          thread_id: "th",
          run_type: "llm",
          ...usage,
        });
      await put(a, t, [
        // A chain reporting its children's usage is not counted again.
        newTracedRun(t, project.id, { id: root, thread_id: "th", ...tokens(100, 100, 200) }),
        llmChild(tokens(3_000_000_000, 5, 3_000_000_005)),
        llmChild(tokens(7, 11, 18)),
        llmChild(), // reports no usage
        newTracedRun(t, project.id, { id: randomUUID(), thread_id: "th" }),
        newTracedRun(t, project.id, { id: randomUUID(), thread_id: "other", run_type: "llm", ...tokens(1, 1, 2) }),
      ]);
      assert.deepEqual(await b.tracing.threadUsage(t, project.id, "th"), {
        prompt_tokens: 3_000_000_007,
        completion_tokens: 16,
        total_tokens: 3_000_000_023,
        runs: 2,
        traces: 2,
      });
      const none = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, runs: 0, traces: 0 };
      assert.deepEqual(await b.tracing.threadUsage(t, project.id, "missing"), none);
      assert.deepEqual(await b.tracing.threadUsage("other", project.id, "th"), none);
    });

    it("adds feedback once per id, and lists a run's feedback oldest first", async () => {
      const t = await newTenant(a);
      const runId = randomUUID();
      const feedback = (id: string, overrides: Partial<FeedbackRecord> = {}): FeedbackRecord => ({
        tenant_id: t,
        id,
        run_id: runId,
        trace_id: runId,
        key: "helpful",
        score: 0.75,
        value: { label: "yes", weights: [1, 2.5] },
        comment: "good",
        correction: "better",
        metadata: { from: "test" },
        source: "api",
        created_at: tick(),
        ...overrides,
      });
      const same = tick();
      const records = [
        feedback("f-2", { created_at: same }),
        feedback("f-1", { created_at: same, score: null, value: null, comment: null, correction: null, metadata: null }),
        feedback("f-3", { trace_id: null, value: "plain", correction: { text: "x" }, source: "token" }),
      ];
      await a.tracing.addFeedback(records);
      await a.tracing.addFeedback([]);
      // A retry of a stored id is left as it was first stored.
      await b.tracing.addFeedback([{ ...records[0], key: "changed", score: 0 }]);
      await b.tracing.addFeedback([feedback("f-0", { run_id: "another-run" })]);
      // created_at, then id.
      assert.deepEqual(await b.tracing.listFeedback(t, runId, 10, 0), [records[1], records[0], records[2]]);
      assert.deepEqual(await b.tracing.listFeedback(t, runId, 1, 1), [records[0]]);
      assert.deepEqual(await b.tracing.listFeedback(t, runId, 10, 3), []);
      assert.deepEqual(await b.tracing.listFeedback("other", runId, 10, 0), []);
    });

    it("stores feedback tokens by hash", async () => {
      const t = await newTenant(a);
      const token = {
        token_hash: "ab".repeat(32),
        tenant_id: t,
        run_id: randomUUID(),
        key: "correct",
        feedback_config: { type: "continuous", min: 0, max: 1 },
        expires_at: tick(),
        created_at: tick(),
      };
      await a.tracing.createToken(token);
      await a.tracing.createToken({ ...token, token_hash: "cd".repeat(32), feedback_config: null });
      assert.deepEqual(await b.tracing.getToken(token.token_hash), token);
      assert.equal((await b.tracing.getToken("cd".repeat(32)))?.feedback_config, null);
      assert.equal(await b.tracing.getToken("missing"), undefined);
    });

    it("deletes a project's runs with it, when its deployment is deleted with its tracing project", async () => {
      const t = await newTenant(a);
      const kept = await created(a, t, "kept");
      const dropped = await created(a, t, "dropped");
      const [keptRun, droppedRun] = [randomUUID(), randomUUID()];
      await put(a, t, [
        newTracedRun(t, kept.project.id, { id: keptRun }),
        newTracedRun(t, dropped.project.id, { id: droppedRun }),
      ]);
      await a.deployments.markDeleted(t, [kept.deployment.id], false, tick());
      await a.deployments.markDeleted(t, [dropped.deployment.id], true, tick());
      assert.equal((await b.tracing.getRun(t, keptRun))?.project_id, kept.project.id);
      assert.equal(await b.tracing.getRun(t, droppedRun), undefined);
      assert.equal(await b.tracing.projectById(t, dropped.project.id), undefined);
    });
  });
}
