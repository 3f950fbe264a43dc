import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import * as tar from "tar";
import { BuildError, type BuildLogEntry, type BuildRequest, buildSource } from "../../src/build/build.js";
import { BERTH_BIN } from "../../src/build/graph-check.js";

const FIXTURES = fileURLToPath(new URL("../fixtures/", import.meta.url));
const REPO = fileURLToPath(new URL("../../../../", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "berth-build-test-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

let counter = 0;
function dir(name: string): string {
  counter += 1;
  return mkdtempSync(join(scratch, `${name}-${counter}-`));
}

/** A gzip tarball of a fixture project, as a user would upload it; `prefix` puts it under a folder. */
async function pack(fixture: string, prefix?: string): Promise<string> {
  const file = join(dir("tarball"), `${fixture}.tar.gz`);
  const cwd = join(FIXTURES, fixture);
  const files = readdirSync(cwd);
  await tar.c({ gzip: true, file, cwd, portable: true, prefix }, files);
  return file;
}

interface Build {
  request: BuildRequest;
  lines: BuildLogEntry[];
  text: () => string;
}

function request(tarball: string, overrides: Partial<BuildRequest> = {}, cacheDir = dir("cache")): Build {
  const lines: BuildLogEntry[] = [];
  const log = overrides.log ?? ((entry: BuildLogEntry) => lines.push(entry));
  return {
    request: { tarball, graphConfigPath: "langgraph.json", workDir: dir("work"), cacheDir, ...overrides, log },
    lines,
    text: () => lines.map((line) => line.message).join("\n"),
  };
}

async function buildFails(build: Build, pattern: RegExp): Promise<BuildError> {
  let caught: unknown;
  await buildSource(build.request).catch((error: unknown) => {
    caught = error;
  });
  assert.ok(caught instanceof BuildError, `expected a BuildError, got ${String(caught)}\n${build.text()}`);
  assert.match(caught.message, pattern);
  return caught;
}

describe("buildSource", () => {
  test("builds a valid project: build_command in the config's folder, then the graph check", async () => {
    const build = request(await pack("build-echo", "project"), {
      graphConfigPath: "project/langgraph.json",
      buildCommand: "echo built > built.txt && env",
    });
    // The listener's environment holds its secrets; build commands must not see them.
    process.env.BERTH_TEST_PLATFORM_SECRET = "do-not-leak";
    const result = await buildSource(build.request).finally(() => delete process.env.BERTH_TEST_PLATFORM_SECRET);
    const { workDir } = build.request;
    assert.equal(result.configFile, join(workDir, "project", "langgraph.json"));
    assert.equal(result.installCacheHit, false);
    assert.ok(result.durationMs > 0);
    assert.equal(readFileSync(join(workDir, "project", "built.txt"), "utf8"), "built\n");
    const text = build.text();
    // No package.json at the tarball root: the install step has nothing to do.
    assert.match(text, /nothing to install/);
    // The TypeScript graph is compiled ahead of time, and the check loads the compiled module.
    assert.match(text, /==> Compiling TypeScript ahead of time\n1 module compiled in \d+\.\d\d s: src\/agent\.ts\nCompiled \(/);
    assert.ok(existsSync(join(workDir, "project", ".berth", "compiled", "manifest.json")));
    assert.match(text, /==> Checking that every graph loads/);
    assert.match(text, /1 graph loaded: agent/);
    assert.match(text, /Build finished in \d+\.\d s/);
    assert.ok(!text.includes("do-not-leak"), "process.env is not passed to commands");
    assert.ok(build.lines.some((line) => line.message === `HOME=${join(build.request.cacheDir, "_home")}`));
  });

  test("refuses an archive with a ../ entry, before writing anything", async () => {
    const tarball = join(dir("tarball"), "evil.tar.gz");
    const header = Buffer.alloc(512);
    new tar.Header({ path: "../evil.sh", type: "File", size: 0, mode: 0o644, mtime: new Date(0) }).encode(header, 0);
    writeFileSync(tarball, gzipSync(Buffer.concat([header, Buffer.alloc(1024)])));
    const build = request(tarball);
    await buildFails(build, /^The source tarball was refused: entry "\.\.\/evil\.sh" has a "\.\." segment/);
    assert.deepEqual(readdirSync(build.request.workDir), []);
  });

  test("refuses an archive with more entries than the limit", async () => {
    await buildFails(request(await pack("build-echo"), { limits: { maxEntries: 2 } }), /more than 2 entries/);
  });

  test("a missing config names the path and lists the JSON files found", async () => {
    const build = request(await pack("build-echo", "project"));
    await buildFails(
      build,
      /graph_config_path "langgraph\.json" was not found in the tarball; JSON files near the tarball's root: project\/langgraph\.json, project\/package\.json/,
    );
  });

  test("a failing install_command fails the build with its exit code and last lines", async () => {
    const build = request(await pack("build-echo"), {
      installCommand: "echo resolving; echo 'npm ERR! 404 left-pad-9' >&2; exit 3",
    });
    await buildFails(
      build,
      /^install_command `echo resolving; .*` failed with exit code 3: resolving \| npm ERR! 404 left-pad-9$/,
    );
    // Every line reached the log, stderr as errors.
    assert.ok(build.lines.some((line) => line.level === "error" && line.message === "npm ERR! 404 left-pad-9"));
  });

  test("a graph that throws at import fails the build, naming the graph and the error", async () => {
    const build = request(await pack("build-broken"));
    const error = await buildFails(
      build,
      /^A graph failed to load: failed to load graph "broken" from src\/agent\.ts .*broken on purpose: MY_SETTING is not set/,
    );
    assert.ok(!error.message.includes(build.request.workDir), "the listener's directories are not shown to users");
  });

  test("a project that cannot be compiled keeps its sources: the build goes on and says why", async () => {
    // build-broken has no package.json saying "type": "module": its .ts is CommonJS, which is not compiled.
    const build = request(await pack("build-broken"));
    await buildFails(build, /^A graph failed to load/);
    assert.match(build.text(), /sources kept, loaded through tsx: src\/agent\.ts is CommonJS\nSources kept \(/);
  });

  test("npm ci runs once per lockfile: a second build restores node_modules from the cache", async () => {
    const tarball = await pack("build-deps");
    const cacheDir = dir("cache");
    const first = request(tarball, {}, cacheDir);
    const firstResult = await buildSource(first.request);
    assert.equal(firstResult.installCacheHit, false);
    assert.match(first.text(), /Running install \(from package-lock\.json\): npm ci/);
    assert.match(first.text(), /Cached the install as [0-9a-f]{12}/);

    const second = request(tarball, {}, cacheDir);
    const secondResult = await buildSource(second.request);
    assert.equal(secondResult.installCacheHit, true);
    assert.match(second.text(), /Install cache hit \([0-9a-f]{12}\): reusing node_modules, `npm ci` not run/);
    assert.doesNotMatch(second.text(), /Running install/);
    // A real directory (see install-cache.ts), from which the graph's `import ms` resolved during the check.
    assert.ok(lstatSync(join(second.request.workDir, "node_modules")).isDirectory());
    assert.ok(existsSync(join(second.request.workDir, "node_modules", "ms", "package.json")));
    assert.match(second.text(), /1 graph loaded: timer/);
  });

  test("concurrent builds of the same lockfile both succeed and publish one cache entry", async () => {
    const tarball = await pack("build-deps");
    const cacheDir = dir("cache");
    const builds = [request(tarball, {}, cacheDir), request(tarball, {}, cacheDir)];
    const results = await Promise.all(builds.map((build) => buildSource(build.request)));
    // Both normally miss (npm ci takes far longer than the lookup); under heavy load the second may already hit.
    const misses = results.filter((result) => !result.installCacheHit).length;
    assert.ok(misses >= 1);
    const entries = readdirSync(cacheDir).filter((name) => /^[0-9a-f]{64}$/.test(name));
    assert.equal(entries.length, 1);
    assert.deepEqual(
      readdirSync(cacheDir).filter((name) => name.startsWith(".tmp-")),
      [],
      "no temporary copy is left behind",
    );
    if (misses === 2) assert.ok(builds.some((build) => /Another build cached the same install first/.test(build.text())));
  });

  test("an abort kills a long build_command and its whole process group", async () => {
    const controller = new AbortController();
    let sleeper: number | undefined;
    const build = request(await pack("build-echo"), {
      buildCommand: 'sleep 30 & echo "sleeper $!"; wait',
      signal: controller.signal,
      log: (entry) => {
        build.lines.push(entry);
        const match = /^sleeper (\d+)$/.exec(entry.message);
        if (match) {
          sleeper = Number(match[1]);
          controller.abort();
        }
      },
    });
    const started = Date.now();
    await buildFails(build, /^build_command `sleep 30 & .*` was interrupted$/);
    assert.ok(Date.now() - started < 15_000, "the build stopped long before the command would have");
    assert.ok(sleeper !== undefined);
    assert.ok(!isRunning(sleeper), `the background sleep ${sleeper} was killed with its shell`);
  });
});

describe("berth check", () => {
  const check = (target: string) => spawnSync(process.execPath, [BERTH_BIN, "check", target], { cwd: REPO, encoding: "utf8" });

  test("exits 0 listing the graphs of examples/echo-chat", () => {
    const result = check(join(REPO, "examples", "echo-chat"));
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stdout, "1 graph loaded: agent\n");
  });

  test("exits 1 with the reason when a graph fails to load", () => {
    const result = check(join(FIXTURES, "build-broken", "langgraph.json"));
    assert.equal(result.status, 1);
    assert.match(
      result.stderr,
      /^berth check: failed to load graph "broken" from src\/agent\.ts \(export "graph"\): broken on purpose/,
    );
  });
});

/** Alive, as opposed to gone or a zombie nobody reaped yet (PID 1 of a container may never reap it). */
function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}
