//! Synthetic cluster dumps as `kubectl get nodes,pods -A -o json|yaml` prints them: a
//! `kind: List` of nodes and bound pods with the metadata real clusters carry
//! (managedFields, annotations, owner references) and the status blocks the kubelet
//! reports, plus a Deployment with spread constraints to simulate on top. They are the
//! input `topospread bench load` measures loading and simulating, so the figures are
//! reproducible on any machine.

use serde_json::{Value, json};
use std::io::{self, Write};

const ZONES: [&str; 3] = ["eu-west-1a", "eu-west-1b", "eu-west-1c"];

/// The text form of a dump.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DumpFormat {
    /// `-o json`: four-space indentation, as kubectl prints it.
    Json,
    /// `-o yaml`: block style, two-space indentation.
    Yaml,
}

/// The size of a dump.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DumpSpec {
    /// Nodes, spread round-robin over three zones.
    pub nodes: usize,
    /// Bound pods, spread round-robin over the nodes, 10 per ReplicaSet.
    pub pods: usize,
}

/// The `managedFields` entry a controller or the kubelet writes: large, nested, and
/// never read by a scheduler (what a streaming loader should skip cheaply).
fn managed_fields(manager: &str, operation: &str, subresource: Option<&str>) -> Value {
    let fields = if subresource.is_some() {
        json!({"f:status": {"f:conditions": {"k:{\"type\":\"Ready\"}": {
            ".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}}},
            "f:phase": {}, "f:startTime": {}}})
    } else {
        json!({
            "f:metadata": {"f:labels": {".": {}, "f:app": {}, "f:pod-template-hash": {}},
                "f:ownerReferences": {".": {}, "k:{\"uid\":\"5f0c1e7a\"}": {}}},
            "f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {
                ".": {}, "f:image": {}, "f:name": {}, "f:resources": {".": {}, "f:requests": {}}}}}
        })
    };
    let mut entry = json!({
        "apiVersion": "v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
        "manager": manager,
        "operation": operation,
        "time": "2026-11-20T08:14:31Z"
    });
    if let (Some(s), Some(map)) = (subresource, entry.as_object_mut()) {
        map.insert("subresource".into(), json!(s));
    }
    entry
}

/// Node `i`, as the API server returns it.
pub fn node(i: usize) -> Value {
    let name = format!(
        "ip-10-{}-{}-{}.eu-west-1.compute.internal",
        i / 65536 % 256,
        i / 256 % 256,
        i % 256
    );
    let zone = ZONES[i % ZONES.len()];
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "annotations": {
                "alpha.kubernetes.io/provided-node-ip": format!("10.0.{}.{}", i / 256 % 256, i % 256),
                "csi.volume.kubernetes.io/nodeid": format!("{{\"ebs.csi.aws.com\":\"i-0{i:016x}\"}}"),
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true"
            },
            "creationTimestamp": "2026-11-01T10:00:00Z",
            "labels": {
                "beta.kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/instance-type": "m6i.2xlarge",
                "beta.kubernetes.io/os": "linux",
                "failure-domain.beta.kubernetes.io/region": "eu-west-1",
                "failure-domain.beta.kubernetes.io/zone": zone,
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "node.kubernetes.io/instance-type": "m6i.2xlarge",
                "topology.kubernetes.io/region": "eu-west-1",
                "topology.kubernetes.io/zone": zone
            },
            "managedFields": [managed_fields("kubelet", "Update", Some("status"))],
            "name": name,
            "resourceVersion": format!("{}", 1_000_000 + i),
            "uid": format!("0a1b2c3d-0000-4000-8000-{i:012x}")
        },
        "spec": {
            "podCIDR": format!("100.64.{}.0/24", i % 256),
            "providerID": format!("aws:///{zone}/i-0{i:016x}")
        },
        "status": {
            "addresses": [
                {"address": format!("10.0.{}.{}", i / 256 % 256, i % 256), "type": "InternalIP"},
                {"address": name, "type": "Hostname"},
                {"address": name, "type": "InternalDNS"}
            ],
            "allocatable": {"cpu": "7910m", "ephemeral-storage": "95491281146",
                "hugepages-1Gi": "0", "hugepages-2Mi": "0", "memory": "31482748Ki", "pods": "58"},
            "capacity": {"cpu": "8", "ephemeral-storage": "104845292Ki",
                "hugepages-1Gi": "0", "hugepages-2Mi": "0", "memory": "32432508Ki", "pods": "58"},
            "conditions": [
                {"lastHeartbeatTime": "2026-11-20T08:14:31Z", "lastTransitionTime": "2026-11-01T10:00:00Z",
                 "message": "kubelet has sufficient memory available", "reason": "KubeletHasSufficientMemory",
                 "status": "False", "type": "MemoryPressure"},
                {"lastHeartbeatTime": "2026-11-20T08:14:31Z", "lastTransitionTime": "2026-11-01T10:00:00Z",
                 "message": "kubelet has no disk pressure", "reason": "KubeletHasNoDiskPressure",
                 "status": "False", "type": "DiskPressure"},
                {"lastHeartbeatTime": "2026-11-20T08:14:31Z", "lastTransitionTime": "2026-11-01T10:00:00Z",
                 "message": "kubelet has sufficient PID available", "reason": "KubeletHasSufficientPID",
                 "status": "False", "type": "PIDPressure"},
                {"lastHeartbeatTime": "2026-11-20T08:14:31Z", "lastTransitionTime": "2026-11-01T10:00:30Z",
                 "message": "kubelet is posting ready status", "reason": "KubeletReady",
                 "status": "True", "type": "Ready"}
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "images": [
                {"names": ["registry.example.com/web@sha256:4c1e0b7b2f4f8d5b8c3a1e2d7f6a9b0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a",
                           "registry.example.com/web:1.27.3"], "sizeBytes": 187_364_114},
                {"names": ["registry.k8s.io/kube-proxy@sha256:9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b",
                           "registry.k8s.io/kube-proxy:v1.35.0"], "sizeBytes": 30_219_566},
                {"names": ["registry.k8s.io/pause@sha256:7031c1b283388d2c2e09b57badb803c05ebed362dc88d84b480cc47f72a21097",
                           "registry.k8s.io/pause:3.10"], "sizeBytes": 320_368}
            ],
            "nodeInfo": {
                "architecture": "amd64", "bootID": format!("b00710d0-0000-4000-8000-{i:012x}"),
                "containerRuntimeVersion": "containerd://2.0.4", "kernelVersion": "6.1.115-126.197.amzn2023.x86_64",
                "kubeProxyVersion": "v1.35.0", "kubeletVersion": "v1.35.0",
                "machineID": format!("ec2{i:029x}"), "operatingSystem": "linux",
                "osImage": "Amazon Linux 2023.6.20241111", "systemUUID": format!("ec2{i:05x}-0000-0000-0000-000000000000")
            }
        }
    })
}

/// Bound pod `i` of a dump of `nodes` nodes: a replica of ReplicaSet `i / 10`, on
/// node `i % nodes`.
pub fn pod(i: usize, nodes: usize) -> Value {
    let rs = i / 10;
    let app = format!("svc-{rs}");
    let hash = format!("{:010x}", rs.wrapping_mul(0x9E37_79B9) % 0xff_ffff_ffff);
    let name = format!("{app}-{hash}-{i:05}");
    let n = i % nodes.max(1);
    let node = format!(
        "ip-10-{}-{}-{}.eu-west-1.compute.internal",
        n / 65536 % 256,
        n / 256 % 256,
        n % 256
    );
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "creationTimestamp": "2026-11-19T12:00:00Z",
            "generateName": format!("{app}-{hash}-"),
            "labels": {"app": app, "pod-template-hash": hash},
            "managedFields": [managed_fields("kube-controller-manager", "Update", None)],
            "name": name,
            "namespace": format!("team-{}", rs % 40),
            "ownerReferences": [{
                "apiVersion": "apps/v1", "blockOwnerDeletion": true, "controller": true,
                "kind": "ReplicaSet", "name": format!("{app}-{hash}"),
                "uid": format!("5f0c1e7a-0000-4000-8000-{rs:012x}")
            }],
            "resourceVersion": format!("{}", 2_000_000 + i),
            "uid": format!("9d8c7b6a-0000-4000-8000-{i:012x}")
        },
        "spec": {
            "containers": [{
                "image": "registry.example.com/web:1.27.3",
                "imagePullPolicy": "IfNotPresent",
                "name": "app",
                "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                "resources": {"limits": {"memory": "512Mi"}, "requests": {"cpu": "100m", "memory": "256Mi"}},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File"
            }],
            "dnsPolicy": "ClusterFirst",
            "enableServiceLinks": true,
            "nodeName": node,
            "preemptionPolicy": "PreemptLowerPriority",
            "priority": 0,
            "restartPolicy": "Always",
            "schedulerName": "default-scheduler",
            "securityContext": {},
            "serviceAccount": "default",
            "serviceAccountName": "default",
            "terminationGracePeriodSeconds": 30,
            "tolerations": [
                {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
                {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300}
            ]
        },
        "status": {
            "conditions": [
                {"lastProbeTime": null, "lastTransitionTime": "2026-11-19T12:00:09Z", "status": "True", "type": "Ready"},
                {"lastProbeTime": null, "lastTransitionTime": "2026-11-19T12:00:00Z", "status": "True", "type": "PodScheduled"}
            ],
            "containerStatuses": [{
                "containerID": format!("containerd://{i:064x}"),
                "image": "registry.example.com/web:1.27.3",
                "imageID": "registry.example.com/web@sha256:4c1e0b7b2f4f8d5b8c3a1e2d7f6a9b0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a",
                "lastState": {}, "name": "app", "ready": true, "restartCount": 0, "started": true,
                "state": {"running": {"startedAt": "2026-11-19T12:00:02Z"}}
            }],
            "hostIP": format!("10.0.{}.{}", n / 256 % 256, n % 256),
            "hostIPs": [{"ip": format!("10.0.{}.{}", n / 256 % 256, n % 256)}],
            "phase": "Running",
            "podIP": format!("100.64.{}.{}", n % 256, i % 250 + 2),
            "podIPs": [{"ip": format!("100.64.{}.{}", n % 256, i % 250 + 2)}],
            "qosClass": "Burstable",
            "startTime": "2026-11-19T12:00:00Z"
        }
    })
}

/// The Deployment simulated on top of a dump: `replicas` pods spread over zones
/// (DoNotSchedule) and hostnames (ScheduleAnyway).
pub fn deployment(replicas: i32) -> Value {
    let constraint = |key: &str, when: &str| {
        json!({"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": when,
               "labelSelector": {"matchLabels": {"app": "checkout"}}})
    };
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "checkout", "namespace": "shop"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "checkout"}},
            "template": {
                "metadata": {"labels": {"app": "checkout"}},
                "spec": {
                    "containers": [{"name": "app", "image": "registry.example.com/checkout:2.4.1",
                        "resources": {"requests": {"cpu": "250m", "memory": "512Mi"}}}],
                    "topologySpreadConstraints": [
                        constraint("topology.kubernetes.io/zone", "DoNotSchedule"),
                        constraint("kubernetes.io/hostname", "ScheduleAnyway")
                    ]
                }
            }
        }
    })
}

/// Writes the dump: the nodes, then the pods, as one `kind: List`.
pub fn write_dump(out: &mut impl Write, spec: DumpSpec, format: DumpFormat) -> io::Result<()> {
    let items = (0..spec.nodes)
        .map(node)
        .chain((0..spec.pods).map(|i| pod(i, spec.nodes)));
    match format {
        DumpFormat::Json => {
            out.write_all(b"{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n")?;
            let mut first = true;
            for item in items {
                if !first {
                    out.write_all(b",\n")?;
                }
                first = false;
                let mut buf = Vec::new();
                let mut ser = serde_json::Serializer::with_formatter(
                    &mut buf,
                    serde_json::ser::PrettyFormatter::with_indent(b"    "),
                );
                serde::Serialize::serialize(&item, &mut ser).map_err(io::Error::other)?;
                for (n, line) in buf.split(|b| *b == b'\n').enumerate() {
                    if n > 0 {
                        out.write_all(b"\n")?;
                    }
                    out.write_all(b"        ")?;
                    out.write_all(line)?;
                }
            }
            out.write_all(b"\n    ],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n")
        }
        DumpFormat::Yaml => {
            out.write_all(b"apiVersion: v1\nitems:\n")?;
            for item in items {
                let mut text = String::new();
                yaml::item(&mut text, &item);
                out.write_all(text.as_bytes())?;
            }
            out.write_all(b"kind: List\nmetadata:\n  resourceVersion: \"\"\n")
        }
    }
}

/// Writes one object (the Deployment) as a YAML document.
pub fn to_yaml_document(value: &Value) -> String {
    let mut text = String::new();
    yaml::block(&mut text, value, 0);
    text
}

/// A small block-style YAML writer for JSON values, in kubectl's layout: maps as
/// `key: value`, lists as `- ` items at their parent's indentation, strings quoted only
/// when a plain scalar would read back as something else.
mod yaml {
    use serde_json::Value;
    use std::fmt::Write as _;

    /// Whether `s` may be written as a plain scalar (and read back as this string).
    fn plain(s: &str) -> bool {
        let Some(first) = s.chars().next() else {
            return false;
        };
        let reserved = matches!(
            s,
            "true"
                | "false"
                | "null"
                | "~"
                | "yes"
                | "no"
                | "on"
                | "off"
                | "True"
                | "False"
                | "Null"
                | "NULL"
                | "TRUE"
                | "FALSE"
                | "Yes"
                | "No"
                | "On"
                | "Off"
                | "y"
                | "n"
        );
        let numeric = s.parse::<f64>().is_ok()
            || first.is_ascii_digit()
            || (first == '.' && s.len() > 1)
            || s.starts_with("0x");
        !reserved
            && !numeric
            && !"-?:,[]{}#&*!|>'\"%@` ".contains(first)
            && !s.ends_with(' ')
            && !s.ends_with(':')
            && !s.contains(": ")
            && !s.contains(" #")
            && !s.contains(['\n', '\t', '"', '\\', '{', '}', '[', ']', ','])
    }

    fn scalar(out: &mut String, s: &str) {
        if plain(s) {
            out.push_str(s);
        } else {
            // A JSON string is a valid double-quoted YAML scalar.
            out.push_str(&Value::String(s.to_string()).to_string());
        }
    }

    fn inline(v: &Value) -> Option<String> {
        match v {
            Value::Null => Some("null".into()),
            Value::Bool(b) => Some(b.to_string()),
            Value::Number(n) => Some(n.to_string()),
            Value::String(s) => {
                let mut out = String::new();
                scalar(&mut out, s);
                Some(out)
            }
            Value::Array(a) if a.is_empty() => Some("[]".into()),
            Value::Object(m) if m.is_empty() => Some("{}".into()),
            _ => None,
        }
    }

    /// Writes `v` (a map or list) at `indent` spaces.
    pub(super) fn block(out: &mut String, v: &Value, indent: usize) {
        let pad = " ".repeat(indent);
        match v {
            Value::Object(m) => {
                for (k, v) in m {
                    out.push_str(&pad);
                    scalar(out, k);
                    out.push(':');
                    match inline(v) {
                        Some(s) => {
                            let _ = writeln!(out, " {s}");
                        }
                        None => {
                            out.push('\n');
                            // kubectl writes a list under a key at the key's indentation.
                            let child = if v.is_array() { indent } else { indent + 2 };
                            block(out, v, child);
                        }
                    }
                }
            }
            Value::Array(a) => {
                for v in a {
                    item_at(out, v, indent);
                }
            }
            other => {
                out.push_str(&pad);
                out.push_str(&inline(other).unwrap_or_default());
                out.push('\n');
            }
        }
    }

    /// Writes `v` as one `- ` item at `indent` spaces.
    fn item_at(out: &mut String, v: &Value, indent: usize) {
        let pad = " ".repeat(indent);
        if let Some(s) = inline(v) {
            let _ = writeln!(out, "{pad}- {s}");
            return;
        }
        let mut text = String::new();
        block(&mut text, v, indent + 2);
        // The first line's indentation becomes the dash.
        let body = text.get(indent + 2..).unwrap_or("");
        let _ = write!(out, "{pad}- {body}");
    }

    /// Writes a top-level list item (`items:` entries).
    pub(super) fn item(out: &mut String, v: &Value) {
        item_at(out, v, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_and_json_dumps_read_back_as_the_same_objects() {
        let spec = DumpSpec { nodes: 3, pods: 7 };
        let mut json_text = Vec::new();
        write_dump(&mut json_text, spec, DumpFormat::Json).expect("writes");
        let mut yaml_text = Vec::new();
        write_dump(&mut yaml_text, spec, DumpFormat::Yaml).expect("writes");
        let from_json: Value = serde_json::from_slice(&json_text).expect("valid JSON");
        let yaml_text = String::from_utf8(yaml_text).expect("utf-8");
        let from_yaml = topospread_k8s::load::parse_yaml_documents(&yaml_text, "dump.yaml")
            .expect("valid YAML");
        assert_eq!(std::slice::from_ref(&from_json), from_yaml.as_slice());
        let items = from_json["items"].as_array().expect("items");
        assert_eq!(items.len(), 10);
        assert_eq!(items[0], node(0));
        assert_eq!(items[9], pod(6, 3));
        let d = topospread_k8s::load::parse_yaml_documents(
            &to_yaml_document(&deployment(300)),
            "deployment.yaml",
        )
        .expect("valid YAML");
        assert_eq!([deployment(300)], d.as_slice());
    }
}
