//! One module per subcommand, and the input, config and runtime they share.

pub(crate) mod bench;
pub(crate) mod bench_load;
pub(crate) mod config;
pub(crate) mod explain;
pub(crate) mod input;
#[cfg(feature = "live")]
pub(crate) mod live;
#[cfg(not(feature = "live"))]
#[path = "offline.rs"]
pub(crate) mod live;
pub(crate) mod rebalance;
pub(crate) mod runtime;
#[cfg(feature = "live")]
pub(crate) mod serve;
#[cfg(not(feature = "live"))]
pub(crate) use live as serve;
pub(crate) mod show;
pub(crate) mod simulate;
pub(crate) mod term;
pub(crate) mod test;
pub(crate) mod validate;
pub(crate) mod whatif;
