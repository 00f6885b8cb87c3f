//! Issue 10: SIGTERM, SIGHUP (an SSH drop) and SIGINT end `unstick train` like `q`: the terminal
//! is restored (alternate screen left, cursor shown, raw mode off) and the session log ends with
//! its `end` record. A real process on a real pty: util-linux `script` runs the debug binary,
//! then `stty -a` on the same pty shows the line discipline it left behind. Also: a console that
//! cannot start (stdin not a terminal) leaves no session log at all.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BOUND: Duration = Duration::from_secs(60);

/// The binary under test: cargo's, or `UNSTICK_TEST_BIN` (a target directory shared by several
/// worktrees can have another branch's build at cargo's path).
fn bin() -> String {
    std::env::var("UNSTICK_TEST_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_unstick").to_string())
}

fn env(cmd: &mut Command, dir: &Path) {
    cmd.env("XDG_STATE_HOME", dir.join("state"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("HOME", dir)
        .env("TERM", "xterm-256color")
        .env_remove("UNSTICK_LOG");
}

fn session_logs(dir: &Path) -> Vec<PathBuf> {
    let d = dir.join("state/unstick/sessions");
    let mut v: Vec<PathBuf> =
        std::fs::read_dir(&d).map(|r| r.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    v.sort();
    v
}

/// Waits (bounded) until `f` holds, re-checking every 50 ms.
fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !f() {
        assert!(t0.elapsed() < BOUND, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn signal_train(sig: i32, name: &str, code: i32) {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.sh");
    std::fs::write(&run, "echo $$ > \"$D/pid\"\nexec \"$BIN\" train stale-lock\n").unwrap();
    let mut cmd = Command::new("script");
    cmd.args(["-q", "-f", "-c", &format!("sh '{}'; echo EXIT=$?; stty -a", run.display()), "/dev/null"]);
    env(&mut cmd, dir.path());
    cmd.env("D", dir.path()).env("BIN", bin());
    // stdin stays open (a pipe we hold) so script does not forward an end of file
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("script (util-linux) runs");
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout.read_to_end(&mut out);
        out
    });
    wait_for("the session log's start record", || {
        session_logs(dir.path())
            .first()
            .is_some_and(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains("\"event\":\"start\"")))
    });
    let pid: i32 = std::fs::read_to_string(dir.path().join("pid")).unwrap().trim().parse().unwrap();
    assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
    wait_for("script to end", || child.try_wait().unwrap().is_some());
    let out = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    let logs = session_logs(dir.path());
    assert_eq!(logs.len(), 1, "{logs:?}");
    let log = std::fs::read_to_string(&logs[0]).unwrap();
    let last = log.lines().last().unwrap();
    assert!(last.contains("\"event\":\"end\""), "{name}: last record {last}");
    let entered = out.rfind("\x1b[?1049h").expect("the console took the alternate screen");
    let after = &out[entered..];
    assert!(after.contains("\x1b[?1049l"), "{name}: alternate screen not left");
    assert!(after.contains("\x1b[?25h"), "{name}: cursor not shown");
    assert!(
        after.contains(&format!("EXIT={code}")),
        "{name}: exit code, output tail: {:?}",
        &after[after.len().saturating_sub(400)..]
    );
    let stty = &after[after.find("EXIT=").unwrap()..];
    assert!(
        stty.contains(" icanon") && stty.contains(" echo ") && !stty.contains("-icanon"),
        "{name}: raw mode kept: {stty}"
    );
    assert!(after.contains(&format!("stopped by {name}")), "{name}: no message");
}

#[test]
fn sigterm_restores_the_terminal_and_ends_the_log() {
    signal_train(libc::SIGTERM, "SIGTERM", 143);
}

#[test]
fn sighup_restores_the_terminal_and_ends_the_log() {
    signal_train(libc::SIGHUP, "SIGHUP", 129);
}

#[test]
fn sigint_restores_the_terminal_and_ends_the_log() {
    signal_train(libc::SIGINT, "SIGINT", 130);
}

#[test]
fn no_terminal_no_session_log() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(bin());
    cmd.args(["train", "stale-lock"]);
    env(&mut cmd, dir.path());
    let out = cmd.stdin(Stdio::null()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs a terminal"));
    assert!(session_logs(dir.path()).is_empty(), "{:?}", session_logs(dir.path()));
}

/// A panic in a spawned tokio task (debug-build test hook) restores the terminal, prints one line
/// and exits 101, instead of leaving a console that no longer draws.
#[test]
fn a_panicking_task_restores_the_terminal_and_exits_101() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new("script");
    let bin = bin();
    cmd.args(["-q", "-f", "-c", &format!("'{bin}' train stale-lock; echo EXIT=$?; stty -a"), "/dev/null"]);
    env(&mut cmd, dir.path());
    cmd.env("UNSTICK_TEST_PANIC_IN_TASK", "1");
    let mut child =
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().expect("script runs");
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout.read_to_end(&mut out);
        out
    });
    wait_for("script to end", || child.try_wait().unwrap().is_some());
    let out = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    let after = &out[out.rfind("\x1b[?1049h").expect("alternate screen taken")..];
    assert!(after.contains("\x1b[?1049l") && after.contains("\x1b[?25h"), "terminal not restored");
    assert!(after.contains("EXIT=101"), "{after:?}");
    let msg = after.lines().find(|l| l.contains("internal error")).expect("one-line message");
    assert!(msg.contains("injected by UNSTICK_TEST_PANIC_IN_TASK"), "{msg}");
    let stty = &after[after.find("EXIT=").unwrap()..];
    assert!(stty.contains(" icanon") && !stty.contains("-icanon"), "raw mode kept: {stty}");
}

/// A terminal that goes away without a SIGHUP reaching the console (here the console runs in a
/// session of its own, as a dropped SSH session can leave things): the next frame's write fails with EIO, and the
/// console ends like any runtime error — exit 1, one line, the session log ended with `end`.
#[test]
fn a_closed_pty_without_sighup_ends_the_log_on_the_next_write() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.sh");
    // The shell (the pty's session leader) ignores SIGHUP so it lives to write the exit code.
    // `setsid` puts the console in a session of its own with no controlling terminal, so the
    // kernel's hangup (sent to the pty's session leader and foreground process group) cannot reach
    // it; its stdin and stdout are still the pty. Stop 31 and 32 saw EXIT=129: `trap '' HUP` is
    // replaced by the console's own handler, and a SIGHUP blocked around `script` does not last —
    // dash clears the inherited signal mask (SigBlk 0 in /proc/$$/status under it).
    std::fs::write(
        &run,
        "trap '' HUP\nsetsid -w \"$BIN\" train stale-lock 2> \"$D/stderr\"\necho \"EXIT=$?\" > \"$D/exit\"\n",
    )
    .unwrap();
    let mut cmd = Command::new("script");
    cmd.args(["-q", "-f", "-c", &format!("sh '{}'", run.display()), "/dev/null"]);
    env(&mut cmd, dir.path());
    cmd.env("D", dir.path()).env("BIN", bin()).env_remove("RUST_BACKTRACE");
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("script runs");
    wait_for("the session log's start record", || {
        session_logs(dir.path())
            .first()
            .is_some_and(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains("\"event\":\"start\"")))
    });
    // `script` dies: the pty's master closes under the console
    child.kill().unwrap();
    child.wait().unwrap();
    let exit = dir.path().join("exit");
    wait_for("the console to exit", || exit.is_file());
    assert_eq!(std::fs::read_to_string(&exit).unwrap().trim(), "EXIT=1");
    let logs = session_logs(dir.path());
    let log = std::fs::read_to_string(&logs[0]).unwrap();
    let last = log.lines().last().unwrap();
    assert!(last.contains("\"event\":\"end\""), "last record {last}");
    let stderr = std::fs::read_to_string(dir.path().join("stderr")).unwrap();
    assert!(stderr.contains("unstick train: Input/output error"), "{stderr}");
}
