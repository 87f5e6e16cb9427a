#!/usr/bin/env bash
# Build the image from the repository's Dockerfile, run it and check it; CI runs this (.ci/run).
#
# Checks: /health answers, /v1/models lists the models, the HEALTHCHECK turns healthy (also when the
# port is changed), the server runs as a non-root user, and `docker stop` with a stream in flight ends
# within the shutdown grace period, the stream ending with the server_shutting_down error event.
# Then deploy/compose.yaml: two replicas on one Redis act as one server (a PATCH through one is in
# force in the other, a 3 RPM key gets 3 requests across both, one usage ledger).
# Measures: image size, build time, and the rebuild time after a one-line code change (made in a copy
# of the build context: the repository is only read).
#
# It works wherever a Docker daemon can be had:
#   1. no `docker`/`dockerd`: installs docker.io (and debootstrap) from Debian with apt (needs root);
#   2. no daemon answering: starts dockerd with the vfs storage driver (no overlayfs needed);
#   3. the base image python:3.11-slim cannot be pulled (no registry access): makes a stand-in, a
#      Debian bookworm minbase with python3 and pip, cached as a tarball under $CACHE so a rerun
#      imports it in seconds. A machine that can pull uses the real image and skips all of this.
#
# Usage: scripts/container_test.sh [REPO]    (REPO defaults to the repository holding this script)
# Env:   CACHE (default /var/cache/mockserver-docker), PORT (default: a free one), IMAGE (mockserver:test),
#        FIGURES (a file the measured figures are appended to; default $CACHE/figures.txt)
set -euo pipefail

REPO=$(cd "${1:-$(dirname "$0")/..}" && pwd)
CACHE=${CACHE:-/var/cache/mockserver-docker}
IMAGE=${IMAGE:-mockserver:test}
BASE=python:3.11-slim
STANDIN=$CACHE/python-3.11-slim-standin.tar
FIGURES=${FIGURES:-$CACHE/figures.txt}
NAME=mockserver-container-test-$$
GRACE=2
mkdir -p "$CACHE"
WORK=$(mktemp -d)
containers=()

log() { printf '==> %s\n' "$*" >&2; }
fail() { log "FAILED: $*"; exit 1; }
now() { date +%s.%N; }
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$(now)"; }
cleanup() {
  # Removing a container copies nothing but deletes its whole file system under vfs, which takes
  # a while: the daemon does it in the background while CI goes on.
  if [ "${#containers[@]}" -gt 0 ]; then
    (docker rm -f "${containers[@]}" >/dev/null 2>&1 &)
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# 1. The Docker engine.
if ! command -v docker >/dev/null || ! command -v dockerd >/dev/null; then
  log "installing docker.io from Debian"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker.io >/dev/null
fi

# 2. A daemon.
if ! docker info >/dev/null 2>&1; then
  if [ -f /var/run/docker.pid ] && ! kill -0 "$(cat /var/run/docker.pid)" 2>/dev/null; then
    rm -f /var/run/docker.pid
  fi
  log "starting dockerd --storage-driver=vfs (log: $CACHE/dockerd.log)"
  nohup dockerd --storage-driver=vfs >"$CACHE/dockerd.log" 2>&1 &
  for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || fail "dockerd did not come up; see $CACHE/dockerd.log"
fi

# 3. The base image: pulled, or the cached stand-in, or a stand-in made now.
if ! docker image inspect "$BASE" >/dev/null 2>&1 && ! docker pull -q "$BASE" >/dev/null 2>&1; then
  if [ ! -s "$STANDIN" ]; then
    command -v debootstrap >/dev/null || {
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
    }
    ROOTFS=$CACHE/rootfs
    log "$BASE cannot be pulled: making a stand-in (debootstrap bookworm minbase + python3) in $ROOTFS"
    started=$(now)
    rm -rf "$ROOTFS"
    # the Debian mirror this machine's apt already uses
    MIRROR=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
    debootstrap --variant=minbase --include=python3,python3-pip,python-is-python3,ca-certificates \
      bookworm "$ROOTFS" "${MIRROR:-http://deb.debian.org/debian}" >"$CACHE/debootstrap.log" 2>&1 \
      || fail "debootstrap failed; see $CACHE/debootstrap.log"
    # The real image has no PEP 668 marker: pip installs into the system Python there.
    rm -f "$ROOTFS"/usr/lib/python3*/EXTERNALLY-MANAGED
    # A machine whose egress re-signs TLS has extra CAs: pip inside the build needs them too.
    if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
      cp /usr/local/share/ca-certificates/*.crt "$ROOTFS/usr/local/share/ca-certificates/"
      chroot "$ROOTFS" update-ca-certificates >/dev/null 2>&1
    fi
    chroot "$ROOTFS" apt-get clean
    rm -rf "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/cache/apt/*
    tar -C "$ROOTFS" -cf "$STANDIN.part" . && mv "$STANDIN.part" "$STANDIN"
    rm -rf "$ROOTFS"
    log "stand-in made in $(since "$started") s, cached as $STANDIN"
  fi
  log "importing the stand-in $STANDIN as $BASE"
  docker import -c 'ENV LANG=C.UTF-8' -c 'CMD ["python3"]' "$STANDIN" "$BASE" >/dev/null
fi

# 4. Build, then rebuild after a one-line code change in a copy of the context.
log "docker build -t $IMAGE $REPO"
started=$(now)
docker build -q -t "$IMAGE" "$REPO" >/dev/null || fail "docker build"
build_s=$(since "$started")
mkdir -p "$WORK/context"
tar -C "$REPO" --exclude=.git --exclude='.venv*' --exclude=node_modules -cf - . | tar -C "$WORK/context" -xf -
echo "# a one-line change" >>"$WORK/context/mockserver/version.py"
started=$(now)
docker build -q -t "$IMAGE-changed" "$WORK/context" >/dev/null || fail "rebuild"
rebuild_s=$(since "$started")
docker rmi "$IMAGE-changed" >/dev/null
size_mb=$(docker image inspect -f '{{.Size}}' "$IMAGE" | awk '{printf "%.0f", $1 / 1e6}')
base_mb=$(docker image inspect -f '{{.Size}}' "$BASE" | awk '{printf "%.0f", $1 / 1e6}')
log "image $size_mb MB (base $base_mb MB); build ${build_s} s; rebuild after a one-line change ${rebuild_s} s"

# 5. Run it.
run() {  # run NAME PORT [docker run args...] -- starts a container, waits for /health on PORT
  local name=$1 port=$2
  shift 2
  containers+=("$name")
  docker run -d --name "$name" -e MOCKSERVER_ADMIN_TOKEN=container-test "$@" >/dev/null
  for _ in $(seq 120); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && return 0; sleep 0.25; done
  docker logs "$name" >&2
  fail "$name did not answer on port $port"
}
healthy() {  # healthy NAME -- waits for the HEALTHCHECK to report healthy
  local status=
  for _ in $(seq 60); do
    status=$(docker inspect -f '{{.State.Health.Status}}' "$1")
    [ "$status" = healthy ] && return 0
    sleep 0.5
  done
  docker logs "$1" >&2
  fail "$1 health: $status"
}

PORT=${PORT:-$(free_port)}
run "$NAME" "$PORT" -p "127.0.0.1:$PORT:8000" -e MOCKSERVER_SHUTDOWN_GRACE=$GRACE "$IMAGE"
curl -sSf "http://127.0.0.1:$PORT/health" | grep -q '"status":"ok"' || fail "/health"
curl -sSf "http://127.0.0.1:$PORT/v1/models" -H "Authorization: Bearer sk-mock-preview" | grep -q gpt-5.6-sol \
  || fail "/v1/models does not list gpt-5.6-sol"
healthy "$NAME"
user=$(docker exec "$NAME" id -u)
[ "$user" != 0 ] || fail "the server runs as root"
log "$NAME healthy on port $PORT, running as uid $user"

# The health check follows the port served, set by flag rather than by the image's MOCKSERVER_PORT.
PORT2=$(free_port)
run "$NAME-port" "$PORT2" -p "127.0.0.1:$PORT2:9123" "$IMAGE" mockserver serve --port 9123
healthy "$NAME-port"
log "$NAME-port healthy serving on 9123"
docker stop -t 0 "$NAME-port" >/dev/null  # removed at the end, in the background

# 6. docker stop with a stream in flight: the stream ends with the shutdown event within the grace period.
(
  curl -sN "http://127.0.0.1:$PORT/v1/chat/completions" -H "Authorization: Bearer sk-mock-preview" \
    -H "content-type: application/json" -H "x-mock-output-tokens: 5000" \
    -d '{"model": "gpt-5.6-sol", "messages": [{"role": "user", "content": "hi"}], "stream": true}' \
    >"$WORK/stream.txt"
  now >"$WORK/stream-ended"
) &
reader=$!
for _ in $(seq 40); do [ -s "$WORK/stream.txt" ] && break; sleep 0.1; done
[ -s "$WORK/stream.txt" ] || fail "the stream did not start"
started=$(now)
docker stop "$NAME" >/dev/null
stop_s=$(since "$started")
wait "$reader" || true
stream_s=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$started" "$(cat "$WORK/stream-ended")")
exit_code=$(docker inspect -f '{{.State.ExitCode}}' "$NAME")
tail -n 2 "$WORK/stream.txt" | grep -q '"code":"server_shutting_down"' || {
  tail -c 600 "$WORK/stream.txt" >&2
  fail "the stream did not end with the server_shutting_down event"
}
if docker logs "$NAME" 2>&1 | grep -q Traceback; then docker logs "$NAME" >&2; fail "traceback in the logs"; fi
within() { python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) <= float(sys.argv[2]) else 1)" "$1" "$2"; }
within "$stream_s" "$((GRACE + 1))" \
  || fail "the stream ended $stream_s s after docker stop, with a grace of $GRACE s"
# docker stop returns once the daemon has recorded the exit: a few tenths more, under load up to a second.
within "$stop_s" "$((GRACE + 2))" || fail "docker stop took $stop_s s with a grace of $GRACE s"
[ "$exit_code" = 0 ] || fail "exit status $exit_code after docker stop"
log "docker stop with a stream in flight: the stream ended with server_shutting_down after $stream_s s," \
  "docker stop returned after $stop_s s (grace $GRACE s), exit status 0"

# 7. Two replicas on one Redis, from deploy/compose.yaml: they act as one server.
COMPOSE=()
if docker compose version >/dev/null 2>&1; then
  COMPOSE=(docker compose)
else
  command -v docker-compose >/dev/null || {
    log "installing docker-compose from Debian"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker-compose >/dev/null
  }
  COMPOSE=(docker-compose)
fi
REDIS_IMAGE=${REDIS_IMAGE:-redis:7-alpine}
if ! docker image inspect "$REDIS_IMAGE" >/dev/null 2>&1 && ! docker pull -q "$REDIS_IMAGE" >/dev/null 2>&1; then
  # No registry access: Debian's redis-server on the base image stands in for the official image.
  REDIS_IMAGE=mockserver-redis-standin:test
  if ! docker image inspect "$REDIS_IMAGE" >/dev/null 2>&1; then
    log "redis:7-alpine cannot be pulled: building a stand-in with Debian's redis-server"
    mkdir -p "$WORK/redis"
    printf 'FROM %s\nRUN apt-get update -qq && apt-get install -y -qq --no-install-recommends redis-server >/dev/null && rm -rf /var/lib/apt/lists/*\nCMD ["redis-server", "--protected-mode", "no", "--save", ""]\n' \
      "$BASE" >"$WORK/redis/Dockerfile"
    docker build -q -t "$REDIS_IMAGE" "$WORK/redis" >/dev/null || fail "building the Redis stand-in"
  fi
fi
PORT_A=$(free_port)
PORT_B=$(free_port)
PROJECT=mockserver-compose-test-$$
compose() {
  PORT_A=$PORT_A PORT_B=$PORT_B MOCKSERVER_IMAGE=$IMAGE REDIS_IMAGE=$REDIS_IMAGE MOCKSERVER_ADMIN_TOKEN=container-test \
    "${COMPOSE[@]}" -f "$REPO/deploy/compose.yaml" -p "$PROJECT" "$@"
}
compose_down() { compose down -t 1 >/dev/null 2>&1 || true; }
trap 'compose_down; cleanup' EXIT
started=$(now)
compose up -d --no-build >/dev/null 2>&1 || { compose logs >&2; fail "docker-compose up"; }
for port in "$PORT_A" "$PORT_B"; do
  for _ in $(seq 120); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.25; done
  curl -sf "http://127.0.0.1:$port/health" >/dev/null || { compose logs >&2; fail "a replica did not answer on $port"; }
done
log "two replicas and Redis up in $(since "$started") s (${COMPOSE[*]})"
admin=(-H "Authorization: Bearer container-test")
curl -sSf -X PATCH "${admin[@]}" -H "content-type: application/json" -d '{"capacity": {"ultrafast_concurrency": 7}}' \
  "http://127.0.0.1:$PORT_A/_mock/config" >/dev/null || fail "PATCH /_mock/config"
curl -sSf "${admin[@]}" "http://127.0.0.1:$PORT_B/_mock/config" | grep -q '"ultrafast_concurrency":7' \
  || fail "a PATCH through one replica is not in force in the other"
statuses=""
for port in "$PORT_A" "$PORT_B" "$PORT_A" "$PORT_B"; do
  statuses="$statuses $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/v1/chat/completions" \
    -H "Authorization: Bearer sk-mock-low-limits" -H "content-type: application/json" \
    -d '{"model": "gpt-5.6-mini", "messages": [{"role": "user", "content": "hi"}]}')"
done
[ "$statuses" = " 200 200 200 429" ] || fail "a 3 RPM key across the two replicas answered:$statuses"
curl -sSf "${admin[@]}" "http://127.0.0.1:$PORT_A/_mock/usage" | grep -q '"totals":{"requests":3' \
  || fail "the usage ledger is not one across the replicas"
compose_down
log "two replicas on one Redis: one configuration, one 3 RPM window (200 200 200 429), one ledger"

printf '%s image %s MB (base %s MB, %s); build %s s; rebuild after a one-line code change %s s; docker stop with a stream in flight: stream ended %s s, docker stop %s s (grace %s s)\n' \
  "$(date -u +%FT%TZ)" "$size_mb" "$base_mb" "$(docker image inspect -f '{{.Id}}' "$BASE" | cut -c8-19)" \
  "$build_s" "$rebuild_s" "$stream_s" "$stop_s" "$GRACE" >>"$FIGURES"
log "OK (figures appended to $FIGURES)"
