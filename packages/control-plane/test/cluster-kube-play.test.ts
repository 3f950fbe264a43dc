// The API and worker Deployments a cluster listener renders really run: `berth listener --render` prints them for a
// Berth image built by a docker listener, and `podman kube play` starts them as pods that serve /ok and a streamed
// run. What podman cannot do as a cluster would is adapted here, and only that (docs/cluster.md, "Trying the
// rendered objects with podman"): the pods take the host's network (kube play has no Services, and the test's
// PostgreSQL and Redis listen on loopback), so each gets its own PORT; the env Secret's database URLs point at the
// test's databases instead of the rendered StatefulSets (kube play does not run StatefulSets); and the Secret is
// handed to podman as a podman secret (podman 4.3 cannot read back a `kind: Secret` document it was given).
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { promisify } from "node:util";
import { after, before, describe, test } from "node:test";
import { type KubernetesObject, loadAllYaml, dumpYaml } from "@kubernetes/client-node";
import { Client } from "@langchain/langgraph-sdk";
import {
  backendEnv,
  type ControlPlane,
  createDeployment,
  newDataDir,
  startControlPlane,
  TEST_BACKEND,
  uniqueName,
  freePort,
} from "@berth/test-support";
import { deployTarball, finalRevision, packFixture } from "@berth/test-support";
import { containerEngine } from "@berth/test-support/container-engine";
import { listenerArgsFor, runListenerCommand } from "./helpers/listener-process.js";

const run = promisify(execFile);
const engine = await containerEngine();
const registry = process.env.BERTH_TEST_REGISTRY ?? "";
const podmanWorks = spawnSync("podman", ["info"], { stdio: "ignore" }).status === 0;
const skip =
  engine.skip ||
  (!registry && "BERTH_TEST_REGISTRY (a loopback registry, see scripts/container-engine.sh) is not set") ||
  (!podmanWorks && "podman is not installed or does not work (scripts/container-engine.sh sets it up)") ||
  (TEST_BACKEND !== "postgres" && "the pods need PostgreSQL and Redis: this runs in the PostgreSQL + Redis pass");
if (skip) process.stderr.write(`\n*** SKIPPED: podman kube play of the rendered Deployments: ${skip} ***\n\n`);

type PodSpec = {
  hostNetwork?: boolean;
  containers: {
    name: string;
    env?: { name: string; value?: string }[];
    ports?: unknown;
    securityContext?: { allowPrivilegeEscalation?: boolean; readOnlyRootFilesystem?: boolean };
    resources?: { limits?: Record<string, string> };
  }[];
};
type Workload = KubernetesObject & { spec: { template: { spec: PodSpec } } };
type Secret = KubernetesObject & { data?: Record<string, string>; stringData?: Record<string, string> };

async function podman(...args: string[]): Promise<string> {
  const { stdout } = await run("podman", args, { maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

/** The pod answers /ok, or its container's output explains why not. */
async function waitForOk(url: string, container: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const answered = await fetch(`${url}/ok`).then(
      (response) => response.ok,
      () => false,
    );
    if (answered) return;
    const state = (await podman("inspect", container, "--format", "{{.State.Status}}")).trim();
    if (state === "exited") break;
    await delay(250);
  }
  const logs = await podman("logs", container).catch((error: Error) => error.message);
  assert.fail(`${url}/ok never answered; ${container} said:\n${logs}`);
}

describe("podman kube play runs the API and worker Deployments a cluster listener renders", { skip }, () => {
  let cp: ControlPlane;
  let workDir: string;
  let objects: KubernetesObject[] = [];
  let played: string | undefined;
  let secretName: string | undefined;

  before(async () => {
    cp = await startControlPlane({
      listener: true,
      env: { BERTH_LISTENER_COMPUTE: "docker", BERTH_CONTAINER_ENGINE: engine.address },
    });
    const docker = engine.docker!;
    // The image: a project built by a docker listener, pushed to the registry as a user pushes their own.
    const built = await deployTarball(cp.admin, uniqueName("kube-built"), packFixture("deploy-app"), {
      secrets: [{ name: "GREETING", value: "built" }],
    });
    const revision = await finalRevision(cp.admin, built.deployment.id, built.revisionId);
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    const [container] = await docker.listContainers({ filters: { label: [`berth.deployment=${built.deployment.id}`] } });
    const image = `${registry}/berth-test/kube-play-${Date.now()}:v1`;
    await docker.getImage(container!.Image).tag({ repo: image.slice(0, image.lastIndexOf(":")), tag: "v1" });
    const pushed = await docker.getImage(image).push({ authconfig: { serveraddress: registry } });
    await new Promise((resolve, reject) =>
      docker.modem.followProgress(pushed, (failed, events: { error?: string }[]) =>
        failed || events.some((event) => event.error) ? reject(failed ?? new Error(JSON.stringify(events))) : resolve(undefined),
      ),
    );

    // A cluster listener, registered; only its --render runs.
    const listener = await cp.admin.post<{ id: string }>("/v2/listeners", {
      compute_type: "cluster",
      compute_id: uniqueName("kube-play"),
      compute_config: { cluster_namespaces: ["agents"] },
    });
    assert.equal(listener.status, 201, JSON.stringify(listener.body));
    const deployment = await createDeployment(cp.admin, {
      name: uniqueName("kube-play"),
      source: "external_image",
      source_config: {
        listener_id: listener.body.id,
        listener_config: { cluster_namespace: "agents" },
        resource_spec: { min_scale: 1, max_scale: 2 },
      },
      source_revision_config: { image_uri: image },
      secrets: [{ name: "GREETING", value: "played" }],
    });
    const rendered = await runListenerCommand([
      ...listenerArgsFor(cp, listener.body.id, newDataDir("berth-kube-play-")),
      "--compute",
      "cluster",
      "--cluster-namespace",
      "agents",
      "--render",
      deployment.id,
    ]);
    assert.equal(rendered.code, 0, rendered.stderr);
    objects = loadAllYaml(rendered.stdout) as KubernetesObject[];
    workDir = mkdtempSync(join(tmpdir(), "berth-kube-play-"));
  });

  after(async () => {
    if (played) await podman("kube", "down", played).catch(() => undefined);
    if (secretName) await podman("secret", "rm", secretName).catch(() => undefined);
    await cp?.stop();
  });

  test("the API pod serves /ok and a streamed run, which its worker pod executes", async () => {
    const workload = (component: string) =>
      objects.find((o) => o.kind === "Deployment" && o.metadata?.labels?.["berth.dev/component"] === component) as Workload;
    const [api, queue] = [workload("api"), workload("queue")];
    const secret = objects.find((o) => o.kind === "Secret" && o.metadata?.name?.endsWith("-env")) as Secret;
    assert.ok(api && queue && secret, `rendered: ${objects.map((o) => `${o.kind}/${o.metadata?.name}`).join(", ")}`);

    // The Secret's values, with the database URLs of the test's PostgreSQL and Redis, as podman 4.3 reads a secret.
    const values: Record<string, string> = { ...secret.stringData };
    for (const [name, encoded] of Object.entries(secret.data ?? {})) values[name] = Buffer.from(encoded, "base64").toString();
    assert.equal(values.GREETING, "played");
    assert.match(values.DATABASE_URL ?? "", /@berth-[0-9a-f]{8}-db:5432\//, "rendered for the cluster's database");
    const databases = await backendEnv(newDataDir("berth-kube-play-db-"));
    Object.assign(values, databases, { DATABASE_URI: databases.DATABASE_URL, REDIS_URI: databases.REDIS_URL });
    secretName = secret.metadata!.name!;
    const secretFile = join(workDir, "secret.json");
    writeFileSync(
      secretFile,
      JSON.stringify(
        Object.fromEntries(Object.entries(values).map(([name, value]) => [name, Buffer.from(String(value)).toString("base64")])),
      ),
    );
    await podman("secret", "rm", secretName).catch(() => undefined);
    await podman("secret", "create", secretName, secretFile);

    const ports: Record<string, number> = { api: await freePort(), queue: await freePort() };
    for (const [component, object] of [
      ["api", api],
      ["queue", queue],
    ] as const) {
      const pod = object.spec.template.spec;
      pod.hostNetwork = true;
      for (const container of pod.containers) {
        delete container.ports;
        for (const variable of container.env ?? []) if (variable.name === "PORT") variable.value = String(ports[component]);
      }
    }
    played = join(workDir, "deployments.yaml");
    writeFileSync(played, [api, queue].map((object) => dumpYaml(object)).join("---\n"));
    await podman("kube", "play", played);

    const apiUrl = `http://127.0.0.1:${ports.api}`;
    await waitForOk(apiUrl, `${api.metadata!.name}-pod-0-api`);
    await waitForOk(`http://127.0.0.1:${ports.queue}`, `${queue.metadata!.name}-pod-0-queue`);

    // The rendered protections hold in the running container.
    const inspected = JSON.parse(await podman("inspect", `${api.metadata!.name}-pod-0-api`))[0] as {
      Config: { User: string };
      HostConfig: { ReadonlyRootfs: boolean; SecurityOpt: string[]; Memory: number };
    };
    const rendered = api.spec.template.spec.containers[0]!.securityContext;
    assert.equal(rendered?.allowPrivilegeEscalation, false);
    assert.equal(inspected.HostConfig.ReadonlyRootfs, rendered?.readOnlyRootFilesystem === true);
    assert.ok(inspected.HostConfig.SecurityOpt.includes("no-new-privileges"), inspected.HostConfig.SecurityOpt.join(","));
    // Every container is rendered with limits: the memory limit is the container's.
    const memoryLimit = api.spec.template.spec.containers[0]!.resources?.limits?.memory;
    assert.match(String(memoryLimit), /^\d+Mi$/);
    assert.equal(inspected.HostConfig.Memory, Number.parseInt(String(memoryLimit), 10) * 1024 * 1024);

    const client = new Client({ apiUrl });
    const thread = await client.threads.create();
    const events: { event: string; data: unknown }[] = [];
    for await (const part of client.runs.stream(thread.thread_id, "agent", {
      input: { messages: [{ type: "human", content: "from kube play" }] },
      streamMode: "values",
    })) {
      events.push(part);
    }
    const states = events.filter((part) => part.event === "values");
    const last = states[states.length - 1]?.data as { messages: { content: string }[] } | undefined;
    assert.equal(last?.messages.at(-1)?.content, "played: from kube play", JSON.stringify(events));
  });
});
