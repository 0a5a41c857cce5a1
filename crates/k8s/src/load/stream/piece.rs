//! One piece of input (a list item, or a document without its items) and its thorough
//! reading: a value tree, then the tree reader's rules; syntax errors placed in the file
//! through the piece's [`Origin`].

use super::typing::{Head, typed_object};
use crate::load::position::Origin;
use crate::load::{LoadError, Loaded, Manifests, Source, json};
use serde_json::Value;

/// One piece of input: its text and where its lines are in the file.
pub(super) struct Piece {
    pub(super) text: Vec<u8>,
    pub(super) origin: Origin,
    pub(super) yaml: bool,
}

/// Reads one object, typed straight from its text when it can be, else thoroughly.
pub(super) fn read_piece(
    piece: &Piece,
    source: &Source,
    list: Option<(&str, &str)>,
    head: Head,
    depth: usize,
    out: &mut Manifests,
) -> Result<(), LoadError> {
    if let Some(object) = typed_object(piece, &head) {
        out.objects.push(Loaded {
            source: source.clone(),
            object,
        });
        return Ok(());
    }
    thorough(piece, source, list, depth, out)
}

/// The piece as a value tree, syntax errors placed in the file.
pub(super) fn tree(piece: &Piece, source: &Source) -> Result<Value, LoadError> {
    let text = std::str::from_utf8(&piece.text).map_err(|_| LoadError::Read {
        file: source.file.clone(),
        message: format!(
            "not UTF-8 text (in the object starting at line {})",
            piece.origin.first_line()
        ),
    })?;
    let docs = if piece.yaml {
        crate::load::parse_yaml_documents_at(text, &source.file, &piece.origin)
    } else {
        json::documents_at(text, &source.file, &piece.origin)
    }?;
    let mut docs = docs.into_iter();
    match (docs.next(), docs.next()) {
        (Some(v), None) => Ok(v),
        (None, _) => Ok(Value::Null),
        (Some(_), Some(_)) => Err(LoadError::Json {
            file: source.file.clone(),
            message: format!(
                "trailing characters after the object at line {}",
                piece.origin.first_line()
            ),
        }),
    }
}

/// Reads a piece the thorough way: the tree reader, with its errors and leniency.
pub(super) fn thorough(
    piece: &Piece,
    source: &Source,
    list: Option<(&str, &str)>,
    depth: usize,
    out: &mut Manifests,
) -> Result<(), LoadError> {
    let value = tree(piece, source)?;
    if value.is_null() {
        return Ok(());
    }
    crate::load::parse_document(&value, source, list, depth, out)
}
