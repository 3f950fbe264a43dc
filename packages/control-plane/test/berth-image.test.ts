// Berth's own image (scripts/berth-image.sh, from the package tarballs) runs the control plane of deploy/kubernetes:
// `podman kube play` starts that Deployment with its PostgreSQL, a project is deployed through the API in the pod,
// and a streamed run is served through the deployment's stable URL. What podman cannot do as a cluster would is
// adapted here, and only that (docs/production.md, "What was verified"): the pod takes the host's network (kube play
// has no Services; the test's PostgreSQL listens on loopback), so the control plane and its router get free ports;
// the database is the test's PostgreSQL, not the manifests' StatefulSet (kube play does not run StatefulSets); the
// Secret is handed to podman as a podman secret (podman 4.3 cannot read back a `kind: Secret` document); and, with no
// Kubernetes API for a cluster listener, the control plane runs its embedded listener (no `--no-listener`), which runs
// the project as a plain process: the pod's non-root user cannot sandbox it (docs/security.md, "Without a sandbox").
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { promisify } from "node:util";
import { after, before, describe, test } from "node:test";
import { type KubernetesObject, dumpYaml, loadAllYaml } from "@kubernetes/client-node";
import { Client } from "@langchain/langgraph-sdk";
import {
  api,
  backendEnv,
  type Deployment,
  deployTarball,
  finalRevision,
  freePort,
  newDataDir,
  packFixture,
  REPO_ROOT,
  TEST_BACKEND,
  uniqueName,
} from "@berth/test-support";
import { containerEngine } from "@berth/test-support/container-engine";

const run = promisify(execFile);
const engine = await containerEngine();
const registry = process.env.BERTH_TEST_REGISTRY ?? "";
const podmanWorks = spawnSync("podman", ["info"], { stdio: "ignore" }).status === 0;
const skip =
  engine.skip ||
  (!registry && "BERTH_TEST_REGISTRY (a loopback registry, see scripts/container-engine.sh) is not set") ||
  (!podmanWorks && "podman is not installed or does not work (scripts/container-engine.sh sets it up)") ||
  (TEST_BACKEND !== "postgres" && "the control plane's state is in PostgreSQL: this runs in the PostgreSQL + Redis pass");
if (skip) process.stderr.write(`\n*** SKIPPED: Berth's image played from deploy/kubernetes: ${skip} ***\n\n`);

const MANIFESTS = join(REPO_ROOT, "deploy", "kubernetes");

type Probe = { httpGet?: { path: string; port: number | string } };
type Container = {
  name: string;
  image: string;
  args?: string[];
  env?: { name: string; value?: string }[];
  ports?: unknown;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  securityContext?: { allowPrivilegeEscalation?: boolean; readOnlyRootFilesystem?: boolean };
};
type Workload = KubernetesObject & {
  spec: { template: { spec: { hostNetwork?: boolean; securityContext?: { runAsUser?: number }; containers: Container[] } } };
};

async function podman(...args: string[]): Promise<string> {
  const { stdout } = await run("podman", args, { maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

/**
 * The image under test: BERTH_IMAGE when CI built it already (.ci/run), else built here by scripts/berth-image.sh
 * from BERTH_PACKS_DIR's tarballs, or from those `npm run pack` writes to a folder of the test's own.
 */
async function berthImage(): Promise<string> {
  if (process.env.BERTH_IMAGE) return process.env.BERTH_IMAGE;
  let packs = process.env.BERTH_PACKS_DIR;
  if (!packs) {
    packs = mkdtempSync(join(tmpdir(), "berth-image-packs-"));
    await run("npm", ["run", "pack", "--", "--out", packs], { cwd: REPO_ROOT, maxBuffer: 64 * 1024 * 1024 });
  }
  const { stdout } = await run(join(REPO_ROOT, "scripts", "berth-image.sh"), ["berth/berth:test"], {
    cwd: REPO_ROOT,
    env: { ...process.env, BERTH_PACKS_DIR: packs },
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout.trim();
}

/** The control plane answers /ok, or its container's output explains why not. */
async function waitForOk(url: string, container: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const answered = await fetch(`${url}/ok`).then(
      (response) => response.ok,
      () => false,
    );
    if (answered) return;
    const state = (await podman("inspect", container, "--format", "{{.State.Status}}").catch(() => "")).trim();
    if (state === "exited") break;
    await delay(250);
  }
  const logs = await podman("logs", container).catch((error: Error) => error.message);
  assert.fail(`${url}/ok never answered; ${container} said:\n${logs}`);
}

describe("Berth's image runs the control plane of deploy/kubernetes, which deploys and serves a project", { skip }, () => {
  let played: string | undefined;
  let secretName: string | undefined;
  let volumeName: string | undefined;
  let controlPlane: Workload;
  let image = "";

  before(async () => {
    const kustomization = loadAllYaml(readFileSync(join(MANIFESTS, "kustomization.yaml"), "utf8"))[0] as {
      resources: string[];
      images: { name: string }[];
    };
    const objects = kustomization.resources.flatMap(
      (file) => loadAllYaml(readFileSync(join(MANIFESTS, file), "utf8")) as KubernetesObject[],
    );
    controlPlane = objects.find((o) => o.kind === "Deployment" && o.metadata?.name === "berth-control-plane") as Workload;
    assert.ok(controlPlane, "deploy/kubernetes has the control plane's Deployment");
    // Every Berth workload of the manifests runs the image kustomize points at Berth's.
    assert.deepEqual(
      kustomization.images.map((entry) => entry.name),
      ["berth"],
    );
    const berthContainers = objects
      .filter((o) => o.kind === "Deployment")
      .flatMap((o) => (o as Workload).spec.template.spec.containers);
    assert.ok(berthContainers.length >= 2 && berthContainers.every((c) => c.image === "berth"));

    // Built from the tarballs, then pushed to the registry as an operator pushes it to theirs.
    const built = await berthImage();
    image = `${registry}/berth-test/berth:${Date.now()}`;
    await run("docker", ["tag", built, image]);
    await run("docker", ["push", image], { maxBuffer: 16 * 1024 * 1024 });
  });

  after(async () => {
    if (played) await podman("kube", "down", played).catch(() => undefined);
    if (secretName) await podman("secret", "rm", secretName).catch(() => undefined);
    if (volumeName) await podman("volume", "rm", "--force", volumeName).catch(() => undefined);
    if (image) {
      await podman("rmi", image).catch(() => undefined);
      await run("docker", ["rmi", image]).catch(() => undefined);
    }
  });

  test("the image is Berth's: non-root, with `berth` as its entrypoint", async () => {
    const [inspected] = JSON.parse((await run("docker", ["image", "inspect", image])).stdout) as {
      Config: { User: string; Entrypoint: string[] };
    }[];
    assert.equal(inspected!.Config.User, "10001:10001");
    assert.deepEqual(inspected!.Config.Entrypoint, ["berth"]);
    const help = await run("docker", ["run", "--rm", "--network", "none", image, "--help"]);
    assert.match(help.stdout + help.stderr, /control-plane/);
  });

  test("kube play serves the control plane, which deploys a project and streams a run at its stable URL", async () => {
    const [cpPort, routerPort] = [await freePort(), await freePort()];
    const adminKey = `berth_${randomBytes(24).toString("hex")}`;
    const tenantId = randomUUID();
    const database = await backendEnv(newDataDir("berth-image-db-"));
    assert.ok(database.DATABASE_URL, "a PostgreSQL database for the control plane");

    // The Secret the manifests' comment says to create, as podman 4.3 reads a secret: a JSON map to base64 values.
    const values: Record<string, string> = {
      DATABASE_URL: database.DATABASE_URL,
      BERTH_ADMIN_API_KEY: adminKey,
      BERTH_DEFAULT_TENANT_ID: tenantId,
      BERTH_SECRETS_KEY: randomBytes(32).toString("hex"),
    };
    const workDir = mkdtempSync(join(tmpdir(), "berth-image-"));
    const secretFile = join(workDir, "secret.json");
    writeFileSync(
      secretFile,
      JSON.stringify(
        Object.fromEntries(Object.entries(values).map(([name, value]) => [name, Buffer.from(value).toString("base64")])),
      ),
    );
    secretName = "berth-control-plane";
    await podman("secret", "rm", secretName).catch(() => undefined);
    await podman("secret", "create", secretName, secretFile);

    const pod = structuredClone(controlPlane);
    const spec = pod.spec.template.spec;
    spec.hostNetwork = true;
    const [container] = spec.containers;
    assert.ok(container);
    container.image = image;
    delete container.ports;
    for (const probe of [container.readinessProbe, container.livenessProbe]) if (probe?.httpGet) probe.httpGet.port = cpPort;
    const args = container.args ?? [];
    assert.deepEqual(args.slice(0, 1), ["control-plane"]);
    assert.ok(args.includes("--no-listener"), "the manifests' control plane leaves deployments to the cluster listener");
    container.args = args
      .filter((arg) => arg !== "--no-listener")
      .map((arg, index, all) => (all[index - 1] === "--port" ? String(cpPort) : arg))
      .concat("--router-port", String(routerPort));
    for (const variable of container.env ?? [])
      if (variable.name === "BERTH_CONTROL_PLANE_URL") variable.value = `http://127.0.0.1:${cpPort}`;
    // The router listens where the control plane does (0.0.0.0): deployment URLs name the address clients use.
    container.env = [...(container.env ?? []), { name: "BERTH_ROUTER_PUBLIC_URL", value: `http://127.0.0.1:${routerPort}` }];
    const claim = (loadAllYaml(readFileSync(join(MANIFESTS, "control-plane.yaml"), "utf8")) as KubernetesObject[]).find(
      (o) => o.kind === "PersistentVolumeClaim",
    );
    assert.ok(claim, "the control plane's uploads are on a volume");
    volumeName = claim.metadata!.name!;
    played = join(workDir, "control-plane.yaml");
    writeFileSync(played, [claim, pod].map((object) => dumpYaml(object)).join("---\n"));
    await podman("kube", "play", played);

    const containerName = `${pod.metadata!.name}-pod-0-${container.name}`;
    const cpUrl = `http://127.0.0.1:${cpPort}`;
    await waitForOk(cpUrl, containerName);

    // The manifests' protections hold in the running container.
    const [inspected] = JSON.parse(await podman("inspect", containerName)) as {
      Config: { User: string };
      HostConfig: { ReadonlyRootfs: boolean; SecurityOpt: string[] };
    }[];
    assert.match(inspected!.Config.User, new RegExp(`^${spec.securityContext?.runAsUser}(:|$)`));
    assert.equal(inspected!.HostConfig.ReadonlyRootfs, true);
    assert.ok(inspected!.HostConfig.SecurityOpt.includes("no-new-privileges"), inspected!.HostConfig.SecurityOpt.join(","));

    // The dashboard is served from the image.
    const dashboard = await fetch(`${cpUrl}/`);
    assert.equal(dashboard.status, 200);
    assert.match(await dashboard.text(), /<div id="root">|<script/);

    const admin = api(cpUrl, adminKey, tenantId);
    const { deployment, revisionId } = await deployTarball(admin, uniqueName("image"), packFixture("deploy-app"), {
      secrets: [{ name: "GREETING", value: "from the pod" }],
    });
    const revision = await finalRevision(admin, deployment.id, revisionId);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    // The pod's non-root user cannot sandbox, and the listener says so (docs/security.md).
    assert.match(await podman("logs", containerName), /NO SANDBOX/);
    const current = await admin.get<Deployment>(`/v2/deployments/${deployment.id}`);
    const url = current.body.source_config.custom_url ?? "";
    assert.equal(url, `http://127.0.0.1:${routerPort}/d/${deployment.id}`);

    const client = new Client({ apiUrl: url, apiKey: adminKey });
    const thread = await client.threads.create();
    const states: unknown[] = [];
    for await (const part of client.runs.stream(thread.thread_id, "agent", {
      input: { messages: [{ type: "human", content: "hello" }] },
      streamMode: "values",
    })) {
      if (part.event === "values") states.push(part.data);
    }
    const last = states.at(-1) as { messages: { content: string }[] } | undefined;
    assert.equal(last?.messages.at(-1)?.content, "from the pod: hello", JSON.stringify(states));
  });
});
