//! The scheduling plugins, one module each, as kube-scheduler's default profile has them.

pub mod imagelocality;
pub mod nodeports;
pub mod noderesources;
pub mod podtopologyspread;
