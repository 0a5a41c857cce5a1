use std::collections::HashMap;
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
#[derive(Clone, Debug, Default)]
pub struct Symbols {
    by_text: HashMap<Arc<str>, Sym>,
    texts: Vec<Arc<str>>,
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
}
