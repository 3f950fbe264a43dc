import type { KubernetesObject } from "@kubernetes/client-node";
// What dumpYaml and the object API send: client-node's models in their wire names (a rule's `_from` is `from`).
import { ObjectSerializer } from "@kubernetes/client-node/dist/serializer.js";
import { getSerializationType } from "@kubernetes/client-node/dist/util.js";
import assert from "node:assert/strict";
import { Deployment, StatefulSet } from "kubernetes-models/apps/v1";
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { Role, RoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1";
import { Namespace, PersistentVolumeClaim, Secret, Service, ServiceAccount } from "kubernetes-models/v1";

/** The objects that have Kubernetes models, validated against the OpenAPI schemas; KEDA's, by hand. */
type Validator = new (data: never) => { validate(): void };
const MODELS: Record<string, Validator> = {
  "v1/Namespace": Namespace,
  "v1/ServiceAccount": ServiceAccount,
  "rbac.authorization.k8s.io/v1/Role": Role,
  "rbac.authorization.k8s.io/v1/RoleBinding": RoleBinding,
  "v1/Secret": Secret,
  "v1/Service": Service,
  "v1/PersistentVolumeClaim": PersistentVolumeClaim,
  "apps/v1/Deployment": Deployment,
  "apps/v1/StatefulSet": StatefulSet,
  "autoscaling/v2/HorizontalPodAutoscaler": HorizontalPodAutoscaler,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
};

/** An object as it goes over the wire (dumpYaml and the object API serialize it so). */
export function wireFormOf(object: KubernetesObject): Record<string, unknown> {
  const type = getSerializationType(object.apiVersion, object.kind);
  return JSON.parse(JSON.stringify(ObjectSerializer.serialize(object, type)));
}

function checkKedaShape(object: KubernetesObject): void {
  const spec = (object as { spec?: Record<string, unknown> }).spec;
  assert.ok(spec, `${object.kind} needs a spec`);
  if (object.kind === "TriggerAuthentication") {
    const refs = spec.secretTargetRef as { parameter: string; name: string; key: string }[];
    assert.ok(Array.isArray(refs) && refs.length > 0);
    for (const ref of refs) for (const field of [ref.parameter, ref.name, ref.key]) assert.equal(typeof field, "string");
    return;
  }
  assert.equal(object.kind, "ScaledObject");
  const target = spec.scaleTargetRef as { name: string };
  assert.equal(typeof target.name, "string");
  assert.ok(Number.isInteger(spec.minReplicaCount) && Number.isInteger(spec.maxReplicaCount));
  assert.ok((spec.minReplicaCount as number) <= (spec.maxReplicaCount as number));
  const triggers = spec.triggers as { type: string; metadata: Record<string, unknown>; authenticationRef?: { name: string } }[];
  assert.ok(Array.isArray(triggers) && triggers.length > 0);
  for (const trigger of triggers) {
    assert.equal(typeof trigger.type, "string");
    // KEDA's trigger metadata is a map of strings.
    for (const value of Object.values(trigger.metadata)) assert.equal(typeof value, "string");
  }
}

export function validateAll(objects: KubernetesObject[]): void {
  for (const object of objects) {
    if (object.apiVersion === "keda.sh/v1alpha1") {
      checkKedaShape(object);
      continue;
    }
    const Model = MODELS[`${object.apiVersion}/${object.kind}`];
    assert.ok(Model, `no model for ${object.apiVersion} ${object.kind}`);
    assert.doesNotThrow(() => new Model(wireFormOf(object) as never).validate(), `${object.kind}/${object.metadata?.name}`);
  }
}
