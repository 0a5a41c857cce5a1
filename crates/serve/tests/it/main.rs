//! topospread-serve against the in-process fake API server.
#![allow(clippy::unwrap_used, missing_docs, unreachable_pub)]

mod support;

mod agent;
mod any_certificate;
mod cycle;
mod e2e;
mod guard;
mod leader;
mod limits;
mod namespaces;
mod outage;
mod overcommit;
mod preemption;
mod queue;
mod rbac;
mod release;
mod relist;
mod secure;
mod volumes;
