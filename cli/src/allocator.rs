//! The allocator settings of a command's process (glibc only; elsewhere nothing changes).
//!
//! Decoding Parquet allocates a fresh buffer per page and per column chunk: the snappy
//! output, the dictionary, the value and offset buffers, from tens of kilobytes to a few
//! megabytes each. Under glibc's defaults, buffers above a (dynamic) threshold are mapped and
//! unmapped one by one and a thread arena's free top is handed back to the kernel as soon as
//! it passes the trim threshold, so the next page's buffer faults its memory in and zeroes
//! it again. Reading the change feed of a 1,000,005-row table took 25 % more CPU and four to
//! seven times the page faults that way (`perf stat` on `alluvium-bench changes`, 34,000-58,000
//! faults against 7,500-8,300 with the settings below).
//!
//! A command is a short process that reads in bounded windows, so keeping freed memory in
//! the process costs nothing it would not hold at its peak anyway. The library never changes
//! process-wide settings: an embedder choosing the same trade-off sets them itself (the
//! `GLIBC_TUNABLES` variable `glibc.malloc.mmap_threshold` / `glibc.malloc.trim_threshold`
//! does it without code).

/// Buffers below this size come from the arenas, never from a mapping of their own
/// (glibc's ceiling for the setting on 64-bit targets).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: libc::c_int = 32 << 20;

/// Free memory at an arena's top is returned to the kernel only past this size.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TRIM_THRESHOLD: libc::c_int = 256 << 20;

/// Applies the settings; call once, first thing in `main`, before any thread starts.
pub(crate) fn tune() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets two allocator parameters. It is called before the command
    // starts any thread, and glibc serialises it against allocation anyway; a refused value
    // (return 0) leaves glibc's default, which is correct, only slower.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
        libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
    }
}
