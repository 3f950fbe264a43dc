// The manifests that install Berth into a cluster (deploy/kubernetes) validate against Kubernetes' OpenAPI schemas,
// and the listener's Role grants what a cluster listener uses and nothing cluster-wide.
import { type KubernetesObject, loadAllYaml } from "@kubernetes/client-node";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { validateAll } from "@berth/test-support/kubernetes";

const DIR = fileURLToPath(new URL("../../../../deploy/kubernetes/", import.meta.url));

test("deploy/kubernetes: every file kustomization.yaml lists holds valid objects", () => {
  const kustomization = loadAllYaml(readFileSync(join(DIR, "kustomization.yaml"), "utf8"))[0] as { resources: string[] };
  const objects = kustomization.resources.flatMap(
    (file) => loadAllYaml(readFileSync(join(DIR, file), "utf8")) as KubernetesObject[],
  );
  validateAll(objects);
  const kinds = objects.map((object) => `${object.kind}/${object.metadata?.name}`);
  for (const expected of [
    "Deployment/berth-control-plane",
    "Service/berth-control-plane",
    "Deployment/berth-listener",
    "ServiceAccount/berth-listener",
    "Role/berth-listener",
    "RoleBinding/berth-listener",
  ])
    assert.ok(kinds.includes(expected), `${expected} in ${kinds.join(", ")}`);
  assert.ok(!objects.some((object) => object.kind?.startsWith("Cluster")), "no cluster-wide role");
  const role = objects.find((object) => object.kind === "Role") as unknown as { rules: { resources: string[] }[] };
  const resources = role.rules.flatMap((rule) => rule.resources).sort();
  assert.deepEqual(resources, [
    "deployments",
    "horizontalpodautoscalers",
    "networkpolicies",
    "persistentvolumeclaims",
    "pods",
    "pods/log",
    "scaledobjects",
    "secrets",
    "services",
    "statefulsets",
    "triggerauthentications",
  ]);
});
