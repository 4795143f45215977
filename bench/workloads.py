"""The workloads of bench/bench.py: which Nodes and Pods each one creates.

Shapes (``node_body`` / ``pod_body``) are the objects bench/loadgen.py posts; ``WORKLOADS`` says
which shapes a workload uses, in which namespaces, and how many init pods it places before the
measured pods. The scheduler_perf shapes reproduce the templates of kube-scheduler v1.36.3's
``test/integration/scheduler_perf`` (``templates/*.yaml``, ``util.go`` makeBaseNode, the
``createNodes``/``createPods`` ops of ``affinity/``, ``topology_spreading/`` and ``misc/``
``performance-config.yaml``); the docstrings name the file each one copies.

Two things differ from scheduler_perf, the same way for both schedulers:

* names are ``<generateName prefix><index>`` instead of a random suffix (nodes ``node-<i>``);
  the zone label that scheduler_perf's ``labelNodePrepareStrategy`` patches round-robin over the
  node list goes to node ``i`` as ``values[i % len(values)]`` at creation;
* init pods are created **already bound** (``spec.nodeName`` = ``node-<i mod N>``), before the
  scheduler under test starts, where scheduler_perf lets the scheduler place them and waits.
  They are identical pods on identical nodes, so this is the spread LeastAllocated gives them,
  both schedulers start from the same state, and the init pods are outside the measured window
  in both ``--create`` modes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
BASIC_ZONES = 3


def node_name(i: int) -> str:
    return f"node-{i}"


# ------------------------------------------------------------------------------------------------
# nodes


def _ready(now: str) -> list[dict[str, Any]]:
    return [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status", "lastHeartbeatTime": now, "lastTransitionTime": now}]


def node_status(shape: str = "basic") -> dict[str, Any]:
    """The status a node of ``shape`` gets (through the status subresource)."""
    res = {"cpu": "4", "memory": "16Gi" if shape == "basic" else "32Gi", "pods": "110"}
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return {"capacity": dict(res), "allocatable": dict(res), "phase": "Running", "conditions": _ready(now)}


def node_body(i: int, shape: str = "basic", zones: tuple[str, ...] = ()) -> dict[str, Any]:
    """Node ``i``.

    ``basic``: bench.py's SchedulingBasic node since its first version: 4 CPU, 16Gi, 110 pods,
    labels hostname, os, arch and zone ``zone-<i mod 3>``.
    ``perf``: scheduler_perf's node (``templates/node-default.yaml`` = util.go makeBaseNode):
    4 CPU, 32Gi, 110 pods, Ready, label ``kubernetes.io/hostname`` (node_util.go adds it), plus
    ``topology.kubernetes.io/zone: zones[i mod len(zones)]`` when ``zones`` is given.
    """
    name = node_name(i)
    if shape == "basic":
        labels = {HOSTNAME: name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", ZONE: f"zone-{i % BASIC_ZONES}"}
    elif shape == "perf":
        labels = {HOSTNAME: name}
        if zones:
            labels[ZONE] = zones[i % len(zones)]
    else:
        raise ValueError(f"unknown node shape {shape!r}")
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": {}, "status": node_status(shape)}


# ------------------------------------------------------------------------------------------------
# pods


def _container(image: str, cpu: str, memory: str = "500Mi") -> dict[str, Any]:
    res = {"cpu": cpu, "memory": memory}
    return {"name": "pause", "image": image, "ports": [{"containerPort": 80}], "resources": {"requests": dict(res), "limits": dict(res)}}


def _spread(when: str) -> list[dict[str, Any]]:
    return [{"maxSkew": 5, "topologyKey": ZONE, "whenUnsatisfiable": when, "labelSelector": {"matchLabels": {"color": "blue"}}}]


# shape -> (name prefix, labels, spec without containers, container)
POD_SHAPES: dict[str, tuple[str, dict[str, str], dict[str, Any], dict[str, Any]]] = {
    # bench.py's SchedulingBasic pod since its first version: 100m / 128Mi, pause:3.10
    "basic": ("pod-", {}, {}, _container("registry.k8s.io/pause:3.10", "100m", "128Mi")),
    # templates/pod-default.yaml
    "default": ("pod-", {}, {}, _container("registry.k8s.io/pause:3.10.2", "100m")),
    # templates/pod-with-pod-anti-affinity.yaml
    "anti-affinity": ("anti-affinity-pod-", {"color": "green"}, {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"color": "green"}}, "topologyKey": HOSTNAME, "namespaces": ["sched-1", "sched-0"]}]}}},
        _container("registry.k8s.io/pause:3.10.2", "100m")),
    # templates/pod-with-topology-spreading.yaml
    "topology-spreading": ("spreading-pod-", {"color": "blue"}, {"topologySpreadConstraints": _spread("DoNotSchedule")}, _container("registry.k8s.io/pause:3.10.2", "100m")),
    # templates/pod-with-preferred-topology-spreading.yaml
    "preferred-topology-spreading": ("spreading-pod-", {"color": "blue"}, {"topologySpreadConstraints": _spread("ScheduleAnyway")}, _container("registry.k8s.io/pause:3.10.2", "100m")),
    # templates/pod-with-node-affinity.yaml
    "node-affinity": ("node-affinity-", {}, {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["zone1", "zone2"]}]}]}}}},
        _container("registry.k8s.io/pause:3.10.2", "100m")),
    # templates/pod-low-priority.yaml
    "low-priority": ("pod-", {}, {"terminationGracePeriodSeconds": 0}, _container("registry.k8s.io/pause:3.10.1", "900m")),
    # templates/pod-high-priority.yaml
    "high-priority": ("pod-high-priority-", {}, {"priority": 10}, _container("registry.k8s.io/pause:3.10.1", "3000m")),
}


def pod_name(shape: str, i: int) -> str:
    return f"{POD_SHAPES[shape][0]}{i}"


def pod_body(i: int, namespace: str, scheduler_name: str = "default-scheduler", shape: str = "basic", node: str | None = None) -> dict[str, Any]:
    """Pod ``i`` of ``shape`` (see POD_SHAPES for the template each copies); ``node`` creates
    it bound (``spec.nodeName``)."""
    prefix, labels, spec, container = POD_SHAPES[shape]
    md: dict[str, Any] = {"name": f"{prefix}{i}", "namespace": namespace}
    if labels:
        md["labels"] = dict(labels)
    body_spec: dict[str, Any] = {"schedulerName": scheduler_name, **spec, "containers": [container]}
    if node is not None:
        body_spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": body_spec}


# ------------------------------------------------------------------------------------------------
# workloads


@dataclass(frozen=True)
class Init:
    """Init pods: ``shape`` in ``namespace``, ``per_node`` of them per node below 5,000 nodes and
    ``per_node_large`` from 5,000 nodes (scheduler_perf's 500Nodes / 5000Nodes rows)."""

    shape: str
    namespace: str
    per_node: float
    per_node_large: float

    def count(self, nodes: int) -> int:
        return round(nodes * (self.per_node_large if nodes >= 5000 else self.per_node))


@dataclass(frozen=True)
class Workload:
    name: str
    title: str  # scheduler_perf's test case (or the trace)
    node_shape: str = "perf"
    zones: tuple[str, ...] = ()
    init: tuple[Init, ...] = ()
    shape: str = "default"  # the measured pods
    namespace: str = "bench"  # the measured pods' namespace
    namespaces: tuple[str, ...] = ()  # every namespace to create
    create: str | None = None  # forces --create
    apiserver_args: tuple[str, ...] = ()
    sizes: str = ""  # scheduler_perf's sizes, for the README and --help
    one_per_node: bool = False  # at most one measured (and init) pod of this shape per node

    def init_count(self, nodes: int) -> int:
        return sum(i.count(nodes) for i in self.init)

    def max_measured(self, nodes: int) -> int | None:
        """How many measured pods can be bound at most (None: no such limit)."""
        if not self.one_per_node:
            return None
        same = sum(i.count(nodes) for i in self.init if i.shape == self.shape)
        return nodes - same


WORKLOADS: dict[str, Workload] = {w.name: w for w in (
    Workload("basic", "SchedulingBasic (bench.py's shape: 16Gi nodes, 100m/128Mi pods, no init pods)", node_shape="basic", shape="basic", namespace="bench", namespaces=("bench",),
             sizes="bench.py's quick/medium/large: 500x1000, 1000x3000, 5000x10000"),
    Workload("openb", "openb production GPU trace (bench/openb.py)", node_shape="openb", shape="openb", namespace="default", create="before",
             sizes="the trace: 1,523 nodes, 8,152 pods"),
    Workload("anti-affinity", "SchedulingPodAntiAffinity", zones=(), init=(Init("anti-affinity", "sched-0", 0.2, 0.2),), shape="anti-affinity", namespace="sched-1",
             namespaces=("sched-0", "sched-1"), one_per_node=True,
             sizes="500Nodes: 100 init + 400 measured; 5000Nodes: 1,000 + 1,000; 5000Nodes_2000Pods: 1,000 + 2,000 (init = N/5; one pod per node: init + measured ≤ N)"),
    Workload("topology-spreading", "TopologySpreading", zones=("moon-1", "moon-2", "moon-3"), init=(Init("default", "namespace-1", 2, 1),), shape="topology-spreading",
             namespace="namespace-2", namespaces=("namespace-1", "namespace-2"),
             sizes="500Nodes: 1,000 init + 1,000 measured; 5000Nodes: 5,000 + 2,000; 5000Nodes_5000Pods: 5,000 + 5,000 (init = 2N below 5,000 nodes, N from 5,000)"),
    Workload("preferred-topology-spreading", "PreferredTopologySpreading", zones=("moon-1", "moon-2", "moon-3"), init=(Init("default", "namespace-1", 2, 1),),
             shape="preferred-topology-spreading", namespace="namespace-2", namespaces=("namespace-1", "namespace-2"),
             sizes="as TopologySpreading"),
    Workload("node-affinity", "SchedulingNodeAffinity", zones=("zone1",), init=(Init("node-affinity", "namespace-1", 1, 1),), shape="node-affinity",
             namespace="namespace-2", namespaces=("namespace-1", "namespace-2"),
             sizes="500Nodes: 500 init + 1,000 measured; 5000Nodes: 5,000 + 1,000; 5000Nodes_10000Pods: 5,000 + 10,000 (init = N)"),
    Workload("preemption", "PreemptionBasic", init=(Init("low-priority", "namespace-1", 4, 4),), shape="high-priority", namespace="namespace-2",
             namespaces=("namespace-1", "namespace-2"), one_per_node=True,
             apiserver_args=("--disable-admission-plugins=ServiceAccount,TaintNodesByCondition,Priority",),
             sizes="1000Nodes: 4,000 init + 1,000 measured (5Nodes: 20 + 5; its 5000Nodes row, 20,000 + 5,000, is commented out upstream); init = 4N, measured ≤ N"),
)}

ALIASES = {w.title.split(" ")[0].lower(): w.name for w in WORKLOADS.values()} | {"schedulingbasic": "basic", "pod-anti-affinity": "anti-affinity", "preemptionbasic": "preemption"}


def workload(name: str) -> Workload:
    key = name.strip()
    w = WORKLOADS.get(key) or WORKLOADS.get(ALIASES.get(key.lower(), ""))
    if w is None:
        raise KeyError(f"unknown workload {name!r}: {', '.join(WORKLOADS)}")
    return w


def init_pods(w: Workload, nodes: int) -> list[tuple[str, str, int, int]]:
    """(shape, namespace, count, first index) per init group; pod ``first + k`` goes to node
    ``(first + k) mod nodes``."""
    out = []
    first = 0
    for g in w.init:
        c = g.count(nodes)
        out.append((g.shape, g.namespace, c, first))
        first += c
    return out
