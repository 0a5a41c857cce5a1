//! A list's items as the splitters cut them out: typed in parallel, a batch at a time,
//! and taken in file order; items that leave their kind to the list wait for it.

use super::piece::{Piece, read_piece, thorough, tree};
use super::typing::{Head, head, prepare};
use crate::load::{LoadError, Loaded, Manifests, Object, Source, is_list};
use serde_json::Value;

/// A document whose items are read before its own `kind` is known (kubectl prints
/// `items` before `kind`): items that name their kind are read at once; the others wait
/// for the list's kind and apiVersion. Should the document turn out not to be a list,
/// what its items gave is taken back.
pub(super) struct ListState {
    objects_before: usize,
    skipped_before: usize,
    waiting: Vec<(Piece, Source)>,
    /// Items cut out but not yet read: they are typed in parallel, a batch at a time.
    batch: Vec<(Piece, Source)>,
    any: bool,
}

/// How many items are typed together (over the machine's cores).
const BATCH: usize = 512;

impl ListState {
    pub(super) fn new(out: &Manifests) -> Self {
        ListState {
            objects_before: out.objects.len(),
            skipped_before: out.skipped.len(),
            waiting: Vec::new(),
            batch: Vec::new(),
            any: false,
        }
    }

    pub(super) fn item(
        &mut self,
        piece: Piece,
        source: Source,
        out: &mut Manifests,
    ) -> Result<(), LoadError> {
        self.any = true;
        self.batch.push((piece, source));
        if self.batch.len() >= BATCH {
            self.flush(out)?;
        }
        Ok(())
    }

    /// Reads the batch: typed in parallel while the objects of the batch before are
    /// compacted, then taken in file order (so the first error in the file is the one
    /// reported).
    fn flush(&mut self, out: &mut Manifests) -> Result<(), LoadError> {
        let batch = std::mem::take(&mut self.batch);
        let prepared = std::thread::scope(|scope| {
            let typing = scope.spawn(|| prepare_all(&batch));
            out.compact_new();
            typing
                .join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e))
        });
        for ((piece, source), (head, object)) in batch.into_iter().zip(prepared) {
            match (head, object) {
                (_, Some(object)) => out.objects.push(Loaded { source, object }),
                (Some(h), None) if h.kind.is_some() => thorough(&piece, &source, None, 1, out)?,
                _ => self.waiting.push((piece, source)),
            }
        }
        Ok(())
    }

    /// The document without its items: what it is decides what its items were. When
    /// `tail` is given, the document's text still holds its items from that index on
    /// (they share YAML anchors, so they are read with the document, not cut out).
    pub(super) fn finish(
        mut self,
        rest: &Piece,
        source: &Source,
        tail: Option<usize>,
        out: &mut Manifests,
    ) -> Result<(), LoadError> {
        self.flush(out)?;
        if !self.any {
            let h = head(rest).unwrap_or_default();
            return read_piece(rest, source, None, h, 0, out);
        }
        let value = tree(rest, source)?;
        let kind = value.get("kind").and_then(Value::as_str);
        let Some(kind) = kind else {
            return Err(LoadError::MissingKind {
                file: source.file.clone(),
                document: source.document,
            });
        };
        if !is_list(kind, &value) {
            // Not a list after all: `items` is a field of the object, which no type the
            // scheduler reads has.
            out.objects.truncate(self.objects_before);
            out.skipped.truncate(self.skipped_before);
            crate::load::parse_document(&value, source, None, 0, out)?;
            if out.objects.len() > self.objects_before {
                out.objects.truncate(self.objects_before);
                return Err(LoadError::UnknownField {
                    file: source.file.clone(),
                    object: crate::load::object_name(kind, &value),
                    field: "items".into(),
                });
            }
            return Ok(());
        }
        let item_kind = kind.strip_suffix("List").filter(|k| !k.is_empty());
        let api_version = value
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        for (piece, item_source) in &self.waiting {
            let Some(item_kind) = item_kind else {
                // `kind: List` items must name their kind: the tree reader says so.
                thorough(piece, item_source, None, 1, out)?;
                continue;
            };
            let h = Head {
                kind: Some(item_kind.to_string()),
                api_version: Some(
                    head(piece)
                        .and_then(|h| h.api_version)
                        .unwrap_or_else(|| api_version.to_string()),
                ),
            };
            read_piece(
                piece,
                item_source,
                Some((item_kind, api_version)),
                h,
                1,
                out,
            )?;
        }
        let Some(first) = tail else {
            return Ok(());
        };
        let list = item_kind.map(|k| (k, api_version));
        let items = value.get("items").and_then(Value::as_array);
        for (j, item) in items.into_iter().flatten().enumerate() {
            let item_source = Source {
                item: Some(first + j),
                ..source.clone()
            };
            crate::load::parse_document(item, &item_source, list, 1, out)?;
        }
        Ok(())
    }
}

/// [`prepare`] for every item, spread over the machine's cores.
fn prepare_all(batch: &[(Piece, Source)]) -> Vec<(Option<Head>, Option<Object>)> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    if threads < 2 || batch.len() < 2 {
        return batch.iter().map(|(p, _)| prepare(p)).collect();
    }
    let per = batch.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = batch
            .chunks(per)
            .map(|chunk| {
                scope.spawn(move || chunk.iter().map(|(p, _)| prepare(p)).collect::<Vec<_>>())
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}
