import { Client } from "@langchain/langgraph-sdk";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test, type TestContext } from "node:test";
import {
  type ControlPlane,
  type Deployment,
  type Page,
  revisionsOf,
  runBerth,
  TEST_BACKEND,
  startControlPlane,
  uniqueName,
  freePort,
} from "@berth/test-support";
import { containerEngine } from "@berth/test-support/container-engine";
import { CLI_APP, cliEnv, ensureLangGraphCli, langgraphjs, LANGGRAPH_CLI_VERSION, shown } from "./helpers/langgraph-cli.js";

/**
 * The official CLI's local build path: `langgraphjs deploy` without --remote
 * builds an image with the docker command, pushes it with a push token to
 * the control plane's registry and PATCHes image_uri. It starts FROM the
 * image `berth base-image` makes.
 */

const engine = await containerEngine();
const dockerCli = spawnSync("docker", ["--version"], { encoding: "utf8" });
const skip =
  engine.skip ||
  (dockerCli.status !== 0 && "the docker command is not installed (the official CLI builds with it)") ||
  // The image path is what this checks; the control plane's database plays no part, so one pass is enough.
  (TEST_BACKEND !== "sqlite" && "it runs in the SQLite pass (the control plane's database plays no part)");
if (skip) process.stderr.write(`\n*** SKIPPED: the official CLI's local build: ${skip} ***\n\n`);

describe(`the official LangGraph CLI ${LANGGRAPH_CLI_VERSION} deploys an image it builds locally`, { skip }, () => {
  let bin: string;
  let cp: ControlPlane;
  let key: string;
  let project: string;
  let baseImage: string;

  before(
    async () => {
      bin = await ensureLangGraphCli();
      const made = await runBerth(["base-image"], {
        env: { ...process.env, BERTH_CONTAINER_ENGINE: engine.address },
      });
      assert.equal(made.code, 0, shown(made));
      baseImage = made.stdout.trim();
      assert.equal(baseImage, `berth/langgraphjs-api:${process.versions.node.split(".")[0]}`);
      cp = await startControlPlane({
        listener: true,
        env: {
          BERTH_LISTENER_COMPUTE: "docker",
          BERTH_CONTAINER_ENGINE: engine.address,
          BERTH_REGISTRY_PORT: String(await freePort()),
          BERTH_DRAIN_TIMEOUT_SECONDS: "2",
        },
      });
      key = (await cp.createKey({ tenants: [cp.defaultTenantId], name: "langgraph-cli-local" })).key;
      project = mkdtempSync(join(tmpdir(), "berth-langgraph-cli-local-"));
      cpSync(CLI_APP, project, { recursive: true });
      writeFileSync(join(project, ".env"), "GREETING=from-image\n");
      // The CLI's Dockerfile runs `npm i` in the project, which needs a package.json; Berth provides the LangGraph packages.
      writeFileSync(join(project, "package.json"), JSON.stringify({ name: "cli-app", private: true, type: "module" }));
    },
    { timeout: 900_000 },
  );
  after(() => cp?.stop());

  test("deploy builds FROM berth's base image, pushes with a push token, and the URL it prints answers the SDK", {
    timeout: 900_000,
  }, async (t: TestContext) => {
    const name = uniqueName("cli-local");
    const started = performance.now();
    const result = await langgraphjs(
      bin,
      [
        "deploy",
        "--host-url",
        cp.url,
        "--api-key",
        key,
        "--name",
        name,
        "--no-input",
        "--base-image",
        baseImage,
        "--no-pull",
        "--verbose",
      ],
      // The classic builder: the docker command then needs no buildx plugin, which Debian's docker.io lacks.
      { cwd: project, env: cliEnv({ LANGSMITH_API_KEY: key, DOCKER_HOST: engine.address, DOCKER_BUILDKIT: "0" }) },
    );
    const seconds = (performance.now() - started) / 1000;
    assert.equal(result.code, 0, shown(result));
    assert.match(result.stdout, /Requesting push token/, shown(result));
    assert.match(result.stdout, /Deployment successful!/, shown(result));
    const url = /^\s*URL: (\S+)$/m.exec(result.stdout)?.[1];
    assert.ok(url, shown(result));
    t.diagnostic(`langgraphjs deploy (local build): ${seconds.toFixed(1)} s from start to the printed URL`);

    const found = await cp.admin.get<Page<Deployment>>(`/v2/deployments?name_contains=${name}`);
    const deployment = found.body.resources[0]!;
    assert.equal(deployment.source, "internal_image");
    const image = deployment.source_revision_config.image_uri ?? "";
    assert.match(image, new RegExp(`^127\\.0\\.0\\.1:\\d+/d-${deployment.id}/[^@]+@sha256:[0-9a-f]{64}$`));
    const [latest] = await revisionsOf(cp.admin, deployment.id);
    assert.equal(latest!.status, "DEPLOYED");

    const client = new Client({ apiUrl: url, apiKey: key });
    const values = await client.runs.wait(null, "agent", { input: { messages: [{ type: "human", content: "hi" }] } });
    const messages = (values as { messages: { content: string }[] }).messages;
    assert.equal(messages.at(-1)!.content, "v1 from-image: hi");
  });
});
