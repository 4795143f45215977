#!/usr/bin/env bash
# Render the Helm chart into plain manifests for `kubectl apply -f`:
#
#   runtime/deploy/manifests/kubesched.yaml               default values
#   runtime/deploy/manifests/kubesched-with-contrib.yaml  + every contrib plugin enabled
#                                                         (the image must hold them: build.sh --with-contrib)
#
# Release "kubesched" in namespace "kubesched-system" (the Namespace object is part of the output),
# ServiceAccount kubesched-system/kubesched, leader election Lease kubesched-system/kubesched.
#
# Helm is not packaged for Debian; this builds it from its Go module into
# $KUBESCHED_CACHE/bin (default ~/.cache/kubesched/bin) the first time.
#
# Usage: runtime/deploy/render.sh [--check] [--out DIR]
#   --check   render into a temporary directory and fail if the committed manifests differ
#   --out DIR write there instead of runtime/deploy/manifests
# Environment: HELM (a helm binary to use instead), HELM_VERSION (default below).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CHART="$HERE/chart/kubesched"
OUT="$HERE/manifests"
CHECK=0
while [ $# -gt 0 ]; do
    case "$1" in
        --check) CHECK=1; shift ;;
        --out) OUT="$2"; shift 2 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "render.sh: unknown argument: $1" >&2; exit 2 ;;
    esac
done

HELM_VERSION="${HELM_VERSION:-v3.22.0}"
CACHE="${KUBESCHED_CACHE:-$HOME/.cache/kubesched}"
RELEASE=kubesched
NAMESPACE=kubesched-system

helm_bin() {
    if [ -n "${HELM:-}" ]; then echo "$HELM"; return; fi
    local bin="$CACHE/bin/helm" stamp="$CACHE/bin/helm.stamp"
    if [ -x "$bin" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$HELM_VERSION" ]; then
        echo "$bin"; return
    fi
    command -v go >/dev/null || { echo "render.sh: needs Go to build helm (or set HELM=/path/to/helm)" >&2; exit 1; }
    echo "render.sh: building helm $HELM_VERSION from its Go module (once; a few minutes)" >&2
    # The version stamps helm's Makefile sets: helm's own, and the Kubernetes version of its
    # client-go (the default --kube-version of `helm template`; go install alone leaves 1.20).
    local gomod k8s_minor
    gomod="$(go mod download -json "helm.sh/helm/v3@$HELM_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')"
    k8s_minor="$(awk '$1 == "k8s.io/client-go" { split($2, v, "."); print v[2]; exit }' "$gomod")"
    [ -n "$k8s_minor" ] || { echo "render.sh: cannot read client-go's version from $gomod" >&2; exit 1; }
    mkdir -p "$CACHE/bin"
    GOBIN="$CACHE/bin" GOFLAGS="${GOFLAGS:-} -buildvcs=false" go install -ldflags "\
        -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION \
        -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$k8s_minor \
        -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$k8s_minor" \
        "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" >&2
    echo "$HELM_VERSION" >"$stamp"
    echo "$bin"
}
HELM_BIN="$(helm_bin)"

render() {  # render FILE [helm args...]
    local file="$1"; shift
    {
        echo "# Rendered from runtime/deploy/chart/kubesched by runtime/deploy/render.sh: do not edit."
        echo "# kubectl apply -f $(basename "$file")"
        # --kube-version: render for a fixed cluster version, not the helm client's default
        "$HELM_BIN" template "$RELEASE" "$CHART" --namespace "$NAMESPACE" --kube-version 1.34.0 \
            --set createNamespace=true "$@"
    } >"$file"
}

dest="$OUT"
if [ "$CHECK" = 1 ]; then dest="$(mktemp -d)"; trap 'rm -rf "$dest"' EXIT; fi
mkdir -p "$dest"
render "$dest/kubesched.yaml"
render "$dest/kubesched-with-contrib.yaml" \
    --set contribPlugins.priorityLabel.enabled=true \
    --set contribPlugins.stickyNode.enabled=true \
    --set contribPlugins.coscheduling.enabled=true \
    --set contribPlugins.gpushare.enabled=true

if [ "$CHECK" = 1 ]; then
    if diff -ru "$OUT" "$dest" >&2; then
        echo "render.sh: committed manifests match the chart" >&2
    else
        echo "render.sh: runtime/deploy/manifests is stale: run runtime/deploy/render.sh" >&2
        exit 1
    fi
else
    echo "render.sh: wrote $(cd "$dest" && ls | sed "s|^|$dest/|" | tr '\n' ' ')" >&2
fi
