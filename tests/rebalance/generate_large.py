#!/usr/bin/env python3
"""Writes a 5,000-node / 50,000-pod cluster dump for `topospread rebalance` timing:
500 ReplicaSets of 100 pods, each spread over three zones (DoNotSchedule) and over
nodes (ScheduleAnyway); five of them lost zone zc in an outage and their zc pods were
rescheduled into za and zb. Usage: generate_large.py OUT.yaml (the file is ~30 MB)."""
import json
import sys

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
NODES, WORKLOADS, REPLICAS, SKEWED = 5000, 500, 100, 5
zones = ["za", "zb", "zc"]
nodes_in = {z: [f"node-{z}-{i:04d}" for i in range(NODES // 3 + (1 if k < NODES % 3 else 0))]
            for k, z in enumerate(zones)}

out = open(sys.argv[1], "w")
for z, names in nodes_in.items():
    for n in names:
        out.write("---\n" + json.dumps({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": n, "labels": {ZONE: z, HOST: n}},
            "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"}}}) + "\n")
for w in range(WORKLOADS):
    app = f"app-{w:03d}"
    constraints = [
        {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
         "labelSelector": {"matchLabels": {"app": app}}},
        {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": "ScheduleAnyway",
         "labelSelector": {"matchLabels": {"app": app}}},
    ]
    for r in range(REPLICAS):
        z = zones[r % 3]
        if w < SKEWED and z == "zc":
            z = zones[r % 2]
        names = nodes_in[z]
        node = names[(w * 37 + r * 11) % len(names)]
        out.write("---\n" + json.dumps({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{app}-{r:03d}", "namespace": "default",
                         "labels": {"app": app},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                              "name": app, "uid": f"uid-{app}",
                                              "controller": True}]},
            "spec": {"nodeName": node, "topologySpreadConstraints": constraints,
                     "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": {"cpu": "100m"}}}]}}) + "\n")
out.close()
