#!/usr/bin/env bash
# Builds Berth's own container image from the package tarballs `npm run pack` writes to packs/: the control plane
# (with its dashboard), the listener and the agent server in one image, installed with npm on the project's Node
# base image (scripts/node-base-image.sh), run as the non-root user `berth` (uid 10001) with `berth` as entrypoint.
#   DOCKER_HOST=unix:///... scripts/berth-image.sh [TAG]     (default berth/berth:<the CLI's version>)
#   BERTH_PACKS_DIR=DIR      the tarballs (default packs/ at the repository's root)
#   BERTH_BASE_IMAGE=IMAGE   the base (default berth/node-base:<node major>, made here when missing)
# Third-party dependencies come from the npm registry during the build (the base image trusts this machine's CA
# bundle, so an intercepting proxy works too). better-sqlite3's native addon is this machine's compiled one when the
# build finds it fits (same version, Node ABI, platform and architecture, a glibc new enough, and it loads); otherwise
# the build compiles it. Prints the image's tag on stdout.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
packs="${BERTH_PACKS_DIR:-$root/packs}"
major="$(node -p 'process.versions.node.split(".")[0]')"
base="${BERTH_BASE_IMAGE:-berth/node-base:$major}"
command -v docker >/dev/null || { echo "berth-image: the docker CLI is missing (apt-get install docker.io)" >&2; exit 1; }
shopt -s nullglob
tarballs=("$packs"/*.tgz)
[ "${#tarballs[@]}" -gt 0 ] || { echo "berth-image: no package tarballs in $packs: run \`npm run pack\` first" >&2; exit 1; }

# The tarball with the `berth` command names the version.
version=""
for tarball in "${tarballs[@]}"; do
  version="$(tar -xzOf "$tarball" package/package.json |
    node -e 'const p = JSON.parse(require("fs").readFileSync(0, "utf8")); if (p.bin?.berth) process.stdout.write(p.version)')"
  [ -n "$version" ] && break
done
[ -n "$version" ] || { echo "berth-image: no tarball in $packs provides the berth command" >&2; exit 1; }
tag="${1:-berth/berth:$version}"

if ! docker image inspect "$base" >/dev/null 2>&1; then
  if [ -z "${BERTH_BASE_IMAGE:-}" ]; then "$root/scripts/node-base-image.sh" "$base" >&2; else
    echo "berth-image: the base image $base is missing from the engine" >&2; exit 1
  fi
fi

context="$(mktemp -d)"
trap 'rm -rf "$context" "$context.log"' EXIT
mkdir "$context/packs" "$context/node-headers"
cp "${tarballs[@]}" "$context/packs/"
# Node's headers, for better-sqlite3's addon: those of this machine's Node, the one the base image carries (node-gyp
# would download them from nodejs.org, which an image build may not reach). Without them node-gyp tries that anyway.
headers="$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")/include/node"
if [ -f "$headers/node_version.h" ]; then
  mkdir -p "$context/node-headers/include"
  cp -a "$headers" "$context/node-headers/include/node"
fi
# better-sqlite3's addon as this machine compiled it, and what it was built for: the build uses it instead of
# compiling one (minutes) when it fits. The base image likely carries this machine's Node, but the version the
# tarballs resolve to, the image's Node and its glibc are only known inside the build, so the check runs there.
mkdir "$context/host-addon"
host_sqlite="$(cd "$root" &&
  node -p 'require("path").dirname(require.resolve("better-sqlite3/package.json"))' 2>/dev/null || true)"
if [ -n "$host_sqlite" ] && [ -f "$host_sqlite/build/Release/better_sqlite3.node" ]; then
  cp "$host_sqlite/build/Release/better_sqlite3.node" "$context/host-addon/"
  node -e 'process.stdout.write(JSON.stringify({ version: require(process.argv[1] + "/package.json").version,
    modules: process.versions.modules, platform: process.platform, arch: process.arch }))' "$host_sqlite" \
    >"$context/host-addon/built-for.json"
fi
cat >"$context/reuse-addon.cjs" <<'SCRIPT'
// Puts the host's better-sqlite3 addon in place when it fits this image, else exits 1 (the build then compiles one).
const fs = require("node:fs");
const { execFileSync } = require("node:child_process");
const refuse = (why) => { console.log(`berth-image: compiling better-sqlite3's addon: ${why}`); process.exit(1); };
const from = "/tmp/host-addon";
if (!fs.existsSync(`${from}/built-for.json`)) refuse("this machine has no compiled addon");
const host = JSON.parse(fs.readFileSync(`${from}/built-for.json`, "utf8"));
const installed = require("/opt/berth/node_modules/better-sqlite3/package.json").version;
if (host.version !== installed) refuse(`this machine's is for better-sqlite3 ${host.version}, the image has ${installed}`);
const here = { modules: process.versions.modules, platform: process.platform, arch: process.arch };
for (const [what, value] of Object.entries(here))
  if (host[what] !== value) refuse(`this machine's is for ${what} ${host[what]}, the image's Node has ${value}`);
// The newest glibc symbol version the addon links against, against the image's glibc.
const addon = fs.readFileSync(`${from}/better_sqlite3.node`);
const version = (text) => text.split(".").map(Number);
const newer = (a, b) => {
  for (let i = 0; i < Math.max(a.length, b.length); i++)
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  return false;
};
const needed = [...addon.toString("latin1").matchAll(/GLIBC_([0-9]+(?:\.[0-9]+)+)/g)].map((m) => version(m[1]))
  .reduce((a, b) => (newer(b, a) ? b : a), [0]);
const runtime = process.report.getReport().header.glibcVersionRuntime;
if (!runtime) refuse("the image has no glibc");
if (newer(needed, version(runtime))) refuse(`this machine's needs glibc ${needed.join(".")}, the image has ${runtime}`);
const target = "/opt/berth/node_modules/better-sqlite3/build/Release";
fs.mkdirSync(target, { recursive: true });
fs.copyFileSync(`${from}/better_sqlite3.node`, `${target}/better_sqlite3.node`);
try {
  execFileSync(process.execPath, ["-e", "require('better-sqlite3')(':memory:').close()"],
    { cwd: "/opt/berth", stdio: "pipe" });
} catch (error) {
  fs.rmSync("/opt/berth/node_modules/better-sqlite3/build", { recursive: true, force: true });
  refuse(`this machine's does not load here: ${String(error.stderr).trim().split("\n")[0]}`);
}
console.log(`berth-image: reusing this machine's better-sqlite3 ${installed} addon (ABI ${host.modules}, ${host.arch})`);
SCRIPT
# Install scripts run for the packages that need theirs (as in the repository's package.json): esbuild checks its
# binary, better-sqlite3 builds its addon only when this machine's does not fit (turned on below); the others' (ssh2's
# and cpu-features' optional addons, protobufjs) are skipped.
install_manifest='{"name":"berth-image","private":true,"allowScripts":{"better-sqlite3":false,"esbuild":true,"@swc/core":false,"cpu-features":false,"protobufjs":false,"ssh2":false}}'
cat >"$context/Dockerfile" <<DOCKERFILE
# Stage 1: the install. better-sqlite3's addon is the host's when it fits (reuse-addon.cjs); otherwise it is compiled
# here (its prebuilt binaries come from GitHub, which an image build may not reach), with Debian's compilers, which
# the final image does not carry, and the host's Node headers.
FROM $base AS install
# Every tarball in one install, so the packages' dependencies on each other resolve to these tarballs, not the registry.
COPY packs/ /tmp/packs/
COPY node-headers/ /tmp/node-headers/
COPY host-addon/ /tmp/host-addon/
COPY reuse-addon.cjs /tmp/reuse-addon.cjs
WORKDIR /opt/berth
RUN if [ -d /tmp/node-headers/include ]; then export npm_config_nodedir=/tmp/node-headers; fi \\
  && printf '%s\\n' '$install_manifest' >package.json \\
  && npm install --omit=dev --no-audit --no-fund --no-update-notifier /tmp/packs/*.tgz \\
  && if ! node /tmp/reuse-addon.cjs; then \\
       apt-get update && apt-get install -y --no-install-recommends python3 make g++ \\
       && sed -i 's/"better-sqlite3":false/"better-sqlite3":true/' package.json \\
       && npm rebuild better-sqlite3 --no-audit --no-fund --no-update-notifier; \\
     fi \\
  && node -e "require('better-sqlite3')(':memory:').close()" \\
  && rm -rf node_modules/better-sqlite3/build/Release/obj* node_modules/better-sqlite3/build/Release/*.a \\
     node_modules/better-sqlite3/deps node_modules/better-sqlite3/src /tmp/host-addon

# Stage 2: the image. git and ssh fetch repo_host deployments' sources (docs/git-deployments.md).
FROM $base
RUN apt-get update && apt-get install -y --no-install-recommends git openssh-client \\
  && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \\
  && useradd --uid 10001 --user-group --create-home --home-dir /home/berth --shell /usr/sbin/nologin berth
COPY --from=install /opt/berth /opt/berth
# The addon loads in the image as it ships, whether reused or compiled.
RUN ln -s /opt/berth/node_modules/.bin/berth /usr/local/bin/berth && berth --help >/dev/null \\
  && cd /opt/berth && node -e "require('better-sqlite3')(':memory:').close()"
ENV NODE_ENV=production
LABEL org.opencontainers.image.title="Berth" org.opencontainers.image.version="$version"
EXPOSE 8000 8080
USER 10001:10001
WORKDIR /home/berth
ENTRYPOINT ["berth"]
CMD ["--help"]
DOCKERFILE
# The legacy builder (Debian's docker.io has no buildx). Its log is shown when it fails; the tag alone goes to stdout.
echo "berth-image: building $tag from ${#tarballs[@]} tarballs on $base" >&2
DOCKER_BUILDKIT=0 docker build --label "berth.version=$version" -t "$tag" "$context" >"$context.log" 2>&1 ||
  { echo "berth-image: building $tag failed; the end of its log:" >&2; grep -v EBADENGINE "$context.log" | tail -40 >&2
    exit 1; }
echo "$tag"
