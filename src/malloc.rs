//! The C allocator's settings (issue 13, measured at 10k pods / 500 nodes / 2k volumes / 5k
//! events with `benches/scale/run`).
//!
//! glibc's malloc raises its mmap threshold each time a block above it is freed (a "dynamic"
//! threshold, up to 32 MiB). A list page's response body is such a block (several MB for 500
//! pods), so after the first page every later page body, and its contiguous copy, is carved
//! out of the heap between the long-lived objects parsed from the earlier pages; once freed,
//! those holes stay resident. Measured on the console: 46.6 MB of live heap in 88 MB of
//! anonymous RSS (three arenas: 43 + 29 + 10 MB); `malloc_trim(0)` afterwards gave back only
//! 6 MB, the rest being pages shared by live objects. With the threshold fixed at 128 KiB (which
//! also fixes the trim threshold at twice that) big buffers stay mmapped and go back to the OS
//! when freed: anonymous RSS 55 MB, and `unstick diagnose` peaked at 61 MB instead of 74 MB.
//! `MALLOC_ARENA_MAX=1` changed nothing measurable at 10k once the threshold was fixed. The
//! `mimalloc` crate (0.1.52, default options) as the global allocator instead measured worse on
//! the same cluster: console 117-124 MB, `diagnose` 118-129 MB, against 69-71 and 60-62 MB here.
//!
//! At 100k pods / 5,000 nodes (issue 29) the arenas do matter: the lists are parsed on tokio's
//! blocking threads, each of which takes an arena of its own (up to 8 per core), and the
//! objects that stay are spread over them between freed temporaries. `unstick diagnose
//! --kubeconfig` there: max RSS 295 MB with the default, 276 MB with `MALLOC_ARENA_MAX=2`,
//! 274 MB with 1, user CPU the same (9.3-9.7 s). So the arena count is fixed at
//! [`ARENA_MAX`].

/// Fixed mmap threshold: blocks of at least this size are mmapped (glibc's initial default, kept
/// instead of letting it grow).
pub const MMAP_THRESHOLD: usize = 128 * 1024;

/// Most malloc arenas: the main thread's and one more, shared by the worker threads.
pub const ARENA_MAX: usize = 2;

/// Fixes glibc malloc's mmap threshold at [`MMAP_THRESHOLD`] and its arena count at
/// [`ARENA_MAX`] (see the module doc). Call once at start, before other threads exist. Does
/// nothing on other C libraries (musl's allocator has neither setting).
pub fn tune() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes malloc's parameters; called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD as libc::c_int);
        libc::mallopt(libc::M_ARENA_MAX, ARENA_MAX as libc::c_int);
    }
}
