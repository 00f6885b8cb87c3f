//! A counting global allocator for the memory benches (issue 13): live and peak heap bytes
//! (requested sizes, not the allocator's rounding). Included by each bench with `#[path]`; the
//! including crate gets it as its `#[global_allocator]`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
/// Counts live and peak heap bytes.
pub struct Counting;

pub static LIVE: AtomicIsize = AtomicIsize::new(0);
pub static PEAK: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = LIVE.fetch_add(l.size() as isize, Ordering::Relaxed) + l.size() as isize;
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        LIVE.fetch_sub(l.size() as isize, Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            let now =
                LIVE.fetch_add(new as isize - l.size() as isize, Ordering::Relaxed) + new as isize - l.size() as isize;
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        q
    }
}

pub fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

/// Bytes freed by dropping `v`.
pub fn freed<T>(v: T) -> isize {
    let before = live();
    drop(v);
    before - live()
}

/// `b` bytes as `12.3 MB`.
pub fn mb(b: isize) -> String {
    format!("{:.1} MB", b as f64 / 1e6)
}
