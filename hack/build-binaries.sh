#!/usr/bin/env bash
# Builds the local control plane's binaries from the Go module proxy, envtest-style, and caches them
# by version under ${TESSERA_CACHE_DIR:-~/.cache/tessera}/bin/<component>-<version>/. A component whose
# binaries are already cached is skipped, so a warm machine does no work and prints one "all cached" line. A cold
# build takes several minutes on two cores (Kubernetes is the long one), so each component gets a line as it starts
# ("n of m", an estimate from its last build on this machine, the run's time so far and what is left) and as it ends (its time, kept in <cache>/bin/
# .build-times for the next estimate); on a terminal a line below counts the time. Go's own output goes to
# <cache>/bin/build.log, which a failure names, with its last lines.
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
require_pin k8s "sigs.k8s.io/kwok $KWOK_VERSION"
require_pin registry "github.com/distribution/distribution/v3 $DISTRIBUTION_VERSION"
require_pin crane "github.com/google/go-containerregistry $CRANE_VERSION"
require_pin prometheus "github.com/prometheus/prometheus $PROMETHEUS_VERSION"
require_pin kube-rbac-proxy "github.com/brancz/kube-rbac-proxy $KUBE_RBAC_PROXY_VERSION"
require_pin operator-framework "github.com/operator-framework/operator-registry $OPERATOR_REGISTRY_VERSION"
require_pin operator-framework "github.com/operator-framework/api $OPERATOR_FRAMEWORK_API_VERSION"
require_pin operator-framework "github.com/operator-framework/operator-lifecycle-manager $OLM_VERSION"
require_pin cert-manager "github.com/cert-manager/cert-manager $CERT_MANAGER_VERSION"
require_pin node-runtime "github.com/containerd/containerd/v2 $CONTAINERD_VERSION"
require_pin node-runtime "github.com/containernetworking/plugins $CNI_PLUGINS_VERSION"

build_log="$cache/build.log"
build_times="$cache/.build-times"
# Estimates until this machine has built a component itself: the cold `.ci/run` of 2026-11-30 on this project's
# 2-core machine, idle, downloads included, components in this script's order (README, Figures). A component
# reuses the modules earlier ones downloaded: crane's 5 s came right after the registry.
declare -A default_seconds=([containerd]=240 [cni-plugins]=30 [etcd]=48 [kwok]=76 [kubernetes]=357 [registry]=70 [crane]=5 [prometheus]=98
  [kube-rbac-proxy]=115 [opm]=94 [olm-validate]=44 [olm]=73 [cert-manager]=600)

duration() { if (($1 < 60)); then echo "$1 s"; else echo "$(($1 / 60)) min $(($1 % 60)) s"; fi; }
about() { if (($1 < 60)); then echo "about $1 s"; else echo "about $((($1 + 30) / 60)) min"; fi; }
# Seconds the last build of a component on this machine took (any version); nothing if it was never built here.
measured_seconds() {
  if [ -f "$build_times" ]; then awk -v c="$1" '$1 == c && $3 ~ /^[0-9]+$/ { s = $3 } END { if (s != "") print s }' "$build_times"; fi
}
estimate_seconds() {
  local measured; measured=$(measured_seconds "$1")
  echo "${measured:-${default_seconds[$1]}}"
}

# The log holds the Go output of the last run that had something to do; a run with everything cached keeps it.
log_opened=""
open_log() {
  if [ -z "$log_opened" ]; then
    printf 'hack/build-binaries.sh %s (%s)\n' "${selected[*]}" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$build_log"
    log_opened=1
  fi
}

# On a terminal, a line under the component's start line counts its time until it ends (CI logs get no such line).
ticker=""
start_ticker() {
  [ -t 2 ] || return 0
  local label=$1 estimate=$2 start=$SECONDS
  (
    # Stops by itself should this script be killed without running its EXIT trap.
    while kill -0 $$ 2>/dev/null; do
      took=$((SECONDS - start))
      if ((took <= estimate)); then
        printf '\r\033[K[build-binaries] %s: %s of %s' "$label" "$(duration "$took")" "$(about "$estimate")" >&2
      else
        printf '\r\033[K[build-binaries] %s: %s (estimated %s)' "$label" "$(duration "$took")" "$(about "$estimate")" >&2
      fi
      sleep 1
    done
  ) &
  ticker=$!
}
stop_ticker() {
  if [ -n "$ticker" ]; then
    kill "$ticker" 2>/dev/null || true
    wait "$ticker" 2>/dev/null || true
    ticker=""
    printf '\r\033[K' >&2
  fi
}

# What is under way, for the failure message: "n of m component version" and when it started.
current="" current_start=0 tmp=""
on_exit() {
  local status=$?
  stop_ticker
  if [ -n "$tmp" ]; then rm -rf "$tmp"; fi
  if [ "$status" -ne 0 ] && [ -n "$current" ]; then
    log "$current: failed after $(duration $((SECONDS - current_start))) (exit $status); Go's output is in $build_log, ending with:"
    tail -n 25 "$build_log" | sed 's/^./    &/' >&2
  fi
}
trap on_exit EXIT

# The components are walked twice: `plan` finds those with binaries missing (for "n of m"), `build` builds them.
mode=plan planned=() cached=() extras=() built=()

# build COMPONENT VERSION MODULE_DIR LDFLAGS PKG:BINARY...
build() {
  local component=$1 version=$2 moddir=$3 ldflags=$4; shift 4
  local dest="$cache/$component-$version" missing=() spec
  if [ "$mode" = build ]; then
    # A build of this component by a copy of this script that predates the lock below may still be running:
    # wait for it rather than compile the same thing twice on a small machine.
    while command -v pgrep >/dev/null && pgrep -f "go build .*$cache/\.build-$component\." >/dev/null; do
      log "$component: another build is running; waiting for it"
      sleep 15
    done
  fi
  for spec in "$@"; do [ -x "$dest/${spec##*:}" ] || missing+=("$spec"); done
  if [ "$mode" = plan ]; then
    if [ ${#missing[@]} -eq 0 ]; then cached+=("$component $version"); else planned+=("$component"); fi
    return
  fi
  if [ ${#missing[@]} -eq 0 ]; then return; fi # built meanwhile by the build this one waited for
  built+=("$component")
  local estimate measured note
  measured=$(measured_seconds "$component")
  if [ -n "$measured" ]; then
    estimate=$measured note="its last build here took $(duration "$measured")"
  else
    estimate=${default_seconds[$component]} note="none measured here yet; the default is a cold build on 2 idle cores"
  fi
  current="${#built[@]} of ${#planned[@]} $component $version"
  # From the second component on: the time the run has taken, and the estimates of what is left (this one included).
  local progress="" left=0 i
  if ((${#built[@]} > 1)); then
    for ((i = ${#built[@]} - 1; i < ${#planned[@]}; i++)); do left=$((left + $(estimate_seconds "${planned[$i]}"))); done
    progress="; $(duration $((SECONDS - run_start))) so far, $(about "$left") to go"
  fi
  log "$current: building ${missing[*]##*:}, $(about "$estimate") ($note)$progress"
  open_log
  printf '\n=== %s: go build (%s) ===\n' "$current" "$(date -u +%H:%M:%S)" >>"$build_log"
  tmp=$(mktemp -d "$cache/.build-$component.XXXXXX")
  current_start=$SECONDS
  local pkgs=()
  for spec in "${missing[@]}"; do pkgs+=("${spec%%:*}"); done
  start_ticker "$current" "$estimate"
  (cd "$moddir" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $ldflags" -o "$tmp/" "${pkgs[@]}") >>"$build_log" 2>&1
  stop_ticker
  mkdir -p "$dest"
  for spec in "${missing[@]}"; do
    local pkg=${spec%%:*} bin=${spec##*:}
    local out; out=$(basename "$pkg")
    # go build names a major-version-suffixed package (.../server/v3) after the element before it.
    [[ $out =~ ^v[0-9]+$ ]] && out=$(basename "$(dirname "$pkg")")
    mv "$tmp/$out" "$dest/$bin"
  done
  rm -rf "$tmp"
  tmp=""
  local took=$((SECONDS - current_start))
  printf '%s %s %s %s\n' "$component" "$version" "$took" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >>"$build_times"
  log "$current: built in $(duration "$took")"
  current=""
}

# extra LABEL MARKER: whether a file copied from a component's module (marked complete by MARKER) is still to be
# made; in the plan walk, only notes it.
extra_missing() {
  if [ -f "$2" ]; then return 1; fi
  if [ "$mode" = plan ]; then extras+=("$1"); return 1; fi
  open_log
  current="$1" current_start=$SECONDS
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
  case $s in all | etcd | kwok | kubernetes | registry | crane | prometheus | kube-rbac-proxy | opm | olm-validate | olm | containerd | cni-plugins | cert-manager) ;;
  *) echo "build-binaries: unknown component '$s' (all, etcd, kwok, kubernetes, registry, crane, prometheus, kube-rbac-proxy, opm, olm-validate, olm, containerd, cni-plugins, cert-manager)" >&2; exit 2 ;;
  esac
done
components() {
  if want etcd; then
    build etcd "$ETCD_VERSION" "$here/etcd" "" go.etcd.io/etcd/server/v3:etcd
  fi
  if want kwok; then
    # From the Kubernetes module (hack/k8s), so it shares the control plane's compiled k8s.io packages.
    build kwok "$KWOK_VERSION" "$here/k8s" "-X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION" sigs.k8s.io/kwok/cmd/kwok:kwok
    # The standalone kwok binary has no built-in stages (kwokctl embeds them); take the release's own default
    # stage files (node init + heartbeat with lease, pod ready/complete/delete) from its module, beside the binary.
    stages="$cache/kwok-$KWOK_VERSION/stages"
    if extra_missing "kwok $KWOK_VERSION default stages" "$stages/complete"; then
      kwok_src=$(cd "$here/k8s" && go mod download -json sigs.k8s.io/kwok 2>>"$build_log" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
      mkdir -p "$stages"
      for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
        pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
        cp "$kwok_src/kustomize/stage/$f" "$stages/"
      done
      touch "$stages/complete"
      log "kwok $KWOK_VERSION: default stages in $stages"
      current=""
    fi
  fi
  if want kubernetes; then
    build kubernetes "$KUBERNETES_VERSION" "$here/k8s" "$k8s_ldflags" \
      k8s.io/kubernetes/cmd/kube-apiserver:kube-apiserver \
      k8s.io/kubernetes/cmd/kube-controller-manager:kube-controller-manager \
      k8s.io/kubernetes/cmd/kube-scheduler:kube-scheduler \
      k8s.io/kubernetes/cmd/kubectl:kubectl \
      k8s.io/kubernetes/cmd/kubelet:kubelet \
      k8s.io/kubernetes/cmd/kube-proxy:kube-proxy
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
  # The operator framework's tools, for the OLM bundle and catalog and the OLM install tests: one module
  # (hack/operator-framework), so the three components share their compiled dependencies, and one set of build
  # tags for all three (the tags only pick files of the packages that have them, so the shared packages compile once).
  # Without cgo, unlike upstream's opm release: cgo only serves go-sqlite3, i.e. opm's deprecated sqlite index
  # commands, which Tessera does not use (validate, render and serve of a file-based catalog are pure Go), so no C
  # toolchain is needed. containers_image_openpgp, as upstream, avoids gpgme; json1 is OLM's own build tag.
  # OLM's module is not in the checksum database; its hashes are pinned by hack/operator-framework/go.sum.
  local of_module="$here/operator-framework"
  local of_tags="-tags=containers_image_openpgp,json1"
  local of_nosumdb="${GONOSUMDB:+$GONOSUMDB,}github.com/operator-framework/operator-lifecycle-manager"
  if want opm; then
    # opm reads images with containers/image, which refuses to without a signature policy: the user's
    # ~/.config/containers/policy.json, else /etc/containers/policy.json, which only podman's Debian packages happen to
    # bring. This opm's default is a policy of its own beside it instead (the link-time setting containers/image
    # provides for this), so `opm render` needs nothing in /etc. An opm built before it had one is linked again.
    local opm_dir="$cache/opm-$OPERATOR_REGISTRY_VERSION"
    local opm_ldflags="-X github.com/operator-framework/operator-registry/cmd/opm/version.opmVersion=$OPERATOR_REGISTRY_VERSION"
    opm_ldflags+=" -X 'go.podman.io/image/v5/signature.systemDefaultPolicyPath=$opm_dir/policy.json'"
    if [ "$mode" = plan ] && [ ! -f "$opm_dir/policy.json" ]; then rm -f "$opm_dir/opm"; fi
    GONOSUMDB="$of_nosumdb" GOFLAGS="${GOFLAGS:+$GOFLAGS }$of_tags" build opm "$OPERATOR_REGISTRY_VERSION" "$of_module" \
      "$opm_ldflags" github.com/operator-framework/operator-registry/cmd/opm:opm
    if [ "$mode" = build ] && [ -x "$opm_dir/opm" ] && [ ! -f "$opm_dir/policy.json" ]; then
      # opm only pulls from registries (the docker transport), Tessera's own bundle images: accepted unsigned, as
      # Debian's default policy accepts everything; any other transport is refused.
      printf '%s\n' '{"default":[{"type":"reject"}],"transports":{"docker":{"":[{"type":"insecureAcceptAnything"}]}}}' \
        >"$opm_dir/policy.json"
    fi
  fi
  if want olm-validate; then
    # Our own command (hack/operator-framework/olm-validate/main.go) running operator-framework/api's validators.
    GONOSUMDB="$of_nosumdb" GOFLAGS="${GOFLAGS:+$GOFLAGS }$of_tags" build olm-validate "$OPERATOR_FRAMEWORK_API_VERSION" "$of_module" "" \
      tessera.dev/hack/operator-framework/olm-validate:olm-validate
  fi
  if want olm; then
    GONOSUMDB="$of_nosumdb" GOFLAGS="${GOFLAGS:+$GOFLAGS }$of_tags" build olm "$OLM_VERSION" "$of_module" \
      "-X github.com/operator-framework/operator-lifecycle-manager/pkg/version.OLMVersion=$OLM_VERSION" \
      github.com/operator-framework/operator-lifecycle-manager/cmd/olm:olm \
      github.com/operator-framework/operator-lifecycle-manager/cmd/catalog:catalog \
      github.com/operator-framework/operator-lifecycle-manager/util/cpb:cpb \
      tessera.dev/hack/operator-framework/grpc-health-probe:grpc_health_probe
    # OLM's CRDs of the same release (its Helm chart's crds/), beside the binaries, for the OLM support module.
    crds="$cache/olm-$OLM_VERSION/crds"
    if extra_missing "olm $OLM_VERSION CRDs" "$crds/complete"; then
      olm_src=$(cd "$of_module" && GONOSUMDB=github.com/operator-framework/operator-lifecycle-manager \
        go mod download -json github.com/operator-framework/operator-lifecycle-manager 2>>"$build_log" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
      mkdir -p "$crds"
      cp "$olm_src"/deploy/chart/crds/*.crd.yaml "$crds/"
      chmod u+w "$crds"/*.yaml
      touch "$crds/complete"
      log "olm $OLM_VERSION: CRDs in $crds"
      current=""
    fi
  fi
  if want cert-manager; then
    # cert-manager for the OLM v1 tests: our own command (hack/cert-manager/cert-manager/main.go) running the root
    # module's control loops and CA injector, as cert-manager's own commands are modules the proxy does not serve.
    build cert-manager "$CERT_MANAGER_VERSION" "$here/cert-manager" "" tessera.dev/hack/cert-manager/cert-manager:cert-manager
    crds="$cache/cert-manager-$CERT_MANAGER_VERSION/crds"
    if extra_missing "cert-manager $CERT_MANAGER_VERSION CRDs" "$crds/complete"; then
      cm_src=$(cd "$here/cert-manager" && go mod download -json github.com/cert-manager/cert-manager 2>>"$build_log" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
      mkdir -p "$crds"
      cp "$cm_src"/deploy/crds/*.yaml "$crds/"
      chmod u+w "$crds"/*.yaml
      touch "$crds/complete"
      log "cert-manager $CERT_MANAGER_VERSION: CRDs in $crds"
      current=""
    fi
  fi
  # A real node's runtime (`tessera dev up --real-nodes`): containerd, its runc shim, ctr, the sandbox (pause)
  # command and the CNI plugins, from one module (hack/node-runtime). Without cgo: the snapshotters that need it
  # (btrfs, devmapper, zfs) are left out by their upstream tags; overlayfs and native are pure Go.
  if want containerd; then
    GOFLAGS="${GOFLAGS:+$GOFLAGS }-tags=no_btrfs,no_devmapper,no_zfs" build containerd "$CONTAINERD_VERSION" "$here/node-runtime" \
      "-X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION" \
      github.com/containerd/containerd/v2/cmd/containerd:containerd \
      github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2:containerd-shim-runc-v2 \
      github.com/containerd/containerd/v2/cmd/ctr:ctr \
      tessera.dev/hack/node-runtime/pause:pause
  fi
  if want cni-plugins; then
    build cni-plugins "$CNI_PLUGINS_VERSION" "$here/node-runtime" \
      "-X github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion=$CNI_PLUGINS_VERSION" \
      github.com/containernetworking/plugins/plugins/main/bridge:bridge \
      github.com/containernetworking/plugins/plugins/main/loopback:loopback \
      github.com/containernetworking/plugins/plugins/ipam/host-local:host-local
  fi
}

components
if [ ${#planned[@]} -eq 0 ] && [ ${#extras[@]} -eq 0 ]; then
  printf -v summary '%s, ' "${cached[@]}"
  log "all cached in $cache: ${summary%, }"
  exit 0
fi
if [ ${#planned[@]} -gt 0 ]; then
  total=0
  for c in "${planned[@]}"; do total=$((total + $(estimate_seconds "$c"))); done
  log "to build: ${planned[*]} (${#planned[@]} of $((${#planned[@]} + ${#cached[@]})) components, $(about "$total") in all); Go's output goes to $build_log"
fi
mode=build run_start=$SECONDS
components
if [ ${#built[@]} -gt 0 ]; then log "built ${built[*]} in $(duration $((SECONDS - run_start))); binaries in $cache"; fi
