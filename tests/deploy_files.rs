//! The plugin files under deploy/: the krew manifest has one entry per platform a release builds,
//! each installing the `unstick` binary, with the release's values still placeholders; the k9s
//! plugins call unstick with arguments its command line accepts once k9s fills `$CONTEXT` and
//! `$NAMESPACE`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a test fails by panicking")]

use std::collections::BTreeSet;

use serde_json::Value;

fn yaml(rel: &str) -> Value {
    let path = format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn krew_manifest_has_every_release_platform_with_placeholders() {
    let m = yaml("deploy/krew/unstick.yaml");
    assert_eq!(m["apiVersion"], "krew.googlecontainertools.github.com/v1alpha2");
    assert_eq!(m["kind"], "Plugin");
    assert_eq!(m["metadata"]["name"], "unstick", "krew links it as kubectl-unstick");
    let spec = &m["spec"];
    assert_eq!(spec["version"], "RELEASE-VERSION");
    assert!(spec["shortDescription"].as_str().unwrap().len() <= 64);
    let mut seen = BTreeSet::new();
    for p in spec["platforms"].as_array().unwrap() {
        let labels = &p["selector"]["matchLabels"];
        let (os, arch) = (labels["os"].as_str().unwrap(), labels["arch"].as_str().unwrap());
        assert!(seen.insert((os, arch)), "{os}/{arch} twice");
        assert_eq!(p["bin"], "unstick");
        let files: Vec<&str> = p["files"].as_array().unwrap().iter().map(|f| f["from"].as_str().unwrap()).collect();
        assert!(files.contains(&"unstick"), "{os}/{arch}: {files:?}");
        let uri = p["uri"].as_str().unwrap();
        assert!(uri.starts_with("RELEASE-URL/") && uri.ends_with(".tar.gz"), "{uri}");
        assert!(uri.contains("RELEASE-VERSION"), "{uri}");
        let sha = p["sha256"].as_str().unwrap();
        assert_eq!(sha, format!("RELEASE-SHA256-{}-{}", os.to_uppercase(), arch.to_uppercase()));
    }
    let want: BTreeSet<(&str, &str)> =
        [("linux", "amd64"), ("linux", "arm64"), ("darwin", "amd64"), ("darwin", "arm64")].into();
    assert_eq!(seen, want);
}

#[test]
fn k9s_plugins_open_unstick_on_the_context_and_namespace() {
    let p = yaml("deploy/k9s/plugins.yaml");
    let plugins = p["plugins"].as_object().unwrap();
    assert!(!plugins.is_empty());
    let mut namespaced = false;
    for (name, plugin) in plugins {
        assert_eq!(plugin["command"], "unstick", "{name}");
        assert!(!plugin["scopes"].as_array().unwrap().is_empty(), "{name}");
        let args: Vec<String> = plugin["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().replace("$CONTEXT", "prod-eu").replace("$NAMESPACE", "shop"))
            .collect();
        let mut argv = vec!["unstick".to_string()];
        argv.extend(args.iter().cloned());
        let cli = unstick::cli::parse_from(argv.iter().map(Into::into)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(cli.command.is_none(), "{name}: opens the console");
        assert_eq!(cli.console.kube.context.as_deref(), Some("prod-eu"), "{name}");
        namespaced |= cli.console.scope.namespace.as_deref() == Some("shop");
    }
    assert!(namespaced, "one entry opens k9s's namespace");
}
