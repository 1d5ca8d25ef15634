#!/usr/bin/env bash
# Runs the pool's properties, unchanged, against the pool as it was before its run was structured
# (commit c0f4fe4, the last before the rebuild), where they must fail, and prints what they shrank
# each failure to. This is the evidence that the properties would have caught the defects the
# rebuild fixed (specs/worker-pool.md, WP-2, WP-10, WP-16, WP-17, WP-18).
#
#   specs/probes/properties-on-the-old-pool.sh [commit] [examples]
#
# It checks the old commit out into a temporary git worktree, puts in it the current property
# harness (WorkerPoolProperties, PoolWorkload, PoolRunner), the current report support, the measure
# it uses (drain-measure's JvmThreads, JsonReader, Json and Provenance, as test code there), and
# PoolApi's twin for the old API (specs/probes/old-pool/PoolApi.java), and runs
# WorkerPoolProperties there with a short bound for a hung run and few shrinking steps (a hung run
# costs the bound at every step). Exit status: 0 if the properties failed, as they must; 1 if they
# passed; 2 if the harness could not be built or run.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
base=${1:-c0f4fe4}
examples=${2:-200}
if ! git -C "$root" cat-file -e "$base^{commit}" 2>/dev/null; then
    echo "properties-on-the-old-pool: SKIPPED: commit $base is not in this clone (a shallow clone?); fetch the history to run it" >&2
    exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/drain-old-pool.XXXXXX")
cleanup() {
    git -C "$root" worktree remove --force "$work/old" >/dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT

git -C "$root" worktree add --detach "$work/old" "$base" >/dev/null 2>&1 ||
    { echo "properties-on-the-old-pool: cannot check out $base" >&2; exit 2; }
old="$work/old"
cp "$root"/core/src/test/java/dev/drain/pool/{WorkerPoolProperties,PoolWorkload,PoolRunner}.java "$old/src/test/java/dev/drain/pool/"
cp "$root/specs/probes/old-pool/PoolApi.java" "$old/src/test/java/dev/drain/pool/PoolApi.java"
# The settlement types the harness names (WP-22); the old pool never calls them.
cp "$root"/core/src/main/java/dev/drain/pool/{Settler,Settlement}.java "$old/src/main/java/dev/drain/pool/"
cp "$root"/core/src/test/java/dev/drain/support/{Evidence,PropertyReport}.java "$old/src/test/java/dev/drain/support/"
mkdir -p "$old/src/test/java/dev/drain/measure"
cp "$root"/measure/src/main/java/dev/drain/measure/{JvmThreads,JsonReader,Json,Provenance,package-info}.java \
    "$old/src/test/java/dev/drain/measure/"

cd "$old" || exit 2
echo "properties-on-the-old-pool: running WorkerPoolProperties ($examples workloads) against $base ..." >&2
./mvnw -q -B test -Dtest=WorkerPoolProperties -Dqt.examples="$examples" -Dqt.shrinks=10 \
    -Ddrain.property.runBound=PT3S >"$work/mvn.log" 2>&1
status=$?
# A run of one suite (-Dtest=...) writes the partial report, never the complete one.
report=target/property-report-partial.md
if [ ! -f "$report" ]; then
    echo "properties-on-the-old-pool: the harness did not run; the end of Maven's log:" >&2
    tail -n 30 "$work/mvn.log" >&2
    exit 2
fi
sed -n '/^| suite/,/^## Reruns/p' "$report" | grep -v '^## Reruns'
sed -n '/^## Failures/,/^## Statistics/p' "$report" | grep -v '^## Statistics' |
    grep -E '^\*\*|Smallest found|^PoolWorkload|Cause was|^\[|^[a-zA-Z.]+(Error|Exception)' | head -n 80
if [ "$status" -eq 0 ]; then
    echo "properties-on-the-old-pool: the properties PASSED on $base; they should have failed" >&2
    exit 1
fi
echo "properties-on-the-old-pool: the properties failed on $base, as they must" >&2
exit 0
