// Runs in the SQLite pass only: its subject is containers' network isolation,
// where the control plane's database plays no part.
import { Client } from "@langchain/langgraph-sdk";
import type Docker from "dockerode";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { once } from "node:events";
import { type AddressInfo, connect, createServer, type Server } from "node:net";
import { after, before, describe, test } from "node:test";
import {
  type ControlPlane,
  createDeployment,
  type Deployment,
  startControlPlane,
  uniqueName,
  uploadSource,
} from "@berth/test-support";
import { removeScaleOutServices } from "@berth/listener";
import { connectEngine } from "@berth/listener";
import { deployTarball, finalRevision, logsOf, packFixture } from "@berth/test-support";
import { containerEngine } from "@berth/test-support/container-engine";
import { type OutsideHost, startOutsideHost } from "./helpers/outside-host.js";

const engine = await containerEngine();
const root = process.getuid?.() === 0;
const iptablesRules = () => execFileSync("iptables", ["-w", "-S"]).toString();
/** The host's IPv4 addresses but loopback, of every interface, up or not (os.networkInterfaces() lists running ones only). */
const hostAddresses = () =>
  [
    ...execFileSync("ip", ["-4", "-o", "addr", "show"])
      .toString()
      .matchAll(/ inet (\d+\.\d+\.\d+\.\d+)\//g),
  ]
    .map((match) => match[1]!)
    .filter((address) => !address.startsWith("127."));
const portOf = (server: Server) => (server.address() as AddressInfo).port;

interface ProbeReport {
  connections: Record<string, string>;
  fetched: Record<string, string>;
  build: Record<string, string> | null;
}

describe("containers run on a network of their deployment's own, kept off the host and private ranges, within limits", {
  skip: engine.skip || (!root && "the host firewall and the outside host's network namespace need root"),
}, () => {
  let cp: ControlPlane;
  let docker: Docker;
  let outside: OutsideHost;
  /** A service of the host listening on every interface, as a database or the control plane may. */
  let hostService: Server;
  /**
   * The control plane as deployments are told to reach it (BERTH_CONTROL_PLANE_URL): at an address of the host, on a
   * port forwarded to its loopback one. Its tracing API and Auth Service are the one exception to the rules.
   */
  let exposedControlPlane: Server;
  let hostAddress: string;
  let probe: Deployment;
  let neighbour: Deployment;

  before(async () => {
    docker = engine.docker!;
    outside = await startOutsideHost();
    hostService = createServer((socket) => socket.end("host service\n")).listen(0, "0.0.0.0");
    await once(hostService, "listening");
    hostAddress = hostAddresses().find((address) => address !== outside.hostAddress)!;
    let controlPlanePort = 0;
    exposedControlPlane = createServer((socket) => {
      const upstream = connect(controlPlanePort, "127.0.0.1");
      socket.pipe(upstream).pipe(socket);
      socket.on("error", () => upstream.destroy());
      upstream.on("error", () => socket.destroy());
    }).listen(0, "0.0.0.0");
    await once(exposedControlPlane, "listening");
    cp = await startControlPlane({
      listener: true,
      env: {
        BERTH_CONTROL_PLANE_URL: `http://${hostAddress}:${portOf(exposedControlPlane)}`,
        BERTH_LISTENER_COMPUTE: "docker",
        BERTH_CONTAINER_ENGINE: engine.address,
        BERTH_DRAIN_TIMEOUT_SECONDS: "5",
      },
    });
    controlPlanePort = Number(new URL(cp.url).port);
    // The hosted platform's remote build, sized dev_free; and a deployment beside it, sized by nothing.
    const created = await createDeployment(cp.admin, {
      name: uniqueName("probe"),
      source: "internal_source",
      source_config: { deployment_type: "dev_free" },
      source_revision_config: {},
      secrets: [],
    });
    probe = created;
    // Its image build tries the host's service at each host address, and the outside host.
    const buildTargets = [...hostAddresses().map((address) => `${address}:${portOf(hostService)}`), new URL(outside.url).host];
    const config = {
      graphs: { probe: "./probe.ts:graph" },
      dockerfile_lines: [`RUN node build-probe.mjs ${buildTargets.join(" ")}`],
    };
    const objectPath = await uploadSource(
      cp.admin,
      created.id,
      packFixture("network-probe", { "langgraph.json": JSON.stringify(config) }),
    );
    const [patched, neighboured] = await Promise.all([
      cp.admin.patch<Deployment>(`/v2/deployments/${created.id}`, {
        source_revision_config: { source_tarball_path: objectPath, graph_config_path: "langgraph.json" },
      }),
      deployTarball(cp.admin, uniqueName("neighbour"), packFixture("deploy-app")),
    ]);
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    probe = patched.body;
    neighbour = neighboured.deployment;
    for (const deployment of [probe, neighbour]) {
      const revision = await finalRevision(cp.admin, deployment.id, deployment.latest_revision_id!);
      const log = async () => (await logsOf(cp.admin, deployment.id, revision.id, "deploy")).map((line) => line.message);
      assert.equal(revision.status, "DEPLOYED", `${revision.status_message}\n${(await log()).join("\n")}`);
    }
  });
  after(async () => {
    await cp?.stop();
    // A run that failed before its DELETE leaves the deployments' networks and their host rules: removed as a listener would.
    const leftovers = await connectEngine(engine.address);
    for (const deployment of [probe, neighbour].filter(Boolean)) {
      const containers = await docker.listContainers({ all: true, filters: { label: [`berth.deployment=${deployment.id}`] } });
      await Promise.all(containers.map((info) => docker.getContainer(info.Id).remove({ force: true })));
      await removeScaleOutServices(leftovers, deployment.id);
    }
    hostService?.close();
    exposedControlPlane?.close();
    await outside?.close();
  });

  const serverOf = async (deployment: Deployment) => {
    const [info] = await docker.listContainers({
      filters: { label: [`berth.deployment=${deployment.id}`, "berth.managed=server"] },
    });
    assert.ok(info, `a server container of ${deployment.name} runs`);
    return docker.getContainer(info.Id).inspect();
  };

  test("a graph reaches a host outside, but no service of the host (at any of its addresses) and no other deployment", async () => {
    const network = (await docker.getNetwork(`berth-${probe.id}`).inspect()) as Docker.NetworkInspectInfo;
    const neighbourInfo = await serverOf(neighbour);
    const neighbourNetwork = Object.values(neighbourInfo.NetworkSettings.Networks)[0]!;
    const published = neighbourInfo.NetworkSettings.Ports["8000/tcp"]![0]!.HostPort;
    // The host's addresses as the container may address them: its network's gateway, and every address of the host's
    // interfaces (the engine's bridges and the outside host's veth end included).
    const addresses = new Set([network.IPAM!.Config![0]!.Gateway!, ...hostAddresses()]);
    assert.ok(addresses.has(outside.hostAddress) && addresses.has(hostAddress));
    const port = (url: string | undefined, fallback: number) => (url ? Number(new URL(url).port) || fallback : fallback);
    const hostPorts = [
      port(process.env.DATABASE_URL, 5432),
      port(process.env.REDIS_URL, 6379),
      Number(new URL(cp.url).port),
      Number(new URL(cp.routerUrl!).port),
      Number(published),
      portOf(hostService),
      // The forwarded control plane's port, at the host's other addresses.
      portOf(exposedControlPlane),
    ];
    const exposed = `${hostAddress}:${portOf(exposedControlPlane)}`;
    const targets = [
      ...[...addresses]
        .flatMap((address) => hostPorts.map((hostPort) => `${address}:${hostPort}`))
        .filter((target) => target !== exposed),
      // The other deployment's server, straight on its network.
      `${neighbourNetwork.IPAddress}:8000`,
    ];
    const url = (await cp.admin.get<Deployment>(`/v2/deployments/${probe.id}`)).body.source_config.custom_url!;
    const client = new Client({ apiUrl: url, apiKey: cp.adminKey });
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "probe", {
      input: { targets: [...targets, exposed], urls: [outside.url] },
    });
    await client.runs.join(thread.thread_id, run.run_id);
    const report = (await client.threads.getState(thread.thread_id)).values as unknown as ProbeReport;
    // The control plane's address and port as the deployment was told them, and nothing else of the host: the
    // run's trace arrives through it.
    assert.equal(report.connections[exposed], "open");
    delete report.connections[exposed];
    const deadline = Date.now() + 60_000;
    while ((await cp.admin.get(`/api/v1/runs/${run.run_id}`)).status !== 200)
      assert.ok(Date.now() < deadline, `the trace of run ${run.run_id} did not arrive`);

    assert.equal(report.fetched[outside.url], "outside ok");
    assert.deepEqual(Object.keys(report.connections).sort(), [...targets].sort());
    const reached = Object.entries(report.connections).filter(([, result]) => result === "open");
    assert.deepEqual(reached, [], JSON.stringify(report.connections, null, 1));
    // Refused at once by the host's rules (no waiting out a timeout).
    for (const [target, result] of Object.entries(report.connections))
      assert.match(result, /^(EHOSTUNREACH|ECONNREFUSED)$/, `${target}: ${result}`);
  });

  test("its image build reached the outside host, but not the host's service at any of its addresses", async () => {
    const url = (await cp.admin.get<Deployment>(`/v2/deployments/${probe.id}`)).body.source_config.custom_url!;
    const report = (await new Client({ apiUrl: url, apiKey: cp.adminKey }).runs.wait(null, "probe", {
      input: { targets: [] },
    })) as unknown as ProbeReport;
    assert.ok(report.build, "the build's probe ran");
    const outsideTarget = new URL(outside.url).host;
    assert.equal(report.build[outsideTarget], "open");
    const hostTargets = Object.entries(report.build).filter(([target]) => target !== outsideTarget);
    assert.ok(hostTargets.length > 0);
    for (const [target, result] of hostTargets) assert.match(result, /^(EHOSTUNREACH|ECONNREFUSED)$/, `${target}: ${result}`);
  });

  test("each deployment has its own network, none uses the engine's default bridge", async () => {
    for (const deployment of [probe, neighbour]) {
      const info = await serverOf(deployment);
      assert.equal(info.HostConfig.NetworkMode, `berth-${deployment.id}`);
      assert.deepEqual(Object.keys(info.NetworkSettings.Networks), [`berth-${deployment.id}`]);
      assert.equal(info.HostConfig.ExtraHosts?.length ?? 0, 0, "no host-gateway entry");
      const network = (await docker.getNetwork(`berth-${deployment.id}`).inspect()) as Docker.NetworkInspectInfo;
      assert.equal(network.Driver, "bridge");
      assert.equal(network.Internal, false, "the internet is reachable");
      const bridge = network.Options!["com.docker.network.bridge.name"];
      assert.match(bridge ?? "", /^bb-[0-9a-f]{12}$/);
      assert.match(iptablesRules(), new RegExp(`^-A DOCKER-USER -i ${bridge} -j BERTH-F-${bridge}$`, "m"));
      assert.match(iptablesRules(), new RegExp(`^-A INPUT -i ${bridge} -j BERTH-I-${bridge}$`, "m"));
    }
  });

  test("the container of an internal_source revision has memory, CPU and pids limits, and bounded logs on the host", async () => {
    const sized = await serverOf(probe);
    // dev_free: 512 MiB and half a CPU (docs/git-deployments.md).
    assert.equal(sized.HostConfig.Memory, 512 * 1024 * 1024);
    assert.equal(sized.HostConfig.MemorySwap, 512 * 1024 * 1024, "no swap beyond the memory limit");
    assert.equal(sized.HostConfig.NanoCpus, 0.5e9);
    for (const info of [sized, await serverOf(neighbour)]) {
      assert.equal(info.HostConfig.PidsLimit, 1024);
      assert.deepEqual(info.HostConfig.LogConfig, { Type: "json-file", Config: { "max-file": "3", "max-size": "10m" } });
    }
  });

  test("DELETE removes the deployment's network and its host firewall rules", async () => {
    const bridges: string[] = [];
    for (const deployment of [neighbour, probe]) {
      const network = (await docker.getNetwork(`berth-${deployment.id}`).inspect()) as Docker.NetworkInspectInfo;
      bridges.push(network.Options!["com.docker.network.bridge.name"]!);
      assert.equal((await cp.admin.delete(`/v2/deployments/${deployment.id}`)).status, 204);
    }
    const rules = () => [iptablesRules(), execFileSync("ip6tables", ["-w", "-S"]).toString()].join("\n").split("\n");
    const left = async () => [
      ...(await docker.listNetworks({ filters: { name: [`berth-${neighbour.id}`, `berth-${probe.id}`] } })).map(
        (found) => `network ${found.Name}`,
      ),
      ...rules().filter((rule) => bridges.some((bridge) => rule.includes(bridge))),
    ];
    const deadline = Date.now() + 60_000;
    while ((await left()).length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    assert.deepEqual(await left(), []);
  });
});
