//! Sets `UNSTICK_COMMIT` for `--version`: `git rev-parse --short HEAD` of the source tree, else
//! `$UNSTICK_BUILD_COMMIT` (a source archive built outside git), else `unknown`. Never fails the
//! build: no git, no repository, or a git that hangs (bounded to 10 s) gives the fallback.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `git ARGS` in the package directory: its trimmed stdout on success within 10 s.
fn git(args: &[&str]) -> Option<String> {
    let dir = std::env::var_os("CARGO_MANIFEST_DIR")?;
    let mut child = Command::new("git")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => break,
            Ok(None) if started.elapsed() < Duration::from_secs(10) => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take()?, &mut out).ok()?;
    let out = out.trim().to_string();
    (!out.is_empty()).then_some(out)
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=UNSTICK_BUILD_COMMIT");
    // only this package's own repository: not a parent one (a home directory kept in git)
    let manifest = std::fs::canonicalize(env_or_empty("CARGO_MANIFEST_DIR")).ok();
    let top = git(&["rev-parse", "--show-toplevel"]).and_then(|t| std::fs::canonicalize(t).ok());
    let commit = if top.is_some() && top == manifest { git(&["rev-parse", "--short", "HEAD"]) } else { None };
    if commit.is_some() {
        // rebuild when HEAD moves: HEAD itself, the branch it names, packed refs (worktrees too)
        let mut paths = vec![git(&["rev-parse", "--git-path", "HEAD"])];
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            paths.push(git(&["rev-parse", "--git-path", &branch]));
        }
        paths.push(git(&["rev-parse", "--git-path", "packed-refs"]));
        for p in paths.into_iter().flatten() {
            let p = PathBuf::from(&p);
            let p = if p.is_absolute() { p } else { PathBuf::from(env_or_empty("CARGO_MANIFEST_DIR")).join(p) };
            if p.exists() {
                println!("cargo:rerun-if-changed={}", p.display());
            }
        }
    }
    let commit = commit
        .or_else(|| std::env::var("UNSTICK_BUILD_COMMIT").ok())
        .map(|c| c.chars().filter(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '.' | '-' | '_')).take(40).collect())
        .filter(|c: &String| !c.is_empty())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=UNSTICK_COMMIT={commit}");
}

fn env_or_empty(key: &str) -> String {
    std::env::var(key).unwrap_or_default()
}
