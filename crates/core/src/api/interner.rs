use super::{
    PodAffinity, PreferredNodeAffinity, RequiredNodeAffinity, SpreadConstraintSpec, Toleration,
};
use std::collections::{HashMap, HashSet};
use std::hash::Hash;
use std::sync::Arc;

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
/// copies.
#[derive(Clone, Default)]
pub struct Symbols {
    by_text: HashMap<Arc<str>, Sym>,
    texts: Vec<Arc<str>>,
    constraints: HashSet<Arc<[SpreadConstraintSpec]>>,
    tolerations: HashSet<Arc<[Toleration]>>,
    images: HashSet<Arc<[Box<str>]>>,
    required_node_affinities: HashSet<Arc<RequiredNodeAffinity>>,
    preferred_node_affinities: HashSet<Arc<PreferredNodeAffinity>>,
    pod_affinities: HashSet<Arc<PodAffinity>>,
}

impl std::fmt::Debug for Symbols {
    /// The strings in symbol order (last, so a reader can cut them out), after how many
    /// shared pod parts are kept; the hash tables' unordered contents are left out.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shared = self.constraints.len()
            + self.tolerations.len()
            + self.images.len()
            + self.required_node_affinities.len()
            + self.preferred_node_affinities.len()
            + self.pod_affinities.len();
        f.debug_struct("Symbols")
            .field("shared_pod_parts", &shared)
            .field("texts", &self.texts)
            .finish()
    }
}

/// The shared copy of `value` in `set`, added if it is new.
fn share<T: Hash + Eq + ?Sized>(set: &mut HashSet<Arc<T>>, value: &T) -> Arc<T>
where
    for<'a> &'a T: Into<Arc<T>>,
{
    if let Some(shared) = set.get(value) {
        return shared.clone();
    }
    let shared: Arc<T> = value.into();
    set.insert(shared.clone());
    shared
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
        share(&mut self.constraints, list)
    }

    /// The shared copy of a pod's tolerations (see [`Symbols`]).
    pub fn share_tolerations(&mut self, list: &[Toleration]) -> Arc<[Toleration]> {
        share(&mut self.tolerations, list)
    }

    /// The shared copy of a pod's image names (see [`Symbols`]).
    pub fn share_images(&mut self, list: &[Box<str>]) -> Arc<[Box<str>]> {
        share(&mut self.images, list)
    }

    /// The shared copy of a pod's required node affinity (see [`Symbols`]).
    pub fn share_required_node_affinity(
        &mut self,
        value: RequiredNodeAffinity,
    ) -> Arc<RequiredNodeAffinity> {
        share_sized(&mut self.required_node_affinities, value)
    }

    /// The shared copy of a pod's preferred node affinity (see [`Symbols`]).
    pub fn share_preferred_node_affinity(
        &mut self,
        value: PreferredNodeAffinity,
    ) -> Arc<PreferredNodeAffinity> {
        share_sized(&mut self.preferred_node_affinities, value)
    }

    /// The shared copy of a pod's inter-pod affinity (see [`Symbols`]).
    pub fn share_pod_affinity(&mut self, value: PodAffinity) -> Arc<PodAffinity> {
        share_sized(&mut self.pod_affinities, value)
    }
}

/// [`share`] for a value owned: moved into the set when it is new.
fn share_sized<T: Hash + Eq>(set: &mut HashSet<Arc<T>>, value: T) -> Arc<T> {
    if let Some(shared) = set.get(&value) {
        return shared.clone();
    }
    let shared = Arc::new(value);
    set.insert(shared.clone());
    shared
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
}
