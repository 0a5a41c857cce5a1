//! The object store: every object keyed by (resource, namespace, name), one global
//! resourceVersion counter, and a bounded history of changes that watches replay.
//!
//! Each write bumps the counter by exactly one and appends exactly one change, so
//! the history holds the contiguous versions `compacted + 1 ..= rv` and a watch
//! finds its place by subtraction.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use serde_json::{Map, Value, json};
use tokio::sync::watch;

use crate::error::ApiError;
use crate::resources::{NAMESPACES, RESOURCES};
use crate::util::{Rng, now_rfc3339};

/// A stored object, shared between the store, its history and responses.
pub(crate) type Obj = Arc<Value>;

/// (namespace, name); the namespace is "" for cluster-scoped objects.
pub(crate) type Key = (String, String);

/// What a change did to its object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChangeKind {
    Added,
    Modified,
    Deleted,
}

/// One write, as watches see it.
#[derive(Debug)]
pub(crate) struct Change {
    pub(crate) rv: u64,
    pub(crate) res: usize,
    pub(crate) namespace: String,
    pub(crate) kind: ChangeKind,
    /// The object after the change (for a deletion: its last state, stamped with
    /// the deletion's resourceVersion).
    pub(crate) object: Obj,
    /// The object before a modification, for selector-exit decisions.
    pub(crate) old: Option<Obj>,
}

/// What watches wait on: the newest version, and counters the fault handle bumps
/// to close (drop) or expire (410) every open watch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Pulse {
    pub(crate) rv: u64,
    pub(crate) drop_epoch: u64,
    pub(crate) expire_epoch: u64,
}

/// A page of a list.
#[derive(Debug)]
pub(crate) struct Page {
    pub(crate) items: Vec<Obj>,
    pub(crate) rv: u64,
    /// The last key returned, when more matching objects follow.
    pub(crate) next: Option<Key>,
    pub(crate) remaining: usize,
}

/// Why a watch cannot resume: its version is older than the kept history.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TooOld {
    pub(crate) oldest: u64,
}

/// The store. Cheap to share behind an `Arc`; all state sits behind one lock so
/// every write is atomic with its history entry.
#[derive(Debug)]
pub(crate) struct Store {
    state: RwLock<State>,
    pulse: watch::Sender<Pulse>,
}

#[derive(Debug)]
struct State {
    rv: u64,
    objects: Vec<BTreeMap<Key, Obj>>,
    history: VecDeque<Arc<Change>>,
    compacted: u64,
    capacity: usize,
    rng: Rng,
}

impl Store {
    /// An empty store with the namespaces a new cluster has.
    pub(crate) fn new(history_capacity: usize, seed: u64) -> Self {
        let store = Store {
            state: RwLock::new(State {
                rv: 0,
                objects: RESOURCES.iter().map(|_| BTreeMap::new()).collect(),
                history: VecDeque::new(),
                compacted: 0,
                capacity: history_capacity.max(1),
                rng: Rng::new(seed ^ 0x005E_ED0F_F1CE),
            }),
            pulse: watch::channel(Pulse::default()).0,
        };
        {
            let mut st = store.write();
            for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
                st.ensure_namespace(ns);
            }
        }
        store
    }

    fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|e| e.into_inner())
    }

    fn read(&self) -> RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    fn notify(&self, rv: u64) {
        self.pulse.send_modify(|p| p.rv = p.rv.max(rv));
    }

    /// A receiver that wakes on every write and on drop/expire requests.
    pub(crate) fn subscribe(&self) -> watch::Receiver<Pulse> {
        self.pulse.subscribe()
    }

    /// Ends every open watch stream (as a restarting API server would).
    pub(crate) fn drop_watches(&self) {
        self.pulse.send_modify(|p| p.drop_epoch += 1);
    }

    /// Sends every open watch a 410 Expired error, then ends it.
    pub(crate) fn expire_watches(&self) {
        self.compact();
        self.pulse.send_modify(|p| p.expire_epoch += 1);
    }

    /// Forgets the whole change history: any watch resuming from a version before
    /// now gets 410 Expired and must relist.
    pub(crate) fn compact(&self) {
        let mut st = self.write();
        st.history.clear();
        st.compacted = st.rv;
    }

    /// The newest resourceVersion.
    pub(crate) fn rv(&self) -> u64 {
        self.read().rv
    }

    /// One object.
    pub(crate) fn get(&self, res: usize, namespace: &str, name: &str) -> Option<Obj> {
        self.read().objects[res]
            .get(&(namespace.to_owned(), name.to_owned()))
            .cloned()
    }

    /// Objects of a resource in key order, from after `start_after`, in one
    /// namespace or all, keeping those `keep` accepts, at most `limit` (0: all).
    /// How many objects of `res` are stored, in `namespace` or in all of them.
    pub(crate) fn count(&self, res: usize, namespace: Option<&str>) -> usize {
        let st = self.read();
        st.objects[res]
            .keys()
            .filter(|k| namespace.is_none_or(|ns| ns == k.0))
            .count()
    }

    pub(crate) fn list(
        &self,
        res: usize,
        namespace: Option<&str>,
        start_after: Option<&Key>,
        limit: usize,
        keep: impl Fn(&Value) -> bool,
    ) -> Page {
        let st = self.read();
        let map = &st.objects[res];
        let iter: Box<dyn Iterator<Item = (&Key, &Obj)>> = match start_after {
            Some(k) => Box::new(
                map.range::<Key, _>((std::ops::Bound::Excluded(k), std::ops::Bound::Unbounded)),
            ),
            None => Box::new(map.iter()),
        };
        let mut items = Vec::new();
        let mut next = None;
        let mut remaining = 0;
        for (key, obj) in iter {
            if namespace.is_some_and(|ns| ns != key.0) || !keep(obj) {
                continue;
            }
            if limit > 0 && items.len() >= limit {
                remaining += 1;
                continue;
            }
            items.push(obj.clone());
            if limit > 0 && items.len() == limit {
                next = Some(key.clone());
            }
        }
        if remaining == 0 {
            next = None;
        }
        Page {
            items,
            rv: st.rv,
            next,
            remaining,
        }
    }

    /// Changes after `rv`, at most `max`; `TooOld` when some were forgotten.
    pub(crate) fn changes_since(&self, rv: u64, max: usize) -> Result<Vec<Arc<Change>>, TooOld> {
        let st = self.read();
        if rv < st.compacted {
            return Err(TooOld {
                oldest: st.compacted,
            });
        }
        let skip = (rv - st.compacted) as usize;
        Ok(st.history.iter().skip(skip).take(max).cloned().collect())
    }

    /// Creates an object, stamping name (from `generateName`), uid,
    /// creationTimestamp, generation and resourceVersion. The namespace is created
    /// too if it does not exist, so tests need not make namespaces first.
    pub(crate) fn create(
        &self,
        res: usize,
        namespace: &str,
        mut obj: Value,
    ) -> Result<Obj, ApiError> {
        let def = &RESOURCES[res];
        let mut st = self.write();
        let meta = metadata_mut(&mut obj)?;
        let mut name = meta
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if name.is_empty() {
            let prefix = meta
                .get("generateName")
                .and_then(Value::as_str)
                .unwrap_or("");
            if prefix.is_empty() {
                return Err(ApiError::Invalid {
                    kind: def.kind.to_owned(),
                    group: def.group,
                    name: String::new(),
                    message: "metadata.name: Required value: name or generateName is required"
                        .into(),
                });
            }
            let prefix = prefix.to_owned();
            loop {
                name = format!("{prefix}{}", st.rng.name_suffix());
                if !st.objects[res].contains_key(&(namespace.to_owned(), name.clone())) {
                    break;
                }
            }
        }
        let key = (namespace.to_owned(), name.clone());
        if st.objects[res].contains_key(&key) {
            return Err(ApiError::AlreadyExists {
                resource: def.group_resource(),
                name,
            });
        }
        if def.namespaced {
            st.ensure_namespace(namespace);
        }
        let uid = st.rng.uid();
        let meta = metadata_mut(&mut obj)?;
        meta.insert("name".into(), json!(name));
        if def.namespaced {
            meta.insert("namespace".into(), json!(namespace));
        } else {
            meta.remove("namespace");
        }
        meta.insert("uid".into(), json!(uid));
        meta.insert("creationTimestamp".into(), json!(now_rfc3339()));
        meta.insert("generation".into(), json!(1));
        meta.remove("deletionTimestamp");
        let (rv, obj) = st.commit(res, key, Some(obj), ChangeKind::Added, None);
        drop(st);
        self.notify(rv);
        Ok(obj)
    }

    /// Replaces an object with what `f` makes of the current one. Identity fields
    /// (name, namespace, uid, creationTimestamp) are kept; generation goes up when
    /// `spec` changed; a write that changes nothing is a no-op that keeps the
    /// resourceVersion, as upstream. A deleting object whose last finalizer goes is
    /// removed.
    pub(crate) fn update(
        &self,
        res: usize,
        namespace: &str,
        name: &str,
        f: impl FnOnce(&Value) -> Result<Value, ApiError>,
    ) -> Result<Obj, ApiError> {
        let def = &RESOURCES[res];
        let mut st = self.write();
        let key = (namespace.to_owned(), name.to_owned());
        let old = st.objects[res]
            .get(&key)
            .cloned()
            .ok_or_else(|| ApiError::NotFound {
                resource: def.group_resource(),
                name: name.to_owned(),
            })?;
        let mut new = f(&old)?;
        let old_meta = old
            .get("metadata")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let meta = metadata_mut(&mut new)?;
        for field in [
            "name",
            "namespace",
            "uid",
            "creationTimestamp",
            "generation",
            "resourceVersion",
        ] {
            match old_meta.get(field) {
                Some(v) => meta.insert(field.into(), v.clone()),
                None => meta.remove(field),
            };
        }
        match old_meta.get("deletionTimestamp") {
            Some(v) => meta.insert("deletionTimestamp".into(), v.clone()),
            None => meta.remove("deletionTimestamp"),
        };
        set_type_meta(&mut new, res);
        if new == *old {
            return Ok(old);
        }
        if new.get("spec") != old.get("spec") {
            let generation = old_meta
                .get("generation")
                .and_then(Value::as_i64)
                .unwrap_or(0)
                + 1;
            metadata_mut(&mut new)?.insert("generation".into(), json!(generation));
        }
        let finalizing = new.pointer("/metadata/deletionTimestamp").is_some()
            && new
                .pointer("/metadata/finalizers")
                .and_then(Value::as_array)
                .is_none_or(Vec::is_empty);
        let (rv, obj) = if finalizing {
            st.commit(res, key, Some(new), ChangeKind::Deleted, Some(old))
        } else {
            st.commit(res, key, Some(new), ChangeKind::Modified, Some(old))
        };
        drop(st);
        self.notify(rv);
        Ok(obj)
    }

    /// Deletes an object after `check` (preconditions) accepts it. An object with
    /// finalizers only gets a deletionTimestamp, as upstream.
    pub(crate) fn delete(
        &self,
        res: usize,
        namespace: &str,
        name: &str,
        check: impl FnOnce(&Value) -> Result<(), ApiError>,
    ) -> Result<Obj, ApiError> {
        let def = &RESOURCES[res];
        let mut st = self.write();
        let key = (namespace.to_owned(), name.to_owned());
        let old = st.objects[res]
            .get(&key)
            .cloned()
            .ok_or_else(|| ApiError::NotFound {
                resource: def.group_resource(),
                name: name.to_owned(),
            })?;
        check(&old)?;
        let has_finalizers = old
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|f| !f.is_empty());
        let (rv, obj) = if has_finalizers {
            if old.pointer("/metadata/deletionTimestamp").is_some() {
                return Ok(old);
            }
            let mut new = (*old).clone();
            metadata_mut(&mut new)?.insert("deletionTimestamp".into(), json!(now_rfc3339()));
            st.commit(res, key, Some(new), ChangeKind::Modified, Some(old))
        } else {
            st.commit(res, key, None, ChangeKind::Deleted, Some(old))
        };
        drop(st);
        self.notify(rv);
        Ok(obj)
    }
}

impl State {
    /// Applies one write: bumps the version, stamps it on the object, records the
    /// change. `new` of `None` (or kind Deleted) removes the object; the returned
    /// object is then the old one stamped with the deletion's version.
    fn commit(
        &mut self,
        res: usize,
        key: Key,
        new: Option<Value>,
        kind: ChangeKind,
        old: Option<Obj>,
    ) -> (u64, Obj) {
        self.rv += 1;
        let rv = self.rv;
        let mut obj = new
            .or_else(|| old.as_deref().cloned())
            .unwrap_or(Value::Null);
        set_type_meta(&mut obj, res);
        if let Ok(meta) = metadata_mut(&mut obj) {
            meta.insert("resourceVersion".into(), json!(rv.to_string()));
        }
        let obj = Arc::new(obj);
        if kind == ChangeKind::Deleted {
            self.objects[res].remove(&key);
        } else {
            self.objects[res].insert(key.clone(), obj.clone());
        }
        self.history.push_back(Arc::new(Change {
            rv,
            res,
            namespace: key.0,
            kind,
            object: obj.clone(),
            old: if kind == ChangeKind::Modified {
                old
            } else {
                None
            },
        }));
        while self.history.len() > self.capacity {
            self.history.pop_front();
            self.compacted += 1;
        }
        (rv, obj)
    }

    /// Creates a namespace object if there is none of that name.
    fn ensure_namespace(&mut self, name: &str) {
        let key = (String::new(), name.to_owned());
        if name.is_empty() || self.objects[NAMESPACES].contains_key(&key) {
            return;
        }
        let uid = self.rng.uid();
        let ns = json!({
            "metadata": {
                "name": name,
                "uid": uid,
                "creationTimestamp": now_rfc3339(),
                "labels": {"kubernetes.io/metadata.name": name},
            },
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"},
        });
        self.commit(NAMESPACES, key, Some(ns), ChangeKind::Added, None);
    }
}

/// Sets `kind` and `apiVersion` from the resource table, as the API server
/// returns them on every object.
pub(crate) fn set_type_meta(obj: &mut Value, res: usize) {
    if let Value::Object(map) = obj {
        let def = &RESOURCES[res];
        map.insert("kind".into(), json!(def.kind));
        map.insert("apiVersion".into(), json!(def.api_version()));
    }
}

/// The `metadata` map of an object, created if absent; 400 if the body is not a
/// JSON object or its metadata is not one.
pub(crate) fn metadata_mut(obj: &mut Value) -> Result<&mut Map<String, Value>, ApiError> {
    let map = obj
        .as_object_mut()
        .ok_or_else(|| ApiError::bad_request("the object is not a JSON object"))?;
    map.entry("metadata").or_insert_with(|| json!({}));
    map.get_mut("metadata")
        .and_then(Value::as_object_mut)
        .ok_or_else(|| ApiError::bad_request("metadata: must be an object"))
}

/// A string field of `metadata`, or "".
pub(crate) fn meta_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
}

impl Store {
    /// Versions at or below this are no longer in the history.
    pub(crate) fn compacted(&self) -> u64 {
        self.read().compacted
    }
}
