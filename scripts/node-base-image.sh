#!/usr/bin/env bash
# Produces the container compute's Node base image without any registry: Debian (debootstrap, minbase) with
# this machine's Node.js and npm copied in, and this machine's CA bundle (so installs inside image builds work
# behind an intercepting proxy too). Run once per engine; the listener reuses the image.
#   DOCKER_HOST=unix:///... scripts/node-base-image.sh [TAG]     (default tag berth/node-base:<node major>)
set -euo pipefail
major="$(node -p 'process.versions.node.split(".")[0]')"
tag="${1:-berth/node-base:$major}"
suite="${BERTH_BASE_SUITE:-bookworm}"
mirror="${BERTH_BASE_MIRROR:-http://deb.debian.org/debian}"
command -v debootstrap >/dev/null || { echo "node-base-image: debootstrap is missing (apt-get install debootstrap)" >&2; exit 1; }
command -v docker >/dev/null || { echo "node-base-image: the docker CLI is missing (apt-get install docker.io)" >&2; exit 1; }
if docker image inspect "$tag" >/dev/null 2>&1; then
  echo "node-base-image: $tag exists"
  exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
rootfs="$work/rootfs"
debootstrap --variant=minbase "$suite" "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
  { echo "node-base-image: debootstrap failed:" >&2; tail -20 "$work/debootstrap.log" >&2; exit 1; }
node_bin="$(command -v node)"
npm_dir="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")"
install -m 0755 "$node_bin" "$rootfs/usr/bin/node"
mkdir -p "$rootfs/usr/lib/node_modules"
cp -a "$npm_dir" "$rootfs/usr/lib/node_modules/npm"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/bin/npx"
mkdir -p "$rootfs/etc/ssl/certs"
# The system bundle plus whatever extra CA this machine's Node trusts (an intercepting proxy's), once each.
cat $(printf '%s\n' /etc/ssl/certs/ca-certificates.crt "${SSL_CERT_FILE:-}" "${NODE_EXTRA_CA_CERTS:-}" | grep . | sort -u |
  while read -r f; do [ -f "$f" ] && echo "$f"; done) >"$rootfs/etc/ssl/certs/berth-ca-bundle.crt"
rm -rf "$rootfs/var/cache/apt/archives/"*.deb "$rootfs/var/lib/apt/lists/"*
tar -C "$rootfs" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/berth-ca-bundle.crt' \
  --change 'ENV SSL_CERT_FILE=/etc/ssl/certs/berth-ca-bundle.crt' \
  --change 'CMD ["node"]' - "$tag" >/dev/null
docker run --rm --network none "$tag" node -e 'console.log(`node-base-image: ${process.argv[1]} has Node ${process.version}`)' "$tag"
