//! `stripped_item`: what `collect` writes of an item the API server listed.

use serde_json::Value;

use super::*;

/// A real list page (kube-apiserver v1.20.2, `tests/fixtures/kube/README.md`).
fn page_text() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/kube/pods-page-1.20.json");
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn a_listed_pod_is_written_as_the_typed_path_wrote_it_without_managed_fields_or_last_applied() {
    let page = page_text();
    let fields = serde_json::from_str::<Fields>(&page).unwrap().0;
    let items = fields.iter().find(|(k, _)| k == "items").unwrap().1;
    let raw_item = serde_json::from_str::<Vec<&RawValue>>(items.get()).unwrap()[0].get();
    let item: Value = serde_json::from_str(raw_item).unwrap();
    assert!(item["metadata"]["managedFields"].as_array().is_some_and(|m| !m.is_empty()));
    assert!(item["metadata"]["annotations"][LAST_APPLIED].is_string());
    let text = stripped_item("v1", "Pod", raw_item).unwrap();
    let raw: Value = serde_json::from_str(&text).unwrap();
    // what collect wrote before (a typed k8s-openapi Pod, managedFields emptied, annotation removed)
    let mut typed: k8s_openapi::api::core::v1::Pod = serde_json::from_value(item).unwrap();
    typed.metadata.managed_fields = None;
    typed.metadata.annotations.as_mut().unwrap().remove(LAST_APPLIED);
    // the server's nulls stay, as kubectl prints them; the typed path dropped them
    assert_eq!(raw["status"]["conditions"][0]["lastProbeTime"], Value::Null);
    assert!(raw["status"]["conditions"][0].as_object().unwrap().contains_key("lastProbeTime"));
    assert_eq!(without_nulls(raw.clone()), list_item(&typed).unwrap());
    assert_eq!(raw["metadata"]["annotations"], serde_json::json!({"team": "storage"}));
    // apiVersion and kind first, then the server's order
    assert!(
        text.starts_with(r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-0","namespace":"fixture-raw","#)
    );
    // and it reads back as a pod
    let mut snap = crate::model::Snapshot::default();
    parse("kube.json", &format!(r#"{{"kind":"List","apiVersion":"v1","items":[{text}]}}"#), &mut snap).unwrap();
    assert_eq!(snap.pods.len(), 1);
    assert_eq!(snap.pods[0].metadata.name.as_deref(), Some("web-0"));
}

#[test]
fn fields_the_typed_path_would_drop_are_kept_verbatim() {
    let raw = r#"{"kind":"Pod","metadata":{"name":"p","x-new":{"a":[1, 2]},"annotations":{"a\"b":"c"}},"spec":{"futureField":true}}"#;
    let text = stripped_item("v1", "Pod", raw).unwrap();
    assert_eq!(
        text,
        r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","x-new":{"a":[1, 2]},"annotations":{"a\"b":"c"}},"spec":{"futureField":true}}"#
    );
}

#[test]
fn an_item_that_is_not_an_object_is_an_error() {
    for raw in ["[]", "3", r#"{"metadata":[]}"#, r#"{"metadata":{"annotations":"x"}}"#, "{"] {
        assert!(stripped_item("v1", "Pod", raw).is_err(), "{raw}");
    }
}

/// `v` without its null-valued fields, at any depth.
fn without_nulls(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            Value::Object(m.into_iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k, without_nulls(v))).collect())
        }
        Value::Array(a) => Value::Array(a.into_iter().map(without_nulls).collect()),
        v => v,
    }
}
