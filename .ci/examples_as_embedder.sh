#!/usr/bin/env bash
# Builds and runs every example of `examples/` (and of `state/examples/`, the state store's)
# the way an embedder's project would: a crate outside the workspace (a temporary one under
# target/) that depends on `alluvium` (and `alluvium-state`) alone, with default features. Inside the workspace the examples would build with the
# features other members switch on (the CLI's, the bench's) and the dev-dependencies, so an
# example could work here and fail in the embedder's project; built this way, what they
# show is what an embedder gets. Each example checks what it prints (it fails otherwise).
#
#   .ci/examples_as_embedder.sh
#
# The build shares the workspace's target directory (no second copy of the dependencies).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
CRATE="$ROOT/target/embedder-examples"
rm -rf "$CRATE"
mkdir -p "$CRATE/src" "$CRATE/examples"
cat >"$CRATE/Cargo.toml" <<TOML
[package]
name = "alluvium-embedder-examples"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
alluvium = { path = "$ROOT" }
alluvium-state = { path = "$ROOT/state" }

# Its own workspace: not a member of alluvium's.
[workspace]

# The workspace's debug-info settings (line tables for its own code, none for
# dependencies). Cargo's default for a crate outside the workspace is full debug info
# everywhere: 390-425 MB per example binary, 8 GB for the set, which filled a CI disk.
# Debug info does not change what the examples show, only how big they are.
[profile.dev]
debug = "line-tables-only"

[profile.dev.package."*"]
debug = false
TOML
echo "//! An embedder's crate: its examples are alluvium's." >"$CRATE/src/lib.rs"
cp examples/*.rs state/examples/*.rs "$CRATE/examples/"
# The workspace's lock file pins the same dependency versions the tests ran with.
cp Cargo.lock "$CRATE/Cargo.lock"
export CARGO_TARGET_DIR="$ROOT/target"
for example in examples/*.rs state/examples/*.rs; do
    name=$(basename "$example" .rs)
    echo "--- example $name (an embedder's crate, alluvium with default features)"
    cargo run -q --manifest-path "$CRATE/Cargo.toml" --example "$name"
done
