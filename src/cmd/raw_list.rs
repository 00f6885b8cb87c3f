//! Lists for `collect` (issue 29): every object of a kind as the API server sent it, read from the
//! answer as it arrives, one item at a time, never the whole answer.
//!
//! The first request asks as client-go's reflectors and kube-runtime's watcher do
//! (`resourceVersion=0&limit=500`): the API server answers it from its watch cache, whole (the
//! cache ignores `limit`), which on 1.37.2 costs it a fraction of the pages a `limit` alone
//! gets (those are read from etcd: README "Scale benchmark"). A server without a watch cache
//! answers a page and a continue token; the next pages are asked for with it.

use std::io::Read;
use std::time::Duration;

use kube::api::ListParams;
use kube::{Client, Resource};
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use unstick_core::sources::kube::describe_kube_error as describe;

/// Why a kind could not be listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListError {
    /// A few words for the `incomplete` line (`403 Forbidden`, `timed out`, `error`).
    pub short: String,
    /// The whole error, naming the request.
    pub message: String,
}

impl ListError {
    /// `list PLURAL: N item(s) WHY`: a list whose answer came but `bad` of whose items could not
    /// be used (`why`: `not JSON objects, left out`, `not of its shape`).
    pub fn bad_items(plural: &str, bad: usize, why: &str) -> Self {
        ListError { short: "error".into(), message: format!("list {plural}: {bad} item(s) {why}") }
    }
}

/// Objects asked for in one page of a list.
pub const PAGE: u32 = 500;

/// `request` within `timeout`, its failure as a [`ListError`] naming `what` (`list pods`).
pub async fn bounded<T>(
    what: &str,
    timeout: Duration,
    request: impl std::future::Future<Output = kube::Result<T>>,
) -> Result<T, ListError> {
    match tokio::time::timeout(timeout, request).await {
        Err(_) => {
            let message = format!("{what}: timed out after {} s", timeout.as_secs());
            Err(ListError { short: "timed out".into(), message })
        }
        Ok(Err(e)) => {
            let short = match &e {
                kube::Error::Api(s) => format!("{} {}", s.code, s.reason),
                _ => "error".into(),
            };
            Err(ListError { short, message: format!("{what}: {}", describe(&e)) })
        }
        Ok(Ok(p)) => Ok(p),
    }
}

/// Lists every object of kind `K` (in `namespace`, else all; `None` for a cluster-scoped kind)
/// and calls `item(&mut sink, raw)` for each, in the server's order, `raw` being the object's
/// JSON text as sent (without `apiVersion` and `kind`, as a list's items come). The answer is
/// read on a blocking thread as it arrives: memory holds one item, not the list. Returns `sink`
/// back with how the list ended; on an error the items before it have been handed over.
///
/// Bounds: the answer's headers within `timeout`, then no pause longer than `timeout` between
/// two reads of its body. Errors: a request failed, timed out or stalled, or its answer is not a
/// JSON list.
pub async fn list_raw<K, S>(
    client: &Client,
    namespace: Option<&str>,
    timeout: Duration,
    mut sink: S,
    item: fn(&mut S, &str),
) -> (S, Result<(), ListError>)
where
    K: Resource<DynamicType = ()>,
    S: Send + 'static,
{
    let request = kube::core::Request::new(K::url_path(&(), namespace));
    let what = format!("list {}", K::plural(&()));
    let error = |message: String| ListError { short: "error".into(), message: format!("{what}: {message}") };
    let mut lp = ListParams::default().limit(PAGE).at("0");
    loop {
        let req = match request.list(&lp) {
            Ok(r) => r,
            Err(e) => return (sink, Err(error(e.to_string()))),
        };
        let body = match bounded(&what, timeout, client.request_stream(req)).await {
            Ok(b) => b,
            Err(e) => return (sink, Err(e)),
        };
        let handle = tokio::runtime::Handle::current();
        let read = tokio::task::spawn_blocking(move || {
            let reader = std::io::BufReader::with_capacity(1 << 16, BlockingRead { body, handle, idle: timeout });
            let mut de = serde_json::Deserializer::from_reader(reader);
            let r = ListSeed { sink: &mut sink, item }.deserialize(&mut de).and_then(|c| de.end().map(|()| c));
            (sink, r)
        })
        .await;
        // the reading thread only ends early by a panic of `item` (a defect): raise it here
        let (back, read) = read.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
        sink = back;
        match read {
            Ok(Some(c)) if !c.is_empty() => lp = ListParams::default().limit(PAGE).continue_token(&c),
            Ok(_) => return (sink, Ok(())),
            Err(e) if e.io_error_kind() == Some(std::io::ErrorKind::TimedOut) => {
                let message = format!("{what}: the answer stalled for {} s", timeout.as_secs());
                return (sink, Err(ListError { short: "timed out".into(), message }));
            }
            Err(e) => return (sink, Err(error(format!("the answer is not a list: {e}")))),
        }
    }
}

/// The body of an answer read from a blocking thread, each read bounded by `idle`.
struct BlockingRead<B> {
    body: B,
    handle: tokio::runtime::Handle,
    idle: Duration,
}

impl<B: futures::AsyncRead + Unpin> Read for BlockingRead<B> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use futures::AsyncReadExt;
        let read = self.body.read(buf);
        match self.handle.block_on(async { tokio::time::timeout(self.idle, read).await }) {
            Ok(r) => r,
            Err(_) => Err(std::io::Error::new(std::io::ErrorKind::TimedOut, "no answer within the list timeout")),
        }
    }
}

/// The list: its `items` handed over one by one; its continue token (`metadata.continue`)
/// returned; the rest skipped.
struct ListSeed<'a, S> {
    sink: &'a mut S,
    item: fn(&mut S, &str),
}

impl<'de, S> DeserializeSeed<'de> for ListSeed<'_, S> {
    type Value = Option<String>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<String>, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, S> Visitor<'de> for ListSeed<'_, S> {
    type Value = Option<String>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<String>, A::Error> {
        let mut continue_ = None;
        while let Some(k) = map.next_key::<String>()? {
            match k.as_str() {
                "items" => map.next_value_seed(ItemsSeed { sink: &mut *self.sink, item: self.item })?,
                "metadata" => continue_ = map.next_value::<ListMeta>()?.continue_,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(continue_)
    }
}

/// A list's `items`, each handed over as its text.
struct ItemsSeed<'a, S> {
    sink: &'a mut S,
    item: fn(&mut S, &str),
}

impl<'de, S> DeserializeSeed<'de> for ItemsSeed<'_, S> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self) // an array, or null
    }
}

impl<'de, S> Visitor<'de> for ItemsSeed<'_, S> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array of objects")
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(()) // `"items": null`, as an empty list can come
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(raw) = seq.next_element::<Box<RawValue>>()? {
            (self.item)(self.sink, raw.get());
        }
        Ok(())
    }
}

/// A list's `metadata`: only the continue token is read.
#[derive(serde::Deserialize, Default)]
struct ListMeta {
    #[serde(rename = "continue", default)]
    continue_: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(text: &str) -> Result<(Vec<String>, Option<String>), serde_json::Error> {
        let mut items: Vec<String> = vec![];
        let mut de = serde_json::Deserializer::from_reader(text.as_bytes());
        let push: fn(&mut Vec<String>, &str) = |v, raw| v.push(raw.to_string());
        let c = ListSeed { sink: &mut items, item: push }.deserialize(&mut de)?;
        de.end()?;
        Ok((items, c))
    }

    #[test]
    fn items_come_one_by_one_verbatim_and_the_continue_token_is_read_wherever_it_is() {
        let page = r#"{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"a"},"x":null},
            {"metadata":{"name":"b"}}],"metadata":{"resourceVersion":"9","continue":"tok"}}"#;
        let (items, c) = collect(page).unwrap();
        assert_eq!(items, [r#"{"metadata":{"name":"a"},"x":null}"#, r#"{"metadata":{"name":"b"}}"#]);
        assert_eq!(c.as_deref(), Some("tok"));
        let (items, c) = collect(r#"{"metadata":{"resourceVersion":"9"},"items":null}"#).unwrap();
        assert!(items.is_empty() && c.is_none());
    }

    #[test]
    fn an_answer_that_is_not_a_list_is_an_error() {
        for bad in ["[]", r#"{"items":{}}"#, r#"{"items":[{"a":1}"#, "", r#"{"metadata":{"continue":3}}"#] {
            assert!(collect(bad).is_err(), "{bad}");
        }
    }

    /// A body that never sends a byte.
    struct Silent;

    impl futures::AsyncRead for Silent {
        fn poll_read(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            _: &mut [u8],
        ) -> std::task::Poll<std::io::Result<usize>> {
            std::task::Poll::Pending
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_body_that_stalls_ends_the_read_with_timed_out() {
        let handle = tokio::runtime::Handle::current();
        let mut r = BlockingRead { body: Silent, handle, idle: Duration::from_millis(50) };
        let e = tokio::task::spawn_blocking(move || r.read(&mut [0; 8])).await.unwrap().unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
    }
}
