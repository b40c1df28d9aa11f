#!/usr/bin/env bash
# Smoke-fuzz every target: build once, then run each for SECONDS (default 30).
#
#   fuzz/smoke.sh [SECONDS]
#
# Works from any directory. Runs on stable Rust (no sanitizer). Exits non-zero if a build
# fails or any target finds a crash, timeout or out-of-memory input; the reproducer is left
# in fuzz/artifacts/<target>/. Set FUZZ_TARGETS="a b" to run only some targets.
set -euo pipefail

SECONDS_PER_TARGET="${1:-30}"
if ! [[ "$SECONDS_PER_TARGET" =~ ^[0-9]+$ ]] || [ "$SECONDS_PER_TARGET" -lt 1 ]; then
    echo "usage: $0 [SECONDS]" >&2
    exit 2
fi

FUZZ_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$FUZZ_DIR/.."

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "==> installing cargo-fuzz"
    cargo install cargo-fuzz --locked
fi

ALL_TARGETS=(decode_commit log_file_name checkpoint_parquet deletion_vector partition_and_stats schema_json filter_expr variant_decode domain_metadata avro_container)
read -r -a TARGETS <<<"${FUZZ_TARGETS:-${ALL_TARGETS[*]}}"

echo "==> building ${#ALL_TARGETS[@]} fuzz targets"
cargo fuzz build --fuzz-dir "$FUZZ_DIR" --sanitizer none -O

failed=()
for t in "${TARGETS[@]}"; do
    corpus="$FUZZ_DIR/corpus/$t"
    seeds="$FUZZ_DIR/seeds/$t"
    mkdir -p "$corpus" "$seeds"
    echo "==> $t for ${SECONDS_PER_TARGET}s"
    # The first corpus directory is writable (new inputs land there); the tracked seeds are
    # read-only inputs.
    if ! cargo fuzz run --fuzz-dir "$FUZZ_DIR" "$t" --sanitizer none -O "$corpus" "$seeds" -- \
        -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1; then
        failed+=("$t")
    fi
done

if [ "${#failed[@]}" -ne 0 ]; then
    echo "==> FAILED: ${failed[*]} (reproducers in $FUZZ_DIR/artifacts/)" >&2
    exit 1
fi
echo "==> all ${#TARGETS[@]} targets ran ${SECONDS_PER_TARGET}s without finding a crash"
