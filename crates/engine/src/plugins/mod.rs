//! The scheduling plugins, one module each, as kube-scheduler's default profile has them.

pub mod noderesources;
pub mod podtopologyspread;
