#!/usr/bin/env python3
"""Writes the rebalance cluster shapes twice: as manifest files for `topospread
rebalance -f` (tests/rebalance/*.yaml) and as scenario cases
(tests/conformance/rebalance/*.yaml). Run from the repository root."""
import yaml

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def node(name, zone, cpu="8"):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {ZONE: zone, HOST: name}},
            "status": {"allocatable": {"cpu": cpu, "memory": "32Gi", "pods": "110"}}}


def spread(key, when="DoNotSchedule", app="web", skew=1):
    return {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": when,
            "labelSelector": {"matchLabels": {"app": app}}}


def pod(name, node_name, app="web", rs="web", cpu="100m", constraints=None):
    spec = {"nodeName": node_name,
            "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": cpu}}}]}
    if constraints:
        spec["topologySpreadConstraints"] = constraints
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"app": app},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                              "name": rs, "uid": f"uid-{rs}",
                                              "controller": True}]},
            "spec": spec}


def web_pods(layout, constraints, start=0, prefix="web"):
    out, k = [], start
    for node_name, n in layout:
        for _ in range(n):
            out.append(pod(f"{prefix}-{k}", node_name, constraints=constraints))
            k += 1
    return out


def pdb(allowed):
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "web-pdb", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "minAvailable": 3},
            "status": {"disruptionsAllowed": allowed, "currentHealthy": 3,
                       "desiredHealthy": 3, "expectedPods": 3}}


zone_only = [spread(ZONE)]
shapes = {}

# kubernetes#115911: a Deployment scaled from 10 to 3 over three zones is left 2-1-0.
shapes["scale-down-2-1-0"] = dict(
    source="kubernetes#115911 (10 -> 3 replicas leaves 2-1-0)",
    nodes=[node("a1", "za"), node("b1", "zb"), node("c1", "zc")],
    pods=web_pods([("a1", 2), ("b1", 1)], zone_only),
    expect={"moves": 1, "exit": 0,
            "after": [{"constraint": f"{ZONE} maxSkew=1 DoNotSchedule app=web", "skew": 0}]})

# Zone and hostname constraints together: the descheduler's loop (#1219, #1918).
zh = [spread(ZONE), spread(HOST)]
shapes["zone-vs-hostname"] = dict(
    source="descheduler #1219/#1918: zone and hostname constraints on one workload",
    nodes=[node("a1", "za"), node("a2", "za"), node("b1", "zb"), node("b2", "zb"),
           node("c1", "zc")],
    pods=web_pods([("a1", 3), ("a2", 2), ("b1", 2), ("b2", 1)], zh),
    expect={"exit": 0,
            "after": [{"constraint": f"{ZONE} maxSkew=1 DoNotSchedule app=web", "skew": 1},
                      {"constraint": f"{HOST} maxSkew=1 DoNotSchedule app=web", "skew": 1}]})

# After a zone outage: zone c's nodes came back empty; its pods were rescheduled in a and b.
outage = [spread(ZONE), spread(HOST, "ScheduleAnyway")]
shapes["zone-outage"] = dict(
    source="after a zone outage: the zone's nodes return empty",
    nodes=[node("a1", "za"), node("a2", "za"), node("b1", "zb"), node("b2", "zb"),
           node("c1", "zc"), node("c2", "zc")],
    pods=web_pods([("a1", 2), ("a2", 2), ("b1", 2), ("b2", 3)], outage),
    expect={"moves": 3, "exit": 0,
            "after": [{"constraint": f"{ZONE} maxSkew=1 DoNotSchedule app=web", "skew": 0,
                       "counts": {"za": 3, "zb": 3, "zc": 3}}]})

# A full zone: its only node is full of batch pods; one must move to make room.
batch = [pod(f"batch-{i}", "c1", app="batch", rs="batch", cpu="500m") for i in range(2)]
shapes["full-zone"] = dict(
    source="the emptiest zone's only node is full: make room first",
    nodes=[node("a1", "za", cpu="1"), node("b1", "zb", cpu="1"), node("c1", "zc", cpu="1")],
    pods=web_pods([("a1", 4), ("b1", 1)], zone_only) + batch,
    expect={"moves": 3, "exit": 0,
            "after": [{"constraint": f"{ZONE} maxSkew=1 DoNotSchedule app=web", "skew": 1,
                       "counts": {"za": 2, "zb": 2, "zc": 1}}]})

# A PodDisruptionBudget that allows no disruption forbids the only repair.
shapes["pdb-forbids"] = dict(
    source="a PodDisruptionBudget with disruptionsAllowed 0",
    nodes=[node("a1", "za"), node("b1", "zb"), node("c1", "zc")],
    objects=[pdb(0)],
    pods=web_pods([("a1", 2), ("b1", 1)], zone_only),
    expect={"moves": 0, "exit": 1, "unresolved": ["PodDisruptionBudget default/web-pdb"],
            "after": [{"constraint": f"{ZONE} maxSkew=1 DoNotSchedule app=web", "skew": 2}]})

# One constraint: the plan takes exactly the known minimum (excess over 2-2-2-2-2).
shapes["minimal-one-constraint"] = dict(
    source="minimality: one constraint, 9-0-0-0-1 over five zones",
    nodes=[node(f"n{i}", f"z{i}") for i in range(5)],
    pods=web_pods([("n0", 9), ("n4", 1)], zone_only),
    expect={"moves": 7, "exit": 0,
            "after": [{"constraint": f"{ZONE} maxSkew=1 DoNotSchedule app=web", "skew": 0}]})

# Scale-down planning: 10 replicas 4-3-3 to 3 keeps one per zone.
shapes["scale-plan-10-to-3"] = dict(
    source="kubernetes#115911: pick the pods a 10 -> 3 scale-down removes",
    nodes=[node("a1", "za"), node("b1", "zb"), node("c1", "zc")],
    pods=web_pods([("a1", 4), ("b1", 3), ("c1", 3)], zone_only),
    scale={"controller": "web", "replicas": 3},
    expect={"exit": 0,
            "after": [{"constraint": f"{ZONE} maxSkew=1 DoNotSchedule app=web", "skew": 0,
                       "counts": {"za": 1, "zb": 1, "zc": 1}}]})


# What the descheduler replay does on each shape (measured; see the README table).
DESCHEDULER = {
    "scale-down-2-1-0": {"moves": 1, "exit": 0},
    "zone-vs-hostname": {"moves": 6, "exit": 0},
    "zone-outage": {"moves": 3, "exit": 0},
    # It evicts two pods that fit b1, whose replacements the spread then keeps off it:
    # they stay Pending; the third pod fits no node of the below-average zone c.
    "full-zone": {"moves": 2, "exit": 1},
    "pdb-forbids": {"moves": 0, "exit": 1},
    "minimal-one-constraint": {"moves": 7, "rounds": 2, "exit": 0},
}


class NoAliases(yaml.SafeDumper):
    """Writes repeated objects out in full: cases read alone, without anchors."""

    def ignore_aliases(self, data):
        return True


def dump_docs(docs):
    return "---\n".join(yaml.dump(d, Dumper=NoAliases, sort_keys=False) for d in docs)


cases = []
for name, s in shapes.items():
    docs = s["nodes"] + s.get("objects", []) + s["pods"]
    with open(f"tests/rebalance/{name}.yaml", "w") as f:
        f.write(f"# {s['source']}\n# generated by tests/rebalance/generate.py\n")
        f.write(dump_docs(docs))
    case = {"name": name, "source": s["source"], "nodes": s["nodes"]}
    if s.get("objects"):
        case["objects"] = s["objects"]
    case["pods"] = s["pods"]
    case["rebalance"] = {"scale": s["scale"]} if "scale" in s else {}
    case["expect"] = s["expect"]
    cases.append(case)
    if "scale" not in s:
        d = dict(case)
        d["name"] = f"{name} (descheduler strategy)"
        d["rebalance"] = {"strategy": "descheduler"}
        d["expect"] = DESCHEDULER[name]
        cases.append(d)

with open("tests/conformance/rebalance/shapes.yaml", "w") as f:
    f.write("# Rebalance cases (FORMAT.md, rebalance kind); generated by tests/rebalance/generate.py\n")
    yaml.dump({"cases": cases}, f, Dumper=NoAliases, sort_keys=False, width=100)
