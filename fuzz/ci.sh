#!/usr/bin/env bash
# Runs every fuzz target for a bounded time and fails on the first crash, hang (an input that
# takes longer than FUZZ_TIMEOUT seconds) or input that needs more than 1 GB.
#
#   fuzz/ci.sh                      # CI: each target FUZZ_SECONDS (10) seconds, one job
#   FUZZ_SECONDS=600 fuzz/ci.sh spec  # one target for ten minutes
#
# Installs the nightly toolchain (through rustup) and cargo-fuzz if they are missing. Crashing inputs are left in fuzz/artifacts/TARGET/; keep each as a regression
# test in the owning crate (see fuzz/README.md).
set -euo pipefail
cd "$(dirname "$0")"

seconds=${FUZZ_SECONDS:-10}
timeout=${FUZZ_TIMEOUT:-10}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fio spec disksim seek trace curve scenario)

if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  rustup toolchain install nightly --profile minimal
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  cargo install --locked cargo-fuzz
fi

./seed.sh >/dev/null
# No sanitizer: the crates are safe Rust (forbid(unsafe_code)); what the fuzzer looks for is
# panics (overflow checks and debug assertions are on), hangs and memory, and it runs several
# times faster without AddressSanitizer.
cargo +nightly fuzz build -s none

status=0
for t in "${targets[@]}"; do
  mkdir -p "artifacts/$t"
  log="artifacts/$t.log"
  echo "== fuzz $t: ${seconds}s"
  if cargo +nightly fuzz run -s none "$t" "corpus/$t" -- \
      -max_total_time="$seconds" -rss_limit_mb=1024 -timeout="$timeout" \
      -artifact_prefix="artifacts/$t/" -print_final_stats=1 >"$log" 2>&1; then
    grep -E '^(Done|stat::number_of_executed_units)' "$log" || true
  else
    status=1
    echo "fuzz $t FAILED; the input is in fuzz/artifacts/$t/:" >&2
    grep -E -A12 "panicked|ERROR: libFuzzer|SUMMARY" "$log" | head -40 >&2 || tail -40 "$log" >&2
  fi
done
exit $status
