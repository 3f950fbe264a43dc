// What the control plane's API answers and takes, for tests to type their calls: the control plane's own schema types,
// and the few shapes that have no schema there.
import type {
  BulkDeleteResult,
  Deployment,
  Listener,
  LogLine,
  Page,
  Revision,
  Secret,
  SourceConfig,
  SourceRevisionConfig,
  UploadUrl,
} from "@berth/control-plane/wire";

export type { Deployment, Listener, LogLine, Page, Revision, Secret, SourceConfig, SourceRevisionConfig, UploadUrl };

/** What `DELETE /v2/deployments?deployment_ids=…` answers. */
export type BulkDeleteBody = BulkDeleteResult;

export interface ValidationDetail {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** An error answer: a message, or a 422's list of what failed validation. */
export interface ErrorBody {
  detail: string | ValidationDetail[];
}

/** What the upload URL's PUT answers. */
export interface Uploaded {
  object_path: string;
  size_bytes: number;
  sha256: string;
}

// What `berth control-plane tenants|keys|integrations` print (JSON on stdout).

export interface Tenant {
  id: string;
  name: string;
  created_at: string;
}

export interface ApiKey {
  id: string;
  name: string | null;
  key: string;
  prefix: string;
  tenant_ids: string[];
  all_tenants: boolean;
  created_at: string;
}

export interface Integration {
  id: string;
  tenant_id: string;
  name: string;
  provider: string;
  installation_id: string;
  repos: { id: string; name: string; owner: string; url: string; default_branch: string }[];
  created_at: string;
}
