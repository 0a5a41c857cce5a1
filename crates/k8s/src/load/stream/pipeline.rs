//! A list's items read on worker threads while the reading thread cuts the next ones
//! out: each batch is typed, and its bound pods admitted (validation, the API server's
//! defaults, what controllers and quota read), on the worker that took it. Conversion
//! interns into the one symbol table, so batches take turns at it in file order: the
//! table, and so every symbol, is the one a single thread reading the file would make,
//! however the threads interleave. Results are taken back in file order.

use super::piece::{Piece, thorough};
use super::typing::prepare;
use crate::load::compact::{CompactPod, Rules};
use crate::load::{LoadError, Loaded, Manifests, Source};
use crate::notes::Note;
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use topospread::api::Symbols;

/// What reading one item gave.
pub(super) enum Outcome {
    /// Typed straight from its text (a bound pod compacted, when asked for).
    Typed(Loaded),
    /// Read the thorough way: its objects and notes.
    Thorough(Vec<Loaded>, Vec<Note>),
    /// It could not be read: the error the file is refused with, when it is the first.
    Failed(LoadError),
    /// It names no kind of its own: it waits for the list's.
    Waiting(Piece, Source),
    /// It has a field its type lacks: read again on the reading thread, which knows
    /// whether unknown fields are collected or refused.
    Unknown(Piece, Source),
}

impl Outcome {
    fn objects_mut(&mut self) -> &mut [Loaded] {
        match self {
            Outcome::Typed(l) => std::slice::from_mut(l),
            Outcome::Thorough(objects, _) => objects,
            Outcome::Failed(_) | Outcome::Waiting(..) | Outcome::Unknown(..) => &mut [],
        }
    }
}

/// Reads a batch of items in order, up to the first that fails: each typed straight
/// from its text, or read thoroughly when it does not type. With `rules`, the bound
/// pods among the objects are admitted, one entry per object (in order) saying so.
pub(super) fn read_batch(
    batch: Vec<(Piece, Source)>,
    rules: Option<&Rules>,
) -> (Vec<Outcome>, Vec<Option<Box<CompactPod>>>) {
    let mut outcomes = Vec::with_capacity(batch.len());
    for (piece, source) in batch {
        let outcome = read_item(piece, source);
        let failed = matches!(outcome, Outcome::Failed(_));
        outcomes.push(outcome);
        if failed {
            break;
        }
    }
    let admitted = match rules {
        Some(rules) => outcomes
            .iter_mut()
            .flat_map(Outcome::objects_mut)
            .map(|l| rules.admit(l))
            .collect(),
        None => Vec::new(),
    };
    (outcomes, admitted)
}

fn read_item(piece: Piece, source: Source) -> Outcome {
    match prepare(&piece) {
        (_, Some(object)) => Outcome::Typed(Loaded { source, object }),
        (Some(h), None) if h.kind.is_some() => {
            let mut m = Manifests::default();
            match thorough(&piece, &source, None, 1, &mut m) {
                Ok(()) => Outcome::Thorough(m.objects, m.skipped),
                Err(LoadError::UnknownField { .. }) => Outcome::Unknown(piece, source),
                Err(e) => Outcome::Failed(e),
            }
        }
        _ => Outcome::Waiting(piece, source),
    }
}

/// Converts the pods [`read_batch`] admitted, in order, interning into `symbols`.
fn convert_batch(
    outcomes: &mut [Outcome],
    admitted: Vec<Option<Box<CompactPod>>>,
    rules: &Rules,
    symbols: &mut Symbols,
) {
    let objects = outcomes.iter_mut().flat_map(Outcome::objects_mut);
    for (l, admitted) in objects.zip(admitted) {
        if let Some(compact) = admitted {
            rules.convert(l, compact, symbols);
        }
    }
}

/// The symbol table, lent to the workers while a list is read, and whose batch
/// converts next.
struct Turns {
    state: Mutex<Turn>,
    changed: Condvar,
}

struct Turn {
    next: u64,
    symbols: Symbols,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic is caught before it could leave a value half-written.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Turns {
    /// Waits for batch `seq`'s turn, runs `f` on the table, and passes the turn on,
    /// even when `f` panics (the panic is returned, for the reading thread).
    fn in_turn(&self, seq: u64, f: impl FnOnce(&mut Symbols)) -> std::thread::Result<()> {
        let mut turn = lock(&self.state);
        while turn.next != seq {
            turn = self
                .changed
                .wait(turn)
                .unwrap_or_else(PoisonError::into_inner);
        }
        let result = catch_unwind(AssertUnwindSafe(|| f(&mut turn.symbols)));
        turn.next += 1;
        self.changed.notify_all();
        result
    }
}

/// A batch to read, numbered in file order.
type Job = (u64, Vec<(Piece, Source)>);
/// A batch read, or the panic its worker caught.
type Done = (u64, std::thread::Result<Vec<Outcome>>);

/// Worker threads reading batches, and the batches sent but not yet taken back.
pub(super) struct Pipeline {
    jobs: Option<Sender<Job>>,
    done: Receiver<Done>,
    workers: Vec<JoinHandle<()>>,
    turns: Option<Arc<Turns>>,
    sent: u64,
    taken: u64,
    early: BTreeMap<u64, std::thread::Result<Vec<Outcome>>>,
}

impl Pipeline {
    /// `threads` workers; with `compaction`, they compact bound pods under its rules,
    /// converting into its symbol table.
    pub(super) fn start(threads: usize, compaction: Option<(Rules, Symbols)>) -> Self {
        let (jobs, job_queue) = channel::<Job>();
        let job_queue = Arc::new(Mutex::new(job_queue));
        let (done_tx, done) = channel::<Done>();
        let (rules, turns) = match compaction {
            Some((rules, symbols)) => (
                Some(rules),
                Some(Arc::new(Turns {
                    state: Mutex::new(Turn { next: 0, symbols }),
                    changed: Condvar::new(),
                })),
            ),
            None => (None, None),
        };
        let workers = (0..threads)
            .map(|_| {
                let job_queue = Arc::clone(&job_queue);
                let done = done_tx.clone();
                let turns = turns.clone();
                let rules = rules.clone();
                std::thread::spawn(move || work(&job_queue, &done, rules, turns.as_deref()))
            })
            .collect();
        Pipeline {
            jobs: Some(jobs),
            done,
            workers,
            turns,
            sent: 0,
            taken: 0,
            early: BTreeMap::new(),
        }
    }

    /// Sends a batch to the workers.
    pub(super) fn send(&mut self, batch: Vec<(Piece, Source)>) {
        if let Some(jobs) = &self.jobs
            && jobs.send((self.sent, batch)).is_ok()
        {
            self.sent += 1;
        }
    }

    /// Batches sent and not yet taken back.
    pub(super) fn in_flight(&self) -> u64 {
        self.sent - self.taken
    }

    /// The next batch's outcomes in file order: waiting for them when `wait`, else
    /// only if they are there. `None` when nothing is in flight (or, not waiting,
    /// ready). A worker's panic is resumed here.
    pub(super) fn next(&mut self, wait: bool) -> Option<Vec<Outcome>> {
        loop {
            if let Some(result) = self.early.remove(&self.taken) {
                self.taken += 1;
                return Some(result.unwrap_or_else(|panic| resume_unwind(panic)));
            }
            if self.taken == self.sent {
                return None;
            }
            let received = if wait {
                self.done.recv().ok()
            } else {
                match self.done.try_recv() {
                    Ok(d) => Some(d),
                    Err(std::sync::mpsc::TryRecvError::Empty) => return None,
                    Err(std::sync::mpsc::TryRecvError::Disconnected) => None,
                }
            };
            match received {
                Some((seq, result)) => {
                    self.early.insert(seq, result);
                }
                None => self.workers_gone(),
            }
        }
    }

    /// Every worker ended with batches still out: one panicked outside what it catches.
    fn workers_gone(&mut self) -> ! {
        self.jobs = None;
        for w in self.workers.drain(..) {
            if let Err(panic) = w.join() {
                resume_unwind(panic);
            }
        }
        panic!("the item-reading threads ended with batches still to read");
    }

    /// Ends the workers once every batch is taken back, and gives back the symbol
    /// table they converted into.
    pub(super) fn finish(mut self) -> Option<Symbols> {
        self.jobs = None;
        for w in self.workers.drain(..) {
            if let Err(panic) = w.join() {
                resume_unwind(panic);
            }
        }
        let turns = self.turns.take()?;
        let turns = Arc::into_inner(turns)?;
        Some(
            turns
                .state
                .into_inner()
                .unwrap_or_else(PoisonError::into_inner)
                .symbols,
        )
    }
}

impl Drop for Pipeline {
    /// A list left unfinished (its file is refused): the workers end after the batch
    /// they hold.
    fn drop(&mut self) {
        self.jobs = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

/// One worker: takes batches until there are none, reads each, converts its pods in
/// its turn, and sends the outcomes back.
fn work(
    job_queue: &Mutex<Receiver<Job>>,
    done: &Sender<Done>,
    rules: Option<Rules>,
    turns: Option<&Turns>,
) {
    loop {
        let job = lock(job_queue).recv();
        let Ok((seq, batch)) = job else {
            return;
        };
        let read = catch_unwind(AssertUnwindSafe(|| read_batch(batch, rules.as_ref())));
        let result = match (rules.as_ref(), turns) {
            (Some(rules), Some(turns)) => {
                // The turn is taken even when reading panicked, so later batches convert.
                let mut read = read;
                let converted = turns.in_turn(seq, |symbols| {
                    if let Ok((outcomes, admitted)) = &mut read {
                        convert_batch(outcomes, std::mem::take(admitted), rules, symbols);
                    }
                });
                converted.and(read.map(|(outcomes, _)| outcomes))
            }
            _ => read.map(|(outcomes, _)| outcomes),
        };
        if done.send((seq, result)).is_err() {
            return;
        }
    }
}
