// RunRepository.create's `claimFor`: the creation claims the run for a worker with a free slot (both backends do), but
// never a run that could not start now or that would overtake an older claimable run.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import { type CheckpointMetadata, emptyCheckpoint } from "@langchain/langgraph-checkpoint";
import type { NewRun, QueuedRun, Storage } from "../../../src/storage/types.js";
import { type Backend, databasePerTest } from "./backends.js";
import { createdRun, newRun, newThread } from "./fixtures.js";

const claimant = { owner: "worker-1", leaseMs: 60_000 };

export function claimOnCreateContract(backend: Backend): void {
  describe("runs.create with claimFor", () => {
    const test = databasePerTest(backend);

    /** Creates `run` for the claimant; the run as claimed, or undefined when it was left pending. */
    async function create(storage: Storage, run: NewRun): Promise<QueuedRun | undefined> {
      const result = await storage.runs.create(run, claimant);
      assert.equal(result.kind, "created");
      if (result.kind !== "created") return undefined;
      assert.equal(result.run.status, "pending", "the API sees the run as created");
      return result.claimed;
    }

    it("claims a run that can start now, on an idle queue", async () => {
      const { storage } = test;
      const run = newRun(await newThread(storage));
      const claimed = await create(storage, run);
      assert.equal(claimed?.run_id, run.run_id);
      assert.equal(claimed?.status, "running");
      assert.equal(claimed?.attempt, 1);
      assert.equal((await storage.runs.get(run.run_id))?.status, "running");
      assert.equal((await storage.threads.get(run.thread_id))?.status, "busy");
      assert.deepEqual(await storage.runs.leaseOwners(), [claimant.owner]);
      assert.equal(await storage.runs.claim("worker-2", 60_000), undefined, "nothing left to claim");
    });

    it("says whether the thread had a root checkpoint as the run claimed it, or nothing", async () => {
      const { storage } = test;
      const saver = await storage.checkpointer();
      const put = (threadId: string, ns: string) =>
        saver.put(
          { configurable: { thread_id: threadId, checkpoint_ns: ns } },
          emptyCheckpoint(),
          {
            source: "input",
            step: -1,
            parents: {},
          } as CheckpointMetadata,
          {},
        );
      /** What the claimed creation of a run on `threadId` says (undefined: the store does not say). */
      const said = async (threadId: string, create_thread = false) => {
        const result = await storage.runs.create(newRun(threadId, { create_thread }), claimant);
        assert.ok(result.kind === "created" && result.claimed, "claimed");
        return result.threadCheckpointed;
      };
      assert.equal(await said(randomUUID(), true), false, "a thread the creation made has none");
      const withRoot = await newThread(storage);
      await put(withRoot, "");
      const withSubgraphOnly = await newThread(storage);
      await put(withSubgraphOnly, "child:1");
      const untouched = await newThread(storage);
      // SQLite leaves existing threads to the saver's read (as cheap as the check); PostgreSQL checks them.
      const expected = (had: boolean) => (backend.name === "PostgreSQL" ? had : undefined);
      assert.equal(await said(withRoot), expected(true));
      assert.equal(await said(withSubgraphOnly), expected(false), "a subgraph's checkpoint is not the thread's");
      assert.equal(await said(untouched), expected(false));
    });

    it("leaves pending a run that would overtake an older claimable run, one delayed, and one its thread must wait for", async () => {
      const { storage } = test;
      const older = await createdRun(storage, await newThread(storage));
      const newer = newRun(await newThread(storage));
      assert.equal(await create(storage, newer), undefined, "an older run is claimable");
      assert.equal((await storage.runs.claim("worker-2", 60_000))?.run_id, older);
      assert.equal((await storage.runs.claim("worker-2", 60_000))?.run_id, newer.run_id, "left to the queue, in order");

      const delayed = newRun(await newThread(storage), { available_at: Date.now() + 60_000 });
      assert.equal(await create(storage, delayed), undefined, "not available yet");
      const busyThread = await newThread(storage);
      await createdRun(storage, busyThread);
      assert.ok(await storage.runs.claim("worker-2", 60_000));
      assert.equal(await create(storage, newRun(busyThread)), undefined, "its thread runs another run");
      assert.equal(await storage.runs.claim("worker-2", 60_000), undefined);
    });

    it("a claim that takes nothing says whether any run is pending: behind a running one, delayed, or none", async () => {
      const { storage } = test;
      const told: boolean[] = [];
      const claim = () => storage.runs.claim("worker-2", 60_000, (pendingLeft) => told.push(pendingLeft));
      assert.equal(await claim(), undefined);
      const thread = await newThread(storage);
      const first = await createdRun(storage, thread);
      assert.equal((await claim())?.run_id, first);
      const queued = await createdRun(storage, thread);
      assert.equal(await claim(), undefined, "its thread runs another run");
      assert.deepEqual(told, [false, true], "no word when a run is claimed");
      await storage.runs.delete(queued);
      await createdRun(storage, await newThread(storage), { available_at: Date.now() + 60_000 });
      assert.equal(await claim(), undefined, "not available yet");
      assert.deepEqual(told, [false, true, true]);
    });
  });
}
