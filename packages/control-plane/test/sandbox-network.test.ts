// Runs in the SQLite pass only: its subject is the sandbox's network,
// where the control plane's database plays no part.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createConnection, createServer, type Server } from "node:net";
import { networkInterfaces } from "node:os";
import { after, before, describe, test } from "node:test";
import { api, type Api, type ControlPlane, type Deployment, startControlPlane } from "@berth/test-support";
import { deployTarball, finalRevision, logsOf, packFixture } from "@berth/test-support";
import { type OutsideHost, startOutsideHost } from "./helpers/outside-host.js";

// A hostile project (fixtures/sandbox-network) deployed twice: its install script and its graph try to reach
// this machine's PostgreSQL and Redis, the control plane, the router, a service listening on every host address,
// and the other deployment's server, and fetch from an "outside" host (a network namespace of the test's own that
// stands in for the internet). Each sandbox has a network of its own: the outside is reachable, the host is not.

interface Reached {
  connections: Record<string, string>;
  fetched: Record<string, string>;
  lookups: Record<string, string>;
  raw: Record<string, string>;
}

interface Report extends Reached {
  gateway: string;
  port: number;
  build: Reached;
}

const canIsolate = process.getuid?.() === 0 && hasPrograms("bwrap", "pasta", "nft", "ip");

function hasPrograms(...names: string[]): boolean {
  try {
    execFileSync("sh", ["-c", names.map((name) => `command -v ${name}`).join(" && ")], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

describe("each sandbox has a network of its own: the internet, not the host", {
  skip: !canIsolate && "network namespaces need root, bubblewrap, pasta (passt), nftables and iproute2",
}, () => {
  let cp: ControlPlane;
  let client: Api;
  let outside: OutsideHost;
  /** A TCP service on every address of the host: what a host service bound to 0.0.0.0 looks like. */
  let hostService: Server;
  let hostServicePort: number;
  let first: Report;
  let second: Report;
  let targets: string[];

  const ask = async (deployment: Deployment, request: Record<string, unknown>): Promise<Report> => {
    const response = await fetch(`${deployment.source_config.custom_url}/runs/wait`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": cp.adminKey },
      body: JSON.stringify({ assistant_id: "probe", input: { request } }),
    });
    assert.equal(response.status, 200, await response.clone().text());
    return ((await response.json()) as { report: Report }).report;
  };

  before(async () => {
    outside = await startOutsideHost();
    hostService = createServer((socket) => socket.end("host service\n"));
    await new Promise<void>((resolve) => hostService.listen(0, "0.0.0.0", resolve));
    hostServicePort = (hostService.address() as { port: number }).port;
    cp = await startControlPlane({ listener: true });
    client = api(cp.url, cp.adminKey, cp.defaultTenantId);
    const hostAddresses = Object.values(networkInterfaces())
      .flat()
      .filter((entry) => entry?.family === "IPv4")
      .map((entry) => entry!.address);
    targets = [
      "127.0.0.1:5432", // PostgreSQL
      "127.0.0.1:6379", // Redis
      `${new URL(cp.url).host}`,
      `${new URL(cp.routerUrl!).host}`,
      ...hostAddresses.map((address) => `${address}:${hostServicePort}`),
    ];
    const tarball = packFixture("sandbox-network", {
      "targets.json": JSON.stringify({ targets, urls: [outside.url], names: ["localhost"] }),
    });
    const deployments: Deployment[] = [];
    for (const name of ["network-a", "network-b"]) {
      const { deployment, revisionId } = await deployTarball(client, name, tarball);
      const revision = await finalRevision(client, deployment.id, revisionId);
      if (revision.status !== "DEPLOYED") {
        const log = await logsOf(client, deployment.id, revisionId, "build");
        assert.fail(`${name}: ${revision.status} ${revision.status_message}\n${log.map((line) => line.message).join("\n")}`);
      }
      deployments.push((await client.get<Deployment>(`/v2/deployments/${deployment.id}`)).body);
    }
    const [a, b] = deployments as [Deployment, Deployment];
    second = await ask(b, { targets, urls: [outside.url] });
    // The other deployment's server, at the port its namespace forwards from the host's loopback.
    first = await ask(a, { targets: [...targets, `127.0.0.1:${second.port}`], urls: [outside.url] });
  });

  after(async () => {
    await cp?.stop();
    hostService?.close();
    await outside?.close();
  });

  const opened = (reached: Reached) =>
    Object.entries(reached.connections)
      .filter(([, result]) => result === "open")
      .map(([target]) => target);

  test("a graph reaches an outside host", () => {
    assert.equal(first.fetched[outside.url], "200 outside ok");
    assert.equal(second.fetched[outside.url], "200 outside ok");
  });

  test("a build reaches an outside host and resolves names", () => {
    assert.equal(first.build.fetched[outside.url], "200 outside ok");
    assert.match(first.build.lookups.localhost ?? "", /^127\./);
  });

  test("a graph reaches neither PostgreSQL, Redis, the control plane, the router, host services nor another deployment", () => {
    assert.deepEqual(opened(first), []);
    assert.deepEqual(opened(second), []);
    assert.ok(`127.0.0.1:${second.port}` in first.connections, "the other deployment's port was tried");
  });

  test("a build reaches neither PostgreSQL, Redis, the control plane, the router nor host services", () => {
    assert.deepEqual(opened(first.build), []);
    for (const target of targets) assert.ok(target in first.build.connections, `${target} was tried`);
  });

  test("the host service the probes could not reach does answer on the host", async () => {
    // The refusals above come from the sandbox's network, not from a service that was down.
    const socket = await new Promise<string>((resolve, reject) => {
      const connection = createConnection({ host: "127.0.0.1", port: hostServicePort });
      connection.once("data", (data) => resolve(String(data)));
      connection.once("error", reject);
    });
    assert.equal(socket, "host service\n");
  });

  test("the one platform address a server reaches passes the tracing API and refuses the rest of the control plane", () => {
    assert.match(first.gateway, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(new URL(first.gateway).host, new URL(cp.url).host);
    const info = first.fetched[`${first.gateway}/api/v1/info`] ?? "";
    assert.match(info, /^200 /, info);
    for (const path of ["/v2/deployments", "/d/x/ok"]) {
      const answer = first.fetched[`${first.gateway}${path}`] ?? "";
      assert.match(answer, /^403 \{"detail":/, `${path}: ${answer}`);
    }
    assert.equal(Object.keys(first.raw).length, 2);
    for (const [url, answer] of Object.entries(first.raw)) assert.match(answer, /^403 \{"detail":/, `${url}: ${answer}`);
  });
});
