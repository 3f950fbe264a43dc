#!/usr/bin/env bash
# Builds Berth's own container image from the package tarballs `npm run pack` writes to packs/: the control plane
# (with its dashboard), the listener and the agent server in one image, installed with npm on the project's Node
# base image (scripts/node-base-image.sh), run as the non-root user `berth` (uid 10001) with `berth` as entrypoint.
#   DOCKER_HOST=unix:///... scripts/berth-image.sh [TAG]     (default berth/berth:<the CLI's version>)
#   BERTH_PACKS_DIR=DIR      the tarballs (default packs/ at the repository's root)
#   BERTH_BASE_IMAGE=IMAGE   the base (default berth/node-base:<node major>, made here when missing)
# Third-party dependencies come from the npm registry during the build (the base image trusts this machine's CA
# bundle, so an intercepting proxy works too). Prints the image's tag on stdout.
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
# Install scripts run for the packages that need theirs (as in the repository's package.json): better-sqlite3 builds
# its addon, esbuild checks its binary; the others' (ssh2's and cpu-features' optional addons, protobufjs) are skipped.
install_manifest='{"name":"berth-image","private":true,"allowScripts":{"better-sqlite3":true,"esbuild":true,"@swc/core":false,"cpu-features":false,"protobufjs":false,"ssh2":false}}'
cat >"$context/Dockerfile" <<DOCKERFILE
# Stage 1: the install. better-sqlite3 compiles its addon here (its prebuilt binaries come from GitHub, which an
# image build may not reach), with Debian's compilers, which the final image does not carry, and the host's Node headers.
FROM $base AS install
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ \\
  && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
# Every tarball in one install, so the packages' dependencies on each other resolve to these tarballs, not the registry.
COPY packs/ /tmp/packs/
COPY node-headers/ /tmp/node-headers/
WORKDIR /opt/berth
RUN if [ -d /tmp/node-headers/include ]; then export npm_config_nodedir=/tmp/node-headers; fi \\
  && printf '%s\\n' '$install_manifest' >package.json \\
  && npm install --omit=dev --no-audit --no-fund --no-update-notifier /tmp/packs/*.tgz \\
  && rm -rf node_modules/better-sqlite3/build/Release/obj* node_modules/better-sqlite3/build/Release/*.a \\
     node_modules/better-sqlite3/deps node_modules/better-sqlite3/src

# Stage 2: the image. git and ssh fetch repo_host deployments' sources (docs/git-deployments.md).
FROM $base
RUN apt-get update && apt-get install -y --no-install-recommends git openssh-client \\
  && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \\
  && useradd --uid 10001 --user-group --create-home --home-dir /home/berth --shell /usr/sbin/nologin berth
COPY --from=install /opt/berth /opt/berth
RUN ln -s /opt/berth/node_modules/.bin/berth /usr/local/bin/berth && berth --help >/dev/null
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
