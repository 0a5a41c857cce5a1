//! The parts of the versioned reports that the planners and controllers produce, as the
//! reports write them: the one home of the JSON contract. Each type converts from the
//! domain type its producer returns (`From`), rendering what the JSON carries as text
//! (a constraint's label) at the conversion, so the producers keep typed fields.

pub mod explain;
pub mod guard;
pub mod rebalance;
pub mod rollout;
pub mod spread;
pub mod summary;
