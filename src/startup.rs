//! How a command that cannot start says so: one line (what failed, what to do), exit code 2 for
//! usage and configuration errors (bad config file, bad kubeconfig or context, no terminal), 1
//! for the rest. `RUST_BACKTRACE` adds the full report (causes, location, backtrace) below the
//! line; without it nothing of `src/...` reaches the user.

use color_eyre::eyre::Report;

/// A usage error (wrong invocation or environment): exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// The error's causes on one line (`a: b: c`): a cause already contained in the previous one is
/// dropped (libraries often repeat their source), only the first line of each is kept.
pub fn one_line(e: &Report) -> String {
    let mut parts: Vec<String> = vec![];
    for cause in e.chain() {
        let text = cause.to_string();
        let first = text.lines().next().unwrap_or("").trim().to_string();
        if first.is_empty() || parts.last().is_some_and(|p| p.contains(&first)) {
            continue;
        }
        parts.push(first);
    }
    unstick_core::text::sanitize(&parts.join(": "))
}

/// What went wrong, by kind: the exit code and a hint of what to do.
pub fn classify(e: &Report) -> (u8, Option<&'static str>) {
    for cause in e.chain() {
        if cause.downcast_ref::<unstick_core::config::ConfigError>().is_some() {
            return (2, Some("fix the config file, or run with --config pointing at a good one"));
        }
        if cause.downcast_ref::<unstick_core::sources::kube::client::UnknownContext>().is_some() {
            return (2, Some("pick one with --context NAME"));
        }
        if cause.downcast_ref::<kube::config::KubeconfigError>().is_some()
            || cause.downcast_ref::<kube::config::InferConfigError>().is_some()
        {
            return (2, Some("check --kubeconfig, --context or $KUBECONFIG (`kubectl config get-contexts`)"));
        }
        if cause.downcast_ref::<unstick_core::sources::kube::exec::ExecPluginError>().is_some() {
            return (2, Some("check the exec plugin of the context's user (`kubectl config view --minify`)"));
        }
        if cause.downcast_ref::<UsageError>().is_some() {
            return (2, None);
        }
    }
    (1, None)
}

/// True when `RUST_BACKTRACE` asks for detail (set and not `0`).
pub fn want_detail() -> bool {
    std::env::var("RUST_BACKTRACE").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// The text printed for `e`: `unstick: LINE — HINT`, plus the full report when `detail`.
pub fn message(e: &Report, detail: bool) -> (u8, String) {
    message_as("unstick", e, detail)
}

/// [`message`] for a subcommand: `PROGRAM: LINE — HINT` (`unstick diagnose: …`).
pub fn message_as(program: &str, e: &Report, detail: bool) -> (u8, String) {
    let (code, hint) = classify(e);
    let mut out = format!("{program}: {}", one_line(e));
    if let Some(h) = hint {
        out.push_str(&format!(" — {h}"));
    }
    if detail {
        out.push_str(&format!("\n\n{e:?}"));
    }
    (code, out)
}

/// Installs color-eyre's report hook: plain (no colour) under `NO_COLOR`.
pub fn install_report_hook() {
    let builder = color_eyre::config::HookBuilder::default().display_env_section(false);
    let builder = if crate::theme::no_color_env() { builder.theme(color_eyre::config::Theme::new()) } else { builder };
    if let Err(e) = builder.install() {
        unstick_core::eprintln_safe!("unstick: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use color_eyre::eyre::{WrapErr, eyre};

    #[test]
    fn causes_on_one_line_without_repeats() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory (os error 2)");
        let r: Result<(), _> = Err(io);
        let e = r
            .wrap_err("failed to read kubeconfig: No such file or directory (os error 2)")
            .wrap_err("reading kubeconfig /x")
            .unwrap_err();
        assert_eq!(
            one_line(&e),
            "reading kubeconfig /x: failed to read kubeconfig: No such file or directory (os error 2)"
        );
        let (code, text) = message(&e, false);
        assert_eq!(code, 1);
        assert!(!text.contains("Location") && !text.contains('\n'), "{text}");
    }

    #[test]
    fn usage_errors_exit_2_and_detail_only_on_request() {
        let e = Report::new(UsageError("the console needs a terminal".into()));
        assert_eq!(classify(&e).0, 2);
        let multi = eyre!("line one\n  --> snippet");
        assert_eq!(one_line(&multi), "line one");
        let (_, text) = message(&multi, true);
        assert!(text.starts_with("unstick: line one\n\n"), "{text}");
    }
}
