import assert from "node:assert/strict";
import { statSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import {
  type ControlPlane,
  type Deployment,
  type Revision,
  deployTarball,
  finalRevision,
  newDataDir,
  packFixture,
  revisionsOf,
  runBerth,
  startControlPlane,
  uniqueName,
} from "@berth/test-support";

/** `berth backup` copies the embedded SQLite data: this test runs it on SQLite whatever the suite's backend. */
const SQLITE = { DATABASE_URL: undefined, REDIS_URL: undefined };

interface Conversation {
  deploymentId: string;
  threadId: string;
  runId: string;
}

/** One thread with one finished run on the deployment's URL. */
async function converse(client: Client, deploymentId: string, text: string): Promise<Conversation> {
  const thread = await client.threads.create();
  const run = await client.runs.create(thread.thread_id, "agent", { input: { messages: [{ type: "human", content: text }] } });
  await client.runs.join(thread.thread_id, run.run_id);
  return { deploymentId, threadId: thread.thread_id, runId: run.run_id };
}

/** How long the restored listener may take to rebuild and start a deployment's serving revision. */
const SERVE_AGAIN_MS = 300_000;

/**
 * Waits until the restored listener serves the deployment again: its revision is DEPLOYED in the restored database
 * already, so the only sign is its URL answering (the listener rebuilds it from the restored upload first).
 */
async function servedAgain(cp: ControlPlane, deployment: Deployment): Promise<Revision> {
  const latest = (await cp.admin.get<Deployment>(`/v2/deployments/${deployment.id}`)).body.latest_revision_id!;
  const revision = await finalRevision(cp.admin, deployment.id, latest);
  const deadline = Date.now() + SERVE_AGAIN_MS;
  for (;;) {
    const answer = await fetch(`${cp.routerUrl}/d/${deployment.id}/ok`).catch(() => undefined);
    if (answer?.status === 200) return revision;
    if (Date.now() > deadline) throw new Error(`${deployment.id} is not served again:\n${cp.output().slice(-4000)}`);
    // The router has no event to wait for: poll its answer.
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

test("berth backup under load, then restore into a new directory: every deployment, revision, thread and run is there", async () => {
  const cp = await startControlPlane({ listener: true, env: SQLITE });
  let restored: ControlPlane | undefined;
  const clients = new Map<string, Client>();
  try {
    // Two deployments, one with two revisions and a secret its graph answers with.
    const greeted = await deployTarball(cp.admin, uniqueName("backup-a"), packFixture("deploy-app"), {
      secrets: [{ name: "GREETING", value: "restored-secret" }],
    });
    assert.equal((await finalRevision(cp.admin, greeted.deployment.id, greeted.revisionId)).status, "DEPLOYED");
    const plain = await deployTarball(cp.admin, uniqueName("backup-b"), packFixture("deploy-app"));
    assert.equal((await finalRevision(cp.admin, plain.deployment.id, plain.revisionId)).status, "DEPLOYED");
    const redeployed = await cp.admin.patch<Deployment>(`/v2/deployments/${greeted.deployment.id}`, {
      secrets: [{ name: "GREETING", value: "restored-secret" }],
    });
    assert.equal(redeployed.status, 200, JSON.stringify(redeployed.body));
    const second = await finalRevision(cp.admin, greeted.deployment.id, redeployed.body.latest_revision_id!);
    assert.equal(second.status, "DEPLOYED", second.status_message ?? undefined);
    const deployments = [greeted.deployment, plain.deployment];
    for (const deployment of deployments) {
      clients.set(deployment.id, new Client({ apiUrl: `${cp.routerUrl}/d/${deployment.id}`, apiKey: cp.adminKey }));
    }
    const revisionsBefore = new Map<string, string[]>();
    for (const deployment of deployments) {
      revisionsBefore.set(deployment.id, (await revisionsOf(cp.admin, deployment.id)).map((revision) => revision.id).sort());
    }

    const before: Conversation[] = [];
    for (const deployment of deployments) {
      for (let i = 0; i < 3; i++) before.push(await converse(clients.get(deployment.id)!, deployment.id, `before ${i}`));
    }

    // Under load: each deployment keeps serving runs while the backup copies its database.
    let loading = true;
    const during: Conversation[] = [];
    let underWay!: () => void;
    const loadStarted = new Promise<void>((resolve) => (underWay = resolve));
    const load = deployments.map(async (deployment) => {
      for (let i = 0; loading; i++) {
        during.push(await converse(clients.get(deployment.id)!, deployment.id, `during ${i}`));
        if (during.length >= 2) underWay();
      }
    });
    const file = join(newDataDir("berth-backup-file-"), "berth.tar.gz");
    // The backup starts once the load is under way, and runs go on being written while it copies.
    await Promise.race([loadStarted, Promise.all(load)]);
    const backup = await runBerth(["backup", cp.dataDir, file]);
    loading = false;
    await Promise.all(load);
    assert.equal(backup.code, 0, `${backup.stdout}\n${backup.stderr}`);
    assert.match(backup.stdout, /3 database\(s\), 2 of them deployments'/);
    assert.match(backup.stdout, /secrets\.key/);
    assert.equal(statSync(file).mode & 0o777, 0o600, "the file holds the keys: its owner's only");
    await cp.stop();

    const dataDir = newDataDir("berth-restored-");
    const restore = await runBerth(["restore", file, dataDir]);
    assert.equal(restore.code, 0, `${restore.stdout}\n${restore.stderr}`);
    const again = await runBerth(["restore", file, dataDir]);
    assert.equal(again.code, 1, "a restore never mixes with a directory's contents");
    assert.match(again.stderr, /not empty/);

    restored = await startControlPlane({
      listener: true,
      env: SQLITE,
      dataDir,
      adminKey: cp.adminKey,
      defaultTenantId: cp.defaultTenantId,
    });
    const listed = await restored.admin.get<{ resources: Deployment[] }>("/v2/deployments?limit=100");
    assert.deepEqual(
      listed.body.resources.map((deployment) => deployment.id).sort(),
      deployments.map((deployment) => deployment.id).sort(),
    );
    for (const deployment of deployments) {
      const revisions = (await revisionsOf(restored.admin, deployment.id)).map((revision) => revision.id).sort();
      assert.deepEqual(revisions, revisionsBefore.get(deployment.id));
      // The listener rebuilds the serving revision from the restored upload, with its secrets decrypted by the restored key.
      const serving = await servedAgain(restored, deployment);
      assert.equal(serving.status, "DEPLOYED", serving.status_message ?? undefined);
    }

    const client = (deploymentId: string) =>
      new Client({ apiUrl: `${restored!.routerUrl}/d/${deploymentId}`, apiKey: restored!.adminKey });
    for (const { deploymentId, threadId, runId } of before) {
      const run = await client(deploymentId).runs.get(threadId, runId);
      assert.equal(run.status, "success", `run ${runId} of ${deploymentId}`);
      const state = await client(deploymentId).threads.getState<{ messages: { content: string }[] }>(threadId);
      assert.equal(state.values.messages.length, 2);
    }
    // What the load wrote while the backup ran is there as one committed transaction left it: a run found is whole.
    for (const { deploymentId, threadId, runId } of during) {
      const thread = await client(deploymentId)
        .threads.get(threadId)
        .catch(() => undefined);
      if (!thread) continue;
      const runs = await client(deploymentId).runs.list(threadId);
      for (const run of runs) assert.ok(run.thread_id === threadId && run.run_id, `run ${runId}`);
    }
    const greeting = await client(greeted.deployment.id).runs.wait(null, "agent", {
      input: { messages: [{ type: "human", content: "hi" }] },
    });
    assert.match(JSON.stringify(greeting), /restored-secret: hi/, "the restored key decrypts the deployment's secret");
  } finally {
    await cp.stop();
    await restored?.stop();
  }
});

test("berth restore refuses what is not a backup, and backup refuses a directory without Berth data", async () => {
  const empty = newDataDir("berth-backup-empty-");
  const refused = await runBerth(["backup", empty, join(empty, "x.tar.gz")]);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /holds no Berth SQLite database/);
  const notBackup = join(empty, "not-a-backup.tar");
  const { create } = await import("tar");
  await create({ file: notBackup, cwd: join(import.meta.dirname, "..") }, ["package.json"]);
  const result = await runBerth(["restore", notBackup, join(empty, "restored")]);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /not a Berth backup/);
});
