use super::*;
use crate::sources::ceph::parse::{rbd_image_meta, rbd_lock_ls};

fn recorded(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/public/pacific").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn exit(code: i32, stderr: &str) -> Result<Output, CephError> {
    Err(CephError::Exit { cmd: "python3 -c <script>".into(), code, stderr: stderr.into() })
}

/// The harness's output (tests/fixtures/public/pacific/SOURCE): what the reader says of each
/// image is what `rbd lock ls` and `rbd image-meta list` said of it, with shared locks, a RADOS
/// namespace, quotes and non-ASCII metadata, and a pool that does not exist.
#[test]
fn recorded_output_agrees_with_the_cli() {
    let read = BulkRead::from_output(&recorded("bulk-reader.jsonl"), 60);
    assert_eq!(read.reader(), CephReader::Bulk { librados: "3.0.0".into(), python: "3.11.2".into() });
    assert_eq!(read.bad_lines.0, 0);
    assert_eq!(read.end, Some(false));
    assert_eq!(read.pools.get(&("replicapool".into(), "bulkrec".into())), Some(&Ok(3)));
    let missing = read.pools.get(&("nosuchpool".into(), String::new()));
    assert!(matches!(missing, Some(Err(ImageError::Ceph { errno: 2, .. }))), "{missing:?}");
    assert_eq!(read.images.len(), 3);
    for name in ["img-exclusive", "img-shared", "img-unused"] {
        let line = read.images.iter().find(|i| i.image.image == name).unwrap();
        assert_eq!(
            line.image,
            ImageRef { pool: "replicapool".into(), namespace: "bulkrec".into(), image: name.into() }
        );
        assert!(!line.id.is_empty());
        let (locks, meta) = line.read.clone().unwrap();
        assert_eq!(locks, rbd_lock_ls(&recorded(&format!("bulk-rbd-lock-ls-{name}.json"))).unwrap(), "{name}");
        assert_eq!(
            meta,
            rbd_image_meta(&recorded(&format!("bulk-rbd-image-meta-list-{name}.json"))).unwrap(),
            "{name}"
        );
    }
    let shared = read.images.iter().find(|i| i.image.image == "img-shared").unwrap();
    assert_eq!(shared.read.as_ref().unwrap().0.len(), 2);
}

#[test]
fn fallback_is_decided_by_the_kind_of_failure_and_the_exit_status() {
    let spawn =
        Err(CephError::Spawn { cmd: "python3".into(), reason: "No such file or directory (os error 2)".into() });
    assert!(matches!(decide(spawn), Err(BulkError::Unavailable(BulkUnavailable::NoInterpreter { .. }))));
    assert!(matches!(
        decide(exit(EXIT_NO_MODULE, "unstick bulk reader: No module named 'rados'")),
        Err(BulkError::Unavailable(BulkUnavailable::NoModule { .. }))
    ));
    for code in [126, 127] {
        let d = decide(exit(code, "exec: \"python3\": executable file not found in $PATH"));
        assert!(matches!(d, Err(BulkError::Unavailable(BulkUnavailable::NoInterpreter { .. }))), "{code}");
    }
    // the script's own failures (an old Python's SyntaxError, a traceback, no exit code) fall back
    for code in [1, 4, -1] {
        let d = decide(exit(code, "Traceback (most recent call last): ..."));
        assert!(
            matches!(d, Err(BulkError::Unavailable(BulkUnavailable::Broken { code: c, .. })) if c == code),
            "{code}"
        );
    }
    // the wording does not matter: a "No module" message with the connect status is a Ceph failure
    let d = decide(exit(EXIT_CONNECT, "No module named 'rados'"));
    assert!(matches!(d, Err(BulkError::Failed(CephError::Exit { code: EXIT_CONNECT, .. }))), "{d:?}");
    let timeout = Err(CephError::Timeout { cmd: "python3".into(), secs: 110 });
    assert!(matches!(decide(timeout), Err(BulkError::Failed(CephError::Timeout { .. }))));
    let ok = Ok(Output { stdout: "x".into(), stderr: String::new(), elapsed: std::time::Duration::ZERO });
    assert_eq!(decide(ok).map(|o| o.stdout), Ok("x".into()));
}

#[test]
fn a_malformed_image_line_is_that_images_error() {
    let bad_facts = [
        r#"{"kind":"image","pool":"p","namespace":"","name":"i","id":"1","lockers":"none","meta":{}}"#,
        r#"{"kind":"image","pool":"p","namespace":"","name":"i","id":"1","lockers":[{"id":1}],"meta":{}}"#,
        r#"{"kind":"image","pool":"p","namespace":"","name":"i","id":"1","lockers":[],"meta":{"k":7}}"#,
        r#"{"kind":"image","pool":"p","namespace":"","name":"i","id":"1"}"#,
    ];
    for line in bad_facts {
        let Ok(BulkLine::Image(i)) = parse_line(line) else { panic!("{line}") };
        assert_eq!(i.image, ImageRef::new("p", "i"), "{line}");
        assert!(matches!(i.read, Err(ImageError::Shape(_))), "{line}: {:?}", i.read);
    }
    let failed =
        r#"{"kind":"image","pool":"p","namespace":"","name":"i","id":"1","errno":110,"message":"timed out\u001b[31m"}"#;
    let Ok(BulkLine::Image(i)) = parse_line(failed) else { panic!() };
    assert_eq!(i.read, Err(ImageError::Ceph { errno: 110, message: "timed out".into() }));
}

#[test]
fn hostile_lines_are_typed_errors_not_panics() {
    let not_json = ["", "{", "Traceback (most recent call last):", "\u{0}\u{1b}[2J", "[1,2]", "\"image\""];
    for line in not_json {
        assert!(matches!(parse_line(line), Err(LineError::NotJson(_) | LineError::Unexpected(_))), "{line:?}");
    }
    let unexpected = [
        r#"{"kind":"image","pool":"p","namespace":""}"#,
        r#"{"kind":"image","pool":1,"namespace":"","name":"i"}"#,
        r#"{"kind":"pool","pool":"p","namespace":""}"#,
        r#"{"kind":"reader","librados":"3.0.0","python":"3"}"#,
        r#"{"kind":"something new"}"#,
        r#"{"kind":7}"#,
        r#"{"pool":"p"}"#,
    ];
    for line in unexpected {
        assert!(matches!(parse_line(line), Err(LineError::Unexpected(_))), "{line}");
    }
    // a huge errno is no panic
    let big = r#"{"kind":"pool","pool":"p","namespace":"","errno":99999999999,"message":"m"}"#;
    assert!(matches!(parse_line(big), Ok(BulkLine::Pool { listed: Err(ImageError::Ceph { errno: -1, .. }), .. })));
}

#[test]
fn output_cut_short_or_not_understood_is_counted() {
    let full = recorded("bulk-reader.jsonl");
    let cut: String = full.lines().take(4).map(|l| format!("{l}\n")).collect::<String>() + "{\"kind\": \"ima";
    let read = BulkRead::from_output(&cut, 60);
    assert_eq!(read.images.len(), 1);
    assert_eq!(read.end, None);
    assert_eq!(read.bad_lines.0, 1);
    let deadline = BulkRead::from_output("{\"kind\": \"end\", \"stopped\": \"deadline\"}\n", 60);
    assert_eq!(deadline.end, Some(true));
    assert_eq!(deadline.versions, None);
    assert_eq!(deadline.reader(), CephReader::Bulk { librados: "?".into(), python: "?".into() });
}

#[test]
fn the_reader_is_recorded_as_the_manifest_shows_it() {
    let bulk = CephReader::Bulk { librados: "3.0.0".into(), python: "3.11.2".into() };
    assert_eq!(serde_json::to_string(&bulk).unwrap(), r#"{"kind":"bulk","librados":"3.0.0","python":"3.11.2"}"#);
    let cli = CephReader::Cli { bulk_unavailable: Some("no module".into()) };
    assert_eq!(serde_json::to_string(&cli).unwrap(), r#"{"kind":"cli","bulk_unavailable":"no module"}"#);
    let plain: CephReader = serde_json::from_str(r#"{"kind":"cli"}"#).unwrap();
    assert_eq!(plain, CephReader::Cli { bulk_unavailable: None });
}

#[test]
fn a_reader_this_version_does_not_know_leaves_the_manifest_readable() {
    use crate::bundle::CephPart;
    let part: CephPart =
        serde_json::from_str(r#"{"images":1,"not_read":0,"millis":5,"reader":{"kind":"zip","x":1}}"#).unwrap();
    assert_eq!(part.reader, None);
    let old: CephPart = serde_json::from_str(r#"{"images":1,"not_read":0,"millis":5}"#).unwrap();
    assert_eq!(old.reader, None);
    let bulk: CephPart = serde_json::from_str(
        r#"{"images":1,"not_read":0,"millis":5,"reader":{"kind":"bulk","librados":"3.0.0","python":"3.11.2"}}"#,
    )
    .unwrap();
    assert!(matches!(bulk.reader, Some(CephReader::Bulk { .. })));
}
