#!/usr/bin/env bash
# Starts a Docker Engine (Debian's docker.io) and a loopback registry (Debian's docker-registry) with all
# their state under one folder, for the container compute's tests and for trying it on one machine:
#   scripts/container-engine.sh start DIR   prints the variables to export (DOCKER_HOST, BERTH_TEST_REGISTRY)
#   scripts/container-engine.sh stop DIR
# Fails loudly when the engine does not answer.
set -euo pipefail
action="${1:?usage: container-engine.sh start|stop DIR}"
root="$(mkdir -p "${2:?usage: container-engine.sh start|stop DIR}" && cd "$2" && pwd)"
registry_port="${BERTH_REGISTRY_PORT:-5055}"

case "$action" in
start)
  for tool in dockerd docker-registry; do
    command -v "$tool" >/dev/null || { echo "container-engine: $tool is missing (apt-get install docker.io docker-registry)" >&2; exit 1; }
  done
  mkdir -p "$root/data" "$root/exec" "$root/registry"
  if ! [ -S "$root/docker.sock" ] || ! curl -sf --unix-socket "$root/docker.sock" http://d/_ping >/dev/null; then
    # Its own bridge and iptables chains, as a packaged dockerd would set up.
    # Each deployment has a network of its own: Docker's default pools hold ~30 networks (/16s and /20s), /24s from
    # one /16 hold 256.
    nohup dockerd --data-root "$root/data" --exec-root "$root/exec" --pidfile "$root/dockerd.pid" \
      --default-address-pool base=10.213.0.0/16,size=24 \
      -H "unix://$root/docker.sock" >"$root/dockerd.log" 2>&1 &
    for _ in $(seq 1 100); do
      curl -sf --unix-socket "$root/docker.sock" http://d/_ping >/dev/null && break
      sleep 0.1
    done
    curl -sf --unix-socket "$root/docker.sock" http://d/_ping >/dev/null ||
      { echo "container-engine: dockerd did not start; its log:" >&2; tail -20 "$root/dockerd.log" >&2; exit 1; }
  fi
  if ! curl -sf "http://127.0.0.1:$registry_port/v2/" >/dev/null; then
    cat >"$root/registry.yml" <<YAML
version: 0.1
storage: {filesystem: {rootdirectory: $root/registry}, delete: {enabled: true}}
http: {addr: 127.0.0.1:$registry_port}
YAML
    nohup docker-registry serve "$root/registry.yml" >"$root/registry.log" 2>&1 &
    echo $! >"$root/registry.pid"
    for _ in $(seq 1 50); do
      curl -sf "http://127.0.0.1:$registry_port/v2/" >/dev/null && break
      sleep 0.1
    done
    curl -sf "http://127.0.0.1:$registry_port/v2/" >/dev/null ||
      { echo "container-engine: the registry did not start; its log:" >&2; tail -20 "$root/registry.log" >&2; exit 1; }
  fi
  exports="DOCKER_HOST=unix://$root/docker.sock BERTH_TEST_REGISTRY=127.0.0.1:$registry_port"
  # podman (for `podman kube play` of rendered cluster objects), when installed: its own storage here, runc
  # and the ulimits this kind of machine allows (../shared/reference/compute-on-this-machine.md), and the
  # loopback registry as an insecure one.
  if command -v podman >/dev/null; then
    mkdir -p "$root/podman"
    cat >"$root/podman/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
    printf '[storage]\ndriver = "overlay"\ngraphroot = "%s/storage"\nrunroot = "%s/run"\n' \
      "$root/podman" "$root/podman" >"$root/podman/storage.conf"
    printf 'unqualified-search-registries = []\n[[registry]]\nlocation = "127.0.0.1:%s"\ninsecure = true\n' \
      "$registry_port" >"$root/podman/registries.conf"
    exports="$exports CONTAINERS_CONF=$root/podman/containers.conf CONTAINERS_STORAGE_CONF=$root/podman/storage.conf"
    exports="$exports CONTAINERS_REGISTRIES_CONF=$root/podman/registries.conf"
    CONTAINERS_CONF="$root/podman/containers.conf" CONTAINERS_STORAGE_CONF="$root/podman/storage.conf" \
      podman info >/dev/null 2>"$root/podman/info.log" ||
      { echo "container-engine: podman does not work; its error:" >&2; tail -20 "$root/podman/info.log" >&2; exit 1; }
  fi
  echo "export $exports"
  ;;
stop)
  if command -v podman >/dev/null && [ -f "$root/podman/containers.conf" ]; then
    CONTAINERS_CONF="$root/podman/containers.conf" CONTAINERS_STORAGE_CONF="$root/podman/storage.conf" \
      podman rm --all --force >/dev/null 2>&1 || true
    CONTAINERS_CONF="$root/podman/containers.conf" CONTAINERS_STORAGE_CONF="$root/podman/storage.conf" \
      podman pod rm --all --force >/dev/null 2>&1 || true
  fi
  # The host firewall chains listeners installed for this engine's networks and podman's (docs/containers.md#network),
  # which outlive them.
  if command -v iptables >/dev/null; then
    bridges="$( { [ -S "$root/docker.sock" ] && curl -sf --unix-socket "$root/docker.sock" http://d/networks |
      grep -o '"com.docker.network.bridge.name":"bb-[0-9a-f]*"' | cut -d'"' -f4; } || true)"
    if command -v podman >/dev/null && [ -f "$root/podman/containers.conf" ]; then
      bridges="$bridges $(CONTAINERS_CONF="$root/podman/containers.conf" CONTAINERS_STORAGE_CONF="$root/podman/storage.conf" \
        podman network ls --format '{{.NetworkInterface}}' 2>/dev/null | grep '^bb-' || true)"
    fi
    for bridge in $bridges; do
      for tool in iptables ip6tables; do
        for parent in DOCKER-USER FORWARD; do
          while "$tool" -w -D "$parent" -i "$bridge" -j "BERTH-F-$bridge" 2>/dev/null; do :; done
        done
        while "$tool" -w -D INPUT -i "$bridge" -j "BERTH-I-$bridge" 2>/dev/null; do :; done
        for chain in "BERTH-F-$bridge" "BERTH-I-$bridge"; do
          "$tool" -w -F "$chain" 2>/dev/null || true
          "$tool" -w -X "$chain" 2>/dev/null || true
        done
      done
    done
  fi
  for pidfile in "$root/registry.pid" "$root/dockerd.pid"; do
    [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null || true
  done
  ;;
*)
  echo "usage: container-engine.sh start|stop DIR" >&2
  exit 2
  ;;
esac
