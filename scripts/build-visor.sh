#!/usr/bin/env bash
# Builds bin/visor (make build), saying how much there is to compile before
# it starts and showing progress while it runs, on a terminal or piped: a
# cold Go build cache compiles the Temporal server and Web UI (about 8
# minutes on 2 cores), a warm one only what changed, then links (about a
# minute for this binary, during which the compiler prints nothing).
#
#   scripts/build-visor.sh [GO] [OUTPUT]
set -euo pipefail
GO="${1:-go}"
BIN="${2:-bin/visor}"
PKG=./cmd/visor

# The release and commit `visor version` prints (internal/release): the
# commit always, the release only when HEAD carries a release tag; without
# one (a clone without tags) the binary finds its commit in
# internal/release/releases.txt, or calls itself the latest release +dev.
commit=$(git rev-parse HEAD 2>/dev/null || true)
tag=$(git describe --tags --exact-match --match 'v[0-9]*' HEAD 2>/dev/null || true)
dirty=""
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null || true)" ]; then tag="" dirty=true; fi
rel=github.com/hanzoai/visor-fleet/internal/release
LDFLAGS="-X $rel.commit=$commit${tag:+ -X $rel.version=$tag}${dirty:+ -X $rel.modified=true}"

start=$(date +%s)
# One listing gives both counts (each `go list -deps` hashes every package).
listing=$("$GO" list -deps -f '{{.Stale}}' "$PKG")
total=$(grep -c . <<<"$listing" || true)
stale=$(grep -c true <<<"$listing" || true)
if [ "$stale" -gt $((total / 2)) ]; then
	echo "building $BIN: $stale of $total packages to compile (a cold Go build cache: about 8 minutes on 2 cores, then about a minute to link)"
else
	echo "building $BIN: $stale of $total packages to compile (build cache warm: seconds to a few minutes, then about a minute to link)"
fi
if [ -t 1 ]; then tty=1; else tty=0; fi
"$GO" build -v -ldflags "$LDFLAGS" -o "$BIN" "$PKG" 2>&1 | awk -v stale="$stale" -v tty="$tty" -v main="github.com/hanzoai/visor-fleet/cmd/visor" '
	/^#|: |^go: / { print; fflush(); next }
	{
		n++
		if ($0 == main) {
			if (tty) printf "\r\033[K"
			printf "  %d of about %d packages compiled; linking (about a minute)...\n", n, stale; fflush(); next
		}
		if (tty) { if (n % 10 == 1) { printf "\r  %d of about %d packages compiled, now %s\033[K", n, stale, $0; fflush() } }
		else if (n % 100 == 0) { printf "  %d of about %d packages compiled\n", n, stale; fflush() }
	}
	END { if (tty && n) printf "\r\033[K" }'
echo "built $BIN in $(( $(date +%s) - start ))s"
