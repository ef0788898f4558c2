#!/usr/bin/env bash
# Build the bot runtime's base image from Debian packages alone (debootstrap + docker
# import), for machines that cannot pull from a registry, and tag it as the base image name
# the arena uses by default.
#
#   docker/make-base-image.sh [TAG]          default TAG: python:3.11-slim
#   FORCE=1 docker/make-base-image.sh        rebuild even if TAG exists
#   DEBIAN_MIRROR=http://... docker/make-base-image.sh
#
# The image: Debian bookworm, minbase variant, with python3 (3.11) and python3-venv; apt
# lists, docs and man pages removed.  Needs root, debootstrap and a Docker engine.
set -euo pipefail

TAG=${1:-python:3.11-slim}
SUITE=${DEBIAN_SUITE:-bookworm}

if [ "${FORCE:-0}" != 1 ] && docker image inspect "$TAG" >/dev/null 2>&1; then
    echo "base image $TAG exists (FORCE=1 rebuilds it)"
    exit 0
fi
command -v debootstrap >/dev/null || { echo "error: debootstrap is not installed (apt-get install debootstrap)" >&2; exit 2; }
docker info >/dev/null 2>&1 || { echo "error: no Docker engine answers" >&2; exit 2; }

if [ -z "${DEBIAN_MIRROR:-}" ]; then
    # the mirror this machine's apt already uses, else Debian's own
    DEBIAN_MIRROR=$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
    DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
fi

root=$(mktemp -d /var/tmp/arena-base.XXXXXX)
trap 'rm -rf "$root"' EXIT
echo "debootstrap $SUITE from $DEBIAN_MIRROR into $root ..."
debootstrap --variant=minbase --include=python3,python3-venv "$SUITE" "$root" "$DEBIAN_MIRROR" >"$root.log" 2>&1 || {
    tail -n 20 "$root.log" >&2; echo "error: debootstrap failed (log: $root.log)" >&2; exit 1; }
rm -f "$root.log"
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/usr/share/doc/* \
       "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/*
tar -C "$root" -c . | docker import \
    --change 'ENV LANG=C.UTF-8' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'LABEL org.bigtwo-arena.base=debootstrap' \
    --change 'CMD ["python3"]' \
    - "$TAG" >/dev/null
echo "built base image $TAG: $(docker run --rm --network none "$TAG" python3 --version)"
