#!/usr/bin/env node
// Deploys a LangGraph.js project to a Berth control plane (the upload-url flow), waits until it serves,
// then chats with it through the official SDK:
//   node examples/deploy.mjs [project-dir] [--url http://127.0.0.1:8000] [--key <api key>] [--name echo-chat]
// Without --key it uses the admin key `npm start` keeps in .berth/control-plane/admin.key.
import { Client } from "@langchain/langgraph-sdk";
import { existsSync, readFileSync } from "node:fs";
import { basename, resolve } from "node:path";
import { parseArgs } from "node:util";
import * as tar from "tar";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    url: { type: "string", default: process.env.BERTH_CONTROL_PLANE_URL ?? "http://127.0.0.1:8000" },
    key: { type: "string", default: process.env.BERTH_API_KEY },
    "key-file": { type: "string", default: ".berth/control-plane/admin.key" },
    name: { type: "string" },
    graph: { type: "string", default: "agent" },
  },
});
const project = resolve(positionals[0] ?? "examples/echo-chat");
const name = values.name ?? basename(project);
if (!values.key && existsSync(values["key-file"])) values.key = readFileSync(values["key-file"], "utf8").trim();
if (!values.key) throw new Error("--key <api key> is required (npm start prints it)");

async function call(method, path, body) {
  const response = await fetch(values.url + path, {
    method,
    headers: { "x-api-key": values.key, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} failed with status ${response.status}: ${text}`);
  return text ? JSON.parse(text) : undefined;
}

// 1. The deployment, created once (its first revision waits for the source).
const existing = (await call("GET", `/v2/deployments?name_contains=${encodeURIComponent(name)}`)).resources.find(
  (d) => d.name === name,
);
const deployment =
  existing ??
  (await call("POST", "/v2/deployments", {
    name,
    source: "internal_source",
    source_config: {},
    source_revision_config: { graph_config_path: "langgraph.json" },
    secrets: [],
  }));

// 2. Pack the project and PUT it to a signed upload URL.
const tarball = await new Response(
  tar.c({ gzip: true, cwd: project, filter: (path) => !/(^|\/)(node_modules|\.berth|\.git)(\/|$)/.test(path) }, ["."]),
).arrayBuffer();
const { upload_url, object_path } = await call("POST", `/v2/deployments/${deployment.id}/upload-url`);
const put = await fetch(upload_url, { method: "PUT", body: tarball, headers: { "content-type": "application/gzip" } });
if (!put.ok) throw new Error(`upload failed with status ${put.status}: ${await put.text()}`);

// 3. A new revision with that source; wait (long poll) until it is final.
const patched = await call("PATCH", `/v2/deployments/${deployment.id}`, {
  source_revision_config: { source_tarball_path: object_path },
});
const revisionPath = `/v2/deployments/${deployment.id}/revisions/${patched.latest_revision_id}`;
let revision;
do {
  revision = await call("GET", `${revisionPath}?wait_seconds=60`);
  console.log(`revision ${revision.id}: ${revision.status} (${revision.status_message})`);
} while (!["DEPLOYED"].includes(revision.status) && !/FAILED|SKIPPED|INTERRUPTED/.test(revision.status));
if (revision.status !== "DEPLOYED") process.exit(1);

// 4. Chat with it at its stable URL.
const { source_config } = await call("GET", `/v2/deployments/${deployment.id}`);
console.log(`serving at ${source_config.custom_url}`);
const client = new Client({ apiUrl: source_config.custom_url, apiKey: values.key });
const thread = await client.threads.create();
const output = await client.runs.wait(thread.thread_id, values.graph, {
  input: { messages: [{ type: "human", content: "Hello from the quick start!" }] },
});
console.log(`${values.graph} answered: ${output.messages.at(-1).content}`);
