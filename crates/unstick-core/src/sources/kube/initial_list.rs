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
        InitialList::Auto => {
            // Streaming until the first object or the end of the initial events; a refusal (or a 403)
            // before that switches this kind to pages for good.
            enum S<K> {
                Trying(WatchStream<K>, Box<Api<K>>),
                Settled(WatchStream<K>),
            }
            futures::stream::unfold(S::Trying(streaming(api.clone()), Box::new(api)), move |s| async move {
                match s {
                    S::Trying(mut st, api) => match st.next().await? {
                        Err(e) if refuses_streaming(&e) => {
                            tracing::info!(error = %e, "the API server refuses streaming lists; listing in pages");
                            let mut p = paginated(*api);
                            let item = p.next().await?;
                            Some((item, S::Settled(p)))
                        }
                        Ok(WEvent::Init) => Some((Ok(WEvent::Init), S::Trying(st, api))),
                        item => Some((item, S::Settled(st))),
                    },
                    S::Settled(mut st) => Some((st.next().await?, S::Settled(st))),
                }
            })
            .boxed()
        }
    }
}

/// Whether `e`, the first answer of a streaming list, sends this kind to pages: the API server's
/// refusal of `sendInitialEvents=true` with `resourceVersionMatch=NotOlderThan` (400 or 422, by
/// status code: a 1.20 server answers 422 "resourceVersionMatch is forbidden for watch"), or a
/// 403 (then the pane names the refused `list`, the verb every server version checks first).
fn refuses_streaming(e: &watcher::Error) -> bool {
    match e {
        watcher::Error::WatchStartFailed(kube::Error::Api(s)) | watcher::Error::WatchFailed(kube::Error::Api(s)) => {
            matches!(s.code, 400 | 403 | 422)
        }
        watcher::Error::WatchError(s) => matches!(s.code, 400 | 403 | 422),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::Status;

    fn api(code: u16) -> kube::Error {
        kube::Error::Api(Box::new(Status::failure("x", "Invalid").with_code(code)))
    }

    #[test]
    fn an_invalid_bad_request_or_forbidden_streaming_list_goes_to_pages() {
        assert!(refuses_streaming(&watcher::Error::WatchStartFailed(api(422))));
        assert!(refuses_streaming(&watcher::Error::WatchStartFailed(api(400))));
        assert!(refuses_streaming(&watcher::Error::WatchFailed(api(422))));
        assert!(refuses_streaming(&watcher::Error::WatchStartFailed(api(403))));
        // gone, unavailable, no version: the same on pages, so no reason to switch
        assert!(!refuses_streaming(&watcher::Error::WatchStartFailed(api(410))));
        assert!(!refuses_streaming(&watcher::Error::WatchFailed(api(503))));
        assert!(!refuses_streaming(&watcher::Error::NoResourceVersion));
    }
}
