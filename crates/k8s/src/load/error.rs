//! Why manifests could not be loaded ([`LoadError`]) and where an object came from
//! ([`Source`]).

use super::MAX_LIST_DEPTH;
use std::fmt;

/// Why manifests could not be loaded. Every variant names where.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoadError {
    /// The text is not YAML.
    #[error("{file}: invalid YAML: {message}")]
    Yaml {
        /// The file.
        file: String,
        /// What the parser said (with line and column).
        message: String,
    },
    /// A document has no `kind`.
    #[error(
        "{file}: document {document}: kind: Required value: every object needs apiVersion and kind"
    )]
    MissingKind {
        /// The file.
        file: String,
        /// The document's position (1-based).
        document: usize,
    },
    /// The text is not JSON (it starts as JSON does).
    #[error("{file}: invalid JSON: {message}")]
    Json {
        /// The file.
        file: String,
        /// What the parser said, with line and column in the file.
        message: String,
    },
    /// A list's `items` is not a list.
    #[error(
        "{file}: document {document}: {kind}: items: Invalid value: {found}: must be a list of objects"
    )]
    NotAList {
        /// The file.
        file: String,
        /// The document's position (1-based).
        document: usize,
        /// The list's kind (`List`, `PodList`, ...).
        kind: String,
        /// What `items` holds instead (`object`, `string`, ...).
        found: &'static str,
    },
    /// Lists nested deeper than any kubectl output.
    #[error("{file}: document {document}: lists nested more than {MAX_LIST_DEPTH} deep")]
    TooDeep {
        /// The file.
        file: String,
        /// The document's position (1-based).
        document: usize,
    },
    /// A field has the wrong type or value.
    #[error("{file}: {object}: {field}: {message}")]
    Field {
        /// The file.
        file: String,
        /// The object, as `kind/name`.
        object: String,
        /// The field path.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// The input could not be read (an I/O error, the byte cap, text that is not UTF-8).
    #[error("{file}: {message}")]
    Read {
        /// The file.
        file: String,
        /// What went wrong.
        message: String,
    },
    /// The source of manifests rather than manifests: a kustomization, a Helm template.
    #[error("{file}: {what}; render it: `{render} | topospread ... -f -`")]
    Unrendered {
        /// The file (or folder).
        file: String,
        /// What it is, naming the object when there is one.
        what: String,
        /// The command that renders it (`kubectl kustomize DIR`).
        render: String,
    },
    /// A field the object's type does not have (a typo, or a newer API).
    #[error("{file}: {object}: {field}: unknown field")]
    UnknownField {
        /// The file.
        file: String,
        /// The object, as `kind/name`.
        object: String,
        /// The field path.
        field: String,
    },
}

/// Where an object came from: file and document (and item, inside a `List`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    /// The file name as given.
    pub file: String,
    /// The YAML document (1-based).
    pub document: usize,
    /// The item inside a `kind: List` document (0-based), if any.
    pub item: Option<usize>,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.item {
            Some(i) => write!(f, "{} (document {}, items[{i}])", self.file, self.document),
            None => write!(f, "{} (document {})", self.file, self.document),
        }
    }
}
