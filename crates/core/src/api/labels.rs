use super::{Sym, Symbols};
use std::collections::BTreeMap;

/// A label set with interned keys and values, sorted by key symbol.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Labels(Box<[(Sym, Sym)]>);

impl Labels {
    /// Interns a Kubernetes label map.
    pub fn from_map(map: Option<&BTreeMap<String, String>>, symbols: &mut Symbols) -> Self {
        let Some(map) = map else {
            return Self::default();
        };
        Self::from_pairs(
            map.iter()
                .map(|(k, v)| (symbols.intern(k), symbols.intern(v))),
        )
    }

    /// Builds a label set from symbol pairs; a later duplicate key wins.
    pub fn from_pairs(pairs: impl IntoIterator<Item = (Sym, Sym)>) -> Self {
        let mut v: Vec<(Sym, Sym)> = pairs.into_iter().collect();
        v.sort_by_key(|&(k, _)| k);
        v.dedup_by(|later, earlier| {
            if later.0 == earlier.0 {
                earlier.1 = later.1;
                true
            } else {
                false
            }
        });
        Self(v.into_boxed_slice())
    }

    /// The value of `key`, if the set has it.
    #[inline]
    pub fn get(&self, key: Sym) -> Option<Sym> {
        let pairs = &self.0;
        if pairs.len() <= 8 {
            pairs.iter().find(|(k, _)| *k == key).map(|&(_, v)| v)
        } else {
            pairs
                .binary_search_by_key(&key, |&(k, _)| k)
                .ok()
                .map(|i| pairs[i].1)
        }
    }

    /// Whether the set has `key` (with any value).
    #[inline]
    pub fn has(&self, key: Sym) -> bool {
        self.get(key).is_some()
    }

    /// The pairs, sorted by key symbol.
    pub fn iter(&self) -> impl Iterator<Item = (Sym, Sym)> + '_ {
        self.0.iter().copied()
    }

    /// How many labels.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are no labels.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The labels as strings, sorted by key text (for output).
    pub fn to_map(&self, symbols: &Symbols) -> BTreeMap<String, String> {
        self.iter()
            .map(|(k, v)| {
                (
                    symbols.resolve(k).to_string(),
                    symbols.resolve(v).to_string(),
                )
            })
            .collect()
    }
}
