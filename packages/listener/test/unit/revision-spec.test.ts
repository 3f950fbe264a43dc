import assert from "node:assert/strict";
import { test } from "node:test";
import type { AssignedRevision } from "@berth/listener-protocol";
import { resourcesOf } from "../../src/listener/revision-spec.js";
import { specWith } from "../helpers/revision-specs.js";

const revision = (fields: Parameters<typeof specWith>[0]) => ({ spec: specWith(fields) }) as AssignedRevision;

test("deployment_type sizes a revision whose resource_spec sets no limits; resource_spec wins", () => {
  const none = { processes: null, dataDiskMb: null, tmpDiskMb: null };
  assert.deepEqual(resourcesOf(revision({ deployment_type: "dev_free" })), {
    memoryLimitMb: 512,
    cpu: 0.5,
    processes: 128,
    dataDiskMb: 512,
    tmpDiskMb: 256,
  });
  assert.deepEqual(resourcesOf(revision({ deployment_type: "dev" })), {
    memoryLimitMb: 1024,
    cpu: 1,
    processes: 256,
    dataDiskMb: 2048,
    tmpDiskMb: 1024,
  });
  assert.deepEqual(resourcesOf(revision({ deployment_type: "prod" })), { memoryLimitMb: null, cpu: null, ...none });
  assert.deepEqual(resourcesOf(revision({})), { memoryLimitMb: null, cpu: null, ...none });
  assert.deepEqual(
    resourcesOf(revision({ deployment_type: "dev", resources: { memory_limit_mb: 4096, cpu_limit: 2, db_storage_gi: 3 } })),
    { memoryLimitMb: 4096, cpu: 2, processes: 256, dataDiskMb: 3072, tmpDiskMb: 1024 },
  );
});
