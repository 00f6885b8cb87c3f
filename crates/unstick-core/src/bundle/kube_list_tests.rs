//! `kube.json` reading: what each malformed or unusual document gives, from a string and streamed
//! from a reader (the two must agree, messages included).

use super::kube_list::parse;
use super::kube_scan::parse_reader;
use crate::model::Snapshot;

/// `Ok` with the counts read (nodes, pods, events, skipped) or the error's text.
fn outcome(text: &str) -> String {
    let mut a = Snapshot::default();
    let from_str = parse("kube.json", text, &mut a);
    let mut b = Snapshot::default();
    let streamed = parse_reader("kube.json", std::io::Cursor::new(text), 1 << 20, &mut b);
    let show = |r: Result<usize, super::BundleError>, s: &Snapshot| match r {
        Ok(skipped) => {
            format!("ok {} nodes, {} pods, {} events, {skipped} skipped", s.nodes.len(), s.pods.len(), s.events.len())
        }
        Err(e) => e.to_string(),
    };
    let (a, b) = (show(from_str, &a), show(streamed, &b));
    assert_eq!(a, b, "parse and parse_reader differ on {text}");
    a
}

const POD: &str = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"a"}}"#;

#[test]
fn malformed_documents_keep_their_messages() {
    let cases: Vec<(String, &str)> = vec![
        (format!(r#"{{"apiVersion":"v1","kind":"List","items":[{POD},{{"kind":"Node","apiVersion":"v1","metadata":{{"name":"n"}}}}]}}"#),
            "ok 1 nodes, 1 pods, 0 events, 0 skipped"),
        (format!("{{\n  \"kind\": \"List\",\n  \"items\": [\n    {POD},\n    {{\"kind\": \"Pod\",, }}\n  ]\n}}"),
            "bundle file kube.json: invalid JSON at line 5, column 20: key must be a string"),
        (format!(r#"{{"kind":"List","items":[{POD}"#), "bundle file kube.json: invalid JSON at line 1, column 96: EOF while parsing a list"),
        (format!(r#"{{"kind":"List","items":[{POD}]}} x"#), "bundle file kube.json: invalid JSON at line 1, column 100: trailing characters"),
        (r#"{"kind":"List","items":[1]}"#.into(), "bundle file kube.json: items[0]: expected an object"),
        (r#"{"kind":"List","items":{}}"#.into(), "bundle file kube.json: document.items: expected an array"),
        (r#"{"kind":"List","items":null}"#.into(), "ok 0 nodes, 0 pods, 0 events, 0 skipped"),
        ("[1]".into(), "bundle file kube.json: document: expected an object"),
        ("".into(), "bundle file kube.json: invalid JSON at line 1, column 0: EOF while parsing a value"),
        (r#"{"kind":"List","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"a"},"spec":{"containers":5}}]}"#.into(),
            "bundle file kube.json: items[0] (Pod a/p): invalid type: integer `5`, expected a sequence"),
        (r#"{"kind":"List","items":[{"apiVersion":"v1","kind":"Pod","metadata":5}]}"#.into(),
            "bundle file kube.json: items[0] (Pod <unnamed>): invalid type: integer `5`, expected struct WireMeta"),
        (r#"{"kind":"List","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"metadata":{}}]}"#.into(),
            "bundle file kube.json: items[0] (Pod <unnamed>): duplicate field `metadata`"),
        (r#"{"kind":"List","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}},{"apiVersion":"v1","kind":"Event","involvedObject":[]}]}"#.into(),
            "bundle file kube.json: items[1] (Event <unnamed>): invalid type: sequence, expected ObjectReference"),
        (r#"{"apiVersion":"v1","kind":"PodList","items":[{"metadata":{"name":"p","namespace":"a"}}]}"#.into(),
            "ok 0 nodes, 1 pods, 0 events, 0 skipped"),
        (r#"{"items":[{"metadata":{"name":"p","namespace":"a"}},{"metadata":{"name":"q","namespace":"a"}}],"kind":"PodList","apiVersion":"v1"}"#.into(),
            "ok 0 nodes, 2 pods, 0 events, 0 skipped"),
        (r#"{"items":[{"metadata":{"name":"p"},"spec":{"containers":1}}],"kind":"PodList","apiVersion":"v1"}"#.into(),
            "bundle file kube.json: items[0] (Pod p): invalid type: integer `1`, expected a sequence"),
        (format!(r#"{{"kind":"List","items":[{{"kind":"PodList","apiVersion":"v1","items":[{POD},{{"metadata":{{"name":"q"}}}}]}},{{"kind":"StorageClass","apiVersion":"storage.k8s.io/v1"}}]}}"#),
            "ok 0 nodes, 2 pods, 0 events, 1 skipped"),
        (r#"{"kind":"List","items":[{"kind":"PodList","apiVersion":"v1","items":[7]}]}"#.into(),
            "bundle file kube.json: items[0]items[0]: expected an object"),
        (POD.into(), "ok 0 nodes, 1 pods, 0 events, 0 skipped"),
        (r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":[]}"#.into(),
            "ok 0 nodes, 1 pods, 0 events, 0 skipped"),
        (r#"{"apiVersion":"v1","items":[],"kind":"List","metadata":{"resourceVersion":""}}"#.into(), "ok 0 nodes, 0 pods, 0 events, 0 skipped"),
        (r#"{"kind":"List","items":[{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p\u00e9"}}, {"kind":"Secret","apiVersion":"v1","data":{"a":"b"}}]}"#.into(),
            "ok 0 nodes, 1 pods, 0 events, 1 skipped"),
        (r#"{"kind":"List","items":[{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p\x"}}]}"#.into(),
            "bundle file kube.json: invalid JSON at line 1, column 79: invalid escape"),
    ];
    let got: Vec<String> = cases.iter().map(|(t, _)| outcome(t)).collect();
    let want: Vec<&str> = cases.iter().map(|(_, w)| *w).collect();
    assert_eq!(got, want);
}

/// A document of `n` pods as kubectl prints it (indented), each about 150 bytes.
fn pods(n: usize) -> String {
    let items: Vec<String> = (0..n)
        .map(|i| format!("{{\n        \"apiVersion\": \"v1\",\n        \"kind\": \"Pod\",\n        \"metadata\": {{ \"name\": \"p{i}\", \"namespace\": \"a\", \"annotations\": {{ \"x\": \"\\\"}}]\" }} }}\n    }}"))
        .collect();
    format!(
        "{{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n    {}\n    ],\n    \"kind\": \"List\",\n    \"metadata\": {{ \"resourceVersion\": \"\" }}\n}}\n",
        items.join(",\n    ")
    )
}

/// The fast path reads the shapes kubectl and the API print without falling back (a fall back
/// would still give the right answer, only slower: this is what keeps it fast).
#[test]
fn common_shapes_take_the_fast_path() {
    let nested = format!(r#"{{"kind":"List","items":[{{"kind":"PodList","apiVersion":"v1","items":[{POD}]}}]}}"#);
    let pending = r#"{"items":[{"metadata":{"name":"p"}}],"kind":"PodList","apiVersion":"v1"}"#;
    for (text, want) in [(pods(3), 3), (POD.to_string(), 1), (nested, 1), (pending.to_string(), 1)] {
        let mut s = Snapshot::default();
        let r = super::kube_scan::parse("kube.json", &mut text.as_bytes(), 1 << 20, &mut s);
        assert_eq!((r, s.pods.len()), (Some(0), want), "{text}");
    }
    // and not an error: the streaming reader decides
    let mut s = Snapshot::default();
    assert_eq!(super::kube_scan::parse("kube.json", &mut r#"{"items":[1]}"#.as_bytes(), 1 << 20, &mut s), None);
}

/// Issue 29: the file may be larger than the cap on what is held; one item larger than it is
/// refused, on both paths, with one line saying why.
#[test]
fn only_what_is_held_at_once_is_capped() {
    let text = pods(400);
    assert!(text.len() > 40_000, "{}", text.len());
    let mut s = Snapshot::default();
    assert_eq!(parse_reader("kube.json", std::io::Cursor::new(&text), 1000, &mut s).unwrap(), 0);
    assert_eq!(s.pods.len(), 400);
    let big = format!(
        r#"{{"kind":"List","items":[{POD},{{"kind":"Pod","apiVersion":"v1","metadata":{{"name":"{}"}}}}]}}"#,
        "x".repeat(5000)
    );
    for text in [big.clone(), format!("{big} trailing")] {
        let mut s = Snapshot::default();
        let e = parse_reader("kube.json", std::io::Cursor::new(&text), 1000, &mut s).unwrap_err().to_string();
        assert_eq!(
            e,
            "bundle file kube.json: more than 1000 B read without a complete item (an item, a nested List and the \
             fields around `items` are held whole while they are read)"
        );
    }
}
