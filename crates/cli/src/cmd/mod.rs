//! One module per subcommand: each parses its flags into a job's request (crate
//! `topospread-jobs`), calls it and renders what it returns.

pub(crate) mod bench;
pub(crate) mod bench_load;
pub(crate) mod explain;
#[cfg(feature = "live")]
pub(crate) mod live;
#[cfg(not(feature = "live"))]
#[path = "offline.rs"]
pub(crate) mod live;
pub(crate) mod rebalance;
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
