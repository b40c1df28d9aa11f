//! Link settings for the `alluvium` binary.
//!
//! The CLI is started once per command, so process start-up is part of every command's
//! latency. Linked as a position-independent executable, this binary carries about 100,000
//! relative relocations: the dynamic loader walks them and copies-on-write some 2 MB of
//! relocated data pages at every start, which costs more CPU than a 1-row DELETE's own work.
//! Linked at a fixed address (`-no-pie`) it starts with about a quarter of the page faults and
//! half the start-up CPU (measured with `perf stat` on `alluvium --version`: 153 against 686
//! page faults). The cost is that the executable's own image is not address-randomised
//! (libraries, heap and stacks still are). Only this package's binaries are linked so, and
//! only on GNU/Linux, where the toolchain is known to accept the flag.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
