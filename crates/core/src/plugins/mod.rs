//! The scheduling plugins, one module each, as kube-scheduler's default profile has them.

pub mod helper;
pub mod imagelocality;
pub mod interpodaffinity;
pub mod nodeaffinity;
pub mod nodename;
pub mod nodeports;
pub mod noderesources;
pub mod nodeunschedulable;
pub mod nodevolumelimits;
pub mod podtopologyspread;
pub mod queuesort;
pub mod registry;
pub mod schedulinggates;
pub mod tainttoleration;
#[cfg(test)]
pub(crate) mod testutil;
pub mod volumebinding;
pub mod volumerestrictions;
pub mod volumezone;
