//! Secret redaction for session logs and exports.
//!
//! A [`Redactor`] replaces secrets with [`REDACTED`] in free text and in whole JSON values. It is
//! applied to every record BEFORE it is written to a session log, and again to everything an
//! export prints (a log written by an older unstick, or edited by hand, is not trusted).
//!
//! Built-in rules (always on):
//! - kubeconfig credentials: `token`, `client-key-data`, `client-certificate-data`, `password`,
//!   `auth-provider`-style `id-token` / `refresh-token` / `access-token` values (YAML `key: value`,
//!   JSON `"key": "value"`, `key=value`), `Authorization: Bearer ...` / `Bearer ...`, JWTs
//!   (`eyJ...`), and PEM `-----BEGIN ... PRIVATE KEY-----` blocks (to the END line, or to the end of
//!   the text when the block is cut);
//! - Ceph: cephx secrets (base64 starting `AQ`, 38+ characters, e.g. `AQBx...==`), keyring
//!   `key = ...` lines, and the value after `--key`, `--keyring`, `--keyfile`, `--secret`,
//!   `--token`, `--password`, `--client-key` (as `--key=V`, `--key V`, or the next element of an
//!   argv array);
//! - Kubernetes Secret objects: the values under `data:` / `stringData:` in YAML or JSON text that
//!   mentions `Secret`, and the `data` / `stringData` members of a JSON object whose `kind` is
//!   `Secret`;
//! - every configured pattern (`[session] redact_patterns`): each whole match is replaced.
//!
//! Redaction never fails and never panics; it may over-redact (a harmless `key = value` line),
//! never under-redact on purpose.

use regex::Regex;
use serde_json::Value;

/// The replacement text.
pub const REDACTED: &str = "[REDACTED]";

/// Command-line flags whose value is a secret (or the path of one).
const SECRET_FLAGS: [&str; 8] =
    ["--key", "--keyring", "--keyfile", "--secret", "--token", "--password", "--client-key", "--secret-file"];

/// A bad configured pattern.
#[derive(Debug, thiserror::Error)]
#[error("redaction pattern #{index} {pattern:?} is not a valid regex: {message}")]
pub struct PatternError {
    /// 0-based position in `redact_patterns`.
    pub index: usize,
    /// The pattern as configured.
    pub pattern: String,
    /// The regex parser's message.
    pub message: String,
}

/// Replaces secrets in text and JSON values. Cheap to clone (compiled regexes are shared).
#[derive(Debug, Clone)]
pub struct Redactor {
    builtin: Vec<(Regex, &'static str)>,
    secret_yaml: Regex,
    secret_json: Regex,
    extra: Vec<Regex>,
}

impl Default for Redactor {
    fn default() -> Self {
        Self::builtin()
    }
}

/// Compiles a built-in pattern. The patterns are constants exercised by the unit tests, so a
/// failure is a programming error, not a data error.
#[allow(clippy::expect_used, reason = "built-in constant patterns, compiled in the unit tests")]
fn re(s: &str) -> Regex {
    Regex::new(s).expect("built-in redaction pattern compiles (tested)")
}

impl Redactor {
    /// The built-in rules only.
    pub fn builtin() -> Self {
        let builtin = vec![
            // PEM private key blocks, possibly cut short.
            (re(r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)"), REDACTED),
            // key: value / "key": "value" / key=value for credential keys.
            (
                re(concat!(
                    r#"(?i)(["']?\b(?:token|client-key-data|client-certificate-data|password|id-token|"#,
                    r#"refresh-token|access-token|secret)["']?\s*[:=]\s*["']?)[^\s"',}\[\]]+"#
                )),
                "${1}[REDACTED]",
            ),
            // Authorization headers and bare bearer tokens.
            (re(r"(?i)\b(bearer)\s+[A-Za-z0-9\-._~+/]+=*"), "${1} [REDACTED]"),
            // JWTs (service-account tokens).
            (re(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+\.?[A-Za-z0-9_-]*"), REDACTED),
            // Secret-valued flags: --key=V or --key V.
            (
                re(r"(--(?:key|keyring|keyfile|secret|secret-file|token|password|client-key))(=|\s+)[^\s\[\]]+"),
                "${1}${2}[REDACTED]",
            ),
            // Ceph keyring lines: key = AQ...
            (re(r"(?im)^(\s*key\s*=\s*)\S+"), "${1}[REDACTED]"),
            // cephx secrets anywhere.
            (re(r"\bAQ[A-Za-z0-9+/]{36,}={0,2}"), REDACTED),
        ];
        Self {
            builtin,
            secret_yaml: re(r"(?m)^([ \t]*)(?:- )?(data|stringData):[ \t]*$"),
            secret_json: re(r#"("(?:data|stringData)"\s*:\s*)\{[^}]*\}?"#),
            extra: Vec::new(),
        }
    }

    /// The built-in rules plus `patterns` (regexes, each whole match replaced by [`REDACTED`]).
    ///
    /// Errors: the first pattern that does not compile, with its index.
    pub fn new<S: AsRef<str>>(patterns: &[S]) -> Result<Self, PatternError> {
        let mut r = Self::builtin();
        for (index, p) in patterns.iter().enumerate() {
            let p = p.as_ref();
            let rx =
                Regex::new(p).map_err(|e| PatternError { index, pattern: p.to_string(), message: e.to_string() })?;
            r.extra.push(rx);
        }
        Ok(r)
    }

    /// `text` with every secret replaced by [`REDACTED`].
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        // PEM blocks first: later rules must not cut a BEGIN line and hide the block from it.
        let (pem, rest) = self.builtin.split_at(1);
        for (rx, rep) in pem {
            if rx.is_match(&out) {
                out = rx.replace_all(&out, *rep).into_owned();
            }
        }
        if out.contains("Secret") {
            out = self.redact_secret_data(&out);
        }
        for (rx, rep) in rest {
            if rx.is_match(&out) {
                out = rx.replace_all(&out, *rep).into_owned();
            }
        }
        for rx in &self.extra {
            if rx.is_match(&out) {
                out = rx.replace_all(&out, REDACTED).into_owned();
            }
        }
        out
    }

    /// Values under `data:` / `stringData:` (YAML, by indentation) and `"data": {...}` (JSON).
    fn redact_secret_data(&self, text: &str) -> String {
        let text = self.secret_json.replace_all(text, "${1}\"[REDACTED]\"").into_owned();
        if !self.secret_yaml.is_match(&text) {
            return text;
        }
        let mut out = Vec::new();
        let mut in_block: Option<usize> = None;
        for line in text.split('\n') {
            let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
            if let Some(base) = in_block {
                if !line.trim().is_empty() && indent > base {
                    // keep the key only when it is a Secret data key (`[-._a-zA-Z0-9]+`), written
                    // `key: [REDACTED]`; anything else becomes `[REDACTED]` whole, so no later
                    // rule (e.g. `--key V`) can rewrite the line and a second pass changes nothing
                    let key = line
                        .split_once(':')
                        .map(|(k, _)| k.trim())
                        .filter(|k| !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || "-._".contains(c)));
                    let redacted = match key {
                        Some(k) => format!("{}{k}: {REDACTED}", &line[..indent]),
                        None => format!("{}{REDACTED}", &line[..indent]),
                    };
                    out.push(redacted);
                    continue;
                }
                in_block = None;
            }
            if let Some(c) = self.secret_yaml.captures(line) {
                in_block = Some(c.get(1).map_or(0, |m| m.as_str().len()));
            }
            out.push(line.to_string());
        }
        out.join("\n")
    }

    /// Redacts every string in `v` in place; in arrays, the element after a secret flag
    /// (`["--key", "AQ..."]`) is replaced whole; in an object with `"kind": "Secret"`, `data` and
    /// `stringData` become [`REDACTED`].
    pub fn redact_value(&self, v: &mut Value) {
        match v {
            Value::String(s) => {
                let r = self.redact(s);
                if r != *s {
                    *s = r;
                }
            }
            Value::Array(items) => {
                let mut hide_next = false;
                for item in items.iter_mut() {
                    if hide_next {
                        if item.is_string() {
                            *item = Value::String(REDACTED.into());
                        }
                        hide_next = false;
                        continue;
                    }
                    if let Value::String(s) = item {
                        hide_next = SECRET_FLAGS.contains(&s.as_str());
                    }
                    self.redact_value(item);
                }
            }
            Value::Object(map) => {
                if map.get("kind").and_then(Value::as_str) == Some("Secret") {
                    for k in ["data", "stringData"] {
                        if let Some(d) = map.get_mut(k) {
                            *d = Value::String(REDACTED.into());
                        }
                    }
                }
                for (_, item) in map.iter_mut() {
                    self.redact_value(item);
                }
            }
            _ => {}
        }
    }

    /// Redacts a serializable value through JSON: serialize, [`Redactor::redact_value`], and
    /// deserialize back. `None` when the round trip fails (the caller must then not write `value`).
    pub fn redact_serde<T>(&self, value: &T) -> Option<T>
    where
        T: serde::Serialize + serde::de::DeserializeOwned,
    {
        let mut v = serde_json::to_value(value).ok()?;
        self.redact_value(&mut v);
        serde_json::from_value(v).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CEPH_KEY: &str = "AQBvaBFZAAAAABAA9VHgwCg3rWn8fMaX8KL01A==";

    fn r(s: &str) -> String {
        Redactor::builtin().redact(s)
    }

    #[test]
    fn kubeconfig_credentials() {
        let kc = "users:\n- name: admin\n  user:\n    token: sha256~abcDEF123\n    client-key-data: LS0tLS1CRUdJTi\n    client-certificate-data: LS0tQ0VSVA==\n";
        let out = r(kc);
        assert!(
            !out.contains("sha256~abcDEF123") && !out.contains("LS0tLS1CRUdJTi") && !out.contains("LS0tQ0VSVA"),
            "{out}"
        );
        assert!(out.contains("token: [REDACTED]") && out.contains("name: admin"), "{out}");
        let json = r#"{"token":"s3cr3t","user":"bob"}"#;
        assert_eq!(r(json), r#"{"token":"[REDACTED]","user":"bob"}"#);
        assert_eq!(r("Authorization: Bearer abc.def-ghi"), "Authorization: Bearer [REDACTED]");
        assert!(!r("tok eyJhbGciOiJSUzI1NiIs.eyJpc3MiOiJrdWJl.c2lnbmF0dXJl").contains("eyJ"));
    }

    #[test]
    fn pem_blocks_whole_or_cut() {
        let pem = "before -----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nzzz\n-----END RSA PRIVATE KEY----- after";
        assert_eq!(r(pem), "before [REDACTED] after");
        let cut = "x -----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg";
        assert_eq!(r(cut), "x [REDACTED]");
        // A certificate is public and stays.
        assert!(r("-----BEGIN CERTIFICATE-----").contains("CERTIFICATE"));
    }

    #[test]
    fn ceph_keys_and_flags() {
        let keyring = format!("[client.admin]\n\tkey = {CEPH_KEY}\n\tcaps mon = \"allow *\"\n");
        let out = r(&keyring);
        assert!(!out.contains("AQBvaBFZ"), "{out}");
        assert!(out.contains("caps mon"), "{out}");
        assert!(!r(&format!("rbd ls --key={CEPH_KEY} -p x")).contains("AQBv"));
        assert_eq!(r("rbd ls --keyring /etc/ceph/k -p x"), "rbd ls --keyring [REDACTED] -p x");
        assert_eq!(r(&format!("secret is {CEPH_KEY}.")), "secret is [REDACTED].");
        // Ordinary text is untouched.
        let plain = "rbd lock rm replicapool/img 'auto 1' client.4567 (exit 0)";
        assert_eq!(r(plain), plain);
    }

    #[test]
    fn secret_objects() {
        let yaml = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: ceph\ndata:\n  userKey: QVFCdmFCRlo=\n  userID: YWRtaW4=\ntype: Opaque\n";
        let out = r(yaml);
        assert!(!out.contains("QVFCdmFCRlo") && !out.contains("YWRtaW4"), "{out}");
        assert!(out.contains("type: Opaque") && out.contains("name: ceph"), "{out}");
        // A PEM block right after a Secret's data keeps its BEGIN line for the PEM rule.
        let mixed =
            "kind: Secret\ndata:\n  k: dmFs\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----";
        let out = r(mixed);
        assert!(!out.contains("MIIEow") && !out.contains("dmFs"), "{out}");
        let json = r#"{"kind":"Secret","stringData":{"password":"hunter2"},"metadata":{"name":"x"}}"#;
        assert!(!r(json).contains("hunter2"));
        let mut v: Value = serde_json::from_str(r#"{"kind":"Secret","data":{"k":"dmFsdWU="}}"#).unwrap();
        Redactor::builtin().redact_value(&mut v);
        assert_eq!(v["data"], Value::String(REDACTED.into()));
    }

    #[test]
    fn redaction_is_idempotent() {
        let red = Redactor::builtin();
        for s in [
            "token: abc --key AQ --keyring /k key = x",
            &format!("kind: Secret\ndata:\n  a: b\n{CEPH_KEY} Bearer x.y"),
            "-----BEGIN PRIVATE KEY-----\nabc",
            "kind: Secret\ndata:\n  --key :",
            "data:\n  --key kind: Secret\nkind: Secret\n",
        ] {
            let once = red.redact(s);
            assert_eq!(red.redact(&once), once, "from {s:?}");
            assert!(!once.contains("]]"), "{once}");
        }
    }

    proptest::proptest! {
        #[test]
        fn redact_never_panics_and_is_stable(parts in proptest::collection::vec(proptest::prop_oneof![
            proptest::strategy::Just("token: ".to_string()), proptest::strategy::Just("--key ".to_string()),
            proptest::strategy::Just("kind: Secret\n".to_string()), proptest::strategy::Just("data:\n".to_string()),
            proptest::strategy::Just("  ".to_string()), proptest::strategy::Just("[REDACTED]".to_string()),
            proptest::strategy::Just("-----BEGIN PRIVATE KEY-----".to_string()), proptest::strategy::Just("\n".to_string()),
            proptest::strategy::Just("Bearer ".to_string()), proptest::strategy::Just("key = ".to_string()),
            "AQ[A-Za-z0-9+/]{36,40}==", "[a-z0-9:\\[\\]{}\" ]{0,12}", ".{0,8}",
        ], 0..14)) {
            let s = parts.concat();
            let red = Redactor::builtin();
            let once = red.redact(&s);
            proptest::prop_assert_eq!(red.redact(&once), once);
        }
    }

    #[test]
    fn argv_arrays_and_configured_patterns() {
        let mut v = serde_json::json!(["rbd", "--id", "admin", "--key", "plain-looking-secret", "ls"]);
        Redactor::builtin().redact_value(&mut v);
        assert_eq!(v, serde_json::json!(["rbd", "--id", "admin", "--key", "[REDACTED]", "ls"]));
        let red = Redactor::new(&["corp-[0-9]{4}"]).unwrap();
        assert_eq!(red.redact("ticket corp-1234 ok"), "ticket [REDACTED] ok");
        let e = Redactor::new(&["ok", "(unclosed"]).unwrap_err();
        assert_eq!(e.index, 1);
        assert!(e.to_string().contains("(unclosed"), "{e}");
    }
}
