#!/usr/bin/env python3
"""Writes tests/conformance/rebalance/descheduler-TestTopologySpreadConstraint.yaml: the
38 cases of the descheduler's TestTopologySpreadConstraint as rebalance cases for the
descheduler strategy, one `Balance` call each (maxRounds 1), expecting the evictions
its test expects (count, and the pods where the test names them).

Source: kubernetes-sigs/descheduler, commit 7d2b28bf2b6a12810317936d909af0270ff38fa3,
pkg/framework/plugins/removepodsviolatingtopologyspreadconstraint/
topologyspreadconstraint_test.go, TestTopologySpreadConstraint. The test's helpers are
mirrored: test.BuildTestNode (cpu in millicores, memory in bytes, pods), createTestPods
(pods `pod-N` in ns1, 100m cpu, a ReplicaSet owner reference without `controller`).
Its framework handle lists each node's pods sorted by name, as the replay does.
Run from the repository root."""
import yaml

COMMIT = "7d2b28bf2b6a12810317936d909af0270ff38fa3"
FILE = ("kubernetes-sigs/descheduler pkg/framework/plugins/"
        "removepodsviolatingtopologyspreadconstraint/topologyspreadconstraint_test.go")
HASH = "pod-template-hash"
ARCH = "kubernetes.io/arch"


def node(name, cpu=2000, mem=3000, pods=10, labels=None, taints=None, replace=False):
    n = {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": name, "labels": dict(labels or {})},
         "status": {"allocatable": {"cpu": f"{cpu}m", "memory": str(mem), "pods": str(pods)},
                    "capacity": {"cpu": f"{cpu}m", "memory": str(mem), "pods": str(pods)}}}
    if taints:
        n["spec"] = {"taints": taints}
    return n


def zn(name, zone, **kw):
    return node(name, labels={"zone": zone}, **kw)


def tsc(skew=1, key="zone", when="DoNotSchedule", sel=None, **extra):
    c = {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": when,
         "labelSelector": {"matchLabels": sel or {"foo": "bar"}}}
    c.update(extra)
    return [c]


def group(count, node_name, labels=None, constraints=None, node_selector=None,
          affinity=None, no_owners=False, tolerations=None, deleting=False):
    return dict(count=count, node=node_name, labels=labels if labels is not None else {"foo": "bar"},
                constraints=constraints, node_selector=node_selector, affinity=affinity,
                no_owners=no_owners, tolerations=tolerations, deleting=deleting)


def pods(groups):
    out, k = [], 0
    for g in groups:
        for _ in range(g["count"]):
            spec = {"nodeName": g["node"],
                    "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                    "resources": {"requests": {"cpu": "100m", "memory": "0"}}}]}
            if g["constraints"]:
                spec["topologySpreadConstraints"] = g["constraints"]
            if g["node_selector"]:
                spec["nodeSelector"] = g["node_selector"]
            if g["affinity"]:
                spec["affinity"] = g["affinity"]
            if g["tolerations"]:
                spec["tolerations"] = g["tolerations"]
            meta = {"name": f"pod-{k}", "namespace": "ns1", "labels": dict(g["labels"])}
            if not g["no_owners"]:
                meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "ReplicaSet",
                                            "name": "replicaset-1", "uid": "uid-replicaset-1"}]
            if g["deleting"]:
                meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
            out.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})
            k += 1
    return out


def required(*exprs):
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": list(exprs)}]}}}


def label_selector(key, values, op):
    return {"matchExpressions": [{"key": key, "operator": op, "values": values}]}


CASES = []


def case(name, nodes, pod_groups, evicted, names=None, node_fit=False, **args):
    CASES.append(dict(name=name, nodes=nodes, pods=pods(pod_groups), evicted=evicted,
                      names=names, node_fit=node_fit, args=args))


two = lambda **kw: [zn("n1", "zoneA", **kw), zn("n2", "zoneB")]
BOTH = ["DoNotSchedule", "ScheduleAnyway"]

case("2 domains, sizes [2,1], maxSkew=1, move 0 pods", two(),
     [group(1, "n1", constraints=tsc()), group(1, "n1"), group(1, "n2")], 0)
case("2 domains, sizes [3,1], maxSkew=1, move 1 pod to achieve [2,2]", two(),
     [group(1, "n1", constraints=tsc()), group(2, "n1"), group(1, "n2")], 1)
case("2 domains, sizes [3,1], maxSkew=1, move 1 pod to achieve [2,2] (both constraints)", two(),
     [group(1, "n1", constraints=tsc(when="ScheduleAnyway")), group(2, "n1"), group(1, "n2")], 1,
     constraints=BOTH)
case("2 domains, sizes [3,1], maxSkew=1, move 1 pod to achieve [2,2] (soft constraints)", two(),
     [group(1, "n1", constraints=tsc(when="ScheduleAnyway")), group(2, "n1"), group(1, "n2")], 1,
     constraints=BOTH)
case("2 domains, sizes [3,1], maxSkew=1, no pods eligible, move 0 pods", two(),
     [group(1, "n1", constraints=tsc(), no_owners=True), group(2, "n1", no_owners=True),
      group(1, "n2", no_owners=True)], 0)
case("2 domains, sizes [3,1], maxSkew=1, move 1 pod to achieve [2,2], exclude kube-system namespace",
     two(), [group(1, "n1", constraints=tsc()), group(2, "n1"), group(1, "n2")], 1,
     node_fit=True, excludeNamespaces=["kube-system"])
case("2 domains, sizes [5,2], maxSkew=1, move 1 pod to achieve [4,3]", two(),
     [group(1, "n1", constraints=tsc()), group(4, "n1"), group(2, "n2")], 1)
case("2 domains, sizes [4,0], maxSkew=1, move 2 pods to achieve [2,2]", two(),
     [group(1, "n1", constraints=tsc()), group(3, "n1")], 2)
case("2 domains, sizes [4,0], maxSkew=1, only move 1 pod since pods with nodeSelector and nodeAffinity aren't evicted",
     two(),
     [group(1, "n1", constraints=tsc(), node_selector={"zone": "zoneA"}),
      group(1, "n1", constraints=tsc(), node_selector={"zone": "zoneA"}),
      group(1, "n1", constraints=tsc(),
            affinity=required({"key": "foo", "values": ["bar"], "operator": "In"})),
      group(1, "n1", constraints=tsc())], 1, node_fit=True)


def os_nodes(extra=False):
    out = [node(f"n{i + 1}", labels={"node": n, "os": "linux"})
           for i, n in enumerate(["linNodeA", "linNodeB", "linNodeC"])]
    win = ["winNodeA", "winNodeB", "winNodeC"] + (["winNodeD"] if extra else [])
    out += [node(f"n{i + 4}", labels={"node": n, "os": "windows"}) for i, n in enumerate(win)]
    return out


node_tsc = tsc(key="node")
win = {"os": "windows"}
case("6 domains, sizes [0,0,0,3,3,2], maxSkew=1, No pod is evicted since topology is balanced",
     os_nodes(), [group(3, "n4", constraints=node_tsc, node_selector=win),
                  group(3, "n5", constraints=node_tsc, node_selector=win),
                  group(2, "n6", constraints=node_tsc, node_selector=win)], 0)
case("7 domains, sizes [0,0,0,3,3,2], maxSkew=1, two pods are evicted and moved to new node added",
     os_nodes(extra=True), [group(3, "n4", constraints=node_tsc, node_selector=win),
                            group(3, "n5", constraints=node_tsc, node_selector=win),
                            group(2, "n6", constraints=node_tsc, node_selector=win)], 2)
case("6 domains, sizes [0,0,0,4,3,1], maxSkew=1, 1 pod is evicted from node 4",
     os_nodes(), [group(4, "n4", constraints=node_tsc, node_selector=win),
                  group(3, "n5", constraints=node_tsc, node_selector=win),
                  group(1, "n6", constraints=node_tsc, node_selector=win)], 1)
case("6 domains, sizes [0,0,0,4,3,1], maxSkew=1, 0 pod is evicted as pods of node:winNodeA can only be scheduled on this node and nodeFit is true ",
     os_nodes(), [group(4, "n4", constraints=node_tsc, node_selector={"node": "winNodeA"}),
                  group(3, "n5", constraints=node_tsc, node_selector=win),
                  group(1, "n6", constraints=node_tsc, node_selector=win)], 0, node_fit=True)
case("2 domains, sizes [4,0], maxSkew=1, move 2 pods since selector matches multiple nodes",
     [node("n1", labels={"zone": "zoneA", "region": "boston"}),
      node("n2", labels={"zone": "zoneB", "region": "boston"})],
     [group(1, "n1", constraints=tsc(), node_selector={"region": "boston"})]
     + [group(1, "n1", node_selector={"region": "boston"}) for _ in range(3)], 2)
case("3 domains, sizes [0, 1, 100], maxSkew=1, move 66 pods to get [34, 33, 34]",
     [zn("n1", "zoneA"), zn("n2", "zoneB"), zn("n3", "zoneC")],
     [group(1, "n2", constraints=tsc()), group(100, "n3")], 66)
case("4 domains, sizes [0, 1, 3, 5], should move 3 to get [2, 2, 3, 2]",
     [zn("n1", "zoneA"), zn("n2", "zoneB"), zn("n3", "zoneC"), zn("n4", "zoneD")],
     [group(1, "n2", constraints=tsc()), group(3, "n3"), group(5, "n4")], 3)
case("2 domains size [2 6], maxSkew=2, should move 1 to get [3 5]", two(),
     [group(1, "n1", constraints=tsc(skew=2)), group(1, "n1"), group(6, "n2")], 1)
gpu = [{"key": "hardware", "value": "gpu", "effect": "NoSchedule"}]
case("2 domains size [2 6], maxSkew=2, can't move any because of node taints",
     [zn("n1", "zoneA", taints=gpu), zn("n2", "zoneB")],
     [group(1, "n1", constraints=tsc(skew=2)), group(1, "n1"), group(6, "n2")], 0, node_fit=True)
case("2 domains size [2 6], maxSkew=2, can't move any because node1 does not have enough CPU",
     [zn("n1", "zoneA", cpu=200), zn("n2", "zoneB")],
     [group(1, "n1", constraints=tsc(skew=2)), group(1, "n1"), group(6, "n2")], 0, node_fit=True)
ZONE, HOST = "topology.kubernetes.io/zone", "kubernetes.io/hostname"
whoami = tsc(key=ZONE, when="ScheduleAnyway", sel={"app": "whoami"}) + tsc(
    key=HOST, sel={"app": "whoami"})
case("Multiple constraints (6 nodes/2 zones, 4 pods)",
     [node(f"n{i}", labels={ZONE: "zoneA" if i <= 3 else "zoneB", HOST: f"n{i}"})
      for i in range(1, 7)],
     [group(1, f"n{i}", labels={"app": "whoami"}, constraints=whoami) for i in range(1, 5)], 1,
     constraints=BOTH)
three = lambda: [zn("n1", "zoneA"), zn("n2", "zoneB"), zn("n3", "zoneC")]
case("3 domains size [8 7 0], maxSkew=1, should move 5 to get [5 5 5]", three(),
     [group(8, "n1", constraints=tsc()), group(7, "n2", constraints=tsc())], 5,
     names=["pod-5", "pod-6", "pod-7", "pod-8", "pod-9"])
case("3 domains size [5 5 5], maxSkew=1, should move 0 to retain [5 5 5]", three(),
     [group(5, f"n{i}", constraints=tsc()) for i in (1, 2, 3)], 0)
taint_test = [{"key": "taint-test", "value": "test", "effect": "NoSchedule"}]
tainted_b = lambda effect="NoSchedule": [
    zn("n1", "zoneA"),
    zn("n2", "zoneB", taints=[{"key": "taint-test", "value": "test", "effect": effect}])]
case("2 domains, sizes [2,0], maxSkew=1, move 1 pod since pod tolerates the node with taint",
     tainted_b(),
     [group(1, "n1", constraints=tsc(), tolerations=[
         {"key": "taint-test", "value": "test", "operator": "Equal", "effect": "NoSchedule"}]),
      group(1, "n1", node_selector={"zone": "zoneA"})], 1, names=["pod-0"])
case("2 domains, sizes [2,0], maxSkew=1, move 0 pods since pod does not tolerate the tainted node",
     tainted_b(),
     [group(1, "n1", constraints=tsc()), group(1, "n1", node_selector={"zone": "zoneA"})], 0)
case("2 domains, sizes [2,0], maxSkew=1, move 0 pods since pod does not tolerate the tainted node, and NodeFit is enabled",
     tainted_b(),
     [group(1, "n1", constraints=tsc()), group(1, "n1", node_selector={"zone": "zoneA"})], 0,
     node_fit=True)
case("2 domains, sizes [2,0], maxSkew=1, move 1 pod for node with PreferNoSchedule Taint",
     tainted_b("PreferNoSchedule"),
     [group(1, "n1", constraints=tsc()), group(1, "n1", node_selector={"zone": "zoneA"})], 1,
     names=["pod-0"])
case("2 domains, sizes [2,0], maxSkew=1, move 0 pod for node with unmatched label filtering",
     two(), [group(1, "n1", constraints=tsc()), group(1, "n1")], 0,
     selector=label_selector("foo", ["baz"], "In"))
case("2 domains, sizes [2,0], maxSkew=1, move 1 pod for node with matched label filtering",
     two(), [group(1, "n1", constraints=tsc()), group(1, "n1")], 1, names=["pod-1"],
     selector=label_selector("foo", ["bar"], "In"))
case("2 domains, sizes [2,0], maxSkew=1, move 1 pod for node with matched label filtering (NotIn op)",
     two(), [group(1, "n1", constraints=tsc()), group(1, "n1")], 1, names=["pod-1"],
     selector=label_selector("foo", ["baz"], "NotIn"))
hash_tsc = tsc(matchLabelKeys=[HASH])
case("2 domains, sizes [2,0], maxSkew=1, move 1 pods given matchLabelKeys on same replicaset",
     two(), [group(1, "n1", labels={"foo": "bar", HASH: "foo"}, constraints=hash_tsc),
             group(1, "n1", labels={"foo": "bar", HASH: "foo"}, constraints=hash_tsc)], 1,
     names=["pod-1"], selector=label_selector("foo", ["baz"], "NotIn"))
case("2 domains, sizes [2,0], maxSkew=1, move 0 pods given matchLabelKeys on two different replicasets",
     two(), [group(1, "n1", labels={"foo": "bar", HASH: "foo"}, constraints=hash_tsc),
             group(1, "n1", labels={"foo": "bar", HASH: "bar"}, constraints=hash_tsc)], 0,
     selector=label_selector("foo", ["baz"], "NotIn"))
case("2 domains, sizes [4,2], maxSkew=1, 2 pods in termination; nothing should be moved",
     two(), [group(2, "n1", constraints=tsc()), group(2, "n1", constraints=tsc(), deleting=True),
             group(2, "n2", constraints=tsc())], 0,
     selector=label_selector("foo", ["bar"], "In"))
small_a = lambda: [zn("n1", "zoneA", cpu=250, mem=2000, pods=9),
                   zn("n2", "zoneB", cpu=1000, mem=2000, pods=9),
                   zn("n3", "zoneC", cpu=1000, mem=2000, pods=9)]
case("3 domains, sizes [2,3,4], maxSkew=1, NodeFit is enabled, and not enough cpu on zoneA; nothing should be moved",
     small_a(), [group(2, "n1", constraints=tsc()), group(3, "n2", constraints=tsc()),
                 group(4, "n3", constraints=tsc())], 0, node_fit=True)
case("3 domains, sizes [2,3,4], maxSkew=1, args.NodeFit is false, and not enough cpu on zoneA; 1 should be moved to force scale-up",
     small_a(), [group(2, "n1", constraints=tsc()), group(3, "n2", constraints=tsc()),
                 group(4, "n3", constraints=tsc())], 1, node_fit=True,
     topologyBalanceNodeFit=False)
case("3 domains, sizes [[1,0], [1,1], [2,1]], maxSkew=1, NodeFit is enabled, and not enough cpu on ZoneA; nothing should be moved",
     [zn("A1", "zoneA", cpu=150, mem=2000, pods=9), zn("B1", "zoneB", cpu=1000, mem=2000, pods=9),
      zn("C1", "zoneC", cpu=1000, mem=2000, pods=9), zn("A2", "zoneA", cpu=50, mem=2000, pods=9),
      zn("B2", "zoneB", cpu=1000, mem=2000, pods=9), zn("C2", "zoneC", cpu=1000, mem=2000, pods=9)],
     [group(1, "A1", constraints=tsc()), group(1, "B1", constraints=tsc()),
      group(1, "B2", constraints=tsc()), group(2, "C1", constraints=tsc()),
      group(1, "C2", constraints=tsc())], 0, node_fit=True)
case("2 domains, sizes [[1,4], [2,1]], maxSkew=1, NodeFit is enabled; should move 1",
     [zn(n, "zone" + n[0], cpu=1000, mem=2000, pods=9) for n in ("A1", "A2", "B1", "B2")],
     [group(1, "A1", constraints=tsc()), group(4, "A2", constraints=tsc()),
      group(2, "B1", constraints=tsc()), group(1, "B2", constraints=tsc())], 1,
     names=["pod-4"], node_fit=True)
svc = {"app.kubernetes.io/name": "service"}
svc_tsc = tsc(key="kubernetes.io/hostname", sel=svc)
app_service = required({"key": "app_service", "operator": "Exists"})
case("2 domains, sizes [3, 1], maxSkew=1, Tainted nodes; nothing should be moved",
     [node("controlplane1", labels={"zone": "zoneA", "kubernetes.io/hostname": "cp-1"},
           taints=[{"effect": "NoSchedule", "key": "node-role.kubernetes.io/controlplane",
                    "value": "true"},
                   {"effect": "NoSchedule", "key": "node-role.kubernetes.io/etcd",
                    "value": "true"}]),
      node("infraservices1", labels={"zone": "zoneA", "infra_service": "true",
                                     "kubernetes.io/hostname": "infra-1"},
           taints=[{"effect": "NoSchedule", "key": "infra_service"}]),
      node("app1", labels={"zone": "zoneA", "app_service": "true",
                           "kubernetes.io/hostname": "app-1"}),
      node("app2", labels={"zone": "zoneB", "app_service": "true",
                           "kubernetes.io/hostname": "app-2"})],
     [group(2, "app1", labels=svc, constraints=svc_tsc, affinity=app_service),
      group(2, "app2", labels=svc, constraints=svc_tsc, affinity=app_service)], 0, node_fit=True)
arm = lambda n, z: node(n, cpu=1000, mem=2000, pods=9, labels={"zone": z, ARCH: "arm64"})
ignore_tsc = tsc(nodeAffinityPolicy="Ignore")
case("3 domains, sizes [2, 1, 0] with selectors, maxSkew=1, nodeTaintsPolicy=Ignore, should move 1 for [1, 1, 1]",
     [arm("A1", "zoneA"), arm("B1", "zoneB"), arm("C1", "zoneC")],
     [group(1, "A1", constraints=ignore_tsc, node_selector={ARCH: "arm64"}),
      group(1, "A1", constraints=ignore_tsc, node_selector={"zone": "zoneA", ARCH: "arm64"}),
      group(1, "B1", constraints=ignore_tsc, node_selector={ARCH: "arm64"})], 1,
     names=["pod-0"])

assert len(CASES) == 38, len(CASES)

out = []
for c in CASES:
    spec = {"strategy": "descheduler", "maxRounds": 1}
    args = dict(c["args"])
    if "constraints" in args:
        spec["constraints"] = args.pop("constraints")
    if "selector" in args:
        spec["selector"] = args.pop("selector")
    if "topologyBalanceNodeFit" in args:
        spec["topologyBalanceNodeFit"] = args.pop("topologyBalanceNodeFit")
    if "excludeNamespaces" in args:
        spec["excludeNamespaces"] = args.pop("excludeNamespaces")
    assert not args, args
    if c["node_fit"]:
        spec["nodeFit"] = True
    expect = {"moves": c["evicted"]}
    if c["names"]:
        expect["evicted"] = c["names"]
    out.append({
        "name": c["name"],
        "source": f"{FILE} @ {COMMIT}, TestTopologySpreadConstraint",
        "objects": [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns1"}}],
        "nodes": c["nodes"],
        "pods": c["pods"],
        "rebalance": spec,
        "expect": expect,
    })

with open("tests/conformance/rebalance/descheduler-TestTopologySpreadConstraint.yaml", "w") as f:
    f.write("# Rebalance cases (FORMAT.md, rebalance kind); generated by "
            "tests/rebalance/generate_descheduler.py\n")
    yaml.safe_dump({"cases": out}, f, sort_keys=False, width=100)
