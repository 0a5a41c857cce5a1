//! Manifests read object by object from a byte stream, never as one document tree: a
//! `kubectl get -o json|yaml` dump is one `List` of tens of thousands of items, so its
//! `items` are cut out one at a time (by bracket depth in JSON, by indentation in YAML)
//! and each is typed on its own, then dropped. What is not a list item (a manifest's
//! documents, a list's own fields) is read whole, as before.
//!
//! Each piece is typed straight from its text (serde_json into the k8s-openapi type,
//! unknown fields detected; YAML converted to JSON first by [`super::yaml_json`], or
//! typed by serde-saphyr where that converter leaves it); only when that fails, or for
//! kinds read untyped, is it read again the thorough way ([`super::parse_document`]: a
//! value tree, numbers read as strings, the field path of the error), so results and
//! error messages are those of the tree reader.
//!
//! By concern: [`source`] reads bytes and counts lines; [`split_json`] and
//! [`split_yaml`] cut the pieces out; [`list`] types a list's items in parallel batches;
//! [`typing`] types a piece straight from its text, leaving out what nothing reads
//! ([`topospread::convert::lean`]); [`piece`] reads one the thorough way,
//! its errors placed in the file through the piece's [`Origin`](super::position::Origin).

mod list;
mod piece;
mod pipeline;
mod source;
mod split_json;
mod split_yaml;
mod typing;

#[cfg(test)]
pub(super) mod tests;
#[cfg(test)]
pub(super) use typing::Routes;

use super::{Compactor, LoadError, Manifests, Source};
use source::Src;
use std::io::BufRead;

/// Parses every manifest read from `reader` (YAML or JSON, as [`super::parse_manifests`]),
/// holding one list item at a time. An I/O error (the caller's byte cap included) is
/// [`LoadError::Read`].
pub fn parse_manifests_reader(reader: impl BufRead, file: &str) -> Result<Manifests, LoadError> {
    read_manifests(reader, file, Manifests::default())
}

/// [`parse_manifests_reader`], bound pods converted by `compactor` as they are read
/// ([`super::Object::CompactPod`]): a dump's pods never all exist as k8s-openapi objects
/// at once. The compactor comes back with the manifests, for the next file and the build.
pub fn parse_manifests_reader_compact(
    reader: impl BufRead,
    file: &str,
    compactor: Compactor,
) -> Result<(Manifests, Compactor), LoadError> {
    read_compact(reader, file, compactor, 0)
}

/// [`parse_manifests_reader`] into `out`, which says how to read
/// ([`Manifests::collecting_unknown_fields`], [`Manifests::set_compactor`]). On an error
/// `out` keeps its compactor, so the next input can still be read with it.
pub fn parse_manifests_reader_with(
    reader: impl BufRead,
    file: &str,
    out: &mut Manifests,
) -> Result<(), LoadError> {
    read_into(reader, file, out)?;
    out.compact_new();
    Ok(())
}

/// [`parse_manifests_reader_compact`] with `workers` threads reading a list's items (0:
/// one per core, up to 8).
pub(super) fn read_compact(
    reader: impl BufRead,
    file: &str,
    compactor: Compactor,
    workers: usize,
) -> Result<(Manifests, Compactor), LoadError> {
    let out = Manifests {
        compactor: Some(compactor),
        workers,
        ..Manifests::default()
    };
    let mut out = read_manifests(reader, file, out)?;
    out.compact_new();
    let compactor = out.compactor.take().unwrap_or_default();
    Ok((out, compactor))
}

fn read_manifests(
    reader: impl BufRead,
    file: &str,
    mut out: Manifests,
) -> Result<Manifests, LoadError> {
    read_into(reader, file, &mut out)?;
    Ok(out)
}

fn read_into(reader: impl BufRead, file: &str, out: &mut Manifests) -> Result<(), LoadError> {
    let mut src = Src::new(reader, file);
    let mut docs = Documents {
        file,
        count: 0,
        out,
    };
    src.skip_bom()?;
    src.skip_ws(None)?;
    match src.peek()? {
        Some(b'{' | b'[') => split_json::json_stream(&mut src, &mut docs)?,
        Some(_) => split_yaml::yaml_stream(&mut src, &mut docs)?,
        None => {}
    }
    Ok(())
}

/// The documents of one file, numbered as they come.
struct Documents<'a> {
    file: &'a str,
    count: usize,
    out: &'a mut Manifests,
}

impl Documents<'_> {
    fn next_source(&mut self) -> Source {
        self.out.compact_new();
        self.count += 1;
        Source {
            file: self.file.to_string(),
            document: self.count,
            item: None,
        }
    }
}
