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
    nohup dockerd --data-root "$root/data" --exec-root "$root/exec" --pidfile "$root/dockerd.pid" \
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
  echo "export DOCKER_HOST=unix://$root/docker.sock BERTH_TEST_REGISTRY=127.0.0.1:$registry_port"
  ;;
stop)
  for pidfile in "$root/registry.pid" "$root/dockerd.pid"; do
    [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null || true
  done
  ;;
*)
  echo "usage: container-engine.sh start|stop DIR" >&2
  exit 2
  ;;
esac
