// Deployments and their revisions as DeploymentStore creates, lists, updates
// and deletes them; concurrent calls come from two storages over one database.
import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import type {
  ControlPlaneStorage,
  DeploymentChange,
  DeploymentFilter,
  DeploymentRecord,
  RevisionRecord,
} from "../../../src/storage/types.js";
import { type Backend, databasePerTest } from "./backends.js";
import { created, isConflict, newDeployment, newTenant, nextRevision, tick } from "./fixtures.js";

export function deploymentsContract(backend: Backend): void {
  describe("deployments", () => {
    const db = databasePerTest(backend);
    let a: ControlPlaneStorage;
    let b: ControlPlaneStorage;

    beforeEach(() => {
      ({ a, b } = db);
    });

    it("creates deployments with their first revision and tracing project, and gets them back as given", async () => {
      const t = await newTenant(a);
      const made = newDeployment(t, "first", {
        deployment: {
          secret_references: [{ name: "OPENAI_API_KEY", secret_name: "llm", secret_key: "openai" }],
          active_revision_id: null,
        },
      });
      await a.deployments.create(made.deployment, made.revision, made.project);
      const stored = { ...made.stored };
      assert.deepEqual(await a.deployments.get(t, made.deployment.id), stored);
      assert.deepEqual(await b.deployments.get(t, made.deployment.id), stored);
      assert.equal(await a.deployments.get("other-tenant", made.deployment.id), undefined);
      assert.equal(await a.deployments.get(t, "missing"), undefined);

      const revision: RevisionRecord = {
        ...made.revision,
        deployment_id: made.deployment.id,
        tenant_id: t,
        number: 1,
        image_digest: null,
      };
      assert.deepEqual(await a.revisions.get(t, made.deployment.id, made.revision.id), revision);
      assert.deepEqual(await a.revisions.latest(made.deployment.id), revision);
      assert.deepEqual(await a.revisions.list(t, made.deployment.id, { limit: 10, offset: 0 }), [revision]);
      assert.equal(await a.revisions.get("other-tenant", made.deployment.id, made.revision.id), undefined);

      // null secret_references stay null (not the JSON value null, not a missing key).
      const plain = await created(a, t, "plain");
      const got = await a.deployments.get(t, plain.deployment.id);
      assert.equal(got?.secret_references, null);
      assert.equal((await a.revisions.latest(plain.deployment.id))?.secret_references, null);

      assert.deepEqual(await a.tracingProjects.getByName(t, "first"), made.project);
      assert.equal(await a.tracingProjects.getByName(t, "nope"), undefined);
    });

    it("keeps an existing tracing project of the name, pointing it at the new deployment", async () => {
      const t = await newTenant(a);
      const first = await created(a, t, "traced");
      await a.deployments.markDeleted(t, [first.deployment.id], false, tick());
      const second = newDeployment(t, "traced");
      await a.deployments.create(second.deployment, second.revision, second.project);
      assert.deepEqual(await a.tracingProjects.getByName(t, "traced"), { ...first.project, deployment_id: second.deployment.id });
    });

    it("lists live deployments newest first, with every filter", async () => {
      const t = await newTenant(a);
      const other = await newTenant(a);
      const same = tick();
      const alpha = await created(a, t, "Alpha_One", { sourceConfig: { deployment_type: "prod" } });
      const beta = await created(a, t, "beta%two");
      const gamma = await created(a, t, "gammaXone", { id: "z-gamma", at: same });
      const delta = await created(a, t, "delta", { id: "a-delta", at: same, deployment: { status: "READY" } });
      const gone = await created(a, t, "gone");
      await a.deployments.markDeleted(t, [gone.deployment.id], false, tick());
      await created(a, other, "Alpha_One");

      const names = async (filter: Partial<DeploymentFilter>) =>
        (await b.deployments.list(t, { limit: 50, offset: 0, ...filter })).map((d) => d.name);

      // created_at DESC, then id DESC (z-gamma before a-delta at the same time).
      assert.deepEqual(await names({}), ["beta%two", "Alpha_One", "gammaXone", "delta"]);
      assert.deepEqual(await names({ limit: 2, offset: 1 }), ["Alpha_One", "gammaXone"]);
      assert.deepEqual(await names({ offset: 10 }), []);
      // A case-insensitive substring: % and _ are themselves.
      assert.deepEqual(await names({ name_contains: "ALPHA" }), ["Alpha_One"]);
      assert.deepEqual(await names({ name_contains: "_" }), ["Alpha_One"]);
      assert.deepEqual(await names({ name_contains: "a_o" }), ["Alpha_One"]);
      assert.deepEqual(await names({ name_contains: "%" }), ["beta%two"]);
      assert.deepEqual(await names({ name_contains: "ONE" }), ["Alpha_One", "gammaXone"]);
      assert.deepEqual(await names({ name_contains: "" }), ["beta%two", "Alpha_One", "gammaXone", "delta"]);
      assert.deepEqual(await names({ statuses: ["READY"] }), ["delta"]);
      assert.deepEqual(await names({ statuses: ["READY", "AWAITING_DATABASE"] }), [
        "beta%two",
        "Alpha_One",
        "gammaXone",
        "delta",
      ]);
      assert.deepEqual(await names({ statuses: ["AWAITING_DELETE"] }), []);
      assert.deepEqual(await names({ statuses: [] }), ["beta%two", "Alpha_One", "gammaXone", "delta"]);
      assert.deepEqual(await names({ deployment_ids: [delta.deployment.id, gone.deployment.id, alpha.deployment.id] }), [
        "Alpha_One",
        "delta",
      ]);
      assert.deepEqual(await names({ deployment_type: "prod" }), ["Alpha_One"]);
      assert.deepEqual(await names({ deployment_type: "dev", name_contains: "a", statuses: ["AWAITING_DATABASE"] }), [
        "beta%two",
        "gammaXone",
      ]);
      const listed = await a.deployments.list(t, { limit: 1, offset: 0 });
      assert.deepEqual(listed, [beta.stored]);
      assert.equal(gamma.stored.id, "z-gamma");
    });

    it("refuses a second live deployment of a name, also from 5 concurrent creates", async () => {
      const t = await newTenant(a);
      const first = await created(a, t, "dup");
      const again = newDeployment(t, "dup");
      await assert.rejects(
        a.deployments.create(again.deployment, again.revision, again.project),
        isConflict('A deployment named "dup" already exists'),
      );
      // Nothing of the refused create remains.
      assert.equal(await a.revisions.latest(again.deployment.id), undefined);
      assert.deepEqual(await a.tracingProjects.getByName(t, "dup"), first.project);
      // Another workspace may use the name.
      await created(a, await newTenant(a), "dup");

      const attempts = Array.from({ length: 5 }, () => newDeployment(t, "race"));
      const results = await Promise.allSettled(
        attempts.map((m, i) => (i % 2 ? b : a).deployments.create(m.deployment, m.revision, m.project)),
      );
      const won = results.flatMap((r, i) => (r.status === "fulfilled" ? [attempts[i]] : []));
      assert.equal(won.length, 1, JSON.stringify(results));
      for (const r of results) {
        if (r.status === "rejected") isConflict('A deployment named "race" already exists')(r.reason);
      }
      const live = await a.deployments.list(t, { limit: 10, offset: 0, name_contains: "race" });
      assert.deepEqual(live, [won[0].stored]);
      assert.equal((await a.tracingProjects.getByName(t, "race"))?.deployment_id, won[0].deployment.id);
      for (const loser of attempts.filter((m) => m !== won[0])) {
        assert.equal(await a.revisions.latest(loser.deployment.id), undefined);
      }
    });

    it("numbers the revisions of 10 concurrent updates 2..11, each update seeing the previous ones", async () => {
      const t = await newTenant(a);
      const made = await created(a, t, "busy", { sourceConfig: { counter: 0 } });
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          (i % 2 ? b : a).deployments.update(t, made.deployment.id, (deployment, latest) => ({
            source_config: { ...deployment.source_config, counter: (deployment.source_config.counter as number) + 1 },
            secret_references: deployment.secret_references,
            updated_at: tick(),
            revision: nextRevision(latest),
          })),
        ),
      );
      const numbers = results.map((r) => r!.revision!.number).sort((x, y) => x - y);
      assert.deepEqual(numbers, [2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
      const final = await a.deployments.get(t, made.deployment.id);
      assert.equal(final?.source_config.counter, 10); // no update lost
      const revisions = await a.revisions.list(t, made.deployment.id, { limit: 100, offset: 0 });
      assert.deepEqual(
        revisions.map((r) => r.number),
        [11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1],
      );
      assert.equal(final?.latest_revision_id, revisions[0].id);
      // Each update's result is the record as stored then, its revision as stored.
      for (const result of results) {
        assert.equal(result!.deployment.latest_revision_id, result!.revision!.id);
        assert.equal(result!.revision!.deployment_id, made.deployment.id);
        assert.equal(result!.revision!.tenant_id, t);
      }
      // Only the newest is still in progress; each earlier one was superseded by its successor.
      assert.equal(revisions[0].status, "QUEUED");
      for (let i = 1; i < revisions.length; i++) {
        assert.equal(revisions[i].status, "SKIPPED");
        assert.equal(revisions[i].status_message, `Superseded by revision ${revisions[i - 1].number} (${revisions[i - 1].id})`);
        assert.equal(revisions[i].updated_at, revisions[i - 1].created_at);
      }
      assert.deepEqual(
        await a.revisions
          .list(t, made.deployment.id, { limit: 2, offset: 1, statuses: ["SKIPPED"] })
          .then((rs) => rs.map((r) => r.number)),
        [9, 8],
      );
      assert.deepEqual(
        await a.revisions.list(t, made.deployment.id, { limit: 10, offset: 0, statuses: ["QUEUED", "DEPLOYED"] }),
        [revisions[0]],
      );
    });

    it("reads the latest revision of each of several deployments at once", async () => {
      const t = await newTenant(a);
      const [one, two] = [await created(a, t, "each-one"), await created(a, t, "each-two")];
      const updated = await a.deployments.update(t, two.deployment.id, (deployment, latest) => ({
        source_config: deployment.source_config,
        secret_references: deployment.secret_references,
        updated_at: tick(),
        revision: nextRevision(latest),
      }));
      const latest = await b.revisions.latestOfEach([one.deployment.id, two.deployment.id, "no-such-deployment"]);
      assert.deepEqual([...latest.keys()].sort(), [one.deployment.id, two.deployment.id].sort());
      assert.deepEqual(latest.get(one.deployment.id), await a.revisions.latest(one.deployment.id));
      assert.equal(latest.get(two.deployment.id)?.id, updated!.revision!.id);
      assert.deepEqual(latest.get(two.deployment.id), await a.revisions.latest(two.deployment.id));
      assert.equal((await b.revisions.latestOfEach([])).size, 0);
    });

    it("updates without a revision, and supersedes only revisions in progress", async () => {
      const t = await newTenant(a);
      const made = await created(a, t, "sup");
      const at = tick();
      const plain = await a.deployments.update(t, made.deployment.id, (deployment, latest) => {
        assert.deepEqual(deployment, made.stored);
        assert.equal(latest.id, made.revision.id);
        assert.equal(latest.number, 1);
        return {
          source_config: { ...deployment.source_config, custom_url: "https://x" },
          secret_references: [{ name: "N", secret_name: "n", secret_key: "one" }],
          updated_at: at,
        };
      });
      assert.deepEqual(plain, {
        deployment: {
          ...made.stored,
          source_config: { ...made.stored.source_config, custom_url: "https://x" },
          secret_references: [{ name: "N", secret_name: "n", secret_key: "one" }],
          updated_at: at,
        },
        revision: undefined,
      });
      assert.deepEqual(await a.deployments.get(t, made.deployment.id), plain!.deployment);

      // Revision 1 DEPLOYED (final) stays; revision 2 in progress is superseded by 3.
      await a.revisions.transition(made.revision.id, ["QUEUED"], "DEPLOYED", "Deployed", tick());
      const change = (deployment: DeploymentRecord, latest: RevisionRecord): DeploymentChange => ({
        source_config: deployment.source_config,
        secret_references: deployment.secret_references,
        updated_at: tick(),
        revision: nextRevision(latest),
      });
      const second = (await a.deployments.update(t, made.deployment.id, change))!.revision!;
      await a.revisions.transition(second.id, ["QUEUED"], "BUILDING", "Building", tick());
      const third = (await b.deployments.update(t, made.deployment.id, change))!.revision!;
      assert.equal(third.number, 3);
      const [r3, r2, r1] = await a.revisions.list(t, made.deployment.id, { limit: 10, offset: 0 });
      assert.deepEqual(r3, third);
      assert.deepEqual(
        [r2.status, r2.status_message, r2.updated_at],
        ["SKIPPED", `Superseded by revision 3 (${third.id})`, third.created_at],
      );
      assert.deepEqual([r1.status, r1.status_message], ["DEPLOYED", "Deployed"]);

      assert.equal(await a.deployments.update(t, "missing", () => assert.fail("plan of a missing deployment")), undefined);
      assert.equal(
        await a.deployments.update("other", made.deployment.id, () => assert.fail("plan of another workspace")),
        undefined,
      );
    });

    it("changes nothing when plan throws, and rethrows its error", async () => {
      const t = await newTenant(a);
      const made = await created(a, t, "careful");
      const before = await a.deployments.get(t, made.deployment.id);
      const revisionsBefore = await a.revisions.list(t, made.deployment.id, { limit: 10, offset: 0 });
      const failure = new Error("invalid change");
      await assert.rejects(
        a.deployments.update(t, made.deployment.id, () => {
          throw failure;
        }),
        (err) => err === failure,
      );
      assert.deepEqual(await a.deployments.get(t, made.deployment.id), before);
      assert.deepEqual(await a.revisions.list(t, made.deployment.id, { limit: 10, offset: 0 }), revisionsBefore);
      // The row lock was released: the next update goes through.
      const next = await a.deployments.update(t, made.deployment.id, (d, latest) => ({
        source_config: d.source_config,
        secret_references: null,
        updated_at: tick(),
        revision: nextRevision(latest),
      }));
      assert.equal(next?.revision?.number, 2);
    });

    it("marks deployments deleted, freeing their names", async () => {
      const t = await newTenant(a);
      const keep = await created(a, t, "keep-project");
      const drop = await created(a, t, "drop-project");
      const at = tick();
      assert.deepEqual(
        await a.deployments.markDeleted(t, [drop.deployment.id, "missing", keep.deployment.id, drop.deployment.id], false, at),
        [drop.deployment.id, keep.deployment.id],
      );
      assert.deepEqual(await a.deployments.markDeleted(t, [drop.deployment.id], true, tick()), []);
      assert.deepEqual(await a.deployments.markDeleted(t, [], true, tick()), []);
      assert.equal(await a.deployments.get(t, drop.deployment.id), undefined);
      assert.equal(await a.revisions.get(t, drop.deployment.id, drop.revision.id), undefined);
      assert.deepEqual(await a.revisions.list(t, drop.deployment.id, { limit: 10, offset: 0 }), []);
      assert.equal((await a.revisions.latest(drop.deployment.id))?.id, drop.revision.id); // deleted or not
      assert.equal(
        await a.deployments.update(t, drop.deployment.id, () => assert.fail("plan of a deleted deployment")),
        undefined,
      );
      assert.deepEqual(await b.deployments.getAny(drop.deployment.id), {
        ...drop.stored,
        status: "AWAITING_DELETE",
        deleted_at: at,
        updated_at: at,
      });
      assert.ok(await a.tracingProjects.getByName(t, "keep-project"));

      // Another workspace cannot delete them; with deleteTracingProjects the project goes.
      const third = await created(a, t, "third");
      assert.deepEqual(await a.deployments.markDeleted("other", [third.deployment.id], true, tick()), []);
      assert.deepEqual(await a.deployments.markDeleted(t, [third.deployment.id], true, tick()), [third.deployment.id]);
      assert.equal(await a.tracingProjects.getByName(t, "third"), undefined);

      // The name is free again.
      const reborn = await created(a, t, "drop-project");
      assert.deepEqual(await a.deployments.get(t, reborn.deployment.id), reborn.stored);
    });
  });
}
