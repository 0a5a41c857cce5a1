//! A list's items as the splitters cut them out: read a batch at a time on worker
//! threads ([`pipeline`](super::pipeline)) while the next are cut out, and taken back in
//! file order; items that leave their kind to the list wait for it.

use super::piece::{Piece, read_piece, thorough, tree};
use super::pipeline::{Outcome, Pipeline, read_batch};
use super::typing::{Head, head};
use crate::load::{LoadError, Manifests, Source, is_list};
use serde_json::Value;

/// A document whose items are read before its own `kind` is known (kubectl prints
/// `items` before `kind`): items that name their kind are read at once; the others wait
/// for the list's kind and apiVersion. Should the document turn out not to be a list,
/// what its items gave is taken back.
pub(super) struct ListState {
    objects_before: usize,
    skipped_before: usize,
    waiting: Vec<(Piece, Source)>,
    /// Items cut out but not yet sent to be read.
    batch: Vec<(Piece, Source)>,
    /// The workers reading the batches sent, once there is more than one batch.
    pipeline: Option<Pipeline>,
    any: bool,
}

/// How many items are read together.
const BATCH: usize = 128;

/// The threads that read a list's items when `workers` asks for none in particular:
/// one per core, up to 8.
fn default_workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
}

impl ListState {
    pub(super) fn new(out: &Manifests) -> Self {
        ListState {
            objects_before: out.objects.len(),
            skipped_before: out.skipped.len(),
            waiting: Vec::new(),
            batch: Vec::new(),
            pipeline: None,
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
            self.send(out)?;
        }
        Ok(())
    }

    /// Sends the batch to the workers (started with the first full batch, when there
    /// is more than one core), then takes back what is read, in file order: whatever
    /// is ready, and waiting while more than one batch per worker is out.
    fn send(&mut self, out: &mut Manifests) -> Result<(), LoadError> {
        let batch = std::mem::take(&mut self.batch);
        let workers = match out.workers {
            0 => default_workers(),
            n => n,
        };
        if self.pipeline.is_none() {
            if workers < 2 {
                let (outcomes, _) = read_batch(batch, None);
                return self.take(outcomes, out);
            }
            // What was read before the list is converted first: symbols in file order.
            out.compact_new();
            let compaction = out
                .compactor
                .as_mut()
                .map(|c| (c.rules(), c.take_symbols()));
            self.pipeline = Some(Pipeline::start(workers, compaction));
        }
        let Some(pipeline) = self.pipeline.as_mut() else {
            return Ok(());
        };
        pipeline.send(batch);
        let limit = u64::try_from(workers).unwrap_or(u64::MAX).saturating_add(1);
        loop {
            let Some(pipeline) = self.pipeline.as_mut() else {
                return Ok(());
            };
            let wait = pipeline.in_flight() > limit;
            match pipeline.next(wait) {
                Some(outcomes) => self.take(outcomes, out)?,
                None => return Ok(()),
            }
        }
    }

    /// Reads what is left of the items, takes back every batch, and gives the symbol
    /// table back to the compactor.
    fn flush(&mut self, out: &mut Manifests) -> Result<(), LoadError> {
        let Some(mut pipeline) = self.pipeline.take() else {
            // A list of one batch: read here, its pods compacted with the file's.
            let (outcomes, _) = read_batch(std::mem::take(&mut self.batch), None);
            return self.take(outcomes, out);
        };
        if !self.batch.is_empty() {
            pipeline.send(std::mem::take(&mut self.batch));
        }
        while let Some(outcomes) = pipeline.next(true) {
            self.take(outcomes, out)?;
        }
        if let (Some(symbols), Some(compactor)) = (pipeline.finish(), out.compactor.as_mut()) {
            compactor.restore_symbols(symbols);
        }
        // Every object read so far is compact already.
        out.compacted = out.objects.len();
        Ok(())
    }

    /// Takes a batch's outcomes, in file order: the first error is the file's.
    fn take(&mut self, outcomes: Vec<Outcome>, out: &mut Manifests) -> Result<(), LoadError> {
        for outcome in outcomes {
            match outcome {
                Outcome::Typed(l) => out.objects.push(l),
                Outcome::Thorough(objects, skipped) => {
                    out.objects.extend(objects);
                    out.skipped.extend(skipped);
                }
                Outcome::Failed(e) => return Err(e),
                Outcome::Waiting(piece, source) => self.waiting.push((piece, source)),
                // Collected into `out` (kept whole), or the file's error.
                Outcome::Unknown(piece, source) => thorough(&piece, &source, None, 1, out)?,
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
