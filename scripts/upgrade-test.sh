#!/usr/bin/env bash
# make upgrade-test: an operator's upgrade, checked from ground truth. For
# each "<release>:<stop>" in UPGRADE_FROM (default: v0.1.0 stopped with
# SIGTERM, v0.2.0 with kill -9), builds that release (scripts/build-release.sh,
# cached), runs its visor dev on a fresh data directory with that release's
# own chaos spec (testsuite/chaos/pools.yaml of its tree: demo pools,
# provider faults, machines repaired and interrupted) until a pool has
# machines in flight, stops it, starts BIN on the same data directory and
# lets testsuite/chaos check its invariants: every workflow running, no
# workflow task failed, every pool observed and deciding within a minute,
# no meter hour lost or doubled, no machine bought twice.
#
#   scripts/upgrade-test.sh [GO] [BIN]
set -euo pipefail
GO="${1:-go}"
BIN="${2:-bin/visor}"
cd "$(dirname "$0")/.."
[ -x "$BIN" ] || { echo "upgrade-test: $BIN is missing (make build)" >&2; exit 1; }
"$GO" build -o bin/chaos ./testsuite/chaos
root="artifacts/upgrade/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$root"
failed=()
for run in ${UPGRADE_FROM:-v0.1.0:term v0.2.0:kill}; do
	rel="${run%%:*}"
	stop="${run#*:}"
	old=$(bash scripts/build-release.sh "$rel" "$GO")
	commit=$(bash scripts/build-release.sh --commit "$rel")
	dir="$root/$rel-$stop"
	mkdir -p "$dir"
	git show "$commit:testsuite/chaos/pools.yaml" > "$root/$rel-spec.yaml"
	echo "== upgrade from $rel ($old), stopped by $stop, to $BIN: $dir"
	start=$(date +%s)
	if ./bin/chaos -visor "$BIN" -from "$old" -stop "$stop" -spec "$root/$rel-spec.yaml" -data-dir "$dir" \
		-settle-min "${UPGRADE_SETTLE_MIN:-60s}" -settle-max "${UPGRADE_SETTLE_MAX:-4m}" ${UPGRADEFLAGS:-} | tee "$dir/report.txt"; then
		echo "== upgrade from $rel ($stop): passed in $(( $(date +%s) - start ))s"
	else
		echo "== upgrade from $rel ($stop): FAILED in $(( $(date +%s) - start ))s (report $dir/report.txt)"
		failed+=("$rel:$stop")
	fi
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "upgrade-test failed: ${failed[*]}"
	exit 1
fi
