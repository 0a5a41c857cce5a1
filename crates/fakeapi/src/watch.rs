//! Watch streams: newline-delimited JSON events, from a resourceVersion (replayed
//! from the store's history) or from the current state (synthetic ADDED events),
//! with bookmarks, timeouts, selector-exit DELETED/ADDED events, and 410 Expired
//! when the history no longer reaches back far enough.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{StatusCode, header};
use axum::response::Response;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::{Instant, sleep_until};

use crate::error::ApiError;
use crate::resources::RESOURCES;
use crate::selectors::{FieldSelector, LabelSelector};
use crate::server::Shared;
use crate::store::{Change, ChangeKind, Obj, TooOld, metadata_mut};

/// Changes read from the history per lock acquisition.
const BATCH: usize = 512;

/// Where a watch starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Start {
    /// Synthetic ADDED events for the current state, then changes.
    CurrentState,
    /// Changes after now, nothing before.
    Now,
    /// Changes after this resourceVersion.
    After(u64),
}

/// A parsed watch request.
#[derive(Debug, Clone)]
pub(crate) struct WatchRequest {
    pub(crate) res: usize,
    pub(crate) namespace: Option<String>,
    pub(crate) labels: LabelSelector,
    pub(crate) fields: FieldSelector,
    pub(crate) start: Start,
    /// `sendInitialEvents=true`: end the initial state with the
    /// `k8s.io/initial-events-end` bookmark.
    pub(crate) initial_events_end: bool,
    pub(crate) bookmarks: bool,
    pub(crate) timeout: Duration,
}

impl WatchRequest {
    fn matches(&self, obj: &Value) -> bool {
        let ns_ok = self.namespace.as_deref().is_none_or(|ns| {
            obj.pointer("/metadata/namespace").and_then(Value::as_str) == Some(ns)
        });
        ns_ok && self.labels.matches(obj) && self.fields.matches(obj)
    }

    /// The event a watcher with this request's selectors sees for a change, if
    /// any: a modification that leaves the selection is DELETED (the old object
    /// stamped with the change's version, as upstream's cache does), one that
    /// enters it is ADDED.
    fn event_for(&self, change: &Change) -> Option<(&'static str, Obj)> {
        if change.res != self.res
            || self
                .namespace
                .as_deref()
                .is_some_and(|ns| ns != change.namespace)
        {
            return None;
        }
        let now = self.matches(&change.object);
        match change.kind {
            ChangeKind::Added => now.then(|| ("ADDED", change.object.clone())),
            ChangeKind::Deleted => now.then(|| ("DELETED", change.object.clone())),
            ChangeKind::Modified => {
                let before = change.old.as_deref().is_some_and(|o| self.matches(o));
                match (before, now) {
                    (true, true) => Some(("MODIFIED", change.object.clone())),
                    (false, true) => Some(("ADDED", change.object.clone())),
                    (true, false) => {
                        let mut old = change.old.as_deref().cloned().unwrap_or(Value::Null);
                        if let Ok(meta) = metadata_mut(&mut old) {
                            meta.insert("resourceVersion".into(), json!(change.rv.to_string()));
                        }
                        Some(("DELETED", Arc::new(old)))
                    }
                    (false, false) => None,
                }
            }
        }
    }

    fn bookmark(&self, rv: u64, initial_end: bool) -> Value {
        let def = &RESOURCES[self.res];
        let mut meta = json!({"resourceVersion": rv.to_string()});
        if initial_end {
            meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        json!({"kind": def.kind, "apiVersion": def.api_version(), "metadata": meta})
    }
}

/// One event line, `{"type":KIND,"object":OBJECT}` and a newline, encoded straight from
/// the stored object (no copy of it).
fn line(kind: &str, object: &Value) -> Bytes {
    let mut out = Vec::with_capacity(1024);
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(b"\",\"object\":");
    if serde_json::to_writer(&mut out, object).is_err() {
        out.truncate(0);
        out.extend_from_slice(b"{\"type\":\"");
        out.extend_from_slice(kind.as_bytes());
        out.extend_from_slice(b"\",\"object\":null");
    }
    out.extend_from_slice(b"}\n");
    Bytes::from(out)
}

fn expired(rv: u64, oldest: u64) -> Bytes {
    let err = ApiError::Expired {
        message: format!("too old resource version: {rv} ({oldest})"),
    };
    line("ERROR", &err.status())
}

/// Counts a watch as open for as long as it lives.
struct Open(Arc<Shared>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.open_watches.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Starts a watch: the response streams while a task feeds it.
pub(crate) fn serve(shared: Arc<Shared>, req: WatchRequest) -> Response {
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    shared.open_watches.fetch_add(1, Ordering::SeqCst);
    let open = Open(shared.clone());
    tokio::spawn(async move {
        let _open = open;
        run(&shared, req, tx).await;
    });
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|b| (Ok::<_, std::convert::Infallible>(b), rx))
    });
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from_stream(stream))
        .unwrap_or_else(|_| Response::new(Body::empty()))
}

/// Feeds one watch until its timeout, a drop or expiry, or the client leaving.
async fn run(shared: &Shared, req: WatchRequest, tx: mpsc::Sender<Bytes>) {
    let store = &shared.store;
    let mut pulses = store.subscribe();
    let first = *pulses.borrow_and_update();
    let lifetime = shared.faults().watch_lifetime();
    let timeout = lifetime.map_or(req.timeout, |l| l.min(req.timeout));
    let deadline = Instant::now() + timeout;
    let bookmark_every = shared.bookmark_interval;

    let mut position = match req.start {
        Start::CurrentState => {
            let page = store.list(req.res, req.namespace.as_deref(), None, 0, |o| {
                req.matches(o)
            });
            for obj in page.items {
                if tx.send(line("ADDED", &obj)).await.is_err() {
                    return;
                }
            }
            if req.initial_events_end
                && req.bookmarks
                && tx
                    .send(line("BOOKMARK", &req.bookmark(page.rv, true)))
                    .await
                    .is_err()
            {
                return;
            }
            page.rv
        }
        Start::Now => store.rv(),
        Start::After(rv) => rv,
    };
    let mut next_bookmark = Instant::now() + bookmark_every;
    loop {
        match store.changes_since(position, BATCH) {
            Err(TooOld { oldest }) => {
                let _ = tx.send(expired(position, oldest)).await;
                return;
            }
            Ok(batch) if !batch.is_empty() => {
                for change in &batch {
                    position = change.rv;
                    if let Some((kind, obj)) = req.event_for(change)
                        && tx.send(line(kind, &obj)).await.is_err()
                    {
                        return;
                    }
                }
                if Instant::now() >= deadline {
                    return;
                }
                continue;
            }
            Ok(_) => {}
        }
        // Caught up: wait for a write, a bookmark tick, the deadline or a fault.
        tokio::select! {
            changed = pulses.changed() => {
                if changed.is_err() {
                    return;
                }
                let pulse = *pulses.borrow_and_update();
                if pulse.drop_epoch != first.drop_epoch {
                    return;
                }
                if pulse.expire_epoch != first.expire_epoch {
                    let _ = tx.send(expired(position, store.rv())).await;
                    return;
                }
            }
            () = sleep_until(next_bookmark), if req.bookmarks => {
                next_bookmark = Instant::now() + bookmark_every;
                if tx.send(line("BOOKMARK", &req.bookmark(position, false))).await.is_err() {
                    return;
                }
            }
            () = sleep_until(deadline) => return,
            () = tx.closed() => return,
        }
    }
}
