import { execFileSync, spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A git host for tests: bare repositories in a folder, served over HTTP on
 * loopback by git's own smart-HTTP backend (`git http-backend` as a CGI).
 * Repositories under `private/` answer only Basic credentials with `token`.
 */
export interface GitHost {
  root: string;
  url: string;
  token: string;
  /** Creates a bare repository `name` (e.g. "agent.git") with `files` as its first commit on main; returns its sha. */
  createRepository(name: string, files: Record<string, string> | string): string;
  /** Commits `files` (path → content) on `branch` of the repository and pushes; returns the new sha. */
  commit(name: string, files: Record<string, string>, branch?: string): string;
  /** Tags the branch's head (annotated) and pushes the tag; returns the tagged commit's sha. */
  tag(name: string, tag: string, branch?: string): string;
  /** Resolves once the repository's refs were asked for `count` more times (each ls-remote or fetch asks once). */
  refsAsked(name: string, count: number): Promise<void>;
  close(): Promise<void>;
}

const GIT_ENV = {
  GIT_AUTHOR_NAME: "Test",
  GIT_AUTHOR_EMAIL: "test@example.com",
  GIT_COMMITTER_NAME: "Test",
  GIT_COMMITTER_EMAIL: "test@example.com",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
};

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, env: { ...process.env, ...GIT_ENV }, encoding: "utf8" }).trim();
}

/** `protocolV0`: serve git's original protocol only, as older servers do (they refuse commits asked for by id). */
export async function startGitHost(options: { protocolV0?: boolean } = {}): Promise<GitHost> {
  const root = mkdtempSync(join(tmpdir(), "berth-git-host-"));
  const work = mkdtempSync(join(tmpdir(), "berth-git-work-"));
  const token = "test-token-s3cr3t";
  const backend = join(git(root, "--exec-path"), "git-http-backend");

  const refsWaiters: { path: string; left: number; resolve: () => void }[] = [];
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://host");
    if (url.pathname.endsWith("/info/refs")) {
      for (const waiter of refsWaiters.filter((entry) => `/${entry.path}/info/refs` === url.pathname)) {
        waiter.left -= 1;
        if (waiter.left === 0) {
          refsWaiters.splice(refsWaiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      }
    }
    if (url.pathname.startsWith("/private/")) {
      const expected = `Basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`;
      const given = request.headers.authorization;
      const anyUser = given?.startsWith("Basic ") && Buffer.from(given.slice(6), "base64").toString().endsWith(`:${token}`);
      if (given !== expected && !anyUser) {
        response.writeHead(401, { "www-authenticate": 'Basic realm="git"' });
        return void response.end("authentication required");
      }
    }
    const cgi = spawn(backend, [], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: "1",
        PATH_INFO: url.pathname,
        REQUEST_METHOD: request.method,
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: request.headers["content-type"] ?? "",
        REMOTE_ADDR: "127.0.0.1",
        REMOTE_USER: "test",
        ...(request.headers["content-encoding"] ? { HTTP_CONTENT_ENCODING: request.headers["content-encoding"] } : {}),
        ...(request.headers["git-protocol"] && !options.protocolV0
          ? { GIT_PROTOCOL: String(request.headers["git-protocol"]) }
          : {}),
      },
      stdio: ["pipe", "pipe", "inherit"],
    });
    request.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on("data", (chunk: Buffer) => {
      if (headersDone) return void response.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      for (const line of head.subarray(0, end).toString().split("\r\n")) {
        const colon = line.indexOf(":");
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === "status") status = Number.parseInt(value, 10);
        else response.setHeader(name, value);
      }
      response.writeHead(status);
      response.write(head.subarray(end + 4));
    });
    cgi.stdout.on("end", () => response.end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const clone = (name: string) => {
    const dir = join(work, name.replace(/\//g, "_"));
    return dir;
  };
  const host: GitHost = {
    root,
    url,
    token,
    createRepository(name, files) {
      const bare = join(root, name);
      mkdirSync(bare, { recursive: true });
      git(bare, "init", "--bare", "--initial-branch=main");
      const dir = clone(name);
      git(work, "clone", "--quiet", bare, dir);
      git(dir, "checkout", "--quiet", "-b", "main");
      if (typeof files === "string") cpSync(files, dir, { recursive: true });
      else for (const [path, content] of Object.entries(files)) writeFileSync(join(dir, path), content);
      git(dir, "add", "-A");
      git(dir, "commit", "--quiet", "-m", "first");
      git(dir, "push", "--quiet", "origin", "main");
      return git(dir, "rev-parse", "HEAD");
    },
    commit(name, files, branch = "main") {
      const dir = clone(name);
      const branches = git(dir, "branch", "--list", branch);
      git(dir, "checkout", "--quiet", ...(branches ? [branch] : ["-b", branch]));
      for (const [path, content] of Object.entries(files)) writeFileSync(join(dir, path), content);
      git(dir, "add", "-A");
      git(dir, "commit", "--quiet", "-m", `change on ${branch}`);
      git(dir, "push", "--quiet", "origin", branch);
      return git(dir, "rev-parse", "HEAD");
    },
    tag(name, tag, branch = "main") {
      const dir = clone(name);
      git(dir, "checkout", "--quiet", branch);
      git(dir, "tag", "-a", tag, "-m", tag);
      git(dir, "push", "--quiet", "origin", tag);
      return git(dir, "rev-parse", "HEAD");
    },
    refsAsked: (name, count) => new Promise((resolve) => refsWaiters.push({ path: name, left: count, resolve })),
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(root, { recursive: true, force: true });
      rmSync(work, { recursive: true, force: true });
    },
  };
  return host;
}
