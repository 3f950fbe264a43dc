// What follows a deployment's creation: revision status moves and their
// timeline, listeners' reports and assignments, logs, uploads, and the purge
// that removes a deleted deployment for good.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { beforeEach, describe, it } from "node:test";
import { IN_PROGRESS_REVISION_STATUSES } from "@berth/listener-protocol";
import type { ControlPlaneStorage, LogFilter, UploadRecord } from "../../../src/storage/types.js";
import { type Backend, databasePerTest } from "./backends.js";
import { BASE, created, newListener, newTenant, nextRevision, sameWithNewRevision, tick } from "./fixtures.js";

function newUpload(tenantId: string, deploymentId: string, objectPath: string): UploadRecord {
  return {
    object_path: objectPath,
    upload_id: randomUUID(),
    deployment_id: deploymentId,
    tenant_id: tenantId,
    created_at: tick(),
    expires_at: tick(),
    uploaded_at: null,
    size_bytes: null,
    sha256: null,
  };
}

export function lifecycleContract(backend: Backend): void {
  describe("revisions, reports, logs and uploads", () => {
    const db = databasePerTest(backend);
    let a: ControlPlaneStorage;
    let b: ControlPlaneStorage;

    beforeEach(() => {
      ({ a, b } = db);
    });

    it("moves revisions between statuses only from the given ones", async () => {
      const t = await newTenant(a);
      const made = await created(a, t, "moving");
      const id = made.revision.id;
      const stored = await a.revisions.latest(made.deployment.id);
      assert.equal(await a.revisions.transition(id, ["BUILDING", "DEPLOYING"], "DEPLOYED", "no", tick()), undefined);
      assert.equal(await a.revisions.transition(id, [], "DEPLOYED", "no", tick()), undefined);
      assert.equal(await a.revisions.transition("missing", ["QUEUED"], "DEPLOYED", "no", tick()), undefined);
      assert.deepEqual(await a.revisions.latest(made.deployment.id), stored);
      const at = tick();
      const moved = await b.revisions.transition(id, ["QUEUED", "CREATING"], "BUILDING", "Building image", at);
      assert.deepEqual(moved, { ...stored, status: "BUILDING", status_message: "Building image", updated_at: at });
      assert.deepEqual(await a.revisions.get(t, made.deployment.id, id), moved);
      // Concurrent transitions from the same status: exactly one wins, and only its step is in the timeline.
      const results = await Promise.all(
        [a, b, a, b].map((s, i) => s.revisions.transition(id, ["BUILDING"], "DEPLOYING", `go ${i}`, tick())),
      );
      const winners = results.filter((r) => r !== undefined);
      assert.equal(winners.length, 1);
      const events = await b.revisions.events(id);
      assert.deepEqual(
        events.map(({ revision_id, deployment_id, at, status, message }) => ({
          revision_id,
          deployment_id,
          at,
          status,
          message,
        })),
        [
          { revision_id: id, deployment_id: made.deployment.id, at: stored!.created_at, status: "QUEUED", message: "" },
          { revision_id: id, deployment_id: made.deployment.id, at, status: "BUILDING", message: "Building image" },
          {
            revision_id: id,
            deployment_id: made.deployment.id,
            at: winners[0]!.updated_at,
            status: "DEPLOYING",
            message: winners[0]!.status_message,
          },
        ],
      );
      assert.ok(events.every((event) => typeof event.id === "number"));
      assert.ok(events[0].id < events[1].id && events[1].id < events[2].id);
      assert.deepEqual(await a.revisions.events("missing"), []);
    });

    it("records an image digest with a move, and keeps it through later moves", async () => {
      const t = await newTenant(a);
      const made = await created(a, t, "digest");
      const id = made.revision.id;
      assert.equal((await a.revisions.latest(made.deployment.id))?.image_digest, null);
      const digest = "sha256:0123456789abcdef";
      const deployed = await a.revisions.transition(id, ["QUEUED"], "DEPLOYED", "Serving", tick(), { image_digest: digest });
      assert.equal(deployed?.image_digest, digest);
      const noted = await b.revisions.transition(id, ["DEPLOYED"], "DEPLOYED", "Restarted", tick());
      assert.equal(noted?.image_digest, digest);
      // A fetched commit goes into source_revision_config, beside what was there.
      const before = noted!.source_revision_config;
      const fetched = await a.revisions.transition(id, ["DEPLOYED"], "DEPLOYED", "Fetched", tick(), {
        repo_commit_sha: "a".repeat(40),
      });
      assert.deepEqual(fetched?.source_revision_config, { ...before, repo_commit_sha: "a".repeat(40) });
      assert.equal((await b.revisions.get(t, made.deployment.id, id))?.image_digest, digest);
    });

    it("records an event on the replaced revision with a move, and none when the move does not happen", async () => {
      const t = await newTenant(a);
      const made = await created(a, t, "replacing");
      await a.revisions.transition(made.revision.id, ["QUEUED"], "DEPLOYED", "Serving 1", tick());
      const next = (await a.deployments.update(t, made.deployment.id, sameWithNewRevision))!.revision!;
      const timeline = await a.revisions.events(made.revision.id);
      const replaced = { revisionId: made.revision.id, event: { type: "Normal" as const, reason: "Replaced", message: "gone" } };
      const refused = await b.revisions.transition(next.id, ["BUILDING"], "DEPLOYED", "Serving 2", tick(), {}, replaced);
      assert.equal(refused, undefined);
      assert.equal((await a.revisions.getAny(made.revision.id))?.status_message, "Serving 1");
      assert.deepEqual(await a.revisions.events(made.revision.id), timeline);

      const at = tick();
      const moved = await b.revisions.transition(next.id, ["QUEUED"], "DEPLOYED", "Serving 2", at, {}, replaced);
      assert.equal(moved?.status, "DEPLOYED");
      const first = (await a.revisions.getAny(made.revision.id))!;
      assert.equal(first.status, "DEPLOYED");
      assert.equal(first.status_message, "gone");
      const added = (await a.revisions.events(made.revision.id)).slice(timeline.length);
      assert.deepEqual(
        added.map(({ at, status, message, type, reason }) => ({ at, status, message, type, reason })),
        [{ at, status: "DEPLOYED", message: "gone", type: "Normal", reason: "Replaced" }],
      );
    });

    it("finds a deployment's revisions in given statuses, newest first, and any revision by id", async () => {
      const t = await newTenant(a);
      const made = await created(a, t, "statuses");
      const other = await created(a, t, "other");
      const next = (await a.deployments.update(t, made.deployment.id, sameWithNewRevision))!.revision!;
      // Revision 1 was superseded by 2; 2 moves on to BUILDING.
      const building = (await a.revisions.transition(next.id, ["QUEUED"], "BUILDING", "b", tick()))!;
      const first = (await a.revisions.getAny(made.revision.id))!;
      assert.equal(first.status, "SKIPPED");
      assert.deepEqual(await b.revisions.inStatuses(made.deployment.id, IN_PROGRESS_REVISION_STATUSES), [building]);
      assert.deepEqual(await b.revisions.inStatuses(made.deployment.id, ["SKIPPED", "BUILDING"]), [building, first]);
      assert.deepEqual(await b.revisions.inStatuses(made.deployment.id, ["DEPLOYED"]), []);
      assert.deepEqual(await b.revisions.inStatuses(made.deployment.id, []), []);
      assert.deepEqual(await b.revisions.inStatuses("missing", ["QUEUED"]), []);
      // Whatever the workspace and whether the deployment is deleted.
      await a.deployments.markDeleted(t, [other.deployment.id], false, tick());
      assert.equal((await b.revisions.getAny(other.revision.id))?.deployment_id, other.deployment.id);
      assert.equal(await b.revisions.getAny("missing"), undefined);
    });

    it("reports, assigns and purges deployments", async () => {
      const t = await newTenant(a);
      const listener = newListener(t, "cluster");
      await a.listeners.create(listener);
      const onListener = await created(a, t, "on-listener", { sourceConfig: { listener_id: listener.id } });
      const embedded = await created(a, t, "embedded");
      assert.deepEqual(await b.deployments.assigned(listener.id), [onListener.stored]);
      assert.ok((await b.deployments.assigned(null)).some((d) => d.id === embedded.deployment.id));
      assert.ok(!(await b.deployments.assigned(null)).some((d) => d.id === onListener.deployment.id));

      const at = tick();
      await b.deployments.report(
        onListener.deployment.id,
        { status: "READY", custom_url: "https://x.example", image_version: "v1" },
        at,
      );
      assert.deepEqual(await a.deployments.get(t, onListener.deployment.id), {
        ...onListener.stored,
        status: "READY",
        image_version: "v1",
        source_config: { ...onListener.stored.source_config, custom_url: "https://x.example" },
        updated_at: at,
      });

      // Everything of the deployment goes; other deployments keep theirs.
      const id = onListener.deployment.id;
      await a.logs.append([
        {
          deployment_id: id,
          revision_id: onListener.revision.id,
          kind: "build",
          timestamp: tick(),
          level: "info",
          message: "one",
        },
        {
          deployment_id: embedded.deployment.id,
          revision_id: null,
          kind: "deploy",
          timestamp: tick(),
          level: "info",
          message: "two",
        },
      ]);
      await a.revisions.transition(onListener.revision.id, ["QUEUED"], "BUILDING", "b", tick());
      const upload = newUpload(t, id, `uploads/${id}/src.tar.gz`);
      await a.uploads.create(upload);
      /** What is stored of a deployment, read through the stores. */
      const counts = async (made: typeof onListener, uploadId?: string) => {
        const logs = (kind: "build" | "deploy") =>
          a.logs.query({ deployment_id: made.deployment.id, kind, order: "asc", limit: 100, offset: 0 });
        return {
          events: (await a.revisions.events(made.revision.id)).length,
          logs: (await logs("build")).length + (await logs("deploy")).length,
          uploads: uploadId && (await a.uploads.getById(uploadId)) ? 1 : 0,
          revisions: (await a.revisions.getAny(made.revision.id)) ? 1 : 0,
          deployments: (await a.deployments.getAny(made.deployment.id)) ? 1 : 0,
        };
      };
      assert.deepEqual(await counts(onListener, upload.upload_id), {
        events: 2,
        logs: 1,
        uploads: 1,
        revisions: 1,
        deployments: 1,
      });
      await a.deployments.markDeleted(t, [id], false, tick());
      await b.deployments.report(id, { status: "READY" }, tick());
      assert.equal((await a.deployments.getAny(id))?.status, "AWAITING_DELETE");
      assert.deepEqual(await b.deployments.assigned(listener.id), [await a.deployments.getAny(id)]);
      await Promise.all([a.deployments.purge(id), b.deployments.purge(id)]);
      assert.deepEqual(await counts(onListener, upload.upload_id), {
        events: 0,
        logs: 0,
        uploads: 0,
        revisions: 0,
        deployments: 0,
      });
      assert.equal(await a.revisions.latest(id), undefined);
      assert.deepEqual(await counts(embedded), { events: 1, logs: 1, uploads: 0, revisions: 1, deployments: 1 });
      assert.equal((await a.tracingProjects.getByName(t, "on-listener"))?.deployment_id, null);
      assert.deepEqual(await b.deployments.assigned(listener.id), []);
      assert.equal(await a.listeners.delete(t, listener.id), true);
      // A report of a deployment that is gone changes nothing.
      await b.deployments.report(id, { status: "READY" }, tick());
      assert.equal(await a.deployments.getAny(id), undefined);
    });

    it("numbers a batch of log lines in the order given", async () => {
      const t = await newTenant(a);
      const made = await created(a, t, "chatty");
      const entries = Array.from({ length: 1500 }, (_, i) => ({
        deployment_id: made.deployment.id,
        revision_id: i % 3 ? made.revision.id : null,
        kind: "deploy" as const,
        timestamp: new Date(BASE - i * 1000).toISOString(), // later lines may carry earlier times
        level: "info",
        message: `line ${i}`,
      }));
      await a.logs.append(entries);
      const page = (order: "asc" | "desc", offset: number) =>
        b.logs.query({ deployment_id: made.deployment.id, kind: "deploy", order, limit: 1000, offset });
      const asc = [...(await page("asc", 0)), ...(await page("asc", 1000))];
      assert.deepEqual(
        asc.map(({ id: _id, ...entry }) => entry),
        entries,
      );
      assert.ok(asc.every((line, i) => i === 0 || line.id > asc[i - 1].id));
      assert.deepEqual((await page("desc", 0)).map((line) => line.message).slice(0, 2), ["line 1499", "line 1498"]);
    });

    it("filters log lines by kind, revision, level, message substring and time", async () => {
      const t = await newTenant(a);
      const made = await created(a, t, "logged");
      const later = `r-${randomUUID()}`;
      const at = (seconds: number) => new Date(BASE + seconds * 1000).toISOString();
      const line = (revisionId: string | null, kind: "build" | "deploy", seconds: number, level: string, message: string) => ({
        deployment_id: made.deployment.id,
        revision_id: revisionId,
        kind,
        timestamp: at(seconds),
        level,
        message,
      });
      await a.logs.append([
        line(made.revision.id, "build", 1, "info", "Building image"),
        line(made.revision.id, "build", 2, "error", "Build ERROR: exit 1"),
        line(later, "build", 3, "warn", "100% of layer_2 cached"),
        line(later, "deploy", 4, "info", "Server started"),
        line(null, "deploy", 5, "error", "Unhandled error in run"),
      ]);
      await a.logs.append([]);
      const messages = async (filter: Partial<LogFilter>) =>
        (
          await b.logs.query({ deployment_id: made.deployment.id, kind: "build", order: "asc", limit: 100, offset: 0, ...filter })
        ).map((entry) => entry.message);
      assert.deepEqual(await messages({}), ["Building image", "Build ERROR: exit 1", "100% of layer_2 cached"]);
      assert.deepEqual(await messages({ order: "desc", limit: 1, offset: 1 }), ["Build ERROR: exit 1"]);
      assert.deepEqual(await messages({ revision_id: later }), ["100% of layer_2 cached"]);
      assert.deepEqual(await messages({ level: "error" }), ["Build ERROR: exit 1"]);
      // A case-insensitive substring: % and _ are themselves.
      assert.deepEqual(await messages({ query: "error" }), ["Build ERROR: exit 1"]);
      assert.deepEqual(await messages({ query: "%" }), ["100% of layer_2 cached"]);
      assert.deepEqual(await messages({ query: "r_2" }), ["100% of layer_2 cached"]);
      assert.deepEqual(await messages({ start_time: at(2), end_time: at(3) }), ["Build ERROR: exit 1", "100% of layer_2 cached"]);
      assert.deepEqual(await messages({ kind: "deploy", order: "desc" }), ["Unhandled error in run", "Server started"]);
      assert.deepEqual(await messages({ kind: "deploy", query: "ERROR" }), ["Unhandled error in run"]);
      assert.deepEqual(await messages({ deployment_id: "missing" }), []);
    });

    it("stores uploads", async () => {
      const t = await newTenant(a);
      const made = await created(a, t, "uploading");
      const upload = newUpload(t, made.deployment.id, `uploads/${t}/${made.deployment.id}/src.tar.gz`);
      await a.uploads.create(upload);
      assert.deepEqual(await a.uploads.getById(upload.upload_id), upload);
      assert.deepEqual(await a.uploads.getByPath(upload.object_path), upload);
      assert.equal(await a.uploads.getById("missing"), undefined);
      assert.equal(await a.uploads.getByPath("missing"), undefined);
      const at = tick();
      await a.uploads.markUploaded(upload.upload_id, 5_000_000_000, "ab".repeat(32), at);
      const done = { ...upload, uploaded_at: at, size_bytes: 5_000_000_000, sha256: "ab".repeat(32) };
      assert.deepEqual(await b.uploads.getById(upload.upload_id), done);
      assert.deepEqual(await b.uploads.getByPath(upload.object_path), done);
    });

    it("tells whether a revision deploys an uploaded tarball", async () => {
      const t = await newTenant(a);
      const made = await created(a, t, "from-source");
      const path = `uploads/${t}/${made.deployment.id}/src.tar.gz`;
      await a.uploads.create(newUpload(t, made.deployment.id, path));
      assert.equal(await b.uploads.isUsed(path), false);
      await a.deployments.update(t, made.deployment.id, (d, latest) => ({
        source_config: d.source_config,
        secret_references: d.secret_references,
        updated_at: tick(),
        revision: { ...nextRevision(latest), source_revision_config: { source_tarball_path: path } },
      }));
      assert.equal(await b.uploads.isUsed(path), true);
      assert.equal(await b.uploads.isUsed(`${path}.other`), false);
    });
  });
}
