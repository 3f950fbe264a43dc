/** Usage texts, kept apart from the commands so `berth --help` loads none of them. */
export const CHECK_USAGE = `  check [dir-or-langgraph.json]   Load every graph of a project once (no server, no storage);
                                  exit 0 listing the graphs, 1 with the reason one fails to load
`;

export const COMPILE_USAGE = `  compile [dir-or-langgraph.json] Transpile the project's TypeScript modules into .berth/compiled/ beside langgraph.json:
                                  \`berth serve\` and \`berth check\` then load them with no TypeScript loader (a build does this)
`;

export const CONTROL_PLANE_USAGE = `  control-plane                   Serve the /v2/deployments API (SQLite under --data-dir; PostgreSQL with DATABASE_URL)
      --port <n>                  Port (default 8000; 0 picks a free one)
      --host <addr>               Address (default 127.0.0.1)
      --data-dir <dir>            Database, secrets key, uploads and the embedded listener's builds (default .berth/control-plane)
      --router-port <n>           Where the embedded listener serves deployment URLs (default BERTH_ROUTER_PORT or 8080)
      --no-listener               No embedded listener: deployments run on listeners started with \`berth listener\`
      --trust-all-code            Without a sandbox, run every workspace's code anyway (default BERTH_TRUST_ALL_CODE; docs/security.md)
  control-plane tenants create --name <name> | list
  control-plane keys create (--tenant <id>... | --all-tenants) [--name <name>] | list | revoke <key-id>
  control-plane integrations add --tenant <id> --name <name> [--kind git|github|gitlab|gitea|local] [--base-url U]
      [--token-file F | --ssh-key-file F --known-hosts-file F] [--repo <url>[#<branch>]...] | list --tenant <id>
                                  (admin commands take --data-dir too and print JSON)
`;

export const LISTENER_USAGE = `  listener                        Run deployments of the control plane on this machine (pulls work over HTTP)
      --control-plane <url>       The control plane (default BERTH_CONTROL_PLANE_URL)
      --api-key <key>             A key of the listener's workspace (default BERTH_LISTENER_API_KEY)
      --listener-id <id>          The listener (POST /v2/listeners); it runs the deployments assigned to it
      --tenant <id>               X-Tenant-Id, for a key that reaches several workspaces
      --data-dir <dir>            Builds and the deployments' databases (default .berth/listener)
      --router-host <addr>        Where deployment URLs are served (default 127.0.0.1)
      --router-port <n>           (default 8080)
      --router-public-url <url>   Base of deployment URLs when clients reach the router by another address
      --trust-all-code            Without a sandbox, run every workspace's code anyway (default BERTH_TRUST_ALL_CODE; docs/security.md)
      --compute local|docker|cluster  Processes, containers or a Kubernetes cluster (default BERTH_LISTENER_COMPUTE, else the
                                  listener's registered compute_type)
      --engine <address>          The Docker Engine API of --compute docker, and where --compute cluster builds (default BERTH_CONTAINER_ENGINE, DOCKER_HOST; docs/containers.md)
      --kubeconfig <file>         The cluster of --compute cluster (default KUBECONFIG; in a pod: its service account)
      --kube-context <name>       A context of the kubeconfig
      --cluster-namespace <ns>    Where deployments go without listener_config.cluster_namespace (default BERTH_CLUSTER_NAMESPACE, default)
      --keda                      The cluster has KEDA: workers scale on pending runs (default BERTH_CLUSTER_KEDA)
      --image-registry <host/path> Where --compute cluster pushes the images it builds (default BERTH_CLUSTER_IMAGE_REGISTRY; docs/cluster.md)
      --render <deployment id>    Print the Kubernetes objects of that deployment's latest revision as YAML and exit (docs/cluster.md)
`;

export const BASE_IMAGE_USAGE = `  base-image                      Build berth/langgraphjs-api:<node major> in a container engine and print its name: the
                                  --base-image of the official CLI's local \`langgraphjs deploy\` (docs/control-plane.md)
      --engine <address>          The Docker Engine API (default BERTH_CONTAINER_ENGINE, DOCKER_HOST)
`;

const CONNECTION_USAGE = `Connection (every command below; each setting from the flag, else the environment, else what
\`berth login\` saved, for its own URL only):
  --url <url>        The control plane (default BERTH_URL, else the saved one, else http://127.0.0.1:8000)
  --api-key <key>    An API key (default BERTH_API_KEY, else the saved one, else .berth/control-plane/admin.key,
                     which \`npm start\` writes)
  --tenant <id>      X-Tenant-Id, for a key that reaches several workspaces (default BERTH_TENANT_ID, else the saved one)
  --json             Print machine-readable JSON only (on stdout)
  -h, --help         This help
`;

export const DEPLOY_USAGE = `Usage: berth deploy [dir] [--name <name>] [--env-file <file>]
       berth deploy --repo <url> [--branch <b> | --tag <t>] [--integration <name>] [--build-on-push] [options]

Packs the project in dir (default .: its langgraph.json, honouring .gitignore, without node_modules, .git and .berth),
uploads it, creates the internal_source deployment of that name (default: the folder's name) or updates it, and follows
the new revision's status and build log on stderr. Prints the deployment's URL on stdout and exits 0 once it is DEPLOYED;
on a failure prints the reason and the last 30 log lines on stderr and exits 1. Refuses .env files (not .env.example),
private keys and symbolic links before uploading anything, and projects over 200 MB packed. Ctrl-C stops following only.

  --name <name>          The deployment (default: the folder's name; with --repo, the repository's)
  --env-file <file>      Send the file's variables (dotenv syntax) as the deployment's secrets: each one set, the
                         deployment's other secrets kept. The file itself is never uploaded
  --repo <url>           Deploy a git repository instead (a repo_host deployment; docs/git-deployments.md): created, or
                         updated to a new revision of the ref when one of that name tracks the same repository
  --branch <b>           The branch to track (default: the repository's default branch when the integration lists it,
                         else main)
  --tag <t>              A tag instead of a branch (no --build-on-push)
  --integration <name>   The git integration (name or id; default: the workspace's only one, or the only one whose
                         base URL holds the repository)
  --config <path>        Where langgraph.json is in the repository (default langgraph.json)
  --build-on-push        Deploy each push to the branch; --no-build-on-push turns it off

${CONNECTION_USAGE}`;

export const SECRETS_USAGE = `Usage: berth secrets <list|set|unset> <deployment> [NAME] [options]

  list <deployment>                   The names of the deployment's secrets (values are never shown, nor answered)
  set <deployment> NAME [--from-file <file>]
                                      Set a secret: its value typed at a prompt that does not echo, piped on stdin
                                      (less one trailing newline), or a file's content as it is
  unset <deployment> NAME             Remove a secret
  --no-follow                         Print the revision the change made and exit, instead of following it

A change makes a new revision of the same source, followed like \`berth deploy\`: the URL on stdout once DEPLOYED.

${CONNECTION_USAGE}`;

export const INTEGRATIONS_USAGE = `Usage: berth integrations <add|list|hook> [options]

  add --name <name> [--kind git|github|gitlab|gitea|local] [--base-url <url-or-folder>]
      [--token-file <file> | --ssh-key-file <file> --known-hosts-file <file>] [--repo <url>[#<branch>]...]
      [--webhook-secret-file <file>]
                                      Connect a git host to the workspace (POST /v1/integrations/repo_host). Prints
                                      it with its webhook URL and secret, shown this once. Credentials come from
                                      files, never the command line. A local integration needs an operator's key
  list                                The workspace's integrations
  hook <integration> (--webhook-secret-file <file> | --rotate-secret)
                                      Print a post-receive hook for a local integration's bare repositories: it
                                      signs each push with the webhook secret and sends it to the control plane, so
                                      --build-on-push deployments build it. --rotate-secret makes a new secret
                                      (hooks installed before stop working)

${CONNECTION_USAGE}`;

export const DEPLOYMENTS_USAGE = `Usage: berth deployments <list|get|delete> [options]

  list [--name-contains <text>] [--limit <n>]   The workspace's deployments, newest first (default limit 20, at most 100)
  get <deployment>                              One deployment (by id or name)
  delete <deployment>                           Delete a deployment (by id or name); its URL stops answering

${CONNECTION_USAGE}`;

export const REVISIONS_USAGE = `Usage: berth revisions <list|get|redeploy|interrupt> <deployment> [revision] [options]

  list <deployment> [--limit <n>] [--all]       The deployment's revisions, newest first (default limit 20, at most 100),
                                                the one serving and those replaced marked so beside their status.
                                                A revision that never had source (a new deployment's first one, which
                                                waited for the upload that came with the next) is left out; --all
                                                shows it. --json prints the API's page unchanged
  get <deployment> [revision]                   One revision (default the latest), with its status, reason and
                                                conditions (built, serving, healthy, replaced)
  redeploy <deployment> [revision] [--no-follow]
                                                A new revision deploying that DEPLOYED revision's build again, without a
                                                build (default the latest; an earlier one: a rollback). Follows it like
                                                \`berth deploy\`: the URL on stdout once DEPLOYED, else the reason, exit 1.
                                                --no-follow prints the new revision's id and exits
  interrupt <deployment> [revision]             Stop a revision in progress (default the latest): it ends INTERRUPTED

${CONNECTION_USAGE}`;

export const LOGS_USAGE = `Usage: berth logs <deployment> [--revision <id>] [--build] [--follow]

  --revision <id>    A revision's logs (default: server logs of every revision; build logs of the latest revision)
  --build            Build logs instead of server logs
  --follow           Keep printing new lines: build logs until the revision is final (exit 1 unless DEPLOYED),
                     server logs until Ctrl-C

${CONNECTION_USAGE}`;

export const REMOTE_USAGE = `  login [--url <url>]             Check an API key (--api-key, else typed or piped on stdin) and save it, with
                                  --tenant, for the commands below (in $XDG_CONFIG_HOME/berth/config.json, else
                                  ~/.config/berth/config.json)
  logout                          Delete that file
  deploy [dir] [--name <name>]    Pack, upload and deploy a project to a control plane; print its URL
                                  (--env-file <file>: its variables as secrets; --repo <url>: deploy from git)
  secrets list|set|unset <deployment> [NAME]
                                  A deployment's secrets: names listed, values set from stdin or a file
  integrations add|list|hook      The workspace's git integrations; a post-receive hook for a local one
  deployments list|get|delete     The workspace's deployments
  revisions list|get|redeploy|interrupt <deployment> [revision]
                                  A deployment's revisions; redeploy one (a rollback), or stop one in progress
  logs <deployment>               Build (--build) or server logs, [--revision <id>] [--follow]
                                  (each takes --url, --api-key, --tenant, --json; \`berth <command> --help\`)
`;

export const LOGIN_USAGE = `Usage: berth login [--url <url>] [--api-key <key>] [--tenant <id>] [--json]

Checks the key against the control plane (GET /v2/deployments?limit=1), then saves url, key and tenant in
$XDG_CONFIG_HOME/berth/config.json (else ~/.config/berth/config.json; readable by its owner only). Without --api-key the
key is read from stdin: typed at a prompt that does not echo it, or the first line piped in (echo "$KEY" | berth login).
A refused key (401, 403) saves nothing, exit 1. Later commands use what was saved when neither a flag nor the
environment says otherwise, and send the key only to the saved URL. --json prints what was saved, without the key.

  --url <url>        The control plane (default BERTH_URL, else http://127.0.0.1:8000)
  --api-key <key>    The key (visible to other users in \`ps\`: prefer the prompt or a pipe)
  --tenant <id>      The workspace, for a key that reaches several (default BERTH_TENANT_ID)
  --json             Print JSON only
  -h, --help         This help
`;

export const LOGOUT_USAGE = `Usage: berth logout [--json]

Deletes the file \`berth login\` wrote; later commands take their connection from flags, environment or defaults again.
`;

/** \`berth <command> --help\` for the commands whose texts are also parts of \`berth --help\`. */
export const CHECK_HELP = `Usage: berth check [dir-or-langgraph.json]\n\n${CHECK_USAGE}`;
export const COMPILE_HELP = `Usage: berth compile [dir-or-langgraph.json]\n\n${COMPILE_USAGE}`;
export const LISTENER_HELP = `Usage: berth listener --control-plane <url> --api-key <key> --listener-id <id> [options]\n\n${LISTENER_USAGE}`;
export const BASE_IMAGE_HELP = `Usage: berth base-image [--engine <address>]\n\n${BASE_IMAGE_USAGE}`;
export const CONTROL_PLANE_HELP = `Usage: berth control-plane [options]
       berth control-plane tenants|keys|integrations <action> [options]

${CONTROL_PLANE_USAGE}`;
