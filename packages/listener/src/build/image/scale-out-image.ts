import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildImage, type ContainerEngine, type EngineLog, imageExists } from "../../engine/docker-engine.js";
import { packWithDockerfile } from "./build-context.js";
import { sharedBuild } from "./shared-builds.js";

/*
 * The image of a scale-out deployment's PostgreSQL and Redis containers:
 * Debian's packages on the Node base image (no public registry is assumed),
 * built once per engine. The two commands below are its entry points.
 */

/** The servers' fixed user ids: a cluster's securityContext names users by number only. */
export const SERVICES_USERS = { db: 10001, cache: 10002 } as const;

/** Where PostgreSQL keeps its cluster: the deployment's named volume is mounted here. */
export const POSTGRES_DATA = "/var/lib/berth-postgres";

const POSTGRES_ENTRYPOINT = `#!/bin/sh
# First start: a cluster whose one role, berth, logs in with POSTGRES_PASSWORD (scram-sha-256, from any address).
set -eu
bin=$(echo /usr/lib/postgresql/*/bin)
data=${POSTGRES_DATA}/data
if [ ! -s "$data/PG_VERSION" ]; then
  umask 077
  printf '%s' "$POSTGRES_PASSWORD" > /tmp/pwfile
  "$bin/initdb" -D "$data" -U berth --auth=scram-sha-256 --pwfile=/tmp/pwfile >/dev/null
  rm -f /tmp/pwfile
  echo "host all all 0.0.0.0/0 scram-sha-256" >> "$data/pg_hba.conf"
fi
exec "$bin/postgres" -D "$data" -c listen_addresses='*' -c unix_socket_directories=/tmp \\
  -c max_connections="\${POSTGRES_MAX_CONNECTIONS:-100}"
`;

const REDIS_ENTRYPOINT = `#!/bin/sh
# A cache and broker only: nothing is persisted (runs and threads live in PostgreSQL).
set -eu
exec redis-server --bind 0.0.0.0 --port 6379 --protected-mode no --save '' --appendonly no \\
  --requirepass "$REDIS_PASSWORD" \${REDIS_MAXMEMORY:+--maxmemory "$REDIS_MAXMEMORY"}
`;

function dockerfileOf(base: string): string {
  return [
    `FROM ${base}`,
    // The packages keep users that exist: these get fixed ids.
    `RUN groupadd -r -g ${SERVICES_USERS.db} postgres && useradd -r -u ${SERVICES_USERS.db} -g postgres -d /var/lib/postgresql postgres \\`,
    ` && groupadd -r -g ${SERVICES_USERS.cache} redis && useradd -r -u ${SERVICES_USERS.cache} -g redis -d /var/lib/redis redis`,
    // No cluster from the package's post-install: the entry point makes its own in the volume.
    "RUN mkdir -p /etc/postgresql-common && echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.conf \\",
    " && apt-get update && apt-get install -y --no-install-recommends postgresql redis-server \\",
    ` && rm -rf /var/lib/apt/lists/* && mkdir -p ${POSTGRES_DATA} && chown postgres:postgres ${POSTGRES_DATA}`,
    "COPY berth-postgres berth-redis /usr/local/bin/",
    "",
  ].join("\n");
}

/** The scale-out services image on this engine: built on first use (Debian's postgresql and redis-server), then reused. */
export function ensureScaleOutImage(engine: ContainerEngine, log: EngineLog): Promise<string> {
  const base = engine.baseImage;
  const dockerfile = dockerfileOf(base);
  const hash = createHash("sha256").update(dockerfile).update(POSTGRES_ENTRYPOINT).update(REDIS_ENTRYPOINT);
  const tag = `berth/scale-out-services:${hash.digest("hex").slice(0, 16)}`;
  return sharedBuild(`${engine.address} ${tag}`, () => buildOnce(engine, tag, dockerfile, log));
}

async function buildOnce(engine: ContainerEngine, tag: string, dockerfile: string, log: EngineLog): Promise<string> {
  if (await imageExists(engine, tag)) return tag;
  if (!(await imageExists(engine, engine.baseImage))) {
    throw new Error(`The Node base image ${engine.baseImage} is missing: make it once with scripts/node-base-image.sh`);
  }
  log({ level: "info", message: `Building the PostgreSQL and Redis image ${tag} (once per engine)` });
  const dir = await mkdtemp(join(tmpdir(), "berth-scale-out-"));
  try {
    await writeFile(join(dir, "berth-postgres"), POSTGRES_ENTRYPOINT, { mode: 0o755 });
    await writeFile(join(dir, "berth-redis"), REDIS_ENTRYPOINT, { mode: 0o755 });
    await buildImage(engine, packWithDockerfile(dir, undefined, dockerfile), {
      tag,
      labels: { "berth.managed": "runtime" },
      log,
    });
    return tag;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
