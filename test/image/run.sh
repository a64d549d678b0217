#!/usr/bin/env bash
# npm run test:image: the container image and compose.yaml, proven on this machine with podman
# (docs/operations.md, "Containers"; issue 55). It
#   1. makes the base images when missing (test/image/base.sh: no image registry is reachable here),
#   2. builds the image from the Dockerfile (the host's CA bundle as the build secret `ca`) and checks
#      its size (< 300 MB, < 100 MB over its base), user, label, health check and stop signal,
#   3. runs it with a volume: README.md's five calls (test/image/readme-calls.ts, the webhook to a
#      receiver on the host) and the typed client (test/image/client.ts), a stop with SIGTERM (exit 0),
#      a start on the same volume and every object read back,
#   4. the same with compose.yaml's two services against PostgreSQL 17 (podman-compose).
# Idempotent: it removes what an earlier run left, and everything it made but the images on exit.
# Needs root, podman (runtime runc), podman-compose, debootstrap, curl and jq.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PWD/node_modules/.bin:$PATH" # Node 24 for the scripts and the README's receiver

P=vitals-image-test
VERSION=$(node -p 'require("./package.json").version')
IMAGE=localhost/vitals:$VERSION
NODE_IMAGE=localhost/node:24-bookworm-slim
POSTGRES_IMAGE=localhost/postgres:17
PORT=${TEST_IMAGE_PORT:-3980}
KEY=vk_imagetest00000000000000000000001
RECEIVER_HOST=host.containers.internal
CA=/etc/ssl/certs/ca-certificates.crt
START=$(date +%s)
work=$(mktemp -d)

PASSED=0
step() { printf '\n== %s (%d s)\n' "$*" "$(($(date +%s) - START))"; }
ok() {
  PASSED=$((PASSED + 1))
  echo "ok: $*"
}
fail() {
  echo "test:image FAILED: $*" >&2
  echo "test:image: $PASSED passed, 1 failed"
  exit 1
}
# podman without systemd logs that it cannot set health check timers; nothing else is lost.
quiet() { "$@" 2> >(grep -v 'systemd' >&2); }
# podman-compose 1.0.3 inspects each volume before it creates it ("no such volume"), creates a running dependency
# again before it starts it ("already in use"), and cannot log to syslog here.
compose() {
  (cd "$work/compose" &&
    podman-compose --no-ansi -p "$P" "$@" 2> >(grep -Ev 'systemd|no such volume|syslog|already in use' >&2) >/dev/null)
}
cleanup() {
  quiet podman rm -f -t 0 "$P-app" >/dev/null 2>&1 || true
  quiet podman volume rm -f "$P-data" >/dev/null 2>&1 || true
  if [ -f "$work/compose/compose.yaml" ]; then compose down -v -t 0 >/dev/null 2>&1 || true; fi
  for c in $(podman ps -a --format '{{.Names}}' | grep "^${P}_" || true); do quiet podman rm -f -t 0 "$c" >/dev/null 2>&1 || true; done
  for v in $(podman volume ls --format '{{.Name}}' | grep "^${P}_" || true); do quiet podman volume rm -f "$v" >/dev/null 2>&1 || true; done
}
trap 'cleanup; rm -rf "$work"' EXIT
cleanup

# Waits until the container's health check passes (podman runs it by hand: no systemd timers here).
healthy() {
  for _ in $(seq 1 60); do
    if quiet podman healthcheck run "$1" >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  podman logs --tail 30 "$1" >&2 || true
  fail "$1 never became healthy"
}
api() { curl -fsS "http://127.0.0.1:$PORT$1" -H "Authorization: Bearer $KEY"; }

# Drives the running Vitals: the README's calls, the typed client.
drive() {
  VITALS=http://127.0.0.1:$PORT KEY=$KEY RECEIVER_HOST=$RECEIVER_HOST node test/image/readme-calls.ts ||
    fail "README's five calls"
  ok "README's five calls"
  VITALS=http://127.0.0.1:$PORT KEY=$KEY node test/image/client.ts || fail 'the typed client'
  ok 'the typed client'
}
# What drive() wrote, read back after a stop and a start.
read_back() {
  [ "$(api /api/customers/acme/health-score | jq -r .health_score)" = 0.83 ] || fail "acme's score was lost"
  [ "$(api /api/customers/piedpiper | jq -r .name)" = 'Pied Piper' ] || fail 'piedpiper was lost'
  [ "$(api /api/settings/health-score/weights | jq -c .weights)" = '{"usage":0.5,"support":0.3,"billing":0.2}' ] ||
    fail 'the weights were lost'
  local events
  events=$(api '/api/events?limit=100' | jq '.data | length')
  [ "$events" -ge 4 ] || fail "only $events events after the restart"
  ok "read back after the restart: acme 0.83, piedpiper, the weights, $events events"
}
# Stops a container as `podman stop` / `docker stop` do (its STOPSIGNAL, SIGTERM) and checks it exited 0.
stopped_cleanly() {
  quiet podman stop -t 30 "$1" >/dev/null
  local code
  code=$(podman inspect --format '{{.State.ExitCode}}' "$1")
  [ "$code" = 0 ] || fail "$1 exited $code on SIGTERM"
  podman logs "$1" 2>&1 | grep -q '"msg":"shutting down"' || fail "$1 did not log its shutdown"
  ok "$1 stopped on SIGTERM with exit 0"
}

step "base images"
bash test/image/base.sh

step "build $IMAGE"
quiet podman build --network=host --format docker --secret "id=ca,src=$CA" \
  --build-arg "NODE_IMAGE=$NODE_IMAGE" --build-arg "VERSION=$VERSION" -t "$IMAGE" . >"$work/build.log" ||
  {
    tail -n 40 "$work/build.log" >&2
    fail 'the build failed'
  }
size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
base=$(podman image inspect --format '{{.Size}}' "$NODE_IMAGE")
echo "image $IMAGE: $((size / 1000000)) MB, $(((size - base) / 1000000)) MB over its base ($((base / 1000000)) MB)"
ok "the image is built"
[ "$size" -lt 300000000 ] || fail "the image is $size bytes, over 300 MB"
[ $((size - base)) -lt 100000000 ] || fail "the image's own layers are $((size - base)) bytes, over 100 MB"
[ "$(podman image inspect --format '{{index .Config.Labels "org.opencontainers.image.version"}}' "$IMAGE")" = "$VERSION" ] ||
  fail "the image's version label is not $VERSION"
[ "$(podman image inspect --format '{{.Config.User}}' "$IMAGE")" = node ] || fail 'the image does not run as node'
[ "$(podman image inspect --format '{{.Config.StopSignal}}' "$IMAGE")" = SIGTERM ] || fail 'STOPSIGNAL is not SIGTERM'
podman image inspect --format '{{json .Config.Healthcheck.Test}}' "$IMAGE" | grep -q healthcheck || fail 'no HEALTHCHECK'
if quiet podman run --rm --entrypoint sh "$IMAGE" -c 'grep -rlq "BEGIN CERTIFICATE" /run/secrets 2>/dev/null'; then
  fail 'the build secret ca is in the image'
fi
ok "size, user node, version label $VERSION, HEALTHCHECK, STOPSIGNAL SIGTERM, no CA kept"

step "run $IMAGE with the volume $P-data"
quiet podman run -d --name "$P-app" -p "127.0.0.1:$PORT:3000" -v "$P-data:/data" -e "VITALS_API_KEY=$KEY" "$IMAGE" >/dev/null
healthy "$P-app"
[ "$(curl -fsS "http://127.0.0.1:$PORT/healthz" | jq -r .version)" = "$VERSION" ] || fail "/healthz does not say $VERSION"
ok "healthy, /healthz says $VERSION"
drive
stopped_cleanly "$P-app"
quiet podman start "$P-app" >/dev/null
healthy "$P-app"
read_back
stopped_cleanly "$P-app"
quiet podman rm "$P-app" >/dev/null
quiet podman volume rm "$P-data" >/dev/null

step "compose.yaml: PostgreSQL 17 and Vitals"
mkdir -p "$work/compose"
cp compose.yaml "$work/compose/"
cat >"$work/compose/.env" <<ENV
POSTGRES_PASSWORD=imagetest$RANDOM
POSTGRES_USER=vitals
POSTGRES_DB=vitals
PUBLISH_PORT=$PORT
VITALS_API_KEY=$KEY
VITALS_IMAGE=$IMAGE
POSTGRES_IMAGE=$POSTGRES_IMAGE
ENV
# podman-compose 1.0.3 does not wait for `condition: service_healthy`: the services start in the
# order it names, once PostgreSQL's own health check passes, as docker compose would.
compose up -d --no-build postgres
healthy "${P}_postgres_1"
compose up -d --no-build --no-deps vitals
healthy "${P}_vitals_1"
podman exec "${P}_postgres_1" psql -U vitals -d vitals -tAc 'SELECT version()' | grep -q 'PostgreSQL 17' ||
  fail 'the database is not PostgreSQL 17'
curl -fsS "http://127.0.0.1:$PORT/readyz" | jq -e '.database == "postgres"' >/dev/null || fail 'Vitals is not on PostgreSQL'
ok 'both services healthy: Vitals on PostgreSQL 17'
drive
stopped_cleanly "${P}_vitals_1"
compose stop
compose start postgres
healthy "${P}_postgres_1"
compose start vitals
healthy "${P}_vitals_1"
read_back
compose down -v

step "test:image passed"
echo "test:image: $PASSED passed, 0 failed"
