//! The 5,000-node dump the browser test and the `pick` bench load: nodes and bound pods
//! as `kubectl get -o json` prints them, and a Deployment of 300 replicas spread over
//! them, as `bench load` writes them.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use topospread_scenario::dump::{self, DumpFormat, DumpSpec};

/// Nodes in the dump (issue 26's size).
pub(crate) const NODES: usize = 5000;

/// Writes the dump with `pods` bound pods and the Deployment into `dir`; returns both
/// files.
pub(crate) fn write_dump(dir: &Path, pods: usize) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).expect("temp dir");
    let cluster = dir.join("cluster.json");
    let mut w = BufWriter::new(std::fs::File::create(&cluster).expect("create dump"));
    dump::write_dump(&mut w, DumpSpec { nodes: NODES, pods }, DumpFormat::Json).expect("dump");
    w.flush().expect("flush");
    let deployment = dir.join("deployment.yaml");
    std::fs::write(&deployment, dump::to_yaml_document(&dump::deployment(300)))
        .expect("deployment");
    vec![cluster, deployment]
}
