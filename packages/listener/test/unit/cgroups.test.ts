import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { findRoots } from "../../src/sandbox/cgroups.js";

// Where the listener puts its cgroups, read from the mount table and
// /proc/self/cgroup of the host kinds it meets. (The limits themselves are
// tested for real in test/resource-limits.test.ts.)

const root = mkdtempSync(join(tmpdir(), "berth-cgroups-unit-"));
after(() => rmSync(root, { recursive: true, force: true }));

const HYBRID_MOUNTS = [
  "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755",
  "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu",
  "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory",
  "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids",
  "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw",
].join("\n");

test("cgroup v1, also on a hybrid host: below the listener's own cgroup in each of memory, pids and cpu", () => {
  const self = "8:pids:/\n4:memory:/process_api/abc\n1:cpu:/\n0::/\n";
  assert.deepEqual(findRoots(HYBRID_MOUNTS, self, "berth-x"), {
    version: 1,
    roots: new Map([
      ["memory", "/sys/fs/cgroup/memory/process_api/abc/berth-x"],
      ["pids", "/sys/fs/cgroup/pids/berth-x"],
      ["cpu", "/sys/fs/cgroup/cpu/berth-x"],
    ]),
  });
});

test("cgroup v2: one root below the listener's cgroup, with the controllers it has", () => {
  const unified = join(root, "unified");
  mkdirSync(join(unified, "system.slice", "berth.service"), { recursive: true });
  writeFileSync(join(unified, "system.slice", "berth.service", "cgroup.controllers"), "cpuset cpu io memory pids\n");
  const mounts = `30 23 0:26 / ${unified} rw,nosuid - cgroup2 cgroup2 rw,nsdelegate`;
  const found = findRoots(mounts, "0::/system.slice/berth.service\n", "berth-x");
  const expected = join(unified, "system.slice", "berth.service", "berth-x");
  assert.deepEqual(found, {
    version: 2,
    roots: new Map([
      ["memory", expected],
      ["pids", expected],
      ["cpu", expected],
    ]),
  });
});

test("no cgroups to use: the reason, for the start line", () => {
  const unified = join(root, "poor");
  mkdirSync(join(unified, "job"), { recursive: true });
  writeFileSync(join(unified, "job", "cgroup.controllers"), "hugetlb\n");
  const mounts = `30 23 0:26 / ${unified} rw - cgroup2 cgroup2 rw`;
  assert.match(
    String(findRoots(mounts, "0::/job\n", "berth-x")),
    /does not have the memory and pids controllers \(it has: hugetlb\)/,
  );
  assert.match(String(findRoots("", "", "berth-x")), /neither cgroup v1 memory and pids hierarchies nor a cgroup v2 hierarchy/);
});
