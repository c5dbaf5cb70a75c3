#!/usr/bin/env bash
# Builds the local control plane's binaries from the Go module proxy, envtest-style, and caches them
# by version under ${TESSERA_CACHE_DIR:-~/.cache/tessera}/bin/<component>-<version>/. A component whose
# binaries are already cached is skipped, so a warm machine does no work. A cold build takes several
# minutes on two cores (Kubernetes is the long one); progress is printed as each component starts.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"
cache=${TESSERA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tessera}/bin

if ! command -v go >/dev/null 2>&1; then
  echo "build-binaries: Go is not on PATH; install Go >= 1.26 (the Kubernetes $KUBERNETES_VERSION module needs it)" >&2
  exit 1
fi

log() { printf '[build-binaries %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# The tools modules must pin the versions the cache directories are named after.
require_pin() {
  grep -q "$2" "$here/$1/go.mod" || { echo "build-binaries: hack/$1/go.mod does not pin $2 (hack/versions.env)" >&2; exit 1; }
}
require_pin k8s "k8s.io/kubernetes $KUBERNETES_VERSION"
require_pin k8s "k8s.io/api => k8s.io/api $KUBERNETES_STAGING_VERSION"
require_pin etcd "go.etcd.io/etcd/server/v3 $ETCD_VERSION"
require_pin kwok "sigs.k8s.io/kwok $KWOK_VERSION"
require_pin registry "github.com/distribution/distribution/v3 $DISTRIBUTION_VERSION"
require_pin crane "github.com/google/go-containerregistry $CRANE_VERSION"
require_pin prometheus "github.com/prometheus/prometheus $PROMETHEUS_VERSION"
require_pin kube-rbac-proxy "github.com/brancz/kube-rbac-proxy $KUBE_RBAC_PROXY_VERSION"
require_pin opm "github.com/operator-framework/operator-registry $OPERATOR_REGISTRY_VERSION"
require_pin olm-validate "github.com/operator-framework/api $OPERATOR_FRAMEWORK_API_VERSION"
require_pin olm "github.com/operator-framework/operator-lifecycle-manager $OLM_VERSION"

# build COMPONENT VERSION MODULE_DIR LDFLAGS PKG:BINARY...
build() {
  local component=$1 version=$2 moddir=$3 ldflags=$4; shift 4
  local dest="$cache/$component-$version" missing=()
  # A build of this component by a copy of this script that predates the lock below may still be running:
  # wait for it rather than compile the same thing twice on a small machine.
  while command -v pgrep >/dev/null && pgrep -f "go build .*/\.build-$component\." >/dev/null; do
    log "$component: another build is running; waiting for it"
    sleep 15
  done
  for spec in "$@"; do [ -x "$dest/${spec##*:}" ] || missing+=("$spec"); done
  if [ ${#missing[@]} -eq 0 ]; then log "$component $version: cached in $dest"; return; fi
  log "$component $version: building ${missing[*]##*:} (cold build, this takes minutes)"
  local tmp; tmp=$(mktemp -d "$cache/.build-$component.XXXXXX")
  local start=$SECONDS pkgs=()
  for spec in "${missing[@]}"; do pkgs+=("${spec%%:*}"); done
  (cd "$moddir" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $ldflags" -o "$tmp/" "${pkgs[@]}")
  mkdir -p "$dest"
  for spec in "${missing[@]}"; do
    local pkg=${spec%%:*} bin=${spec##*:}
    local out; out=$(basename "$pkg")
    # go build names a major-version-suffixed package (.../server/v3) after the element before it.
    [[ $out =~ ^v[0-9]+$ ]] && out=$(basename "$(dirname "$pkg")")
    mv "$tmp/$out" "$dest/$bin"
  done
  rm -rf "$tmp"
  log "$component $version: built in $((SECONDS - start)) s"
}

mkdir -p "$cache"
# One build at a time per cache (`tessera dev up`, `npm test` and `npm run binaries` may race): a second caller
# waits, then finds the first one's binaries cached.
exec 9>"$cache/.build.lock"
if ! flock -n 9; then
  log "another build-binaries.sh is running on $cache; waiting for it"
  flock 9
fi

k8s_minor=$(echo "$KUBERNETES_VERSION" | cut -d. -f2)
k8s_ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  k8s_ldflags+=" -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$k8s_minor"
  k8s_ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

# Selectors: all (default) or components; several may be given.
selected=("${@:-all}")
want() { local s; for s in "${selected[@]}"; do [ "$s" = all ] || [ "$s" = "$1" ] && return 0; done; return 1; }
for s in "${selected[@]}"; do
  case $s in all | etcd | kwok | kubernetes | registry | crane | prometheus | kube-rbac-proxy | opm | olm-validate | olm) ;;
  *) echo "build-binaries: unknown component '$s' (all, etcd, kwok, kubernetes, registry, crane, prometheus, kube-rbac-proxy, opm, olm-validate, olm)" >&2; exit 2 ;;
  esac
done
if want etcd; then
  build etcd "$ETCD_VERSION" "$here/etcd" "" go.etcd.io/etcd/server/v3:etcd
fi
if want kwok; then
  build kwok "$KWOK_VERSION" "$here/kwok" "-X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION" sigs.k8s.io/kwok/cmd/kwok:kwok
  # The standalone kwok binary has no built-in stages (kwokctl embeds them); take the release's own default
  # stage files (node init + heartbeat with lease, pod ready/complete/delete) from its module, beside the binary.
  stages="$cache/kwok-$KWOK_VERSION/stages"
  if [ ! -f "$stages/complete" ]; then
    kwok_src=$(cd "$here/kwok" && go mod download -json sigs.k8s.io/kwok | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
    mkdir -p "$stages"
    for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
      pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
      cp "$kwok_src/kustomize/stage/$f" "$stages/"
    done
    touch "$stages/complete"
    log "kwok $KWOK_VERSION: default stages in $stages"
  fi
fi
if want kubernetes; then
  build kubernetes "$KUBERNETES_VERSION" "$here/k8s" "$k8s_ldflags" \
    k8s.io/kubernetes/cmd/kube-apiserver:kube-apiserver \
    k8s.io/kubernetes/cmd/kube-controller-manager:kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler:kube-scheduler \
    k8s.io/kubernetes/cmd/kubectl:kubectl
fi
if want registry; then
  # The local OCI registry (tests, benchmarks, `tessera dev up`): distribution's own `registry serve`.
  build registry "$DISTRIBUTION_VERSION" "$here/registry" \
    "-X github.com/distribution/distribution/v3/version.version=$DISTRIBUTION_VERSION" \
    github.com/distribution/distribution/v3/cmd/registry:registry
fi
if want crane; then
  # An independent OCI client (go-containerregistry) the registry tests and benchmark compare Tessera with.
  build crane "$CRANE_VERSION" "$here/crane" \
    "-X github.com/google/go-containerregistry/cmd/crane/cmd.Version=$CRANE_VERSION" \
    github.com/google/go-containerregistry/cmd/crane:crane
fi
# The alerts stack of the update-status tests (`npm test` uses it, `npm start` does not).
if want prometheus; then
  # Real Prometheus serving /api/v1/alerts from alerting rules. remove_all_sd (an upstream build tag) leaves out
  # the cloud service discoveries (static and file SD stay), which the tests do not use and which double the build.
  GOFLAGS="${GOFLAGS:+$GOFLAGS }-tags=remove_all_sd" build prometheus "$PROMETHEUS_VERSION" "$here/prometheus" "-X github.com/prometheus/common/version.Version=$PROMETHEUS_VERSION" \
    github.com/prometheus/prometheus/cmd/prometheus:prometheus
fi
if want kube-rbac-proxy; then
  build kube-rbac-proxy "$KUBE_RBAC_PROXY_VERSION" "$here/kube-rbac-proxy" "" \
    github.com/brancz/kube-rbac-proxy/cmd/kube-rbac-proxy:kube-rbac-proxy
fi
# The operator framework's tools, for the OLM bundle and catalog and the OLM install tests.
if want opm; then
  # Without cgo, unlike upstream's release: cgo only serves go-sqlite3, i.e. opm's deprecated sqlite index commands,
  # which Tessera does not use (validate, render and serve of a file-based catalog are pure Go). So no C toolchain
  # is needed, and the build is ~45 s shorter. containers_image_openpgp, as upstream, avoids gpgme.
  GOFLAGS="${GOFLAGS:+$GOFLAGS }-tags=containers_image_openpgp" build opm "$OPERATOR_REGISTRY_VERSION" "$here/opm" \
    "-X github.com/operator-framework/operator-registry/cmd/opm/version.opmVersion=$OPERATOR_REGISTRY_VERSION" \
    github.com/operator-framework/operator-registry/cmd/opm:opm
fi
if want olm-validate; then
  # Our own command (hack/olm-validate/main.go) running operator-framework/api's bundle validators.
  build olm-validate "$OPERATOR_FRAMEWORK_API_VERSION" "$here/olm-validate" "" tessera.dev/hack/olm-validate:olm-validate
fi
if want olm; then
  # OLM's module is not in the checksum database; its hashes are pinned by hack/olm/go.sum.
  GONOSUMDB="${GONOSUMDB:+$GONOSUMDB,}github.com/operator-framework/operator-lifecycle-manager" \
    GOFLAGS="${GOFLAGS:+$GOFLAGS }-tags=json1" build olm "$OLM_VERSION" "$here/olm" \
    "-X github.com/operator-framework/operator-lifecycle-manager/pkg/version.OLMVersion=$OLM_VERSION" \
    github.com/operator-framework/operator-lifecycle-manager/cmd/olm:olm \
    github.com/operator-framework/operator-lifecycle-manager/cmd/catalog:catalog
  # OLM's CRDs of the same release (its Helm chart's crds/), beside the binaries, for the OLM support module.
  crds="$cache/olm-$OLM_VERSION/crds"
  if [ ! -f "$crds/complete" ]; then
    olm_src=$(cd "$here/olm" && GONOSUMDB=github.com/operator-framework/operator-lifecycle-manager \
      go mod download -json github.com/operator-framework/operator-lifecycle-manager | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
    mkdir -p "$crds"
    cp "$olm_src"/deploy/chart/crds/*.crd.yaml "$crds/"
    chmod u+w "$crds"/*.yaml
    touch "$crds/complete"
    log "olm $OLM_VERSION: CRDs in $crds"
  fi
fi
