import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { fetchRepository, GitFetchError, type RepoFetch, remoteHead } from "../../src/build/git/fetch.js";
import { safeUnpack } from "../../src/build/safe-unpack.js";
import { type GitHost, startGitHost } from "@berth/test-support/git-host";

const WRONG_TOKEN = "tok-wrong-1b2c3d";

const scratch = mkdtempSync(join(tmpdir(), "berth-git-fetch-test-"));
const FILES = {
  "langgraph.json": JSON.stringify({ graphs: { agent: "./src/graph.ts:graph" } }),
  "src/graph.ts": "export const graph = 1;\n",
};

/** Everything fetchRepository and remoteHead passed to `log`, over all tests. */
const logged: string[] = [];
let counter = 0;
/** Serves public.git, and private/agent.git to its token only. */
let host: GitHost;
let base = "";
let token = "";
/** A server that accepts requests and never answers them, for the abort test. */
let hanging: Server;
let hangingBase = "";
let closedPort = 0;
/** Called when the hanging server receives a request. */
let onHangingRequest = () => {};
let firstCommit = "";
let secondCommit = "";
let privateCommit = "";

function listen(target: Server): Promise<number> {
  return new Promise((resolve) => target.listen(0, "127.0.0.1", () => resolve((target.address() as AddressInfo).port)));
}

/** A directory holding `files` (path → content), for a repository's first commit. */
function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(scratch, "tree-"));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

/** A fetch request with a fresh tarball path; the cache is shared unless given. */
function request(overrides: Partial<RepoFetch> & Pick<RepoFetch, "url">): RepoFetch {
  counter += 1;
  return {
    ref: "main",
    cacheDir: join(scratch, "cache"),
    tarball: join(scratch, "out", `${counter}.tar.gz`),
    log: (line) => logged.push(line),
    ...overrides,
  };
}

/** Unpacks a fetched tarball the way a build does and returns the directory. */
async function unpacked(tarball: string): Promise<string> {
  const dir = mkdtempSync(join(scratch, "unpacked-"));
  await safeUnpack(tarball, dir);
  return dir;
}

async function rejectsWith(promise: Promise<unknown>, pattern: RegExp): Promise<GitFetchError> {
  let caught: unknown;
  await assert.rejects(promise, (error: unknown) => {
    caught = error;
    return true;
  });
  assert.ok(caught instanceof GitFetchError, `expected a GitFetchError, got ${String(caught)}`);
  assert.match(caught.message, pattern);
  return caught;
}

function cacheRepositories(cacheDir: string): string[] {
  return readdirSync(cacheDir).map((name) => join(cacheDir, name));
}

before(async () => {
  host = await startGitHost();
  base = host.url;
  token = host.token;
  firstCommit = host.createRepository("public.git", tree(FILES));
  host.tag("public.git", "v1");
  privateCommit = host.createRepository("private/agent.git", tree(FILES));

  hanging = createServer(() => onHangingRequest());
  hangingBase = `http://127.0.0.1:${await listen(hanging)}`;
  const closed = createServer();
  closedPort = await listen(closed);
  await new Promise((resolve) => closed.close(resolve));
});

after(async () => {
  hanging.closeAllConnections();
  await new Promise((resolve) => hanging.close(resolve));
  await host.close();
  rmSync(host.root, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});

describe("fetchRepository", () => {
  test("fetches a branch over smart HTTP into a tarball of the tree, files at its root", async () => {
    const fetch = request({ url: `${base}/public.git` });
    const { sha } = await fetchRepository(fetch);
    assert.equal(sha, firstCommit);
    const dir = await unpacked(fetch.tarball);
    assert.deepEqual(readdirSync(dir).sort(), ["langgraph.json", "src"]);
    assert.equal(readFileSync(join(dir, "src/graph.ts"), "utf8"), "export const graph = 1;\n");
    assert.equal(cacheRepositories(fetch.cacheDir).length, 1);
  });

  test("a later fetch returns the newly pushed commit and reuses the cache", async () => {
    secondCommit = host.commit("public.git", { "src/graph.ts": "export const graph = 2;\n" });
    const fetch = request({ url: `${base}/public.git`, ref: "refs/heads/main" });
    const { sha } = await fetchRepository(fetch);
    assert.equal(sha, secondCommit);
    assert.equal(readFileSync(join(await unpacked(fetch.tarball), "src/graph.ts"), "utf8"), "export const graph = 2;\n");
    assert.equal(cacheRepositories(fetch.cacheDir).length, 1, "one cache repository per URL");
    assert.ok(!readdirSync(dirname(fetch.tarball)).some((name) => name.includes(".partial-")), "no temporary tarball left");
  });

  test("an annotated tag resolves to the commit it tags", async () => {
    const fetch = request({ url: `${base}/public.git`, ref: "refs/tags/v1" });
    const { sha } = await fetchRepository(fetch);
    assert.equal(sha, firstCommit);
    assert.equal(readFileSync(join(await unpacked(fetch.tarball), "src/graph.ts"), "utf8"), "export const graph = 1;\n");
  });

  test("a commit of the branch's history is fetched by its id after the branch moved on, into a fresh cache too", async () => {
    for (const cacheDir of [join(scratch, "cache"), join(scratch, "cache-by-id")]) {
      const fetch = request({ url: `${base}/public.git`, commit: firstCommit, cacheDir });
      const { sha } = await fetchRepository(fetch);
      assert.equal(sha, firstCommit);
      assert.equal(readFileSync(join(await unpacked(fetch.tarball), "src/graph.ts"), "utf8"), "export const graph = 1;\n");
    }
    await rejectsWith(fetchRepository(request({ url: `${base}/public.git`, commit: "main" })), /"main" is not a commit id/);
  });

  test("a server that refuses commits by id hands the commit over with the branch's history; one it lacks is refused", async () => {
    const old = await startGitHost({ protocolV0: true });
    try {
      const first = old.createRepository("old.git", tree(FILES));
      old.commit("old.git", { "src/graph.ts": "export const graph = 2;\n" });
      // A commit the repository does not have (e.g. force-pushed away and collected).
      const gone = "0123456789abcdef0123456789abcdef01234567";
      const cacheDir = join(scratch, "cache-v0");
      // The cache holds the head only (shallow), as after a deploy of the branch.
      await fetchRepository(request({ url: `${old.url}/old.git`, cacheDir }));
      const fetch = request({ url: `${old.url}/old.git`, commit: first, cacheDir });
      assert.equal((await fetchRepository(fetch)).sha, first);
      assert.equal(readFileSync(join(await unpacked(fetch.tarball), "src/graph.ts"), "utf8"), "export const graph = 1;\n");
      await rejectsWith(
        fetchRepository(request({ url: `${old.url}/old.git`, commit: gone, cacheDir: join(scratch, "cache-v0-other") })),
        new RegExp(`Commit ${gone} is no longer in the history of branch main`),
      );
    } finally {
      await old.close();
    }
  });

  test("an unknown branch or tag is a GitFetchError naming it", async () => {
    await rejectsWith(fetchRepository(request({ url: `${base}/public.git`, ref: "nope" })), /has no branch nope/);
    await rejectsWith(fetchRepository(request({ url: `${base}/public.git`, ref: "refs/tags/v9" })), /has no tag v9/);
  });

  test("a private repository is fetched with the right token", async () => {
    const { sha } = await fetchRepository(request({ url: `${base}/private/agent.git`, credentials: { kind: "token", token } }));
    assert.equal(sha, privateCommit);
  });

  test("a wrong or missing token is an authentication error that does not quote the token", async () => {
    const wrong = await rejectsWith(
      fetchRepository(request({ url: `${base}/private/agent.git`, credentials: { kind: "token", token: WRONG_TOKEN } })),
      /Authentication failed .*refused the token/,
    );
    assert.ok(!wrong.message.includes(WRONG_TOKEN));
    assert.ok(!wrong.message.includes(Buffer.from(`x-access-token:${WRONG_TOKEN}`).toString("base64")));
    await rejectsWith(
      fetchRepository(request({ url: `${base}/private/agent.git` })),
      /Authentication failed .*needs credentials/,
    );
  });

  test("an unreachable host, or a path that is no repository, is a GitFetchError", async () => {
    await rejectsWith(fetchRepository(request({ url: `http://127.0.0.1:${closedPort}/public.git` })), /Could not reach/);
    await rejectsWith(fetchRepository(request({ url: `${base}/missing.git` })), /not a git repository/);
  });

  test("a local repository is refused unless allowed", async () => {
    const path = join(host.root, "public.git");
    await rejectsWith(fetchRepository(request({ url: path })), /local path is not allowed/);
    await rejectsWith(fetchRepository(request({ url: pathToFileURL(path).href })), /local path is not allowed/);
    const { sha } = await fetchRepository(request({ url: path, allowLocal: true }));
    assert.equal(sha, secondCommit);
  });

  test("URLs, refs and credentials that do not fit are refused before git runs", async () => {
    const url = `${base}/public.git`;
    await rejectsWith(fetchRepository(request({ url: "ext::sh -c touch% /tmp/pwned" })), /remote helper/);
    await rejectsWith(fetchRepository(request({ url: "--upload-pack=touch /tmp/pwned" })), /is not a repository URL/);
    await rejectsWith(fetchRepository(request({ url: "ssh://git@example.com/acme/agent.git" })), /needs an SSH private key/);
    await rejectsWith(fetchRepository(request({ url: `http://user:pw@127.0.0.1:${closedPort}/x.git` })), /contains a password/);
    await rejectsWith(fetchRepository(request({ url, ref: "refs/pull/1/head" })), /neither a branch nor a tag/);
    await rejectsWith(fetchRepository(request({ url, ref: "a..b" })), /not a valid branch name/);
    await rejectsWith(
      fetchRepository(request({ url, credentials: { kind: "ssh", privateKey: "key", knownHosts: "hosts" } })),
      /SSH key cannot be used/,
    );
  });

  test("concurrent fetches of one repository share the cache safely", async () => {
    const cacheDir = join(scratch, "concurrent-cache");
    const fetches = [1, 2, 3].map(() => request({ url: `${base}/public.git`, cacheDir }));
    const results = await Promise.all(fetches.map((fetch) => fetchRepository(fetch)));
    assert.deepEqual(
      results.map((result) => result.sha),
      [secondCommit, secondCommit, secondCommit],
    );
    for (const fetch of fetches) assert.ok(existsSync(join(await unpacked(fetch.tarball), "langgraph.json")));
    assert.equal(cacheRepositories(cacheDir).length, 1);
  });

  test("a stale lock is removed, a fresh one reported, and a damaged cache rebuilt", async () => {
    const cacheDir = join(scratch, "repair-cache");
    await fetchRepository(request({ url: `${base}/public.git`, cacheDir }));
    const [repo] = cacheRepositories(cacheDir);
    const lock = join(repo, "shallow.lock");

    writeFileSync(lock, "");
    await rejectsWith(fetchRepository(request({ url: `${base}/public.git`, cacheDir })), /cache is busy/);

    const anHourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(lock, anHourAgo, anHourAgo);
    assert.equal((await fetchRepository(request({ url: `${base}/public.git`, cacheDir }))).sha, secondCommit);
    assert.ok(!existsSync(lock));

    rmSync(join(repo, "objects"), { recursive: true });
    assert.equal((await fetchRepository(request({ url: `${base}/public.git`, cacheDir }))).sha, secondCommit);
  });

  test("an abort kills git and rejects", async () => {
    const controller = new AbortController();
    onHangingRequest = () => controller.abort();
    await rejectsWith(
      fetchRepository(request({ url: `${hangingBase}/agent.git`, signal: controller.signal })),
      /was interrupted/,
    );
    await rejectsWith(fetchRepository(request({ url: `${base}/public.git`, signal: controller.signal })), /was interrupted/);
  });
});

describe("fetchRepository over SSH", () => {
  const privateKey = "-----BEGIN OPENSSH PRIVATE KEY-----\nnot-a-real-key-5e6f\n-----END OPENSSH PRIVATE KEY-----";
  const record = join(scratch, "ssh-invocation");

  /** Puts an `ssh` first on PATH that records how git ran it, then refuses as a server would. */
  async function withFakeSsh<T>(body: () => Promise<T>): Promise<T> {
    const bin = mkdtempSync(join(scratch, "fake-ssh-"));
    const script = [
      "#!/bin/sh",
      `printf '%s\\n' "$@" > '${record}'`,
      'while [ $# -gt 0 ]; do case "$1" in -i) key="$2" ;; UserKnownHostsFile=*) hosts=$(printf %s "$1" | cut -d= -f2-) ;; esac; shift; done',
      `stat -c 'key mode %a' "$key" >> '${record}'`,
      'if grep -q changed "$hosts"; then echo "Host key verification failed." >&2; else echo "git@example.com: Permission denied (publickey)." >&2; fi',
      "exit 255",
    ].join("\n");
    writeFileSync(join(bin, "ssh"), `${script}\n`, { mode: 0o755 });
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${path}`;
    try {
      return await body();
    } finally {
      process.env.PATH = path;
    }
  }

  test("uses only the given key and known hosts, in private files removed afterwards", async () => {
    const credentials = { kind: "ssh" as const, privateKey, knownHosts: "example.com ssh-ed25519 AAAAC3Nza" };
    const error = await withFakeSsh(() =>
      rejectsWith(
        fetchRepository(request({ url: "git@example.com:acme/agent.git", credentials })),
        /Authentication failed .*refused the SSH key/,
      ),
    );
    assert.ok(!error.message.includes("not-a-real-key"));
    const args = readFileSync(record, "utf8").split("\n");
    for (const expected of ["IdentitiesOnly=yes", "StrictHostKeyChecking=yes", "git@example.com", "key mode 600"]) {
      assert.ok(args.includes(expected), `ssh was run without ${expected}: ${args.join(" ")}`);
    }
    const keyFile = args[args.indexOf("-i") + 1];
    assert.ok(!existsSync(keyFile), "the key file is removed");
  });

  test("a host key that is not known is its own error", async () => {
    const credentials = { kind: "ssh" as const, privateKey, knownHosts: "example.com ssh-ed25519 changed" };
    await withFakeSsh(() =>
      rejectsWith(
        fetchRepository(request({ url: "ssh://git@example.com/acme/agent.git", credentials })),
        /host key verification failed/,
      ),
    );
  });
});

describe("remoteHead", () => {
  test("names the commit a branch or tag points at now, or undefined for a missing ref", async () => {
    assert.equal(await remoteHead({ url: `${base}/public.git`, ref: "main" }), secondCommit);
    assert.equal(await remoteHead({ url: `${base}/public.git`, ref: "refs/tags/v1" }), firstCommit);
    assert.equal(await remoteHead({ url: `${base}/public.git`, ref: "missing" }), undefined);
    assert.equal(await remoteHead({ url: join(host.root, "public.git"), ref: "main", allowLocal: true }), secondCommit);
  });

  test("uses the token, and fails on authentication without it", async () => {
    const url = `${base}/private/agent.git`;
    assert.equal(await remoteHead({ url, ref: "main", credentials: { kind: "token", token } }), privateCommit);
    await rejectsWith(remoteHead({ url, ref: "main" }), /Authentication failed/);
  });
});

describe("the build log", () => {
  test("shows progress but never a token", () => {
    assert.ok(logged.some((line) => line.includes("Fetched commit")));
    const encodedToken = Buffer.from(`x-access-token:${token}`).toString("base64");
    for (const secret of [token, WRONG_TOKEN, encodedToken, "not-a-real-key"]) {
      assert.ok(!logged.some((line) => line.includes(secret)), `the log shows ${secret}`);
    }
  });
});
