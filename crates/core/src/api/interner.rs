use super::{
    PodAffinity, PreferredNodeAffinity, RequiredNodeAffinity, SpreadConstraintSpec, Toleration,
};
use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, RandomState};
use std::sync::{Arc, Weak};

/// An interned string: label keys, label values, namespaces and topology keys.
///
/// Two symbols are equal exactly when their strings are, so the hot path compares
/// integers instead of hashing strings.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sym(u32);

impl Sym {
    /// The symbol's dense index, for `Vec`-indexed tables.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The string table behind [`Sym`]. Append-only: a symbol stays valid for the table's life.
/// It also keeps one copy of each distinct part of a pod that replicas have alike (spread
/// constraints, tolerations, node and pod affinity, images), shared by every pod
/// converted with it that has it: a dump's 50,000 pods otherwise hold 50,000 equal
/// copies. Those are held weakly: a part no pod holds any more is freed, so a
/// long-running scheduler does not keep every list it ever saw.
#[derive(Clone, Default)]
pub struct Symbols {
    by_text: HashMap<Arc<str>, Sym>,
    texts: Vec<Arc<str>>,
    constraints: Shared<[SpreadConstraintSpec]>,
    tolerations: Shared<[Toleration]>,
    images: Shared<[Box<str>]>,
    required_node_affinities: Shared<RequiredNodeAffinity>,
    preferred_node_affinities: Shared<PreferredNodeAffinity>,
    pod_affinities: Shared<PodAffinity>,
}

impl std::fmt::Debug for Symbols {
    /// The strings in symbol order (last, so a reader can cut them out), after how many
    /// shared pod parts are alive; the hash tables' unordered contents are left out.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shared = self.constraints.live()
            + self.tolerations.live()
            + self.images.live()
            + self.required_node_affinities.live()
            + self.preferred_node_affinities.live()
            + self.pod_affinities.live();
        f.debug_struct("Symbols")
            .field("shared_pod_parts", &shared)
            .field("texts", &self.texts)
            .finish()
    }
}

/// How many parts are added between sweeps of the entries no pod holds.
const SWEEP_EVERY: usize = 4096;

/// One kind of shared pod part: weak references by hash of the value.
struct Shared<T: ?Sized> {
    by_hash: HashMap<u64, Vec<Weak<T>>>,
    hasher: RandomState,
    added: usize,
}

impl<T: ?Sized> Default for Shared<T> {
    fn default() -> Self {
        Self {
            by_hash: HashMap::new(),
            hasher: RandomState::new(),
            added: 0,
        }
    }
}

impl<T: ?Sized> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Self {
            by_hash: self.by_hash.clone(),
            hasher: self.hasher.clone(),
            added: self.added,
        }
    }
}

impl<T: Hash + Eq + ?Sized> Shared<T> {
    /// The shared copy of `value`, made by `make` when no pod holds an equal one.
    fn share(&mut self, value: &T, make: impl FnOnce() -> Arc<T>) -> Arc<T> {
        let hash = self.hasher.hash_one(value);
        if let Some(shared) = self.find(hash, value) {
            return shared;
        }
        self.insert(hash, make())
    }

    /// The live copy equal to `value` among those of its hash.
    fn find(&self, hash: u64, value: &T) -> Option<Arc<T>> {
        self.by_hash
            .get(&hash)?
            .iter()
            .filter_map(Weak::upgrade)
            .find(|shared| **shared == *value)
    }

    /// Adds a new copy, dropping the entries of its hash no pod holds, and every so
    /// often those of every hash.
    fn insert(&mut self, hash: u64, shared: Arc<T>) -> Arc<T> {
        let bucket = self.by_hash.entry(hash).or_default();
        bucket.retain(|w| w.strong_count() > 0);
        bucket.push(Arc::downgrade(&shared));
        self.added += 1;
        if self.added.is_multiple_of(SWEEP_EVERY) {
            self.by_hash.retain(|_, bucket| {
                bucket.retain(|w| w.strong_count() > 0);
                !bucket.is_empty()
            });
        }
        shared
    }

    /// How many distinct parts some pod still holds.
    fn live(&self) -> usize {
        self.by_hash
            .values()
            .flatten()
            .filter(|w| w.strong_count() > 0)
            .count()
    }
}

impl<T: Hash + Eq> Shared<T> {
    /// [`Self::share`] of a value owned: moved into the new copy when there is none.
    fn share_owned(&mut self, value: T) -> Arc<T> {
        let hash = self.hasher.hash_one(&value);
        if let Some(shared) = self.find(hash, &value) {
            return shared;
        }
        self.insert(hash, Arc::new(value))
    }
}

impl Symbols {
    /// Returns the symbol for `text`, adding it if it is new.
    pub fn intern(&mut self, text: &str) -> Sym {
        if let Some(&sym) = self.by_text.get(text) {
            return sym;
        }
        let sym = Sym(u32::try_from(self.texts.len()).unwrap_or(u32::MAX));
        let shared: Arc<str> = Arc::from(text);
        self.texts.push(shared.clone());
        self.by_text.insert(shared, sym);
        sym
    }

    /// The symbol for `text`, if it was ever interned.
    pub fn get(&self, text: &str) -> Option<Sym> {
        self.by_text.get(text).copied()
    }

    /// The text of a symbol.
    pub fn resolve(&self, sym: Sym) -> &str {
        self.texts.get(sym.index()).map_or("", |t| t)
    }

    /// How many distinct strings are interned.
    pub fn len(&self) -> usize {
        self.texts.len()
    }

    /// Whether nothing is interned yet.
    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }

    /// The shared copy of a pod's spread constraints (see [`Symbols`]).
    pub fn share_constraints(
        &mut self,
        list: &[SpreadConstraintSpec],
    ) -> Arc<[SpreadConstraintSpec]> {
        self.constraints.share(list, || list.into())
    }

    /// The shared copy of a pod's tolerations (see [`Symbols`]).
    pub fn share_tolerations(&mut self, list: &[Toleration]) -> Arc<[Toleration]> {
        self.tolerations.share(list, || list.into())
    }

    /// The shared copy of a pod's image names (see [`Symbols`]).
    pub fn share_images(&mut self, list: &[Box<str>]) -> Arc<[Box<str>]> {
        self.images.share(list, || list.into())
    }

    /// The shared copy of a pod's required node affinity (see [`Symbols`]).
    pub fn share_required_node_affinity(
        &mut self,
        value: RequiredNodeAffinity,
    ) -> Arc<RequiredNodeAffinity> {
        self.required_node_affinities.share_owned(value)
    }

    /// The shared copy of a pod's preferred node affinity (see [`Symbols`]).
    pub fn share_preferred_node_affinity(
        &mut self,
        value: PreferredNodeAffinity,
    ) -> Arc<PreferredNodeAffinity> {
        self.preferred_node_affinities.share_owned(value)
    }

    /// The shared copy of a pod's inter-pod affinity (see [`Symbols`]).
    pub fn share_pod_affinity(&mut self, value: PodAffinity) -> Arc<PodAffinity> {
        self.pod_affinities.share_owned(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_is_stable_and_resolves() {
        let mut s = Symbols::default();
        let a = s.intern("zone");
        let b = s.intern("node");
        assert_ne!(a, b);
        assert_eq!(s.intern("zone"), a);
        assert_eq!(s.resolve(b), "node");
        assert_eq!(s.get("missing"), None);
        assert_eq!(s.len(), 2);
    }

    #[test]
    fn replicas_share_one_copy_of_each_part() {
        use crate::builders::PodBuilder;
        let mut s = Symbols::default();
        let replica = |name: &str| {
            let mut p = PodBuilder::new(name)
                .label("app", "web")
                .request("cpu", "100m")
                .spread(1, "zone", "DoNotSchedule", &[("app", "web")])
                .build();
            let spec = p.spec.get_or_insert_with(Default::default);
            spec.node_selector = Some([("disk".to_string(), "ssd".to_string())].into());
            spec.tolerations = Some(vec![k8s_openapi::api::core::v1::Toleration {
                key: Some("dedicated".into()),
                operator: Some("Exists".into()),
                ..Default::default()
            }]);
            p
        };
        let a = crate::convert::pod(&replica("a"), &mut s).expect("converts");
        let b = crate::convert::pod(&replica("b"), &mut s).expect("converts");
        assert!(Arc::ptr_eq(&a.spread_constraints, &b.spread_constraints));
        assert!(Arc::ptr_eq(&a.tolerations, &b.tolerations));
        assert!(Arc::ptr_eq(&a.images, &b.images));
        assert!(Arc::ptr_eq(
            &a.required_node_affinity,
            &b.required_node_affinity
        ));
        assert!(Arc::ptr_eq(&a.affinity, &b.affinity));
        assert_eq!(a.tolerations.len(), 1);
        assert_eq!(a.spread_constraints.len(), 1);

        let mut other = replica("c");
        if let Some(spec) = other.spec.as_mut() {
            spec.tolerations = None;
        }
        let c = crate::convert::pod(&other, &mut s).expect("converts");
        assert!(c.tolerations.is_empty());
        assert!(Arc::ptr_eq(&a.spread_constraints, &c.spread_constraints));
    }

    #[test]
    fn a_part_no_pod_holds_is_let_go() {
        let mut s = Symbols::default();
        let images = |n: usize| -> Vec<Box<str>> { vec![format!("img{n}").into()] };
        let one = s.share_images(&images(1));
        let again = s.share_images(&images(1));
        assert!(Arc::ptr_eq(&one, &again));
        let two = s.share_images(&images(2));
        assert_eq!(s.images.live(), 2);
        drop((one, again));
        assert_eq!(s.images.live(), 1, "only the second list is held");
        // Enough other lists to sweep every hash: the dropped list's entry is gone.
        let held: Vec<_> = (3..3 + SWEEP_EVERY)
            .map(|n| s.share_images(&images(n)))
            .collect();
        assert_eq!(s.images.live(), 1 + held.len());
        let entries: usize = s.images.by_hash.values().map(Vec::len).sum();
        assert_eq!(
            entries,
            1 + held.len(),
            "the freed list left no entry behind"
        );
        assert!(Arc::ptr_eq(&two, &s.share_images(&images(2))));
    }
}
