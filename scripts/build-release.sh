#!/usr/bin/env bash
# Builds the visor binary of a past release and prints its path: the
# commit from the release's tag, or from internal/release/releases.txt in a
# clone without tags. The release's tree is exported with `git archive`
# into a temporary directory and built there with that tree's own
# scripts/build-visor.sh and the shared Go build cache; the binary is kept
# under the cache directory, so a second call only prints the path.
#
#   scripts/build-release.sh RELEASE [GO]    e.g. scripts/build-release.sh v0.1.0
#   scripts/build-release.sh --commit RELEASE  prints the release's commit only
#
# The clone needs the release's commit (a shallow CI clone: git fetch --unshallow).
set -euo pipefail
only_commit=""
if [ "${1:-}" = "--commit" ]; then only_commit=1; shift; fi
REL="${1:?usage: scripts/build-release.sh [--commit] RELEASE [GO]}"
GO="${2:-go}"
cd "$(dirname "$0")/.."

commit=$(git rev-parse --verify --quiet "refs/tags/$REL^{commit}" 2>/dev/null || true)
file=$(awk -v r="$REL" '$1 == r { print $2 }' internal/release/releases.txt)
if [ -z "$commit" ]; then
	commit="$file"
elif [ -n "$file" ] && [ "$file" != "$commit" ]; then
	echo "build-release: tag $REL is $commit but internal/release/releases.txt says $file" >&2
	exit 1
fi
if [ -z "$commit" ]; then
	echo "build-release: no tag $REL and no line for it in internal/release/releases.txt" >&2
	exit 1
fi
if ! git cat-file -e "$commit^{commit}" 2>/dev/null; then
	echo "build-release: commit $commit of $REL is not in this clone (a shallow clone? git fetch --unshallow)" >&2
	exit 1
fi

if [ -n "$only_commit" ]; then
	echo "$commit"
	exit 0
fi

out="${VISOR_RELEASE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/visor-fleet/releases}/$REL-$commit"
if [ -x "$out/visor" ]; then
	echo "$out/visor"
	exit 0
fi
mkdir -p "$out"
src=$(mktemp -d "${TMPDIR:-/tmp}/visor-$REL.XXXXXX")
trap 'rm -rf "$src"' EXIT
git archive "$commit" | tar -x -C "$src"
# That release's own build script (a tree without it: plain go build).
# No .git in the export: the binary's commit is not stamped, so pass it.
(
	cd "$src"
	if [ -f scripts/build-visor.sh ]; then
		GOFLAGS="${GOFLAGS:-} -buildvcs=false" bash scripts/build-visor.sh "$GO" "$out/visor.tmp" >&2
	else
		"$GO" build -buildvcs=false -o "$out/visor.tmp" ./cmd/visor >&2
	fi
)
mv "$out/visor.tmp" "$out/visor"
echo "$out/visor"
