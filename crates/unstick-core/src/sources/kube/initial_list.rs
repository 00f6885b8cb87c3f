//! One kind's kube-runtime watcher, taking its initial list as [`InitialList`] says: pages, a
//! streaming list (`sendInitialEvents=true`, KEP-3157 WatchList), or streaming with a fallback to
//! pages when the API server refuses it.

use std::fmt::Debug;

use futures::StreamExt;
use kube::Resource;
use kube::api::Api;
use kube::runtime::watcher::{self, Event as WEvent};
use serde::de::DeserializeOwned;

use crate::config::InitialList;

/// One kind's watcher stream, boxed so that the initial-list strategies share a type.
type WatchStream<K> = std::pin::Pin<Box<dyn futures::Stream<Item = Result<WEvent<K>, watcher::Error>> + Send>>;

/// The watcher of `api`'s kind: its events, or its errors (the caller retries with backoff).
pub(super) fn watcher<K>(api: Api<K>, lists: InitialList) -> WatchStream<K>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
{
    // ListWatch: pages of 500.
    let paginated = |api| watcher::watcher(api, watcher::Config::default()).boxed();
    let streaming = |api| watcher::watcher(api, watcher::Config::default().streaming_lists()).boxed();
    match lists {
        InitialList::Paginated => paginated(api),
        InitialList::Streaming => streaming(api),
        InitialList::Auto => auto(streaming(api.clone()), move || paginated(api)),
    }
}

/// `first` (a streaming list) until its first object or the end of its initial events; an error
/// before that sends this kind to `then` (pages) for good. Pages work on every server, and the
/// ways a streaming list fails first are many: 422 from servers without the feature (1.20 answers
/// "resourceVersionMatch is forbidden for watch"), 403, and 500 "the required storage feature
/// RequestWatchProgress is disabled" from a 1.37 server on an etcd older than 3.4.31/3.5.13 (seen
/// with Debian 12's etcd 3.4.23).
fn auto<K: Send + 'static>(
    first: WatchStream<K>,
    then: impl FnOnce() -> WatchStream<K> + Send + 'static,
) -> WatchStream<K> {
    enum S<K, F> {
        Trying(WatchStream<K>, F),
        Settled(WatchStream<K>),
    }
    futures::stream::unfold(S::Trying(first, then), |s| async move {
        match s {
            S::Trying(mut st, then) => match st.next().await? {
                Err(e) => {
                    tracing::info!(error = %e, "no streaming list from the API server; listing in pages");
                    let mut pages = then();
                    let item = pages.next().await?;
                    Some((item, S::Settled(pages)))
                }
                Ok(WEvent::Init) => Some((Ok(WEvent::Init), S::Trying(st, then))),
                item => Some((item, S::Settled(st))),
            },
            S::Settled(mut st) => Some((st.next().await?, S::Settled(st))),
        }
    })
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::Status;

    fn error(code: u16) -> watcher::Error {
        watcher::Error::WatchError(Box::new(Status::failure("x", "InternalError").with_code(code)))
    }

    fn events(items: Vec<Result<WEvent<&'static str>, watcher::Error>>) -> WatchStream<&'static str> {
        futures::stream::iter(items).boxed()
    }

    fn shown(items: Vec<Result<WEvent<&'static str>, watcher::Error>>) -> Vec<String> {
        items
            .into_iter()
            .map(|i| match i {
                Ok(WEvent::Init) => "init".to_string(),
                Ok(WEvent::InitApply(o)) => format!("list {o}"),
                Ok(WEvent::InitDone) => "done".to_string(),
                Ok(WEvent::Apply(o)) => format!("apply {o}"),
                Ok(WEvent::Delete(o)) => format!("delete {o}"),
                Err(e) => format!("error {e}"),
            })
            .collect()
    }

    fn pages() -> WatchStream<&'static str> {
        events(vec![Ok(WEvent::Init), Ok(WEvent::InitApply("p1")), Ok(WEvent::InitDone)])
    }

    #[tokio::test]
    async fn an_error_before_the_first_object_goes_to_pages_for_good() {
        let first = events(vec![Ok(WEvent::Init), Err(error(500)), Ok(WEvent::InitApply("never"))]);
        let got: Vec<_> = auto(first, pages).collect().await;
        assert_eq!(shown(got), ["init", "init", "list p1", "done"]);
    }

    #[tokio::test]
    async fn once_objects_stream_an_error_is_the_streams_own() {
        let first = events(vec![Ok(WEvent::Init), Ok(WEvent::InitApply("s1")), Err(error(500)), Ok(WEvent::InitDone)]);
        let got: Vec<_> = auto(first, pages).collect().await;
        let got = shown(got);
        assert_eq!(got.len(), 4, "{got:?}");
        assert_eq!(&got[..2], ["init", "list s1"]);
        assert!(got[2].starts_with("error"), "{got:?}");
        assert_eq!(got[3], "done");
    }
}
