#!/usr/bin/env bash
# Build the kubesched container image without pulling a base image.
#
# runtime/Containerfile is the normal way (`buildah bud -f runtime/Containerfile .`); it needs a
# Python base image from a container registry. This script builds the same layout from a Debian
# root filesystem made by debootstrap, with buildah:
#
#   1. rootfs: `debootstrap --variant=minbase bookworm` + python3, python3-venv, from the Debian
#      mirror this machine's apt already uses (read from /etc/apt/sources.list{,.d}); cached as a
#      tarball in $KUBESCHED_CACHE (default ~/.cache/kubesched), so rebuilds skip this step.
#   2. a working container from scratch with that rootfs; inside it (buildah run, chroot
#      isolation): a venv at /opt/kubesched, wheels of sdk/ + runtime/ (+ --plugins) built with
#      pip, installed into the venv; user kubesched (uid/gid 65532).
#   3. config as the Containerfile's final stage (USER 65532, HOME=/tmp,
#      PYTHONDONTWRITEBYTECODE=1, ENTRYPOINT ["kubesched", "run"]) and commit.
#
# Usage: runtime/image/build.sh [--tag NAME:TAG] [--plugins "REQ ..."] [--with-contrib]
#                               [--oci-archive FILE] [--no-verify] [--rebuild-rootfs]
#   --plugins       space-separated pip requirements baked into the image, as the Containerfile's
#                   PLUGINS build arg: names from the package index ("kubesched-foo>=1.2") or
#                   paths inside this repository ("./plugins-contrib/kubesched-priority-label").
#   --with-contrib  add every distribution under plugins-contrib/.
#   --oci-archive   also write the image as an OCI archive (to load it elsewhere).
#   --no-verify     skip running `kubesched --version` / `kubesched plugins` in the image.
#   --base-only TAG only commit the cached rootfs (Debian + python3, no kubesched) as TAG and stop:
#                   a local stand-in for the Containerfile's BASE_IMAGE where no registry is
#                   reachable (buildah bud --build-arg BASE_IMAGE=localhost/TAG -f runtime/Containerfile .)
# Environment: KUBESCHED_CACHE, KUBESCHED_BUILDAH_ROOT (buildah --root; default: buildah's own),
#   PLUGINS (same as --plugins), DEBIAN_MIRROR (override the mirror read from apt's sources).
# Needs root (debootstrap, rootful buildah). Installs buildah and debootstrap with apt-get if missing.
set -euo pipefail

TAG="kubesched:0.1.0"
PLUGINS="${PLUGINS:-}"
WITH_CONTRIB=0
OCI_ARCHIVE=""
VERIFY=1
REBUILD_ROOTFS=0
BASE_ONLY=""
while [ $# -gt 0 ]; do
    case "$1" in
        --tag) TAG="$2"; shift 2 ;;
        --plugins) PLUGINS="$2"; shift 2 ;;
        --with-contrib) WITH_CONTRIB=1; shift ;;
        --oci-archive) OCI_ARCHIVE="$2"; shift 2 ;;
        --no-verify) VERIFY=0; shift ;;
        --rebuild-rootfs) REBUILD_ROOTFS=1; shift ;;
        --base-only) BASE_ONLY="$2"; shift 2 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "build.sh: unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
done

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CACHE="${KUBESCHED_CACHE:-$HOME/.cache/kubesched}"
SUITE=bookworm
ROOTFS_PACKAGES="python3,python3-venv"
ROOTFS_TAR="$CACHE/rootfs-$SUITE.tar"
# Bump when the way the rootfs is made changes: a cached tarball with another key is rebuilt.
ROOTFS_KEY="v1 suite=$SUITE variant=minbase include=$ROOTFS_PACKAGES"
UID_GID=65532
VENV=/opt/kubesched

log() { printf '[build.sh %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'build.sh: error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (debootstrap and rootful buildah); run it with sudo, or build runtime/Containerfile with buildah/podman/docker instead"

# --- tools -------------------------------------------------------------------------------------
missing=()
command -v buildah >/dev/null || missing+=(buildah)
command -v debootstrap >/dev/null || missing+=(debootstrap)
if [ ${#missing[@]} -gt 0 ]; then
    command -v apt-get >/dev/null || die "missing ${missing[*]} and no apt-get to install them"
    log "installing ${missing[*]} with apt-get"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
BUILDAH=(buildah --storage-driver vfs)
[ -n "${KUBESCHED_BUILDAH_ROOT:-}" ] && BUILDAH+=(--root "$KUBESCHED_BUILDAH_ROOT")

# --- the Debian mirror apt uses here (never written into the repository) ------------------------
debian_mirror() {
    if [ -n "${DEBIAN_MIRROR:-}" ]; then echo "$DEBIAN_MIRROR"; return; fi
    local f
    # one-line format: deb [options] URI SUITE COMPONENTS...
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        awk -v suite="$SUITE" '
            $1 == "deb" {
                i = 2
                if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
                if ($(i + 1) == suite) { print $i; exit }
            }' "$f"
    done | head -n1 | grep . && return
    # deb822 format: stanzas with Types / URIs / Suites
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk -v suite="$SUITE" '
            function flush() {
                if (types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " suite " ") && uris != "") {
                    split(uris, u, " "); print u[1]; found = 1; exit
                }
                types = ""; uris = ""; suites = ""
            }
            /^[ \t]*$/ { flush(); next }
            /^[ \t]*#/ { next }
            tolower($1) == "types:"  { $1 = ""; types = substr($0, 2) }
            tolower($1) == "uris:"   { $1 = ""; uris = substr($0, 2) }
            tolower($1) == "suites:" { $1 = ""; suites = substr($0, 2) }
            END { if (!found) flush() }' "$f"
    done | head -n1 | grep . && return
    return 1
}

# --- 1. the root filesystem (cached) -------------------------------------------------------------
mkdir -p "$CACHE"
if [ "$REBUILD_ROOTFS" = 1 ] || [ ! -s "$ROOTFS_TAR" ] || [ "$(cat "$ROOTFS_TAR.key" 2>/dev/null)" != "$ROOTFS_KEY" ]; then
    MIRROR="$(debian_mirror)" || die "no '$SUITE' Debian mirror in /etc/apt/sources.list or /etc/apt/sources.list.d/ (set DEBIAN_MIRROR)"
    log "debootstrap $SUITE (minbase + $ROOTFS_PACKAGES) from apt's configured mirror"
    t0=$SECONDS
    rootfs="$(mktemp -d "$CACHE/rootfs.XXXXXX")"
    trap 'rm -rf "$rootfs"' EXIT
    trap 'exit 130' INT TERM
    debootstrap --variant=minbase --include="$ROOTFS_PACKAGES" "$SUITE" "$rootfs" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 \
        || { tail -n 30 "$CACHE/debootstrap.log" >&2; die "debootstrap failed (log: $CACHE/debootstrap.log)"; }
    # slim it the way debian:*-slim images are: no package lists or caches, docs but copyrights
    chroot "$rootfs" apt-get clean
    rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/log/* \
        "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/usr/share/locale/* \
        "$rootfs"/usr/share/lintian "$rootfs"/usr/share/linda "$rootfs"/tmp/* "$rootfs"/root/.cache
    find "$rootfs"/usr/share/doc -mindepth 1 -not -name copyright -not -type d -delete
    find "$rootfs"/usr/share/doc -mindepth 1 -type d -empty -delete
    : >"$rootfs"/etc/machine-id
    tar --numeric-owner --xattrs -C "$rootfs" -cf "$ROOTFS_TAR.part" .
    mv "$ROOTFS_TAR.part" "$ROOTFS_TAR"
    echo "$ROOTFS_KEY" >"$ROOTFS_TAR.key"
    rm -rf "$rootfs"; trap - EXIT
    log "rootfs cached: $ROOTFS_TAR ($(du -h "$ROOTFS_TAR" | cut -f1), $((SECONDS - t0))s)"
else
    log "rootfs from cache: $ROOTFS_TAR"
fi

if [ -n "$BASE_ONLY" ]; then
    ctr="$("${BUILDAH[@]}" from --quiet scratch)"
    tar --numeric-owner --xattrs -C "$("${BUILDAH[@]}" mount "$ctr")" -xf "$ROOTFS_TAR"
    "${BUILDAH[@]}" config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        --env LANG=C.UTF-8 --cmd '["python3"]' "$ctr"
    "${BUILDAH[@]}" umount "$ctr" >/dev/null
    "${BUILDAH[@]}" commit --quiet --rm "$ctr" "$BASE_ONLY" >/dev/null
    log "committed base image $BASE_ONLY ($("${BUILDAH[@]}" images --format '{{.Size}}' "$BASE_ONLY" | head -n1))"
    exit 0
fi

# --- 2. working container --------------------------------------------------------------------------
work="$(mktemp -d /tmp/kubesched-build.XXXXXX)"
ctr=""
cleanup() {
    [ -n "$ctr" ] && "${BUILDAH[@]}" rm "$ctr" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A clean copy of the sources (no build/, *.egg-info, caches) that pip may write into.
mkdir -p "$work/src" "$work/wheels" "$CACHE/pip"
tar -C "$REPO" --exclude='*.egg-info' --exclude=__pycache__ --exclude=build --exclude=dist \
    --exclude=.pytest_cache --exclude=.mypy_cache --exclude=.tox --exclude=.hypothesis \
    -cf - sdk runtime plugins-contrib | tar -C "$work/src" -xf -

reqs=(./sdk ./runtime)
if [ "$WITH_CONTRIB" = 1 ]; then
    for d in "$REPO"/plugins-contrib/*/; do
        [ -f "$d/pyproject.toml" ] && reqs+=("./plugins-contrib/$(basename "$d")")
    done
fi
# shellcheck disable=SC2206  # PLUGINS is a space-separated list of requirements, as in the Containerfile
[ -n "$PLUGINS" ] && reqs+=($PLUGINS)
log "requirements: ${reqs[*]}"

# pip inside the container uses this machine's pip settings (index, CA bundle), read at run time.
pip_cfg() { python3 -m pip config get "global.$1" 2>/dev/null || true; }
run_env=(--env PIP_DISABLE_PIP_VERSION_CHECK=1 --env PIP_ROOT_USER_ACTION=ignore
         --env PIP_CACHE_DIR=/tmp/pip-cache --env HOME=/tmp --env LANG=C.UTF-8)
run_vol=(-v "$work:/tmp/build" -v "$CACHE/pip:/tmp/pip-cache")
for var in INDEX_URL EXTRA_INDEX_URL TRUSTED_HOST DEFAULT_TIMEOUT; do
    key="$(echo "$var" | tr 'A-Z_' 'a-z-')"
    val="$(printenv "PIP_$var" || pip_cfg "$key")"
    [ -n "$val" ] && run_env+=(--env "PIP_$var=$val")
done
cert="${PIP_CERT:-$(pip_cfg cert)}"
if [ -n "$cert" ] && [ -f "$cert" ]; then
    cp "$cert" "$work/ca.crt"
    run_env+=(--env PIP_CERT=/tmp/build/ca.crt)
fi

t0=$SECONDS
ctr="$("${BUILDAH[@]}" from --quiet scratch)"
mnt="$("${BUILDAH[@]}" mount "$ctr")"
tar --numeric-owner --xattrs -C "$mnt" -xf "$ROOTFS_TAR"
run() { "${BUILDAH[@]}" run --isolation chroot "${run_env[@]}" "${run_vol[@]}" --workingdir /tmp/build/src "$ctr" -- "$@"; }

log "venv $VENV; pip wheel + install"
run /usr/bin/python3 -m venv "$VENV"
run "$VENV/bin/pip" wheel --quiet --wheel-dir /tmp/build/wheels "${reqs[@]}"
run sh -c "$VENV/bin/pip install --quiet --no-index --find-links /tmp/build/wheels /tmp/build/wheels/*.whl"
run "$VENV/bin/pip" check
run groupadd --system -K SYS_GID_MAX="$UID_GID" --gid "$UID_GID" kubesched
run useradd --system -K SYS_UID_MAX="$UID_GID" --uid "$UID_GID" --gid "$UID_GID" --no-create-home \
    --home-dir /tmp --shell /usr/sbin/nologin kubesched
ls "$work/wheels" | sed 's/^/  wheel: /' >&2
rm -rf "${mnt:?}"/tmp/* "${mnt:?}"/tmp/.[!.]* "$mnt"/root/.cache "$mnt"/var/log/* 2>/dev/null || true

# --- 3. image config (as the Containerfile's final stage) and commit --------------------------------
"${BUILDAH[@]}" config \
    --user "$UID_GID:$UID_GID" \
    --workingdir / \
    --env "PATH=$VENV/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    --env PYTHONDONTWRITEBYTECODE=1 \
    --env PYTHONUNBUFFERED=1 \
    --env HOME=/tmp \
    --env LANG=C.UTF-8 \
    --port 10251/tcp \
    --entrypoint '["kubesched", "run"]' \
    --cmd '' \
    --label org.opencontainers.image.title=kubesched \
    --label "org.opencontainers.image.description=Kubernetes scheduling framework in Python" \
    --label org.opencontainers.image.version=0.1.0 \
    --label org.opencontainers.image.licenses=Apache-2.0 \
    --label "io.kubesched.plugins=${reqs[*]}" \
    "$ctr"
"${BUILDAH[@]}" umount "$ctr" >/dev/null
"${BUILDAH[@]}" commit --quiet --rm "$ctr" "$TAG" >/dev/null
ctr=""
size="$("${BUILDAH[@]}" images --format '{{.Size}}' "$TAG" | head -n1)"
log "committed $TAG ($size) in $((SECONDS - t0))s after the rootfs"

if [ -n "$OCI_ARCHIVE" ]; then
    rm -f "$OCI_ARCHIVE"
    "${BUILDAH[@]}" push --quiet "$TAG" "oci-archive:$OCI_ARCHIVE:$TAG"
    log "wrote $OCI_ARCHIVE ($(du -h "$OCI_ARCHIVE" | cut -f1))"
fi

# --- show it running, as the image's (non-root) user ------------------------------------------------
if [ "$VERIFY" = 1 ]; then
    ctr="$("${BUILDAH[@]}" from --quiet "$TAG")"
    "${BUILDAH[@]}" run --isolation chroot "$ctr" -- sh -c 'echo "user: $(id -u):$(id -g)"; kubesched --version; kubesched plugins'
    "${BUILDAH[@]}" rm "$ctr" >/dev/null
    ctr=""
fi
