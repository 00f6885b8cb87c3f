//! Golden files under `tests/golden/`: a test compares its output with the committed file and fails
//! when they differ or when the file is missing. `UPDATE_GOLDEN=1 cargo test --test NAME` writes
//! them (after an intended change, or to create a new one); commit what it wrote.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// `tests/golden/<name>` in this checkout.
pub fn path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(name)
}

/// Compares `got` with `tests/golden/<name>`. Panics when they differ or the file is missing;
/// with `UPDATE_GOLDEN` set it writes `got` there instead (and passes).
pub fn check(name: &str, got: &str) {
    let path = path(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, got).unwrap();
        eprintln!("wrote golden {}", path.display());
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "golden file {} is missing or unreadable ({e}); create it with `UPDATE_GOLDEN=1 cargo test --test {}`, \
             read it, and commit it\n--- got ---\n{got}",
            path.display(),
            env!("CARGO_CRATE_NAME"),
        )
    });
    assert!(want == got, "{name} differs from the golden file {}\n--- got ---\n{got}", path.display());
}
