import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { type ControlPlane, type Revision, startControlPlane, uniqueName } from "@berth/test-support";
import { deployTarball, finalRevision, type LogLine, packFixture } from "@berth/test-support";

const FINAL_STATUSES = ["DEPLOYED", "BUILD_FAILED", "DEPLOY_FAILED", "CREATE_FAILED", "SKIPPED", "INTERRUPTED"];

interface StreamEvent {
  event: string;
  id?: string;
  data: unknown;
}

/** Parses Server-Sent Events as they arrive (comments skipped). */
async function* eventsOf(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamEvent> {
  const decoder = new TextDecoder();
  let text = "";
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    text += decoder.decode(chunk, { stream: true });
    for (let end = text.indexOf("\n\n"); end !== -1; end = text.indexOf("\n\n")) {
      const fields = new Map<string, string>();
      for (const line of text.slice(0, end).split("\n")) {
        const colon = line.indexOf(":");
        if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trimStart());
      }
      text = text.slice(end + 2);
      const data = fields.get("data");
      if (data !== undefined) yield { event: fields.get("event") ?? "message", id: fields.get("id"), data: JSON.parse(data) };
    }
  }
}

interface OpenStream {
  response: Response;
  /** Every event read so far. */
  seen: StreamEvent[];
  /** Reads until an event matches, and gives it; fails if the stream ends first. */
  until(matches: (event: StreamEvent) => boolean): Promise<StreamEvent>;
  /** Reads to the end of the stream. */
  rest(): Promise<StreamEvent[]>;
  close(): void;
}

const messageOf = (event: StreamEvent) => (event.data as LogLine).message;

describe("streamed build and server logs", () => {
  let cp: ControlPlane;
  const opened: AbortController[] = [];
  // The build command waits for its request to the gate to be answered: the test decides when the build goes on. The
  // build's first line can reach the stream before that request reaches the gate, so the test awaits the request itself.
  let reachGate: (response: ServerResponse) => void = () => {};
  const gateReached = new Promise<ServerResponse>((resolve) => (reachGate = resolve));
  const gate = createServer((_request, response) => reachGate(response));
  let deploymentId: string;
  let revisionId: string;

  async function open(path: string, headers: Record<string, string> = {}): Promise<OpenStream> {
    const controller = new AbortController();
    opened.push(controller);
    const response = await fetch(`${cp.url}${path}`, {
      headers: { "X-Api-Key": cp.adminKey, "X-Tenant-Id": cp.defaultTenantId, ...headers },
      signal: controller.signal,
    });
    const events = response.ok ? eventsOf(response.body!) : (async function* () {})();
    const seen: StreamEvent[] = [];
    // next() rather than for-await: leaving a for-await loop early would end the generator.
    const read = async () => {
      const next = await events.next();
      if (!next.done) seen.push(next.value);
      return next.done ? undefined : next.value;
    };
    return {
      response,
      seen,
      async until(matches) {
        for (let event = await read(); event; event = await read()) if (matches(event)) return event;
        throw new Error(`the stream ended first; it sent:\n${JSON.stringify(seen, null, 1)}`);
      },
      async rest() {
        while (await read());
        return seen;
      },
      close: () => controller.abort(),
    };
  }

  before(async () => {
    gate.listen(0, "127.0.0.1");
    await once(gate, "listening");
    const gatePort = (gate.address() as AddressInfo).port;
    const gateUrl = `http://127.0.0.1:${gatePort}/go`;
    // Sandboxes reach the host's loopback only at the ports the operator grants.
    cp = await startControlPlane({ listener: true, env: { BERTH_SANDBOX_EGRESS_ALLOW: `127.0.0.1:${gatePort}` } });
    const tarball = packFixture("deploy-app", {
      "gate.mjs": `console.log("first line of the build");\nawait fetch(${JSON.stringify(gateUrl)});\nconsole.log("second line of the build");\n`,
    });
    ({
      deployment: { id: deploymentId },
      revisionId,
    } = await deployTarball(cp.admin, uniqueName("streamed"), tarball, { sourceConfig: { build_command: "node gate.mjs" } }));
  });
  after(async () => {
    for (const controller of opened) controller.abort();
    void gateReached.then((response) => response.end());
    gate.close();
    await cp?.stop();
  });

  test("a build log streams its lines while the build runs, then ends with the revision's final status", async () => {
    const stream = await open(`/v1/projects/${deploymentId}/revisions/${revisionId}/build_logs/stream`);
    assert.equal(stream.response.status, 200);
    assert.match(stream.response.headers.get("content-type") ?? "", /^text\/event-stream/);

    const first = await stream.until((event) => messageOf(event) === "first line of the build");
    // The build waits at the gate: the line came while the revision is still building.
    const building = await cp.admin.get<Revision>(`/v2/deployments/${deploymentId}/revisions/${revisionId}`);
    assert.ok(!FINAL_STATUSES.includes(building.body.status), building.body.status);
    assert.equal(first.event, "message");
    assert.equal(first.id, String(stream.seen.length), "an event's id counts the lines up to it");
    assert.deepEqual(Object.keys(first.data as object).sort(), ["id", "level", "message", "timestamp"]);

    (await gateReached).end();
    const events = await stream.rest();
    const end = events.at(-1)!;
    assert.equal(end.event, "end", JSON.stringify(events));
    const revision = await finalRevision(cp.admin, deploymentId, revisionId);
    assert.deepEqual(end.data, { status: revision.status, status_message: revision.status_message });
    assert.equal(revision.status, "DEPLOYED", revision.status_message ?? undefined);
    const lines = events.filter((event) => event.event === "message");
    assert.ok(lines.some((event) => messageOf(event) === "second line of the build"));
    assert.deepEqual(
      lines.map((event) => event.id),
      lines.map((_, index) => String(index + 1)),
    );

    // The stream sent what the log API pages hold, line for line.
    const page = await cp.admin.post<{ logs: LogLine[] }>(`/v1/projects/${deploymentId}/revisions/${revisionId}/build_logs`, {
      order: "asc",
      limit: 1000,
    });
    assert.deepEqual(
      lines.map((event) => event.data),
      page.body.logs,
    );
  });

  test("Last-Event-ID or ?offset= resumes after the lines the client has", async () => {
    const path = `/v1/projects/${deploymentId}/revisions/${revisionId}/build_logs/stream`;
    const all = (await (await open(path)).rest()).filter((event) => event.event === "message");
    const firstIndex = all.findIndex((event) => messageOf(event) === "first line of the build");
    const lastHad = all[firstIndex]!.id!;

    for (const resumed of [await open(path, { "Last-Event-ID": lastHad }), await open(`${path}?offset=${lastHad}`)]) {
      const events = await resumed.rest();
      assert.equal(events.at(-1)?.event, "end");
      const lines = events.filter((event) => event.event === "message");
      assert.deepEqual(
        lines.map((event) => event.data),
        all.slice(firstIndex + 1).map((event) => event.data),
      );
      assert.equal(lines[0]?.id, String(Number(lastHad) + 1));
    }

    const bad = await open(path, { "Last-Event-ID": "not-an-id" });
    assert.equal(bad.response.status, 422);
  });

  test("the server log streams the agent server's lines, of one revision and of every revision", async () => {
    for (const path of [
      `/v1/projects/${deploymentId}/revisions/${revisionId}/deploy_logs/stream`,
      `/v1/projects/${deploymentId}/deploy_logs/stream`,
    ]) {
      const stream = await open(path);
      assert.equal(stream.response.status, 200);
      const listening = await stream.until((event) => messageOf(event).includes("agent server listening"));
      assert.equal(listening.event, "message");
      stream.close();
    }
  });

  test("an unknown revision, or another workspace's deployment, is a 404 before any stream", async () => {
    const unknown = await open(`/v1/projects/${deploymentId}/revisions/${crypto.randomUUID()}/build_logs/stream`);
    assert.equal(unknown.response.status, 404);
    assert.match(((await unknown.response.json()) as { detail: string }).detail, /not found/i);

    const other = await cp.createTenant("other-workspace");
    const key = await cp.createKey({ tenants: [other.id] });
    for (const path of [
      `/v1/projects/${deploymentId}/revisions/${revisionId}/build_logs/stream`,
      `/v1/projects/${deploymentId}/deploy_logs/stream`,
    ]) {
      const foreign = await open(path, { "X-Api-Key": key.key, "X-Tenant-Id": other.id });
      assert.equal(foreign.response.status, 404);
      assert.match(foreign.response.headers.get("content-type") ?? "", /json/);
      assert.match(((await foreign.response.json()) as { detail: string }).detail, /not found/i);
    }
  });

  test("the OpenAPI document describes the three streams", async () => {
    const document = await cp.admin.get<{ paths: Record<string, { get?: { responses: Record<string, unknown> } }> }>(
      "/openapi.json",
    );
    for (const path of [
      "/v1/projects/{deployment_id}/revisions/{revision_id}/build_logs/stream",
      "/v1/projects/{deployment_id}/revisions/{revision_id}/deploy_logs/stream",
      "/v1/projects/{deployment_id}/deploy_logs/stream",
    ]) {
      const operation = document.body.paths[path]?.get;
      assert.ok(operation, path);
      assert.deepEqual(Object.keys(operation.responses).sort(), ["200", "404", "422"]);
    }
  });

  test("an open server-log stream ends when the control plane stops, rather than holding it up", async () => {
    const stream = await open(`/v1/projects/${deploymentId}/deploy_logs/stream`);
    await stream.until((event) => messageOf(event).includes("agent server listening"));
    await cp.stop();
    const events = await stream.rest();
    assert.ok(events.every((event) => event.event === "message"));
    assert.doesNotMatch(cp.output(), /graceful shutdown did not finish/);
  });
});
