#!/usr/bin/env bash
# Every experiment of issue 15 (the thesis's chapter 6 as real programs), one after another:
# the query cache (about 11 minutes), the query cache with the anchors' policies (about 11
# minutes), the allocator (about a minute), the JVM (about 9 minutes) and memory nice (about
# 10 minutes). Each script installs what it needs, cleans up after itself on success, failure
# and Ctrl-C, prints its table and writes its JSON to $ANTSCHED_BENCH_DIR. This one goes on
# past a failing script, so that one experiment's trouble does not hide the others', and
# exits non-zero if any failed. Ctrl-C stops the one running (it cleans up) and then all.
#
#   sudo bench/mem/all.sh
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
failed=()
trap 'echo "bench/mem/all.sh: interrupted" >&2; exit 130' INT TERM
for script in query-cache query-cache-anchors malloc jvm nice; do
  echo "== bench/mem/$script.sh"
  if ! "$here/$script.sh"; then
    failed+=("$script")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "bench/mem/all.sh: failed: ${failed[*]}" >&2
  exit 1
fi
echo "bench/mem/all.sh: all four ran; figures in ${ANTSCHED_BENCH_DIR:-/tmp/antsched-bench}"
