use super::Status;
use std::any::{Any, TypeId};

fn missing(key: &str) -> Status {
    Status::error(format!("reading {key:?} from cycleState: not found"))
}

/// Data a plugin keeps for one scheduling cycle. `Clone` so the preemption path can copy
/// the whole state and replay `add_pod`/`remove_pod` on the copy.
pub trait StateData: Any + Send + Sync {
    /// Clones the data behind a box.
    fn clone_box(&self) -> Box<dyn StateData>;
    /// Upcasts for typed reads.
    fn as_any(&self) -> &dyn Any;
    /// Upcasts for typed writes.
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: Any + Clone + Send + Sync> StateData for T {
    fn clone_box(&self) -> Box<dyn StateData> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// Per-cycle plugin state, keyed by the state's own type: each plugin reads and writes
/// its own typed struct, never a string key.
#[derive(Default)]
pub struct CycleState {
    entries: Vec<(TypeId, Box<dyn StateData>)>,
    skip_filter: Vec<&'static str>,
    skip_score: Vec<&'static str>,
}

impl Clone for CycleState {
    fn clone(&self) -> Self {
        Self {
            entries: self
                .entries
                .iter()
                .map(|(t, d)| (*t, (**d).clone_box()))
                .collect(),
            skip_filter: self.skip_filter.clone(),
            skip_score: self.skip_score.clone(),
        }
    }
}

impl std::fmt::Debug for CycleState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CycleState")
            .field("entries", &self.entries.len())
            .field("skip_filter", &self.skip_filter)
            .field("skip_score", &self.skip_score)
            .finish()
    }
}

impl CycleState {
    /// An empty state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores `data`, replacing any earlier value of the same type.
    pub fn write<T: StateData>(&mut self, data: T) {
        let id = TypeId::of::<T>();
        if let Some(slot) = self.entries.iter_mut().find(|(t, _)| *t == id) {
            slot.1 = Box::new(data);
        } else {
            self.entries.push((id, Box::new(data)));
        }
    }

    /// The stored value of type `T`, if any.
    pub fn read<T: StateData>(&self) -> Option<&T> {
        let id = TypeId::of::<T>();
        self.entries
            .iter()
            .find(|(t, _)| *t == id)
            .and_then(|(_, d)| (**d).as_any().downcast_ref())
    }

    /// The stored value of type `T`, mutably.
    pub(crate) fn read_mut<T: StateData>(&mut self) -> Option<&mut T> {
        let id = TypeId::of::<T>();
        self.entries
            .iter_mut()
            .find(|(t, _)| *t == id)
            .and_then(|(_, d)| (**d).as_any_mut().downcast_mut())
    }

    /// The state written at an earlier extension point under `key` (upstream's state key,
    /// e.g. `PreFilterPodTopologySpread`); missing, it is an internal error, as upstream.
    pub fn require<T: StateData>(&self, key: &str) -> Result<&T, Status> {
        self.read::<T>().ok_or_else(|| missing(key))
    }

    /// [`Self::require`], mutably (the preemption path's AddPod/RemovePod).
    pub(crate) fn require_mut<T: StateData>(&mut self, key: &str) -> Result<&mut T, Status> {
        self.read_mut::<T>().ok_or_else(|| missing(key))
    }

    /// Records that a plugin's Filter is skipped this cycle (its PreFilter returned Skip).
    pub(crate) fn skip_filter_plugin(&mut self, plugin: &'static str) {
        self.skip_filter.push(plugin);
    }

    /// Whether a plugin's Filter is skipped this cycle.
    pub(crate) fn is_filter_skipped(&self, plugin: &str) -> bool {
        self.skip_filter.contains(&plugin)
    }

    /// Records that a plugin's Score is skipped this cycle (its PreScore returned Skip).
    pub(crate) fn skip_score_plugin(&mut self, plugin: &'static str) {
        self.skip_score.push(plugin);
    }

    /// Whether a plugin's Score is skipped this cycle.
    pub(crate) fn is_score_skipped(&self, plugin: &str) -> bool {
        self.skip_score.contains(&plugin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, PartialEq)]
    struct A(u32);
    #[derive(Clone, Debug, PartialEq)]
    struct B(&'static str);

    #[test]
    fn typed_read_write_and_clone() {
        let mut s = CycleState::new();
        s.write(A(1));
        s.write(B("x"));
        s.write(A(2));
        assert_eq!(s.read::<A>(), Some(&A(2)));
        let mut copy = s.clone();
        if let Some(a) = copy.read_mut::<A>() {
            a.0 = 3;
        }
        assert_eq!(s.read::<A>(), Some(&A(2)));
        assert_eq!(copy.read::<A>(), Some(&A(3)));
        assert_eq!(copy.read::<B>(), Some(&B("x")));
    }
}
