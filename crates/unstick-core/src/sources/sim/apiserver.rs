//! An in-process Kubernetes API for a scenario: a `tower` service that a [`kube::Client`] sends
//! its requests to (no socket, no network), answering list, watch (newline-delimited JSON events,
//! replayed from `resourceVersion`), get, create, replace, JSON / merge patch, delete and
//! `/version` from the scenario's [`super::World`]. The console's kube-runtime reflectors, the
//! remediation executor, the Lease manager and the backup all use it exactly as they use a real
//! API server.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body::Frame;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use super::Sim;
use super::store::{ApiError, ObjKey, Res};

/// A response body: a whole JSON document, or a watch stream that ends when the simulation ends.
pub enum SimBody {
    /// A complete body.
    Full(Option<Bytes>),
    /// Watch events, one JSON document per line.
    Watch(UnboundedReceiver<Bytes>),
}

impl http_body::Body for SimBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match &mut *self {
            SimBody::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            SimBody::Watch(rx) => rx.poll_recv(cx).map(|o| o.map(|b| Ok(Frame::data(b)))),
        }
    }
}

fn respond(code: u16, body: &Value) -> Response<SimBody> {
    let mut r = Response::new(SimBody::Full(Some(Bytes::from(body.to_string()))));
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
    r
}

fn error(e: &ApiError) -> Response<SimBody> {
    respond(e.code, &e.status())
}

fn bad(code: u16, reason: &'static str, message: String) -> Response<SimBody> {
    error(&ApiError { code, reason, message })
}

/// The request's target: resource, namespace filter and object name.
#[derive(Debug, PartialEq, Eq)]
struct Target {
    res: Res,
    ns: Option<String>,
    name: Option<String>,
}

fn parse_path(path: &str) -> Option<Target> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (gv, rest): (String, &[&str]) = match segs.as_slice() {
        ["api", v, rest @ ..] => (v.to_string(), rest),
        ["apis", g, v, rest @ ..] => (format!("{g}/{v}"), rest),
        _ => return None,
    };
    let (ns, plural, name) = match rest {
        ["namespaces", ns, plural] => (Some(ns.to_string()), *plural, None),
        ["namespaces", ns, plural, name] => (Some(ns.to_string()), *plural, Some(name.to_string())),
        [plural] => (None, *plural, None),
        [plural, name] => (None, *plural, Some(name.to_string())),
        // the status subresource is the object itself here (the simulation keeps one JSON per object)
        ["namespaces", ns, plural, name, "status"] => (Some(ns.to_string()), *plural, Some(name.to_string())),
        [plural, name, "status"] => (None, *plural, Some(name.to_string())),
        _ => return None,
    };
    Some(Target { res: Res::from_path(&gv, plural)?, ns, name })
}

fn query(uri: &http::Uri) -> Vec<(String, String)> {
    uri.query()
        .unwrap_or("")
        .split('&')
        .filter(|s| !s.is_empty())
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => (kv.to_string(), String::new()),
        })
        .collect()
}

/// A `kube::Client` whose requests this simulation answers.
pub fn client(sim: Sim) -> kube::Client {
    let svc = tower::service_fn(move |req: Request<kube::client::Body>| {
        let sim = sim.clone();
        async move { Ok::<_, Infallible>(handle(&sim, req).await) }
    });
    kube::Client::new(svc, "default")
}

/// Answers one request.
pub async fn handle(sim: &Sim, req: Request<kube::client::Body>) -> Response<SimBody> {
    let (parts, body) = req.into_parts();
    let body = match body.collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => return bad(400, "BadRequest", format!("reading the request body: {e}")),
    };
    let path = parts.uri.path().to_string();
    if path == "/version" {
        return respond(200, &sim.version_json());
    }
    let Some(t) = parse_path(&path) else {
        return bad(404, "NotFound", format!("the server could not find the requested resource ({path})"));
    };
    let q = query(&parts.uri);
    let param = |k: &str| q.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let json_body = || serde_json::from_slice::<Value>(&body).map_err(|e| format!("request body is not JSON: {e}"));
    let ct = parts.headers.get(http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    match (parts.method, &t.name) {
        (Method::GET, None) if matches!(param("watch"), Some("true" | "1")) => {
            let rv = param("resourceVersion").and_then(|v| v.parse().ok()).unwrap_or(0);
            let (tx, rx) = unbounded_channel();
            sim.watch(t.res, t.ns, rv, tx);
            let mut r = Response::new(SimBody::Watch(rx));
            r.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
            r
        }
        (Method::GET, None) => {
            let (items, rv) = sim.list(t.res, t.ns.as_deref());
            let super::store::ResInfo { group_version: gv, kind, .. } = t.res.info();
            respond(
                200,
                &json!({"apiVersion": gv, "kind": format!("{kind}List"),
                                 "metadata": {"resourceVersion": rv.to_string()}, "items": items}),
            )
        }
        (Method::GET, Some(name)) => match sim.get(&ObjKey::new(t.res, t.ns.as_deref().unwrap_or(""), name)) {
            Some(v) => respond(200, &v),
            None => error(&ApiError {
                code: 404,
                reason: "NotFound",
                message: format!("{} \"{name}\" not found", t.res.info().plural),
            }),
        },
        (Method::POST, None) => match json_body() {
            Ok(mut v) => {
                if let Some(ns) = &t.ns {
                    v["metadata"]["namespace"] = json!(ns);
                }
                match sim.create(t.res, v) {
                    Ok(o) => respond(201, &o),
                    Err(e) => error(&e),
                }
            }
            Err(m) => bad(400, "BadRequest", m),
        },
        (method, Some(name)) => {
            let key = ObjKey::new(t.res, t.ns.as_deref().unwrap_or(""), name);
            let res = match method {
                Method::PUT => json_body()
                    .map_err(|m| ApiError { code: 400, reason: "BadRequest", message: m })
                    .and_then(|v| sim.replace(&key, v)),
                Method::PATCH => json_body()
                    .map_err(|m| ApiError { code: 400, reason: "BadRequest", message: m })
                    .and_then(|v| sim.patch(&key, &v, ct.contains("json-patch"))),
                Method::DELETE => {
                    let opts = if body.is_empty() { Value::Null } else { json_body().unwrap_or(Value::Null) };
                    let grace = opts["gracePeriodSeconds"]
                        .as_i64()
                        .or_else(|| param("gracePeriodSeconds").and_then(|g| g.parse().ok()));
                    let uid = opts["preconditions"]["uid"].as_str();
                    let rv = opts["preconditions"]["resourceVersion"].as_str();
                    sim.delete(&key, uid, rv, grace)
                }
                other => Err(ApiError {
                    code: 405,
                    reason: "MethodNotAllowed",
                    message: format!("{other} is not supported"),
                }),
            };
            match res {
                Ok(o) => respond(200, &o),
                Err(e) => error(&e),
            }
        }
        (m, None) => bad(405, "MethodNotAllowed", format!("{m} on a collection is not supported")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_map_to_resources() {
        let t = parse_path("/api/v1/namespaces/ns/pods/p1").unwrap();
        assert_eq!((t.res, t.ns.as_deref(), t.name.as_deref()), (Res::Pod, Some("ns"), Some("p1")));
        assert_eq!(parse_path("/api/v1/nodes").unwrap().res, Res::Node);
        assert_eq!(
            parse_path("/apis/storage.k8s.io/v1/volumeattachments/csi-1").unwrap().name.as_deref(),
            Some("csi-1")
        );
        assert_eq!(parse_path("/apis/coordination.k8s.io/v1/namespaces/x/leases").unwrap().res, Res::Lease);
        assert!(parse_path("/apis/batch/v1/jobs").is_none());
        assert!(parse_path("/healthz").is_none());
    }
}
