#!/usr/bin/env bash
# Builds the real etcd, kube-apiserver, kube-controller-manager and
# kube-scheduler that the kubeapi test harness runs, and kwok (the node
# simulator the kwok connector's nodes are managed by), from the Go module proxy, into a cache folder
# outside the repository keyed by version. Idempotent: a binary that is
# already there is not rebuilt, so CI and developers can call it every time.
#
#   testsuite/kubeapi/build-binaries.sh          # build what is missing
#   testsuite/kubeapi/build-binaries.sh --print  # print the cache folder
#
# Environment:
#   VISOR_KUBE_CACHE        cache root (default $HOME/.cache/visor-fleet)
#   VISOR_KUBE_BUILD_JOBS   go build -p (default 1 on a shared machine,
#                           all cores when CI=true)
set -euo pipefail

KUBE_VERSION=v1.37.2       # k8s.io/kubernetes
STAGING_VERSION=v0.37.2    # the published k8s.io/<staging> modules of that release
ETCD_VERSION=v3.6.6        # go.etcd.io/etcd/server/v3
KWOK_VERSION=v0.8.0        # sigs.k8s.io/kwok (its own go.mod: client-go v0.36, talks to any API server of the 1.3x line)

CACHE_ROOT="${VISOR_KUBE_CACHE:-$HOME/.cache/visor-fleet}"
BIN_DIR="$CACHE_ROOT/kube-$KUBE_VERSION"

if [[ "${1:-}" == "--print" ]]; then
	echo "$BIN_DIR"
	exit 0
fi

if [[ "${CI:-}" == "true" ]]; then
	JOBS="${VISOR_KUBE_BUILD_JOBS:-$(nproc)}"
else
	JOBS="${VISOR_KUBE_BUILD_JOBS:-1}"
fi

mkdir -p "$BIN_DIR"
# One builder at a time per cache folder; a second caller waits, then finds
# the binaries in place and returns.
exec 9>"$BIN_DIR/.build.lock"
flock 9

WORK="$(mktemp -d "${TMPDIR:-/tmp}/visor-kube-build.XXXXXX")"
trap 'chmod -R u+w "$WORK" 2>/dev/null; rm -rf "$WORK"' EXIT

export GOWORK=off GOTOOLCHAIN=local GOFLAGS="-mod=mod -buildvcs=false -p=$JOBS"

log() { echo "build-binaries: $*" >&2; }

# module_source MODULE@VERSION DEST copies a module's source out of the
# module cache into DEST, writable, so its go.mod can be edited.
module_source() {
	local dir
	# Run outside any module, so no caller's go.mod or go.sum is touched.
	dir="$(cd "$WORK" && go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
	if [[ -z "$dir" || ! -d "$dir" ]]; then
		log "could not download $1"
		exit 1
	fi
	cp -r "$dir" "$2"
	chmod -R u+w "$2"
}

# timed NAME CMD... runs CMD and logs how long it took.
timed() {
	local name="$1" start end
	shift
	start=$(date +%s)
	"$@"
	end=$(date +%s)
	log "$name built in $((end - start)) s"
}

build_etcd() {
	local src="$WORK/etcd"
	module_source "go.etcd.io/etcd/server/v3@$ETCD_VERSION" "$src"
	# The published module points its sibling modules at ../ (the etcd
	# monorepo); use the published siblings of the same version instead.
	(
		cd "$src"
		for m in $(sed -n 's/^[[:space:]]*\([^ ]*\) => \.\.\/.*/\1/p' go.mod); do
			go mod edit -dropreplace="$m"
		done
		nice -n 10 go build -trimpath -ldflags="-s -w" -o "$BIN_DIR/etcd.partial" .
	)
	mv "$BIN_DIR/etcd.partial" "$BIN_DIR/etcd"
}

# prepare_kubernetes copies k8s.io/kubernetes once and points its staging
# replaces at the published modules; both kube binaries build from it.
prepare_kubernetes() {
	local src="$WORK/kubernetes"
	[[ -d "$src" ]] && return 0
	module_source "k8s.io/kubernetes@$KUBE_VERSION" "$src"
	(
		cd "$src"
		rm -f go.work go.work.sum
		rm -rf vendor
		for m in $(sed -n 's/^[[:space:]]*\(k8s.io\/[^ ]*\) => \.\/staging\/src\/.*/\1/p' go.mod); do
			go mod edit -replace="$m=$m@$STAGING_VERSION"
		done
	)
}

build_kube() {
	local name="$1"
	prepare_kubernetes
	(
		cd "$WORK/kubernetes"
		local v="k8s.io/component-base/version"
		nice -n 10 go build -trimpath \
			-ldflags="-s -w -X $v.gitVersion=$KUBE_VERSION -X $v.gitMajor=1 -X $v.gitMinor=37" \
			-o "$BIN_DIR/$name.partial" "./cmd/$name"
	)
	mv "$BIN_DIR/$name.partial" "$BIN_DIR/$name"
}

if [[ -x "$BIN_DIR/etcd" ]]; then
	log "etcd $ETCD_VERSION present"
else
	log "building etcd $ETCD_VERSION (go build -p $JOBS)"
	timed etcd build_etcd
fi

build_kwok() {
	local src="$WORK/kwok"
	module_source "sigs.k8s.io/kwok@$KWOK_VERSION" "$src"
	(
		cd "$src"
		nice -n 10 go build -trimpath -ldflags="-s -w" -o "$BIN_DIR/kwok.partial" ./cmd/kwok
	)
	mv "$BIN_DIR/kwok.partial" "$BIN_DIR/kwok"
}

for name in kube-apiserver kube-controller-manager kube-scheduler; do
	if [[ -x "$BIN_DIR/$name" ]]; then
		log "$name $KUBE_VERSION present"
	else
		log "building $name $KUBE_VERSION (go build -p $JOBS)"
		timed "$name" build_kube "$name"
	fi
done

if [[ -x "$BIN_DIR/kwok" ]]; then
	log "kwok $KWOK_VERSION present"
else
	log "building kwok $KWOK_VERSION (go build -p $JOBS)"
	# testsuite/kwok (in make test) and visor dev --kube run it: a failed
	# build fails the script, as the Kubernetes binaries' do.
	timed kwok build_kwok
fi

log "binaries in $BIN_DIR"
