import assert from "node:assert/strict";
import { type Api, createDeployment, type Deployment, externalImageBody, type Listener, uniqueName } from "@berth/test-support";

/** The keys the control plane mints for a deployment, as its listener reads them from its assignment. */
export interface DeploymentKeys {
  deployment: Deployment;
  /** LANGSMITH_API_KEY of its processes; `tracingProject` is their LANGSMITH_PROJECT. */
  tracingKey: string;
  tracingProject: string;
  /** BERTH_AUTH_SERVICE_KEY of its processes. */
  authServiceKey: string;
}

interface Assignment {
  id: string;
  tracing: { project: string; api_key: string };
  auth_service: { api_key: string };
}

/**
 * Deployments of the workspace on a remote listener registered here, and the
 * keys the control plane hands that listener for them (GET
 * /v2/listeners/{id}/assignments): the keys a deployment's processes get.
 */
export async function deploymentsWithKeys(client: Api, names: string[]): Promise<DeploymentKeys[]> {
  const listener = await client.post<Listener>("/v2/listeners", { compute_type: "docker", compute_id: uniqueName("host") });
  assert.equal(listener.status, 201, JSON.stringify(listener.body));
  const deployments = [];
  for (const name of names) {
    deployments.push(
      await createDeployment(client, externalImageBody(name, { source_config: { listener_id: listener.body.id } })),
    );
  }
  const assigned = await client.get<{ resources: Assignment[] }>(`/v2/listeners/${listener.body.id}/assignments`);
  assert.equal(assigned.status, 200, JSON.stringify(assigned.body));
  return deployments.map((deployment) => {
    const assignment = assigned.body.resources.find((candidate) => candidate.id === deployment.id);
    assert.ok(assignment, `deployment ${deployment.name} is assigned to the listener`);
    return {
      deployment,
      tracingKey: assignment.tracing.api_key,
      tracingProject: assignment.tracing.project,
      authServiceKey: assignment.auth_service.api_key,
    };
  });
}
