"""PodTopologySpread: table-driven tests transcribed from kube-scheduler's
``pkg/scheduler/framework/plugins/podtopologyspread/{filtering,scoring,plugin}_test.go``
(each case id is ``GoTestFunction/go case name``), plus the args defaults and
``validation_pluginargs_test.go`` cases.

Go's builders are mirrored by small local helpers: ``pod(name)`` is ``st.MakePod().Name(name)``
(the SDK's PodWrapper), ``node(name)`` is ``st.MakeNode().Name(name)`` (no automatic hostname
label, unlike the kit's NodeWrapper), ``sel()`` is ``st.MakeLabelSelector()``. The Go feature-gate
fields of the test tables (``enableNodeInclusionPolicy``, ``enableMatchLabelKeys``) default to
false there, exactly as here.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest

from kubesched.runtime.plugins.podtopologyspread import (
    PRE_FILTER_STATE_KEY,
    PRE_SCORE_STATE_KEY,
    PodTopologySpread,
    PodTopologySpreadArgs,
)
from kubesched.runtime.plugins.podtopologyspread.common import get_pod_services
from kubesched.sdk import (
    ActionType,
    ArgsError,
    ClusterEvent,
    Code,
    CycleState,
    LabelSelector,
    Node,
    NodeInfo,
    NodeScore,
    Pod,
    QueueingHint,
    Status,
)
from kubesched.testing import build_plugin, make_handle, make_pod

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
DNS = "DoNotSchedule"
SA = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
MAX_INT32 = 2**31 - 1
REASON = "node(s) didn't match pod topology spread constraints"
REASON_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"
TAINTS = [{"key": "node.kubernetes.io/unschedulable", "value": "", "effect": "NoSchedule"}]


# --- builders (Go's st.Make*) ------------------------------------------------------------------------


class Sel:
    """st.MakeLabelSelector()."""

    def __init__(self) -> None:
        self.d: dict[str, Any] = {}

    def label(self, k: str, v: str) -> Sel:
        self.d.setdefault("matchLabels", {})[k] = v
        return self

    def exists(self, k: str) -> Sel:
        self.d.setdefault("matchExpressions", []).append({"key": k, "operator": "Exists"})
        return self

    def not_exist(self, k: str) -> Sel:
        self.d.setdefault("matchExpressions", []).append({"key": k, "operator": "DoesNotExist"})
        return self

    def in_(self, k: str, vals: list[str]) -> Sel:
        self.d.setdefault("matchExpressions", []).append(
            {"key": k, "operator": "In", "values": list(vals)}
        )
        return self

    def not_in(self, k: str, vals: list[str]) -> Sel:
        self.d.setdefault("matchExpressions", []).append(
            {"key": k, "operator": "NotIn", "values": list(vals)}
        )
        return self

    def obj(self) -> dict[str, Any]:
        return copy.deepcopy(self.d)


def sel() -> Sel:
    return Sel()


FOO = sel().exists("foo").obj()
BAR = sel().exists("bar").obj()


def pod(name: str):
    """st.MakePod().Name(name)."""
    return make_pod().name(name)


class NodeB:
    """st.MakeNode(): no label unless asked."""

    def __init__(self) -> None:
        self._o: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "", "labels": {}},
            "spec": {},
            "status": {},
        }

    def name(self, n: str) -> NodeB:
        self._o["metadata"]["name"] = n
        return self

    def uid(self, u: str) -> NodeB:
        self._o["metadata"]["uid"] = u
        return self

    def label(self, k: str, v: str) -> NodeB:
        self._o["metadata"]["labels"][k] = v
        return self

    def taints(self, taints: list[dict[str, str]]) -> NodeB:
        self._o["spec"]["taints"] = copy.deepcopy(taints)
        return self

    def obj(self) -> dict[str, Any]:
        return copy.deepcopy(self._o)


def node(name: str) -> NodeB:
    return NodeB().name(name)


def zn(name: str, zone: str) -> dict[str, Any]:
    """The tests' most common node: ``Label("zone", zone).Label("node", name)``."""
    return node(name).label("zone", zone).label("node", name).obj()


def service(
    selector: dict[str, str] | None, name: str = "svc", namespace: str = "default"
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if selector is not None:
        spec["selector"] = dict(selector)
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def tsc(max_skew: int, key: str, when: str) -> dict[str, Any]:
    """A v1.TopologySpreadConstraint for defaultConstraints."""
    return {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}


# --- comparing the internal state with Go's expectations ----------------------------------------------


def canon(selector: Any) -> Any:
    """A comparable form of a label selector (dict/None as in the pod spec, or a parsed one)."""
    ls = selector if isinstance(selector, LabelSelector) else LabelSelector.parse(selector)
    if ls.is_nothing():
        return "nothing"
    out = set()
    for r in ls.requirements:
        op = "=" if r.op == "In" and len(r.values) == 1 else r.op
        out.add((r.key, op, tuple(sorted(r.values))))
    return tuple(sorted(out))


def C(
    max_skew: int,
    key: str,
    selector: Any,
    min_domains: int = 1,
    naff: str = HONOR,
    ntaint: str = IGNORE,
) -> tuple:
    return (max_skew, key, canon(selector), min_domains, naff, ntaint)


def got_constraints(cs: list[Any]) -> list[tuple]:
    return [
        (
            c.max_skew,
            c.topology_key,
            canon(c.selector),
            c.min_domains,
            c.node_affinity_policy,
            c.node_taints_policy,
        )
        for c in cs
    ]


def _sorted_paths(p: Any) -> tuple:
    (v0, n0), (v1, n1) = p
    if n0 == n1 and v0 > v1:
        v0, v1 = v1, v0
    return ((v0, n0), (v1, n1))


NEW_PATHS = (("", MAX_INT32), ("", MAX_INT32))  # newCriticalPaths()


def assert_pre_filter_state(got: Any, want: dict[str, Any]) -> None:
    assert got_constraints(got.constraints) == want["constraints"]
    assert [_sorted_paths(p.as_tuples()) for p in got.critical_paths] == [
        _sorted_paths(p) for p in want["paths"]
    ]
    assert got.tp_value_to_match_num == want["counts"]


def make_plugin(
    nodes: list[dict[str, Any]] = (),  # type: ignore[assignment]
    pods: list[dict[str, Any]] = (),  # type: ignore[assignment]
    objs: list[dict[str, Any]] = (),  # type: ignore[assignment]
    args: dict[str, Any] | None = None,
    nip: bool = False,
    mlk: bool = False,
) -> PodTopologySpread:
    handle = make_handle(nodes, pods, objs)
    pl = build_plugin(
        PodTopologySpread, args if args is not None else {"defaultingType": "List"}, handle
    )
    pl.enable_node_inclusion_policy = nip
    pl.enable_match_label_keys = mlk
    return pl


def list_args(defaults: list[dict[str, Any]] | None) -> dict[str, Any]:
    return {"defaultConstraints": defaults or [], "defaultingType": "List"}


def P(go_test: str, name: str, *values: Any, marks: Any = ()) -> Any:
    return pytest.param(*values, id=f"{go_test}/{name}", marks=marks)


# =====================================================================================================
# TestPreFilterState
# =====================================================================================================


def _pfs(
    name: str,
    pod: dict[str, Any],
    nodes: list[dict[str, Any]] = (),  # type: ignore[assignment]
    existing: list[dict[str, Any]] = (),  # type: ignore[assignment]
    objs: list[dict[str, Any]] = (),  # type: ignore[assignment]
    defaults: list[dict[str, Any]] | None = None,
    want: dict[str, Any] | None = None,
    want_status: Status | None = None,
    nip: bool = False,
    mlk: bool = False,
) -> Any:
    return P(
        "TestPreFilterState",
        name,
        dict(
            pod=pod,
            nodes=nodes,
            existing=existing,
            objs=objs,
            defaults=defaults,
            want=want,
            want_status=want_status,
            nip=nip,
            mlk=mlk,
        ),
    )


NODES_AB_XY = [
    zn("node-a", "zone1"),
    zn("node-b", "zone1"),
    zn("node-x", "zone2"),
    zn("node-y", "zone2"),
]


def _foo_pods(*names_nodes: tuple[str, str]) -> list[dict[str, Any]]:
    return [pod(n).node(nd).label("foo", "").obj() for n, nd in names_nodes]


PODS_5 = _foo_pods(
    ("p-a1", "node-a"),
    ("p-a2", "node-a"),
    ("p-b1", "node-b"),
    ("p-y1", "node-y"),
    ("p-y2", "node-y"),
)
PODS_7 = _foo_pods(
    ("p-a1", "node-a"),
    ("p-a2", "node-a"),
    ("p-b1", "node-b"),
    ("p-y1", "node-y"),
    ("p-y2", "node-y"),
    ("p-y3", "node-y"),
    ("p-y4", "node-y"),
)
PODS_FOO_A_5 = [
    pod(n).node(nd).label("foo", "a").obj()
    for n, nd in (
        ("p-a1", "node-a"),
        ("p-a2", "node-a"),
        ("p-b1", "node-b"),
        ("p-y1", "node-y"),
        ("p-y2", "node-y"),
    )
]
NODES_ABC = [
    node("node-a").label("node", "node-a").label("foo", "").obj(),
    node("node-b").label("node", "node-b").label("foo", "").obj(),
    node("node-c").label("node", "node-c").label("bar", "").obj(),
]
NODES_ABC_TAINTED = [
    node("node-a").label("node", "node-a").obj(),
    node("node-b").label("node", "node-b").obj(),
    node("node-c").label("node", "node-c").taints(TAINTS).label("bar", "").obj(),
]
PODS_BAR_ABC = [
    pod("p-a").node("node-a").label("bar", "").obj(),
    pod("p-b").node("node-b").label("bar", "").obj(),
    pod("p-c").node("node-b").label("bar", "").obj(),
    pod("p-d").node("node-c").obj(),
]

PRE_FILTER_STATE_CASES = [
    _pfs(
        "clean cluster with one spreadConstraint",
        pod("p")
        .label("foo", "")
        .spread_constraint(5, "zone", DNS, sel().label("foo", "bar").obj())
        .obj(),
        nodes=NODES_AB_XY,
        want=dict(
            constraints=[C(5, "zone", sel().label("foo", "bar").obj())],
            paths=[(("zone1", 0), ("zone2", 0))],
            counts=[{"zone1": 0, "zone2": 0}],
        ),
    ),
    _pfs(
        "normal case with one spreadConstraint",
        pod("p").label("foo", "").spread_constraint(1, "zone", DNS, FOO).obj(),
        nodes=NODES_AB_XY,
        existing=PODS_5,
        want=dict(
            constraints=[C(1, "zone", FOO)],
            paths=[(("zone2", 2), ("zone1", 3))],
            counts=[{"zone1": 3, "zone2": 2}],
        ),
    ),
    _pfs(
        "normal case with null label selector",
        pod("p").label("foo", "").spread_constraint(1, "zone", DNS, None).obj(),
        nodes=NODES_AB_XY,
        existing=PODS_5,
        want=dict(
            constraints=[C(1, "zone", None)],
            paths=[(("zone2", 0), ("zone1", 0))],
            counts=[{"zone1": 0, "zone2": 0}],
        ),
    ),
    _pfs(
        "normal case with one spreadConstraint, on a 3-zone cluster",
        pod("p").label("foo", "").spread_constraint(1, "zone", DNS, FOO).obj(),
        nodes=[*NODES_AB_XY, zn("node-o", "zone3"), zn("node-p", "zone3")],
        existing=PODS_5,
        want=dict(
            constraints=[C(1, "zone", FOO)],
            paths=[(("zone3", 0), ("zone2", 2))],
            counts=[{"zone1": 3, "zone2": 2, "zone3": 0}],
        ),
    ),
    _pfs(
        "namespace mismatch doesn't count",
        pod("p").label("foo", "").spread_constraint(1, "zone", DNS, FOO).obj(),
        nodes=NODES_AB_XY,
        existing=[
            pod("p-a1").node("node-a").label("foo", "").obj(),
            pod("p-a2").namespace("ns1").node("node-a").label("foo", "").obj(),
            pod("p-b1").node("node-b").label("foo", "").obj(),
            pod("p-y1").namespace("ns2").node("node-y").label("foo", "").obj(),
            pod("p-y2").node("node-y").label("foo", "").obj(),
        ],
        want=dict(
            constraints=[C(1, "zone", FOO)],
            paths=[(("zone2", 1), ("zone1", 2))],
            counts=[{"zone1": 2, "zone2": 1}],
        ),
    ),
    _pfs(
        "normal case with two spreadConstraints",
        pod("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "node", DNS, FOO)
        .obj(),
        nodes=NODES_AB_XY,
        existing=PODS_7,
        want=dict(
            constraints=[C(1, "zone", FOO), C(1, "node", FOO)],
            paths=[(("zone1", 3), ("zone2", 4)), (("node-x", 0), ("node-b", 1))],
            counts=[{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}],
        ),
    ),
    _pfs(
        "soft spreadConstraints should be bypassed",
        pod("p")
        .label("foo", "")
        .spread_constraint(1, "zone", SA, FOO)
        .spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "node", SA, FOO)
        .spread_constraint(1, "node", DNS, FOO)
        .obj(),
        nodes=[zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
        existing=PODS_7,
        want=dict(
            constraints=[C(1, "zone", FOO), C(1, "node", FOO)],
            paths=[(("zone1", 3), ("zone2", 4)), (("node-b", 1), ("node-a", 2))],
            counts=[{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}],
        ),
    ),
    _pfs(
        "different labelSelectors - simple version",
        pod("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "node", DNS, BAR)
        .obj(),
        nodes=[zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
        existing=[
            pod("p-a").node("node-a").label("foo", "").obj(),
            pod("p-b").node("node-b").label("bar", "").obj(),
        ],
        want=dict(
            constraints=[C(1, "zone", FOO), C(1, "node", BAR)],
            paths=[(("zone2", 0), ("zone1", 1)), (("node-a", 0), ("node-y", 0))],
            counts=[{"zone1": 1, "zone2": 0}, {"node-a": 0, "node-b": 1, "node-y": 0}],
        ),
    ),
    _pfs(
        "different labelSelectors - complex pods",
        pod("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "node", DNS, BAR)
        .obj(),
        nodes=[zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")],
        existing=[
            pod("p-a1").node("node-a").label("foo", "").obj(),
            pod("p-a2").node("node-a").label("foo", "").label("bar", "").obj(),
            pod("p-b1").node("node-b").label("foo", "").obj(),
            pod("p-y1").node("node-y").label("foo", "").obj(),
            pod("p-y2").node("node-y").label("foo", "").label("bar", "").obj(),
            pod("p-y3").node("node-y").label("foo", "").obj(),
            pod("p-y4").node("node-y").label("foo", "").label("bar", "").obj(),
        ],
        want=dict(
            constraints=[C(1, "zone", FOO), C(1, "node", BAR)],
            paths=[(("zone1", 3), ("zone2", 4)), (("node-b", 0), ("node-a", 1))],
            counts=[{"zone1": 3, "zone2": 4}, {"node-a": 1, "node-b": 0, "node-y": 2}],
        ),
    ),
    _pfs(
        "two spreadConstraints, and with podAffinity",
        pod("p")
        .label("foo", "")
        .node_affinity_not_in("node", ["node-x"])
        .spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "node", DNS, FOO)
        .obj(),
        nodes=NODES_AB_XY,
        existing=PODS_7,
        want=dict(
            constraints=[C(1, "zone", FOO), C(1, "node", FOO)],
            paths=[(("zone1", 3), ("zone2", 4)), (("node-b", 1), ("node-a", 2))],
            counts=[{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}],
        ),
    ),
    _pfs(
        "default constraints and a service",
        pod("p").label("foo", "bar").label("baz", "kar").obj(),
        defaults=[tsc(3, "node", DNS), tsc(2, "node", SA), tsc(5, "rack", DNS)],
        objs=[service({"foo": "bar"})],
        want=dict(
            constraints=[
                C(3, "node", sel().label("foo", "bar").obj()),
                C(5, "rack", sel().label("foo", "bar").obj()),
            ],
            paths=[NEW_PATHS, NEW_PATHS],
            counts=[{}, {}],
        ),
    ),
    _pfs(
        "default constraints and a service that doesn't match",
        pod("p").label("foo", "bar").obj(),
        defaults=[tsc(3, "node", DNS)],
        objs=[service({"baz": "kep"})],
        want_status=Status(Code.SKIP),
    ),
    _pfs(
        "default constraints and a service, but pod has constraints",
        pod("p")
        .label("foo", "bar")
        .label("baz", "tar")
        .spread_constraint(1, "zone", DNS, sel().label("baz", "tar").obj())
        .spread_constraint(2, "planet", SA, sel().label("fot", "rok").obj())
        .obj(),
        defaults=[tsc(2, "node", DNS)],
        objs=[service({"foo": "bar"})],
        want=dict(
            constraints=[C(1, "zone", sel().label("baz", "tar").obj())],
            paths=[NEW_PATHS],
            counts=[{}],
        ),
    ),
    _pfs(
        "default soft constraints and a service",
        pod("p").label("foo", "bar").obj(),
        defaults=[tsc(2, "node", SA)],
        objs=[service({"foo": "bar"})],
        want_status=Status(Code.SKIP),
    ),
    _pfs(
        "TpKeyToDomainsNum is calculated when MinDomains is enabled",
        pod("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "node", DNS, FOO)
        .obj(),
        nodes=NODES_AB_XY,
        existing=PODS_7,
        want=dict(
            constraints=[C(1, "zone", FOO), C(1, "node", FOO)],
            paths=[(("zone1", 3), ("zone2", 4)), (("node-x", 0), ("node-b", 1))],
            counts=[{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}],
        ),
    ),
    _pfs(
        "feature gate disabled with NodeAffinityPolicy",
        pod("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "node", DNS, BAR)
        .obj(),
        nodes=NODES_ABC,
        existing=PODS_BAR_ABC,
        want=dict(
            constraints=[C(1, "node", BAR)],
            paths=[(("node-a", 1), ("node-b", 2))],
            counts=[{"node-a": 1, "node-b": 2}],
        ),
        nip=False,
    ),
    _pfs(
        "NodeAffinityPolicy honored with labelSelectors",
        pod("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "node", DNS, BAR)
        .obj(),
        nodes=NODES_ABC,
        existing=PODS_BAR_ABC,
        want=dict(
            constraints=[C(1, "node", BAR)],
            paths=[(("node-a", 1), ("node-b", 2))],
            counts=[{"node-a": 1, "node-b": 2}],
        ),
        nip=True,
    ),
    _pfs(
        "NodeAffinityPolicy ignored with labelSelectors",
        pod("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "node", DNS, BAR, None, IGNORE)
        .obj(),
        nodes=NODES_ABC,
        existing=PODS_BAR_ABC,
        want=dict(
            constraints=[C(1, "node", BAR, naff=IGNORE)],
            paths=[(("node-c", 0), ("node-a", 1))],
            counts=[{"node-a": 1, "node-b": 2, "node-c": 0}],
        ),
        nip=True,
    ),
    _pfs(
        "NodeAffinityPolicy honored with nodeAffinity",
        pod("p")
        .label("foo", "")
        .node_affinity_in("foo", [""])
        .spread_constraint(1, "node", DNS, BAR)
        .obj(),
        nodes=NODES_ABC,
        existing=[
            pod("p-a").node("node-a").label("bar", "").obj(),
            pod("p-c").node("node-b").label("bar", "").obj(),
            pod("p-d").node("node-b").label("bar", "").obj(),
            pod("p-e").node("node-c").obj(),
        ],
        want=dict(
            constraints=[C(1, "node", BAR)],
            paths=[(("node-a", 1), ("node-b", 2))],
            counts=[{"node-a": 1, "node-b": 2}],
        ),
        nip=True,
    ),
    _pfs(
        "NodeAffinityPolicy ignored with nodeAffinity",
        pod("p")
        .label("foo", "")
        .node_affinity_in("foo", [""])
        .spread_constraint(1, "node", DNS, BAR, None, IGNORE)
        .obj(),
        nodes=NODES_ABC,
        existing=PODS_BAR_ABC,
        want=dict(
            constraints=[C(1, "node", BAR, naff=IGNORE)],
            paths=[(("node-c", 0), ("node-a", 1))],
            counts=[{"node-a": 1, "node-b": 2, "node-c": 0}],
        ),
        nip=True,
    ),
    _pfs(
        "feature gate disabled with NodeTaintsPolicy",
        pod("p").label("foo", "").spread_constraint(1, "node", DNS, BAR).obj(),
        nodes=NODES_ABC_TAINTED,
        existing=PODS_BAR_ABC,
        want=dict(
            constraints=[C(1, "node", BAR)],
            paths=[(("node-c", 0), ("node-a", 1))],
            counts=[{"node-a": 1, "node-b": 2, "node-c": 0}],
        ),
        nip=False,
    ),
    _pfs(
        "NodeTaintsPolicy ignored",
        pod("p").label("foo", "").spread_constraint(1, "node", DNS, BAR).obj(),
        nodes=NODES_ABC_TAINTED,
        existing=PODS_BAR_ABC,
        want=dict(
            constraints=[C(1, "node", BAR)],
            paths=[(("node-c", 0), ("node-a", 1))],
            counts=[{"node-a": 1, "node-b": 2, "node-c": 0}],
        ),
        nip=True,
    ),
    _pfs(
        "NodeTaintsPolicy honored",
        pod("p").label("foo", "").spread_constraint(1, "node", DNS, BAR, None, None, HONOR).obj(),
        nodes=NODES_ABC_TAINTED,
        existing=PODS_BAR_ABC,
        want=dict(
            constraints=[C(1, "node", BAR, ntaint=HONOR)],
            paths=[(("node-a", 1), ("node-b", 2))],
            counts=[{"node-a": 1, "node-b": 2}],
        ),
        nip=True,
    ),
    _pfs(
        "NodeTaintsPolicy honored with tolerated taints",
        pod("p")
        .label("foo", "")
        .toleration("node.kubernetes.io/unschedulable", operator="Exists")
        .spread_constraint(1, "node", DNS, BAR, None, None, HONOR)
        .obj(),
        nodes=NODES_ABC_TAINTED,
        existing=PODS_BAR_ABC,
        want=dict(
            constraints=[C(1, "node", BAR, ntaint=HONOR)],
            paths=[(("node-c", 0), ("node-a", 1))],
            counts=[{"node-a": 1, "node-b": 2, "node-c": 0}],
        ),
        nip=True,
    ),
    _pfs(
        "two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
        pod("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "node", DNS, FOO, None, IGNORE)
        .obj(),
        nodes=[
            node("node-a").label("zone", "zone1").label("node", "node-a").label("foo", "").obj(),
            node("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            node("node-x").label("zone", "zone2").label("node", "node-x").label("foo", "").obj(),
        ],
        existing=_foo_pods(("p-b1", "node-b"), ("p-b2", "node-b"), ("p-x1", "node-x")),
        want=dict(
            constraints=[C(1, "zone", FOO), C(1, "node", FOO, naff=IGNORE)],
            paths=[(("zone1", 0), ("zone2", 1)), (("node-a", 0), ("node-x", 1))],
            counts=[{"zone1": 0, "zone2": 1}, {"node-a": 0, "node-b": 2, "node-x": 1}],
        ),
        nip=True,
    ),
    _pfs(
        "two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
        pod("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DNS, FOO, None, None, HONOR)
        .spread_constraint(1, "node", DNS, FOO)
        .obj(),
        nodes=[
            node("node-a").label("zone", "zone1").label("node", "node-a").label("foo", "").obj(),
            node("node-b").label("zone", "zone1").label("node", "node-b").taints(TAINTS).obj(),
            node("node-x").label("zone", "zone2").label("node", "node-x").label("foo", "").obj(),
        ],
        existing=_foo_pods(("p-b1", "node-b"), ("p-b2", "node-b"), ("p-x1", "node-x")),
        want=dict(
            constraints=[C(1, "zone", FOO, ntaint=HONOR), C(1, "node", FOO)],
            paths=[(("zone1", 0), ("zone2", 1)), (("node-a", 0), ("node-x", 1))],
            counts=[{"zone1": 0, "zone2": 1}, {"node-a": 0, "node-b": 2, "node-x": 1}],
        ),
        nip=True,
    ),
    _pfs(
        "two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
        pod("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "node", DNS, FOO)
        .obj(),
        nodes=[
            node("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            node("node-b")
            .label("zone", "zone1")
            .label("node", "node-b")
            .label("foo", "")
            .taints(TAINTS)
            .obj(),
            node("node-x").label("zone", "zone2").label("node", "node-x").label("foo", "").obj(),
            node("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing=_foo_pods(
            ("p-a1", "node-a"), ("p-a2", "node-a"), ("p-x1", "node-x"), ("p-y1", "node-y")
        ),
        want=dict(
            constraints=[C(1, "zone", FOO), C(1, "node", FOO)],
            paths=[(("zone1", 0), ("zone2", 1)), (("node-b", 0), ("node-x", 1))],
            counts=[{"zone1": 0, "zone2": 1}, {"node-b": 0, "node-x": 1}],
        ),
        nip=True,
    ),
    _pfs(
        "two node inclusion Constraints, zone: ignore/ignore, node: honor/honor",
        pod("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "zone", DNS, FOO, None, IGNORE)
        .spread_constraint(1, "node", DNS, FOO, None, None, HONOR)
        .obj(),
        nodes=[
            node("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            node("node-b")
            .label("zone", "zone1")
            .label("node", "node-b")
            .label("foo", "")
            .taints(TAINTS)
            .obj(),
            node("node-x").label("zone", "zone2").label("node", "node-x").label("foo", "").obj(),
            node("node-y").label("zone", "zone2").label("node", "node-y").label("foo", "").obj(),
        ],
        existing=_foo_pods(
            ("p-a1", "node-a"),
            ("p-a2", "node-a"),
            ("p-x1", "node-x"),
            ("p-x2", "node-x"),
            ("p-y1", "node-y"),
        ),
        want=dict(
            constraints=[C(1, "zone", FOO, naff=IGNORE), C(1, "node", FOO, ntaint=HONOR)],
            paths=[(("zone1", 2), ("zone2", 3)), (("node-y", 1), ("node-x", 2))],
            counts=[{"zone1": 2, "zone2": 3}, {"node-x": 2, "node-y": 1}],
        ),
        nip=True,
    ),
    _pfs(
        "matchLabelKeys ignored when feature gate disabled",
        pod("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", DNS, FOO, None, None, None, ["bar"])
        .obj(),
        nodes=NODES_AB_XY,
        existing=PODS_5,
        want=dict(
            constraints=[C(1, "zone", FOO)],
            paths=[(("zone2", 2), ("zone1", 3))],
            counts=[{"zone1": 3, "zone2": 2}],
        ),
        mlk=False,
    ),
    _pfs(
        "matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
        pod("p")
        .label("foo", "")
        .label("bar", "a")
        .spread_constraint(1, "zone", DNS, FOO, None, None, None, ["bar"])
        .obj(),
        nodes=NODES_AB_XY,
        existing=[
            pod("p-a1").node("node-a").label("foo", "").obj(),
            pod("p-a2").node("node-a").label("foo", "").label("bar", "a").obj(),
            pod("p-b1").node("node-b").label("foo", "").obj(),
            pod("p-y1").node("node-y").label("foo", "").label("bar", "a").obj(),
            pod("p-y2").node("node-y").label("bar", "").obj(),
        ],
        want=dict(
            constraints=[C(1, "zone", sel().exists("foo").label("bar", "a").obj())],
            paths=[(("zone2", 1), ("zone1", 1))],
            counts=[{"zone1": 1, "zone2": 1}],
        ),
        mlk=True,
    ),
    _pfs(
        "matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
        pod("p")
        .label("foo", "a")
        .spread_constraint(1, "zone", DNS, sel().obj(), None, None, None, ["foo"])
        .obj(),
        nodes=NODES_AB_XY,
        existing=PODS_FOO_A_5,
        want=dict(
            constraints=[C(1, "zone", sel().label("foo", "a").obj())],
            paths=[(("zone2", 2), ("zone1", 3))],
            counts=[{"zone1": 3, "zone2": 2}],
        ),
        mlk=True,
    ),
    _pfs(
        "key in matchLabelKeys is ignored when LabelSelector is nil when feature gate enabled",
        pod("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DNS, None, None, None, None, ["bar"])
        .obj(),
        nodes=NODES_AB_XY,
        existing=PODS_FOO_A_5,
        want=dict(
            constraints=[C(1, "zone", None)],
            paths=[(("zone2", 0), ("zone1", 0))],
            counts=[{"zone1": 0, "zone2": 0}],
        ),
        mlk=True,
    ),
    _pfs(
        "no pod is matched when LabelSelector is nil when feature gate disabled",
        pod("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DNS, None, None, None, None, ["bar"])
        .obj(),
        nodes=NODES_AB_XY,
        existing=PODS_FOO_A_5,
        want=dict(
            constraints=[C(1, "zone", None)],
            paths=[(("zone2", 0), ("zone1", 0))],
            counts=[{"zone1": 0, "zone2": 0}],
        ),
    ),
    _pfs(
        "key in matchLabelKeys is ignored when it isn't exist in pod.labels",
        pod("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DNS, FOO, None, None, None, ["bar"])
        .obj(),
        nodes=NODES_AB_XY,
        existing=PODS_FOO_A_5,
        want=dict(
            constraints=[C(1, "zone", FOO)],
            paths=[(("zone2", 2), ("zone1", 3))],
            counts=[{"zone1": 3, "zone2": 2}],
        ),
        mlk=True,
    ),
    _pfs(
        "two spreadConstraints with the same topologyKey",
        pod("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "zone", DNS, BAR)
        .obj(),
        nodes=NODES_AB_XY,
        existing=[
            pod("p-a1").node("node-a").label("foo", "").label("bar", "").obj(),
            pod("p-b1").node("node-b").label("foo", "").obj(),
            pod("p-x1").node("node-x").label("bar", "").obj(),
            pod("p-y1").node("node-y").label("foo", "").label("bar", "").obj(),
            pod("p-y2").node("node-y").label("bar", "").obj(),
        ],
        want=dict(
            constraints=[C(1, "zone", FOO), C(1, "zone", BAR)],
            paths=[(("zone2", 1), ("zone1", 2)), (("zone1", 1), ("zone2", 3))],
            counts=[{"zone1": 2, "zone2": 1}, {"zone1": 1, "zone2": 3}],
        ),
    ),
    _pfs(
        "skip if not specified",
        pod("p").label("foo", "").obj(),
        nodes=[zn("node-a", "zone1")],
        want_status=Status(Code.SKIP),
    ),
]


@pytest.mark.parametrize("tc", PRE_FILTER_STATE_CASES)
def test_pre_filter_state(tc: dict[str, Any]) -> None:
    pl = make_plugin(
        tc["nodes"], tc["existing"], tc["objs"], list_args(tc["defaults"]), tc["nip"], tc["mlk"]
    )
    cs = CycleState()
    s = pl.pre_filter(cs, Pod(tc["pod"]), pl._handle.snapshot().list())
    want_status = tc["want_status"]
    assert (s or Status()) == (want_status or Status())
    if s is not None and not s.is_success():
        return
    assert_pre_filter_state(cs.read(PRE_FILTER_STATE_KEY), tc["want"])


# =====================================================================================================
# TestPreFilterStateAddPod / TestPreFilterStateRemovePod
# =====================================================================================================

NODE_C = C(1, "node", FOO)
ZONE_C = C(1, "zone", FOO)
NODES_AB_ZONE_FOO = [
    node("node-a").label("zone", "zone1").label("node", "node-a").label("foo", "bar").obj(),
    node("node-b").label("zone", "zone2").label("node", "node-b").label("foo", "").obj(),
]
NODES_AB_TAINTED_A = [
    node("node-a").label("zone", "zone1").label("node", "node-a").taints(TAINTS).obj(),
    node("node-b").label("zone", "zone2").label("node", "node-b").obj(),
]
PREEMPTOR_NODE = pod("p").label("foo", "").spread_constraint(1, "node", DNS, FOO).obj()
PREEMPTOR_ZONE = pod("p").label("foo", "").spread_constraint(1, "zone", DNS, FOO).obj()
PREEMPTOR_ZONE_NODE = (
    pod("p")
    .label("foo", "")
    .spread_constraint(1, "zone", DNS, FOO)
    .spread_constraint(1, "node", DNS, FOO)
    .obj()
)
PREEMPTOR_ZONE_FOO_NODE_BAR = (
    pod("p")
    .label("foo", "")
    .label("bar", "")
    .spread_constraint(1, "zone", DNS, FOO)
    .spread_constraint(1, "node", DNS, BAR)
    .obj()
)
PREEMPTOR_AFFINITY = (
    pod("p")
    .label("foo", "")
    .node_affinity_not_in("foo", ["bar"])
    .spread_constraint(1, "zone", DNS, FOO)
    .obj()
)


def _add(
    name: str,
    preemptor: Any,
    added: Any,
    existing: Any,
    node_idx: int,
    nodes: Any,
    want: Any,
    nip: bool = False,
) -> Any:
    return P(
        "TestPreFilterStateAddPod",
        name,
        dict(
            preemptor=preemptor,
            added=added,
            existing=existing,
            node_idx=node_idx,
            nodes=nodes,
            want=want,
            nip=nip,
        ),
    )


def _zp(n: str, nd: str, zone: str, foo: bool = True) -> dict[str, Any]:
    w = pod(n).node(nd)
    if foo:
        w = w.label("foo", "")
    return w.label("zone", zone).obj()


ADD_POD_CASES = [
    _add(
        "node a and b both impact current min match",
        PREEMPTOR_NODE,
        pod("p-a1").node("node-a").label("foo", "").obj(),
        [],
        0,
        [zn("node-a", "zone1"), zn("node-b", "zone1")],
        dict(
            constraints=[NODE_C],
            paths=[(("node-b", 0), ("node-a", 1))],
            counts=[{"node-a": 1, "node-b": 0}],
        ),
    ),
    _add(
        "only node a impacts current min match",
        PREEMPTOR_NODE,
        pod("p-a1").node("node-a").label("foo", "").obj(),
        _foo_pods(("p-b1", "node-b")),
        0,
        [zn("node-a", "zone1"), zn("node-b", "zone1")],
        dict(
            constraints=[NODE_C],
            paths=[(("node-a", 1), ("node-b", 1))],
            counts=[{"node-a": 1, "node-b": 1}],
        ),
    ),
    _add(
        "add a pod in a different namespace doesn't change topologyKeyToMinPodsMap",
        PREEMPTOR_NODE,
        pod("p-a1").namespace("ns1").node("node-a").label("foo", "").obj(),
        _foo_pods(("p-b1", "node-b")),
        0,
        [zn("node-a", "zone1"), zn("node-b", "zone1")],
        dict(
            constraints=[NODE_C],
            paths=[(("node-a", 0), ("node-b", 1))],
            counts=[{"node-a": 0, "node-b": 1}],
        ),
    ),
    _add(
        "add pod on non-critical node won't trigger re-calculation",
        PREEMPTOR_NODE,
        pod("p-b2").node("node-b").label("foo", "").obj(),
        _foo_pods(("p-b1", "node-b")),
        1,
        [zn("node-a", "zone1"), zn("node-b", "zone1")],
        dict(
            constraints=[NODE_C],
            paths=[(("node-a", 0), ("node-b", 2))],
            counts=[{"node-a": 0, "node-b": 2}],
        ),
    ),
    _add(
        "node a and x both impact topologyKeyToMinPodsMap on zone and node",
        PREEMPTOR_ZONE_NODE,
        pod("p-a1").node("node-a").label("foo", "").obj(),
        [],
        0,
        [zn("node-a", "zone1"), zn("node-x", "zone2")],
        dict(
            constraints=[ZONE_C, NODE_C],
            paths=[(("zone2", 0), ("zone1", 1)), (("node-x", 0), ("node-a", 1))],
            counts=[{"zone1": 1, "zone2": 0}, {"node-a": 1, "node-x": 0}],
        ),
    ),
    _add(
        "only node a impacts topologyKeyToMinPodsMap on zone and node",
        PREEMPTOR_ZONE_NODE,
        pod("p-a1").node("node-a").label("foo", "").obj(),
        _foo_pods(("p-x1", "node-x")),
        0,
        [zn("node-a", "zone1"), zn("node-x", "zone2")],
        dict(
            constraints=[ZONE_C, NODE_C],
            paths=[(("zone1", 1), ("zone2", 1)), (("node-a", 1), ("node-x", 1))],
            counts=[{"zone1": 1, "zone2": 1}, {"node-a": 1, "node-x": 1}],
        ),
    ),
    _add(
        "node a impacts topologyKeyToMinPodsMap on node, node x impacts topologyKeyToMinPodsMap on zone",
        PREEMPTOR_ZONE_NODE,
        pod("p-a1").node("node-a").label("foo", "").obj(),
        _foo_pods(("p-b1", "node-b"), ("p-b2", "node-b"), ("p-x1", "node-x")),
        0,
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
        dict(
            constraints=[ZONE_C, NODE_C],
            paths=[(("zone2", 1), ("zone1", 3)), (("node-a", 1), ("node-x", 1))],
            counts=[{"zone1": 3, "zone2": 1}, {"node-a": 1, "node-b": 2, "node-x": 1}],
        ),
    ),
    _add(
        "Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on zone",
        PREEMPTOR_ZONE_FOO_NODE_BAR,
        pod("p-a1").node("node-a").label("foo", "").obj(),
        [
            pod("p-b1").node("node-b").label("foo", "").label("bar", "").obj(),
            pod("p-x1").node("node-x").label("foo", "").label("bar", "").obj(),
            pod("p-x2").node("node-x").label("bar", "").obj(),
        ],
        0,
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
        dict(
            constraints=[ZONE_C, C(1, "node", BAR)],
            paths=[(("zone2", 1), ("zone1", 2)), (("node-a", 0), ("node-b", 1))],
            counts=[{"zone1": 2, "zone2": 1}, {"node-a": 0, "node-b": 1, "node-x": 2}],
        ),
    ),
    _add(
        "Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on both zone and node",
        PREEMPTOR_ZONE_FOO_NODE_BAR,
        pod("p-a1").node("node-a").label("foo", "").label("bar", "").obj(),
        [
            pod("p-b1").node("node-b").label("bar", "").obj(),
            pod("p-x1").node("node-x").label("foo", "").label("bar", "").obj(),
            pod("p-x2").node("node-x").label("bar", "").obj(),
        ],
        0,
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
        dict(
            constraints=[ZONE_C, C(1, "node", BAR)],
            paths=[(("zone1", 1), ("zone2", 1)), (("node-a", 1), ("node-b", 1))],
            counts=[{"zone1": 1, "zone2": 1}, {"node-a": 1, "node-b": 1, "node-x": 2}],
        ),
    ),
    _add(
        "add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy disabled",
        PREEMPTOR_AFFINITY,
        _zp("p-a1", "node-a", "zone1"),
        [_zp("p-a2", "node-a", "zone1"), _zp("p-b1", "node-b", "zone2")],
        0,
        NODES_AB_ZONE_FOO,
        dict(constraints=[ZONE_C], paths=[(("zone2", 1), ("", MAX_INT32))], counts=[{"zone2": 1}]),
        nip=False,
    ),
    _add(
        "add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
        PREEMPTOR_AFFINITY,
        _zp("p-a1", "node-a", "zone1"),
        [_zp("p-a2", "node-a", "zone1"), _zp("p-b1", "node-b", "zone2")],
        0,
        NODES_AB_ZONE_FOO,
        dict(constraints=[ZONE_C], paths=[(("zone2", 1), ("", MAX_INT32))], counts=[{"zone2": 1}]),
        nip=True,
    ),
    _add(
        "add a pod when scheduling node affinity matched pod with NodeInclusionPolicy disabled",
        PREEMPTOR_ZONE,
        _zp("p-b1", "node-b", "zone2"),
        [_zp("p-a1", "node-a", "zone1"), _zp("p-b2", "node-b", "zone2")],
        1,
        NODES_AB_ZONE_FOO,
        dict(
            constraints=[ZONE_C],
            paths=[(("zone1", 1), ("zone2", 2))],
            counts=[{"zone1": 1, "zone2": 2}],
        ),
        nip=False,
    ),
    _add(
        "add a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled",
        PREEMPTOR_ZONE,
        _zp("p-b1", "node-b", "zone2"),
        [_zp("p-a1", "node-a", "zone1"), _zp("p-b2", "node-b", "zone2")],
        1,
        NODES_AB_ZONE_FOO,
        dict(
            constraints=[ZONE_C],
            paths=[(("zone1", 1), ("zone2", 2))],
            counts=[{"zone1": 1, "zone2": 2}],
        ),
        nip=True,
    ),
    _add(
        "add a label selector not matched pod when with NodeInclusionPolicy enabled",
        PREEMPTOR_ZONE,
        _zp("p-b1", "node-b", "zone2", foo=False),
        [_zp("p-a1", "node-a", "zone1"), _zp("p-b2", "node-b", "zone2")],
        1,
        NODES_AB_ZONE_FOO,
        dict(
            constraints=[ZONE_C],
            paths=[(("zone1", 1), ("zone2", 1))],
            counts=[{"zone1": 1, "zone2": 1}],
        ),
        nip=True,
    ),
    _add(
        "add a pod when scheduling taint untolerated pod with NodeInclusionPolicy disabled",
        PREEMPTOR_ZONE,
        _zp("p-b1", "node-b", "zone2"),
        [_zp("p-a1", "node-a", "zone1"), _zp("p-b2", "node-b", "zone2")],
        1,
        NODES_AB_TAINTED_A,
        dict(
            constraints=[ZONE_C],
            paths=[(("zone1", 1), ("zone2", 2))],
            counts=[{"zone2": 2, "zone1": 1}],
        ),
        nip=False,
    ),
    _add(
        "add a pod when scheduling taint tolerated pod with NodeInclusionPolicy enabled",
        pod("p")
        .label("foo", "")
        .toleration("node.kubernetes.io/unschedulable", operator="Exists")
        .spread_constraint(1, "zone", DNS, FOO)
        .obj(),
        _zp("p-b1", "node-b", "zone2"),
        [_zp("p-a1", "node-a", "zone1"), _zp("p-b2", "node-b", "zone2")],
        1,
        NODES_AB_TAINTED_A,
        dict(
            constraints=[ZONE_C],
            paths=[(("zone1", 1), ("zone2", 2))],
            counts=[{"zone2": 2, "zone1": 1}],
        ),
        nip=True,
    ),
]


@pytest.mark.parametrize("tc", ADD_POD_CASES)
def test_pre_filter_state_add_pod(tc: dict[str, Any]) -> None:
    pl = make_plugin(tc["nodes"], tc["existing"], nip=tc["nip"])
    snapshot = pl._handle.snapshot()
    cs = CycleState()
    preemptor = Pod(tc["preemptor"])
    assert pl.pre_filter(cs, preemptor, snapshot.list()) is None
    node_info = snapshot.get(tc["nodes"][tc["node_idx"]]["metadata"]["name"])
    assert pl.pre_filter_add_pod(cs, preemptor, Pod(tc["added"]), node_info) is None
    assert_pre_filter_state(cs.read(PRE_FILTER_STATE_KEY), tc["want"])


def _rm(
    name: str,
    preemptor: Any,
    nodes: Any,
    existing: Any,
    want: Any,
    deleted_idx: int = 0,
    deleted: Any = None,
    node_idx: int = 0,
    nip: bool = False,
) -> Any:
    return P(
        "TestPreFilterStateRemovePod",
        name,
        dict(
            preemptor=preemptor,
            nodes=nodes,
            existing=existing,
            deleted_idx=deleted_idx,
            deleted=deleted,
            node_idx=node_idx,
            want=want,
            nip=nip,
        ),
    )


REMOVE_POD_CASES = [
    _rm(
        "one spreadConstraint on zone, topologyKeyToMinPodsMap unchanged",
        PREEMPTOR_ZONE,
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
        _foo_pods(("p-a1", "node-a"), ("p-b1", "node-b"), ("p-x1", "node-x")),
        dict(
            constraints=[ZONE_C],
            paths=[(("zone1", 1), ("zone2", 1))],
            counts=[{"zone1": 1, "zone2": 1}],
        ),
        deleted_idx=0,
        node_idx=0,
    ),
    _rm(
        "one spreadConstraint on node, topologyKeyToMinPodsMap changed",
        PREEMPTOR_ZONE,
        NODES_AB_XY,
        _foo_pods(("p-a1", "node-a"), ("p-b1", "node-b"), ("p-x1", "node-x"), ("p-y1", "node-y")),
        dict(
            constraints=[ZONE_C],
            paths=[(("zone1", 1), ("zone2", 2))],
            counts=[{"zone1": 1, "zone2": 2}],
        ),
        deleted_idx=0,
        node_idx=0,
    ),
    _rm(
        "delete an irrelevant pod won't help",
        PREEMPTOR_ZONE,
        NODES_AB_XY,
        [
            pod("p-a0").node("node-a").label("bar", "").obj(),
            *_foo_pods(
                ("p-a1", "node-a"), ("p-b1", "node-b"), ("p-x1", "node-x"), ("p-y1", "node-y")
            ),
        ],
        dict(
            constraints=[ZONE_C],
            paths=[(("zone1", 2), ("zone2", 2))],
            counts=[{"zone1": 2, "zone2": 2}],
        ),
        deleted_idx=0,
        node_idx=0,
    ),
    _rm(
        "delete a non-existing pod won't help",
        PREEMPTOR_ZONE,
        NODES_AB_XY,
        _foo_pods(("p-a1", "node-a"), ("p-b1", "node-b"), ("p-x1", "node-x"), ("p-y1", "node-y")),
        dict(
            constraints=[ZONE_C],
            paths=[(("zone1", 2), ("zone2", 2))],
            counts=[{"zone1": 2, "zone2": 2}],
        ),
        deleted_idx=-1,
        deleted=pod("p-a0").node("node-a").label("bar", "").obj(),
        node_idx=0,
    ),
    _rm(
        "two spreadConstraints",
        PREEMPTOR_ZONE_NODE,
        [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")],
        _foo_pods(
            ("p-a1", "node-a"),
            ("p-a2", "node-a"),
            ("p-b1", "node-b"),
            ("p-x1", "node-x"),
            ("p-x2", "node-x"),
        ),
        dict(
            constraints=[ZONE_C, NODE_C],
            paths=[(("zone2", 1), ("zone1", 3)), (("node-b", 1), ("node-x", 1))],
            counts=[{"zone1": 3, "zone2": 1}, {"node-a": 2, "node-b": 1, "node-x": 1}],
        ),
        deleted_idx=3,
        node_idx=2,
    ),
    # In the next four Go cases deletedPodIdx is left at 0, so existingPods[0] is the pod removed.
    _rm(
        "remove a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy disabled",
        PREEMPTOR_AFFINITY,
        NODES_AB_ZONE_FOO,
        [_zp("p-a2", "node-a", "zone1"), _zp("p-b1", "node-b", "zone2")],
        dict(constraints=[ZONE_C], paths=[(("zone2", 1), ("", MAX_INT32))], counts=[{"zone2": 1}]),
        deleted=_zp("p-a1", "node-a", "zone1"),
        node_idx=0,
        nip=False,
    ),
    _rm(
        "remove a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
        PREEMPTOR_AFFINITY,
        NODES_AB_ZONE_FOO,
        [_zp("p-a2", "node-a", "zone1"), _zp("p-b1", "node-b", "zone2")],
        dict(constraints=[ZONE_C], paths=[(("zone2", 1), ("", MAX_INT32))], counts=[{"zone2": 1}]),
        deleted=_zp("p-a1", "node-a", "zone1"),
        node_idx=0,
        nip=True,
    ),
    _rm(
        "remove a pod when scheduling node affinity matched pod with NodeInclusionPolicy disabled",
        PREEMPTOR_ZONE,
        NODES_AB_ZONE_FOO,
        [_zp("p-a1", "node-a", "zone1"), _zp("p-b2", "node-b", "zone2")],
        dict(
            constraints=[ZONE_C],
            paths=[(("zone2", 0), ("zone1", 1))],
            counts=[{"zone2": 0, "zone1": 1}],
        ),
        deleted=_zp("p-b1", "node-b", "zone2"),
        node_idx=1,
        nip=False,
    ),
    _rm(
        "remove a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled",
        PREEMPTOR_ZONE,
        NODES_AB_ZONE_FOO,
        [_zp("p-a1", "node-a", "zone1"), _zp("p-b2", "node-b", "zone2")],
        dict(
            constraints=[ZONE_C],
            paths=[(("zone2", 0), ("zone1", 1))],
            counts=[{"zone2": 0, "zone1": 1}],
        ),
        deleted=_zp("p-b1", "node-b", "zone2"),
        node_idx=1,
        nip=True,
    ),
]


@pytest.mark.parametrize("tc", REMOVE_POD_CASES)
def test_pre_filter_state_remove_pod(tc: dict[str, Any]) -> None:
    pl = make_plugin(tc["nodes"], tc["existing"], nip=tc["nip"])
    snapshot = pl._handle.snapshot()
    cs = CycleState()
    preemptor = Pod(tc["preemptor"])
    assert pl.pre_filter(cs, preemptor, snapshot.list()) is None
    deleted = tc["deleted"]
    if 0 <= tc["deleted_idx"] < len(tc["existing"]):
        deleted = tc["existing"][tc["deleted_idx"]]
    node_info = snapshot.get(tc["nodes"][tc["node_idx"]]["metadata"]["name"])
    assert pl.pre_filter_remove_pod(cs, preemptor, Pod(deleted), node_info) is None
    assert_pre_filter_state(cs.read(PRE_FILTER_STATE_KEY), tc["want"])


# =====================================================================================================
# TestSingleConstraint / TestMultipleConstraints (PreFilter then Filter on every node)
# =====================================================================================================

S = Code.SUCCESS
U = Code.UNSCHEDULABLE
UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def _flt(
    go_test: str,
    name: str,
    pod: Any,
    nodes: Any,
    existing: Any,
    want: dict[str, Code],
    nip: bool = False,
) -> Any:
    return P(go_test, name, dict(pod=pod, nodes=nodes, existing=existing, want=want, nip=nip))


def _single(
    name: str, pod: Any, nodes: Any, existing: Any, want: dict[str, Code], nip: bool = False
) -> Any:
    return _flt("TestSingleConstraint", name, pod, nodes, existing, want, nip)


def _nodes_n(*names: str) -> list[dict[str, Any]]:
    return [node(n).label("node", n).obj() for n in names]


NODES_FOO_ABX_Y = [
    node("node-a").label("node", "node-a").label("foo", "").obj(),
    node("node-b").label("node", "node-b").label("foo", "").obj(),
    node("node-x").label("node", "node-x").label("foo", "").obj(),
    node("node-y").label("node", "node-y").obj(),
]
NODES_FOO_ABX_Y_TAINTED = [
    *NODES_FOO_ABX_Y[:3],
    node("node-y").label("node", "node-y").taints(TAINTS).obj(),
]
PODS_1_1_0_1 = _foo_pods(("p-b1", "node-a"), ("p-b2", "node-b"), ("p-y1", "node-y"))
PODS_2_1_0_3 = _foo_pods(
    ("p-a1", "node-a"),
    ("p-a2", "node-a"),
    ("p-b1", "node-b"),
    ("p-y1", "node-y"),
    ("p-y2", "node-y"),
    ("p-y3", "node-y"),
)
PODS_2_2_1 = _foo_pods(
    ("p-a1", "node-a"),
    ("p-a2", "node-a"),
    ("p-b1", "node-b"),
    ("p-b2", "node-b"),
    ("p-c1", "node-c"),
)
ALL_OK = {"node-a": S, "node-b": S, "node-x": S, "node-y": S}

SINGLE_CONSTRAINT_CASES = [
    _single(
        "no existing pods",
        pod("p").label("foo", "").spread_constraint(1, "zone", DNS, FOO).obj(),
        NODES_AB_XY,
        [],
        ALL_OK,
    ),
    _single(
        "no existing pods, incoming pod doesn't match itself",
        pod("p").label("foo", "").spread_constraint(1, "zone", DNS, BAR).obj(),
        NODES_AB_XY,
        [],
        ALL_OK,
    ),
    _single(
        "existing pods in a different namespace do not count",
        pod("p").label("foo", "").spread_constraint(1, "zone", DNS, FOO).obj(),
        NODES_AB_XY,
        [
            pod("p-a1").namespace("ns1").node("node-a").label("foo", "").obj(),
            pod("p-b1").namespace("ns2").node("node-a").label("foo", "").obj(),
            pod("p-x1").node("node-x").label("foo", "").obj(),
            pod("p-y1").node("node-y").label("foo", "").obj(),
        ],
        {"node-a": S, "node-b": S, "node-x": U, "node-y": U},
    ),
    _single(
        "existing pods do not match null selector",
        pod("p").label("foo", "").spread_constraint(1, "zone", DNS, None).obj(),
        NODES_AB_XY,
        _foo_pods(("p-x1", "node-x"), ("p-y1", "node-y")),
        ALL_OK,
    ),
    _single(
        "pods spread across zones as 3/3, all nodes fit",
        pod("p").label("foo", "").spread_constraint(1, "zone", DNS, FOO).obj(),
        NODES_AB_XY,
        PODS_2_1_0_3,
        ALL_OK,
    ),
    _single(
        "pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
        pod("p").label("foo", "").spread_constraint(1, "zone", DNS, FOO).obj(),
        [
            zn("node-a", "zone1"),
            node("node-b").label("zon", "zone1").label("node", "node-b").obj(),
            zn("node-x", "zone2"),
            zn("node-y", "zone2"),
        ],
        _foo_pods(("p-a1", "node-a"), ("p-b1", "node-b"), ("p-x1", "node-x"), ("p-y1", "node-y")),
        {"node-a": S, "node-b": UU, "node-x": U, "node-y": U},
    ),
    _single(
        "pod cannot be scheduled as all nodes don't have label 'rack'",
        pod("p").label("foo", "").spread_constraint(1, "rack", DNS, FOO).obj(),
        [zn("node-a", "zone1"), zn("node-x", "zone2")],
        [],
        {"node-a": UU, "node-x": UU},
    ),
    _single(
        "pods spread across nodes as 2/1/0/3, only node-x fits",
        pod("p").label("foo", "").spread_constraint(1, "node", DNS, FOO).obj(),
        NODES_AB_XY,
        PODS_2_1_0_3,
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
    ),
    _single(
        "pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
        pod("p").label("foo", "").spread_constraint(2, "node", DNS, FOO).obj(),
        NODES_AB_XY,
        PODS_2_1_0_3,
        {"node-a": U, "node-b": S, "node-x": S, "node-y": U},
    ),
    _single(
        "pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
        pod("p").label("bar", "").spread_constraint(1, "node", DNS, FOO).obj(),
        NODES_AB_XY,
        PODS_2_1_0_3,
        {"node-a": U, "node-b": S, "node-x": S, "node-y": U},
    ),
    _single(
        "incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
        pod("p")
        .label("foo", "")
        .node_affinity_in("node", ["node-a", "node-y"])
        .spread_constraint(1, "node", DNS, FOO)
        .obj(),
        NODES_AB_XY,
        PODS_2_1_0_3,
        {"node-a": S, "node-b": S, "node-x": S, "node-y": U},
    ),
    _single(
        "terminating Pods should be excluded",
        pod("p").label("foo", "").spread_constraint(1, "node", DNS, FOO).obj(),
        _nodes_n("node-a", "node-b"),
        [
            pod("p-a").node("node-a").label("foo", "").terminating().obj(),
            pod("p-b").node("node-b").label("foo", "").obj(),
        ],
        {"node-a": S, "node-b": U},
    ),
    _single(
        "incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
        pod("p")
        .label("foo", "")
        .node_affinity_not_in("node", ["node-b"])
        .spread_constraint(1, "zone", DNS, FOO)
        .obj(),
        NODES_AB_XY,
        _foo_pods(("p-b1", "node-b"), ("p-b2", "node-b"), ("p-y1", "node-y")),
        {"node-a": S, "node-b": S, "node-x": U, "node-y": U},
    ),
    _single(
        "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, then the third node fits",
        pod("p").label("foo", "").spread_constraint(2, "node", DNS, FOO, 4).obj(),
        _nodes_n("node-a", "node-b", "node-c"),
        PODS_2_2_1,
        {"node-a": U, "node-b": U, "node-c": S},
    ),
    _single(
        "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, then the all nodes fit",
        pod("p").label("foo", "").spread_constraint(2, "node", DNS, FOO, 2).obj(),
        _nodes_n("node-a", "node-b", "node-c"),
        PODS_2_2_1,
        {"node-a": S, "node-b": S, "node-c": S},
    ),
    _single(
        "pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then the third and fourth nodes fit",
        pod("p").label("foo", "").spread_constraint(2, "zone", DNS, FOO, 3).obj(),
        NODES_AB_XY,
        _foo_pods(("p-b1", "node-a"), ("p-b2", "node-b"), ("p-y1", "node-y")),
        {"node-a": U, "node-b": U, "node-x": S, "node-y": S},
    ),
    _single(
        "pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, then the all nodes fit",
        pod("p").label("foo", "").spread_constraint(2, "zone", DNS, FOO, 1).obj(),
        NODES_AB_XY,
        _foo_pods(("p-b1", "node-a"), ("p-b2", "node-b"), ("p-y1", "node-y")),
        ALL_OK,
    ),
    _single(
        "NodeAffinityPolicy honored with labelSelectors",
        pod("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "node", DNS, FOO)
        .obj(),
        NODES_FOO_ABX_Y,
        PODS_1_1_0_1,
        {"node-a": U, "node-b": U, "node-x": S, "node-y": S},
        nip=True,
    ),
    _single(
        "NodeAffinityPolicy ignored with labelSelectors",
        pod("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "node", DNS, FOO, None, IGNORE)
        .obj(),
        NODES_FOO_ABX_Y,
        PODS_1_1_0_1,
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
        nip=True,
    ),
    _single(
        "NodeAffinityPolicy honored with nodeAffinity",
        pod("p")
        .label("foo", "")
        .node_affinity_in("foo", [""])
        .spread_constraint(1, "node", DNS, FOO)
        .obj(),
        NODES_FOO_ABX_Y,
        PODS_1_1_0_1,
        {"node-a": U, "node-b": U, "node-x": S, "node-y": S},
        nip=True,
    ),
    # Go has two cases with this name; t.Run names the second one "...#01".
    _single(
        "NodeAffinityPolicy ignored with labelSelectors#01",
        pod("p")
        .label("foo", "")
        .node_affinity_in("foo", [""])
        .spread_constraint(1, "node", DNS, FOO, None, IGNORE)
        .obj(),
        NODES_FOO_ABX_Y,
        PODS_1_1_0_1,
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
        nip=True,
    ),
    _single(
        "NodeTaintsPolicy honored",
        pod("p").label("foo", "").spread_constraint(1, "node", DNS, FOO, None, None, HONOR).obj(),
        NODES_FOO_ABX_Y_TAINTED,
        PODS_1_1_0_1,
        {"node-a": U, "node-b": U, "node-x": S, "node-y": S},
        nip=True,
    ),
    _single(
        "NodeTaintsPolicy ignored",
        pod("p").label("foo", "").spread_constraint(1, "node", DNS, FOO).obj(),
        NODES_FOO_ABX_Y_TAINTED,
        PODS_1_1_0_1,
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
        nip=True,
    ),
]

_REASONS = {S: [], U: [REASON], UU: [REASON_LABEL]}


def _run_filter_case(tc: dict[str, Any]) -> None:
    pl = make_plugin(tc["nodes"], tc["existing"], nip=tc["nip"])
    snapshot = pl._handle.snapshot()
    state = CycleState()
    p = Pod(tc["pod"])
    assert pl.pre_filter(state, p, snapshot.list()) is None
    for n in tc["nodes"]:
        name = n["metadata"]["name"]
        status = pl.filter(state, p, snapshot.get(name)) or Status()
        assert (name, status.code) == (name, tc["want"][name])
        assert status.reasons == _REASONS[status.code]


@pytest.mark.parametrize("tc", SINGLE_CONSTRAINT_CASES)
def test_single_constraint(tc: dict[str, Any]) -> None:
    _run_filter_case(tc)


def _multi(
    name: str, pod: Any, nodes: Any, existing: Any, want: dict[str, Code], nip: bool = False
) -> Any:
    return _flt("TestMultipleConstraints", name, pod, nodes, existing, want, nip)


POD_FOO_ZONE_NODE = (
    pod("p")
    .label("foo", "")
    .spread_constraint(1, "zone", DNS, FOO)
    .spread_constraint(1, "node", DNS, FOO)
    .obj()
)
POD_FOOBAR_ZONE_FOO_NODE_BAR = (
    pod("p")
    .label("foo", "")
    .label("bar", "")
    .spread_constraint(1, "zone", DNS, FOO)
    .spread_constraint(1, "node", DNS, BAR)
    .obj()
)
POD_FOOBAR_ZONE_BAR_ZONE_FOO = (
    pod("p")
    .label("foo", "")
    .label("bar", "")
    .spread_constraint(1, "zone", DNS, BAR)
    .spread_constraint(1, "zone", DNS, FOO)
    .obj()
)
PODS_ZONE_TWO_SELECTORS = [
    pod("p-a1").node("node-a").label("foo", "").label("bar", "").obj(),
    pod("p-a2").node("node-a").label("foo", "").obj(),
    pod("p-b1").node("node-b").label("foo", "").label("bar", "").obj(),
    pod("p-y1").node("node-y").label("foo", "").obj(),
    pod("p-y2").node("node-y").label("foo", "").label("bar", "").obj(),
    pod("p-y3").node("node-y").label("foo", "").obj(),
]
PODS_ABY_FOO = _foo_pods(("p-a1", "node-a"), ("p-b1", "node-b"), ("p-y1", "node-y"))


def _zfn(name: str, zone: str, foo: bool = False, taint: bool = False) -> dict[str, Any]:
    w = node(name).label("zone", zone).label("node", name)
    if foo:
        w = w.label("foo", "")
    if taint:
        w = w.taints(TAINTS)
    return w.obj()


MULTIPLE_CONSTRAINTS_CASES = [
    _multi(
        "two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
        POD_FOO_ZONE_NODE,
        NODES_AB_XY,
        PODS_2_1_0_3,
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
    ),
    _multi(
        "two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
        POD_FOO_ZONE_NODE,
        NODES_AB_XY,
        [*PODS_2_1_0_3, pod("p-y4").node("node-y").label("foo", "").obj()],
        {"node-a": U, "node-b": U, "node-x": U, "node-y": U},
    ),
    _multi(
        "Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
        POD_FOOBAR_ZONE_FOO_NODE_BAR,
        NODES_AB_XY,
        [
            pod("p-a1").node("node-a").label("foo", "").obj(),
            pod("p-y1").node("node-y").label("bar", "").obj(),
        ],
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
    ),
    _multi(
        "Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
        POD_FOOBAR_ZONE_FOO_NODE_BAR,
        NODES_AB_XY,
        [
            pod("p-a1").node("node-a").label("foo", "").obj(),
            pod("p-x1").node("node-x").label("bar", "").obj(),
            pod("p-y1").node("node-y").label("bar", "").obj(),
        ],
        {"node-a": U, "node-b": U, "node-x": U, "node-y": U},
    ),
    _multi(
        "Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
        POD_FOOBAR_ZONE_FOO_NODE_BAR,
        NODES_AB_XY,
        [
            pod("p-a1").node("node-a").label("foo", "").obj(),
            pod("p-a2").node("node-a").label("foo", "").label("bar", "").obj(),
            pod("p-y1").node("node-y").label("foo", "").obj(),
            pod("p-y2").node("node-y").label("foo", "").label("bar", "").obj(),
            pod("p-y3").node("node-y").label("foo", "").obj(),
        ],
        {"node-a": U, "node-b": S, "node-x": U, "node-y": U},
    ),
    _multi(
        "Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
        pod("p")
        .label("bar", "")
        .spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "node", DNS, BAR)
        .obj(),
        NODES_AB_XY,
        [
            pod("p-a1").node("node-a").label("foo", "").obj(),
            pod("p-x1").node("node-x").label("bar", "").obj(),
            pod("p-y1").node("node-y").label("bar", "").obj(),
        ],
        {"node-a": S, "node-b": S, "node-x": U, "node-y": U},
    ),
    _multi(
        "two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
        POD_FOO_ZONE_NODE,
        [
            zn("node-a", "zone1"),
            zn("node-b", "zone1"),
            node("node-x").label("zone", "zone2").obj(),
            zn("node-y", "zone2"),
        ],
        _foo_pods(("p-a1", "node-a"), ("p-y3", "node-y")),
        {"node-a": U, "node-b": S, "node-x": UU, "node-y": U},
    ),
    _multi(
        "two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
        pod("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "node", DNS, FOO, None, IGNORE)
        .obj(),
        [
            _zfn("node-a", "zone1", foo=True),
            _zfn("node-b", "zone1", foo=True),
            _zfn("node-x", "zone2", foo=True),
            _zfn("node-y", "zone2"),
        ],
        PODS_ABY_FOO,
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
        nip=True,
    ),
    _multi(
        "two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
        pod("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DNS, FOO, None, None, HONOR)
        .spread_constraint(1, "node", DNS, FOO)
        .obj(),
        [
            _zfn("node-a", "zone1", foo=True),
            _zfn("node-b", "zone1", foo=True),
            _zfn("node-x", "zone2", foo=True),
            _zfn("node-y", "zone2", taint=True),
        ],
        PODS_ABY_FOO,
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
        nip=True,
    ),
    _multi(
        "two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
        pod("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "zone", DNS, FOO)
        .spread_constraint(1, "node", DNS, FOO)
        .obj(),
        [
            _zfn("node-a", "zone1", foo=True),
            _zfn("node-b", "zone1"),
            _zfn("node-x", "zone2", foo=True),
            _zfn("node-y", "zone2", foo=True, taint=True),
        ],
        PODS_ABY_FOO,
        {"node-a": U, "node-b": S, "node-x": S, "node-y": U},
        nip=True,
    ),
    _multi(
        "two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
        pod("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "zone", DNS, FOO, None, None, HONOR)
        .spread_constraint(1, "node", DNS, FOO, None, IGNORE)
        .obj(),
        [
            _zfn("node-a", "zone1", foo=True),
            _zfn("node-b", "zone1"),
            _zfn("node-x", "zone2", foo=True),
            _zfn("node-y", "zone2", foo=True, taint=True),
        ],
        PODS_ABY_FOO,
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
        nip=True,
    ),
    _multi(
        "two Constraints on zone, spreads = [3/3, 2/1]",
        POD_FOOBAR_ZONE_BAR_ZONE_FOO,
        NODES_AB_XY,
        PODS_ZONE_TWO_SELECTORS,
        {"node-a": U, "node-b": U, "node-x": S, "node-y": S},
    ),
    _multi(
        "two Constraints on zone, spreads = [3/4, 2/1]",
        POD_FOOBAR_ZONE_BAR_ZONE_FOO,
        NODES_AB_XY,
        [*PODS_ZONE_TWO_SELECTORS, pod("p-y4").node("node-y").label("foo", "").obj()],
        {"node-a": U, "node-b": U, "node-x": U, "node-y": U},
    ),
]


@pytest.mark.parametrize("tc", MULTIPLE_CONSTRAINTS_CASES)
def test_multiple_constraints(tc: dict[str, Any]) -> None:
    _run_filter_case(tc)


@pytest.mark.parametrize("_", [P("TestPreFilterDisabled", "filter without prefilter state", None)])
def test_pre_filter_disabled(_: Any) -> None:
    pl = make_plugin()
    ni = NodeInfo(Node(node("").obj()))
    status = pl.filter(CycleState(), Pod({}), ni)
    assert status is not None and status.code == Code.ERROR
    assert status.message == 'reading "PreFilterPodTopologySpread" from cycleState: not found'


# =====================================================================================================
# scoring_test.go: TestPreScoreSkip / TestPreScoreStateEmptyNodes
# =====================================================================================================


def replica_set(
    name: str, selector: dict[str, Any] | None, namespace: str = "default"
) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": selector},
    }


def hn(name: str) -> NodeB:
    """``st.MakeNode().Name(name).Label(v1.LabelHostname, name)``."""
    return node(name).label(HOSTNAME, name)


def tnw(size: int) -> float:
    """topologyNormalizingWeight."""
    return math.log(size + 2)


PRE_SCORE_SKIP_CASES = [
    P(
        "TestPreScoreSkip",
        "the pod doesn't have soft topology spread Constraints",
        dict(
            pod=pod("p").namespace("default").obj(),
            args={"defaultingType": "List"},
            nodes=[hn("node-a").obj(), hn("node-b").obj()],
            objs=[],
        ),
    ),
    P(
        "TestPreScoreSkip",
        "default constraints and a replicaset that doesn't match",
        dict(
            pod=pod("p")
            .namespace("default")
            .label("foo", "bar")
            .label("baz", "sup")
            .owner_reference("rs2", "ReplicaSet")
            .obj(),
            args=list_args([tsc(2, "planet", SA)]),
            nodes=[node("node-a").label("planet", "mars").obj()],
            objs=[replica_set("rs1", sel().exists("tar").obj())],
        ),
    ),
]


@pytest.mark.parametrize("tc", PRE_SCORE_SKIP_CASES)
def test_pre_score_skip(tc: dict[str, Any]) -> None:
    pl = make_plugin(tc["nodes"], [], tc["objs"], tc["args"])
    s = pl.pre_score(CycleState(), Pod(tc["pod"]), pl._handle.snapshot().list())
    assert s is not None and s.is_skip()


def _pss(
    name: str,
    pod: Any,
    nodes: Any,
    want: dict[str, Any],
    args: Any = None,
    objs: Any = (),
    nip: bool = False,
) -> Any:
    return P(
        "TestPreScoreStateEmptyNodes",
        name,
        dict(
            pod=pod,
            nodes=nodes,
            objs=list(objs),
            args=args or {"defaultingType": "List"},
            want=want,
            nip=nip,
        ),
    )


NODES_ZONE_FOO_HOST = [
    node("node-a").label("zone", "zone1").label("foo", "").label(HOSTNAME, "node-a").obj(),
    node("node-b").label("zone", "zone1").label("foo", "").label(HOSTNAME, "node-b").obj(),
    node("node-x").label("zone", "zone2").label(HOSTNAME, "node-x").obj(),
]
NODES_ZONE_FOO_HOST_TAINTED = [
    *NODES_ZONE_FOO_HOST[:2],
    node("node-x").label("zone", "zone2").label(HOSTNAME, "node-x").taints(TAINTS).obj(),
]
NODES_ZONE_HOST_ABX = [
    hn("node-a").label("zone", "zone1").obj(),
    hn("node-b").label("zone", "zone1").obj(),
    hn("node-x").label("zone", "zone2").obj(),
]
ZONES_12 = {"zone1": 0, "zone2": 0}

PRE_SCORE_STATE_CASES = [
    _pss(
        "normal case",
        pod("p")
        .label("foo", "")
        .spread_constraint(1, "zone", SA, FOO)
        .spread_constraint(1, HOSTNAME, SA, FOO)
        .obj(),
        NODES_ZONE_HOST_ABX,
        dict(
            constraints=[C(1, "zone", FOO), C(1, HOSTNAME, FOO)],
            ignored=set(),
            counts=[ZONES_12, {}],
            weights=[tnw(2), tnw(3)],
        ),
    ),
    _pss(
        "null selector",
        pod("p").label("foo", "").spread_constraint(1, "zone", SA, None).obj(),
        NODES_ZONE_HOST_ABX,
        dict(constraints=[C(1, "zone", None)], ignored=set(), counts=[ZONES_12], weights=[tnw(2)]),
    ),
    _pss(
        "node-x doesn't have label zone",
        pod("p")
        .label("foo", "")
        .spread_constraint(1, "zone", SA, FOO)
        .spread_constraint(1, HOSTNAME, SA, BAR)
        .obj(),
        [
            hn("node-a").label("zone", "zone1").obj(),
            hn("node-b").label("zone", "zone1").obj(),
            hn("node-x").obj(),
        ],
        dict(
            constraints=[C(1, "zone", FOO), C(1, HOSTNAME, BAR)],
            ignored={"node-x"},
            counts=[{"zone1": 0}, {}],
            weights=[tnw(1), tnw(2)],
        ),
    ),
    _pss(
        "system default constraints and a replicaset",
        pod("p")
        .namespace("default")
        .label("foo", "tar")
        .label("baz", "sup")
        .owner_reference("rs1", "ReplicaSet")
        .obj(),
        [
            hn("node-a").label(ZONE, "mars").obj(),
            hn("node-b").label(ZONE, "mars").obj(),
            # Nodes with no zone are not excluded. They are considered a separate zone.
            hn("node-c").obj(),
            hn("node-d").obj(),
        ],
        dict(
            constraints=[C(3, HOSTNAME, FOO), C(5, ZONE, FOO)],
            ignored=set(),
            counts=[{}, {"mars": 0, "": 0}],
            weights=[tnw(4), tnw(2)],
        ),
        args={"defaultingType": "System"},
        objs=[replica_set("rs1", FOO)],
    ),
    _pss(
        "default constraints and a replicaset",
        pod("p")
        .namespace("default")
        .label("foo", "tar")
        .label("baz", "sup")
        .owner_reference("rs1", "ReplicaSet")
        .obj(),
        [
            node("node-a")
            .label("rack", "rack1")
            .label(HOSTNAME, "node-a")
            .label("planet", "mars")
            .obj()
        ],
        dict(
            constraints=[C(1, HOSTNAME, FOO), C(2, "planet", FOO)],
            ignored=set(),
            counts=[{}, {"mars": 0}],
            weights=[tnw(1), tnw(1)],
        ),
        args=list_args([tsc(1, HOSTNAME, SA), tsc(2, "rack", DNS), tsc(2, "planet", SA)]),
        objs=[replica_set("rs1", FOO)],
    ),
    _pss(
        "default constraints and a replicaset, but pod has constraints",
        pod("p")
        .namespace("default")
        .label("foo", "bar")
        .label("baz", "sup")
        .owner_reference("rs1", "ReplicaSet")
        .spread_constraint(1, "zone", DNS, BAR)
        .spread_constraint(2, "planet", SA, sel().label("baz", "sup").obj())
        .obj(),
        [node("node-a").label("planet", "mars").label("galaxy", "andromeda").obj()],
        dict(
            constraints=[C(2, "planet", sel().label("baz", "sup").obj())],
            ignored=set(),
            counts=[{"mars": 0}],
            weights=[tnw(1)],
        ),
        args=list_args([tsc(2, "galaxy", SA)]),
        objs=[replica_set("rs1", FOO)],
    ),
    _pss(
        "NodeAffinityPolicy honored with labelSelectors",
        pod("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "zone", SA, BAR)
        .obj(),
        NODES_ZONE_FOO_HOST,
        dict(constraints=[C(1, "zone", BAR)], ignored=set(), counts=[ZONES_12], weights=[tnw(2)]),
        nip=True,
    ),
    _pss(
        "NodeAffinityPolicy ignored with labelSelectors",
        pod("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "zone", SA, BAR, None, IGNORE)
        .obj(),
        NODES_ZONE_FOO_HOST,
        dict(
            constraints=[C(1, "zone", BAR, naff=IGNORE)],
            ignored=set(),
            counts=[ZONES_12],
            weights=[tnw(2)],
        ),
        nip=True,
    ),
    _pss(
        "NodeAffinityPolicy honored with nodeAffinity",
        pod("p")
        .label("foo", "")
        .node_affinity_in("foo", [""])
        .spread_constraint(1, "zone", SA, BAR)
        .obj(),
        NODES_ZONE_FOO_HOST,
        dict(constraints=[C(1, "zone", BAR)], ignored=set(), counts=[ZONES_12], weights=[tnw(2)]),
        nip=True,
    ),
    _pss(
        "NodeAffinityPolicy ignored with nodeAffinity",
        pod("p")
        .label("foo", "")
        .node_affinity_in("foo", [""])
        .spread_constraint(1, "zone", SA, BAR, None, IGNORE)
        .obj(),
        NODES_ZONE_FOO_HOST,
        dict(
            constraints=[C(1, "zone", BAR, naff=IGNORE)],
            ignored=set(),
            counts=[ZONES_12],
            weights=[tnw(2)],
        ),
        nip=True,
    ),
    _pss(
        "NodeTaintsPolicy honored",
        pod("p").label("foo", "").spread_constraint(1, "zone", SA, BAR, None, None, HONOR).obj(),
        NODES_ZONE_FOO_HOST_TAINTED,
        dict(
            constraints=[C(1, "zone", BAR, ntaint=HONOR)],
            ignored=set(),
            counts=[ZONES_12],
            weights=[tnw(2)],
        ),
        nip=True,
    ),
    _pss(
        "NodeTaintsPolicy ignored",
        pod("p").label("foo", "").spread_constraint(1, "zone", SA, BAR).obj(),
        NODES_ZONE_FOO_HOST_TAINTED,
        dict(constraints=[C(1, "zone", BAR)], ignored=set(), counts=[ZONES_12], weights=[tnw(2)]),
        nip=True,
    ),
]


@pytest.mark.parametrize("tc", PRE_SCORE_STATE_CASES)
def test_pre_score_state_empty_nodes(tc: dict[str, Any]) -> None:
    pl = make_plugin(tc["nodes"], [], tc["objs"], tc["args"], nip=tc["nip"])
    cs = CycleState()
    assert pl.pre_score(cs, Pod(tc["pod"]), pl._handle.snapshot().list()) is None
    got = cs.read(PRE_SCORE_STATE_KEY)
    want = tc["want"]
    assert got_constraints(got.constraints) == want["constraints"]
    assert got.ignored_nodes == want["ignored"]
    assert got.topology_value_to_pod_counts == want["counts"]
    assert got.topology_normalizing_weight == want["weights"]


# =====================================================================================================
# TestPodTopologySpreadScore (DefaultingType: System; PreScore over the candidate nodes, Score each,
# NormalizeScore)
# =====================================================================================================


def _score(
    name: str,
    pod: Any,
    nodes: Any,
    existing: Any,
    want: list[tuple[str, int]],
    failed: Any = (),
    objs: Any = (),
    nip: bool = False,
    mlk: bool = False,
) -> Any:
    return P(
        "TestPodTopologySpreadScore",
        name,
        dict(
            pod=pod,
            nodes=nodes,
            failed=list(failed),
            existing=existing,
            objs=list(objs),
            want=want,
            nip=nip,
            mlk=mlk,
        ),
    )


def _hn_nodes(*names: str) -> list[dict[str, Any]]:
    return [hn(n).obj() for n in names]


def _zh(name: str, zone: str) -> dict[str, Any]:
    return node(name).label("zone", zone).label(HOSTNAME, name).obj()


POD_HOST_FOO = pod("p").label("foo", "").spread_constraint(1, HOSTNAME, SA, FOO).obj()
PODS_4_3_2_1 = _foo_pods(
    ("p-a1", "node-a"),
    ("p-a2", "node-a"),
    ("p-a3", "node-a"),
    ("p-a4", "node-a"),
    ("p-b1", "node-b"),
    ("p-b2", "node-b"),
    ("p-b3", "node-b"),
    ("p-c1", "node-c"),
    ("p-c2", "node-c"),
    ("p-d1", "node-d"),
)
PODS_2_1_0_3_D = _foo_pods(
    ("p-a1", "node-a"),
    ("p-a2", "node-a"),
    ("p-b1", "node-b"),
    ("p-d1", "node-d"),
    ("p-d2", "node-d"),
    ("p-d3", "node-d"),
)
PODS_4_2_1_3 = _foo_pods(
    ("p-a1", "node-a"),
    ("p-a2", "node-a"),
    ("p-a3", "node-a"),
    ("p-a4", "node-a"),
    ("p-b1", "node-b"),
    ("p-b2", "node-b"),
    ("p-x1", "node-x"),
    ("p-y1", "node-y"),
    ("p-y2", "node-y"),
    ("p-y3", "node-y"),
)
PODS_2_1_1 = _foo_pods(
    ("p-a1", "node-a"), ("p-a2", "node-a"), ("p-b1", "node-b"), ("p-c1", "node-c")
)
NODES_NODE_FOO_ABC = [
    node("node-a").label("node", "node-a").label("foo", "").obj(),
    node("node-b").label("node", "node-b").label("foo", "").obj(),
    node("node-c").label("node", "node-c").obj(),
]
NODES_NODE_ABC_TAINTED = [
    *_nodes_n("node-a", "node-b"),
    node("node-c").label("node", "node-c").taints(TAINTS).obj(),
]
NODES_ZH_ABCD = [
    _zh("node-a", "zone1"),
    _zh("node-b", "zone1"),
    _zh("node-c", "zone2"),
    _zh("node-d", "zone2"),
]
PODS_MLK = [
    pod("p-a1").node("node-a").label("foo", "").obj(),
    pod("p-b1").node("node-b").label("foo", "").label("bar", "").obj(),
    pod("p-y1").node("node-c").label("foo", "").obj(),
    pod("p-y2").node("node-c").label("bar", "").obj(),
]

SCORE_CASES = [
    _score(
        "one constraint on node, no existing pods",
        POD_HOST_FOO,
        _hn_nodes("node-a", "node-b"),
        [],
        [("node-a", 100), ("node-b", 100)],
    ),
    _score(
        "one constraint on node, only one node is candidate",
        POD_HOST_FOO,
        _hn_nodes("node-a"),
        _foo_pods(("p-a1", "node-a"), ("p-a2", "node-a"), ("p-b1", "node-b")),
        [("node-a", 100)],
        failed=_hn_nodes("node-b"),
    ),
    _score(
        "one constraint on node, all nodes have the same number of matching pods",
        POD_HOST_FOO,
        _hn_nodes("node-a", "node-b"),
        _foo_pods(("p-a1", "node-a"), ("p-b1", "node-b")),
        [("node-a", 100), ("node-b", 100)],
    ),
    _score(
        "one constraint on node, all 4 nodes are candidates",
        POD_HOST_FOO,
        _hn_nodes("node-a", "node-b", "node-c", "node-d"),
        PODS_2_1_0_3_D,
        [("node-a", 20), ("node-b", 60), ("node-c", 100), ("node-d", 0)],
    ),
    _score(
        "one constraint on node, null selector",
        pod("p").label("foo", "").spread_constraint(1, HOSTNAME, SA, None).obj(),
        _hn_nodes("node-a", "node-b", "node-c", "node-d"),
        PODS_2_1_0_3_D,
        [("node-a", 100), ("node-b", 100), ("node-c", 100), ("node-d", 100)],
    ),
    _score(
        "one constraint on node, all 4 nodes are candidates, maxSkew=2",
        pod("p").label("foo", "").spread_constraint(2, HOSTNAME, SA, FOO).obj(),
        _hn_nodes("node-a", "node-b", "node-c", "node-d"),
        PODS_2_1_0_3_D,
        [("node-a", 33), ("node-b", 66), ("node-c", 100), ("node-d", 16)],
    ),
    _score(
        "one constraint on node, all 4 nodes are candidates, maxSkew=3",
        pod("p").label("foo", "").spread_constraint(3, HOSTNAME, SA, FOO).obj(),
        _hn_nodes("node-a", "node-b", "node-c", "node-d"),
        PODS_4_3_2_1,
        [("node-a", 44), ("node-b", 66), ("node-c", 77), ("node-d", 100)],
    ),
    _score(
        "system defaulting, nodes don't have zone, pods match service",
        pod("p").label("foo", "").obj(),
        _hn_nodes("node-a", "node-b", "node-c", "node-d"),
        PODS_4_3_2_1,
        # Same scores as if we were using one spreading constraint.
        [("node-a", 44), ("node-b", 66), ("node-c", 77), ("node-d", 100)],
        objs=[service({"foo": ""})],
    ),
    _score(
        "one constraint on node, 3 out of 4 nodes are candidates",
        POD_HOST_FOO,
        _hn_nodes("node-a", "node-b", "node-x"),
        PODS_4_2_1_3,
        [("node-a", 33), ("node-b", 83), ("node-x", 100)],
        failed=_hn_nodes("node-y"),
    ),
    _score(
        "one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
        POD_HOST_FOO,
        [
            hn("node-a").obj(),
            node("node-b").label("n", "node-b").obj(),
            hn("node-x").obj(),
        ],  # label `n` doesn't match topologyKey
        PODS_4_2_1_3,
        [("node-a", 16), ("node-b", 0), ("node-x", 100)],
        failed=_hn_nodes("node-y"),
    ),
    _score(
        "one constraint on zone, 3 out of 4 nodes are candidates",
        pod("p").label("foo", "").spread_constraint(1, "zone", SA, FOO).obj(),
        [_zh("node-a", "zone1"), _zh("node-b", "zone1"), _zh("node-x", "zone2")],
        PODS_4_2_1_3,
        [("node-a", 75), ("node-b", 75), ("node-x", 100)],
        failed=[_zh("node-y", "zone2")],
    ),
    _score(
        "two Constraints on zone and node, 2 out of 4 nodes are candidates",
        pod("p")
        .label("foo", "")
        .spread_constraint(1, "zone", SA, FOO)
        .spread_constraint(1, HOSTNAME, SA, FOO)
        .obj(),
        [_zh("node-a", "zone1"), _zh("node-x", "zone2")],
        _foo_pods(
            ("p-a1", "node-a"),
            ("p-a2", "node-a"),
            ("p-b1", "node-b"),
            ("p-x1", "node-x"),
            ("p-x2", "node-x"),
            ("p-y1", "node-y"),
            ("p-y2", "node-y"),
            ("p-y3", "node-y"),
            ("p-y4", "node-y"),
        ),
        [("node-a", 100), ("node-x", 63)],
        failed=[_zh("node-b", "zone1"), _zh("node-y", "zone2")],
    ),
    _score(
        "two Constraints on zone, 2 out of 4 nodes are candidates",
        pod("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", SA, FOO)
        .spread_constraint(1, "zone", SA, BAR)
        .obj(),
        [node("node-a").label("zone", "zone1").obj(), node("node-x").label("zone", "zone2").obj()],
        [
            pod("p-a1").node("node-a").label("foo", "").label("bar", "").obj(),
            pod("p-a2").node("node-a").label("foo", "").obj(),
            pod("p-b1").node("node-b").label("foo", "").label("bar", "").obj(),
            pod("p-y1").node("node-y").label("foo", "").obj(),
            pod("p-y2").node("node-y").label("foo", "").label("bar", "").obj(),
            pod("p-y3").node("node-y").label("foo", "").obj(),
        ],
        [("node-a", 85), ("node-x", 100)],
        failed=[
            node("node-b").label("zone", "zone1").obj(),
            node("node-y").label("zone", "zone2").obj(),
        ],
    ),
    _score(
        "two Constraints on zone and node, with different labelSelectors",
        pod("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", SA, FOO)
        .spread_constraint(1, HOSTNAME, SA, BAR)
        .obj(),
        [
            _zh("node-a", "zone1"),
            _zh("node-b", "zone1"),
            _zh("node-x", "zone2"),
            _zh("node-y", "zone2"),
        ],
        [
            pod("p-a1").node("node-a").label("foo", "").obj(),
            pod("p-b1").node("node-b").label("foo", "").label("bar", "").obj(),
            pod("p-y1").node("node-y").label("foo", "").obj(),
            pod("p-y2").node("node-y").label("bar", "").obj(),
        ],
        [("node-a", 60), ("node-b", 20), ("node-x", 100), ("node-y", 60)],
    ),
    _score(
        "two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
        pod("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", SA, FOO)
        .spread_constraint(1, HOSTNAME, SA, BAR)
        .obj(),
        [
            _zh("node-a", "zone1"),
            _zh("node-b", "zone1"),
            _zh("node-x", "zone2"),
            _zh("node-y", "zone2"),
        ],
        [
            pod("p-b1").node("node-b").label("bar", "").obj(),
            pod("p-x1").node("node-x").label("foo", "").obj(),
            pod("p-y1").node("node-y").label("foo", "").label("bar", "").obj(),
        ],
        [("node-a", 100), ("node-b", 60), ("node-x", 40), ("node-y", 0)],
    ),
    _score(
        "two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
        pod("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", SA, FOO)
        .spread_constraint(1, HOSTNAME, SA, BAR)
        .obj(),
        [_zh("node-a", "zone1"), _zh("node-b", "zone1"), _zh("node-x", "zone2")],
        [
            pod("p-a1").node("node-a").label("foo", "").obj(),
            pod("p-b1").node("node-b").label("foo", "").label("bar", "").obj(),
            pod("p-y1").node("node-y").label("foo", "").obj(),
            pod("p-y2").node("node-y").label("bar", "").obj(),
        ],
        [("node-a", 50), ("node-b", 25), ("node-x", 100)],
        failed=[_zh("node-y", "zone2")],
    ),
    _score(
        "existing pods in a different namespace do not count",
        POD_HOST_FOO,
        _hn_nodes("node-a", "node-b"),
        [
            pod("p-a1").namespace("ns1").node("node-a").label("foo", "").obj(),
            pod("p-a2").node("node-a").label("foo", "").obj(),
            pod("p-b1").node("node-b").label("foo", "").obj(),
            pod("p-b2").node("node-b").label("foo", "").obj(),
        ],
        [("node-a", 100), ("node-b", 33)],
    ),
    _score(
        "terminating Pods should be excluded",
        POD_HOST_FOO,
        _hn_nodes("node-a", "node-b"),
        [
            pod("p-a").node("node-a").label("foo", "").terminating().obj(),
            pod("p-b").node("node-b").label("foo", "").obj(),
        ],
        [("node-a", 100), ("node-b", 0)],
    ),
    _score(
        "minDomains has no effect when ScheduleAnyway",
        pod("p").label("foo", "").spread_constraint(2, "node", SA, FOO, 10).obj(),
        _nodes_n("node-a", "node-b", "node-c"),
        PODS_2_2_1,
        [("node-a", 75), ("node-b", 75), ("node-c", 100)],
    ),
    _score(
        "NodeAffinityPolicy honoed with labelSelectors",
        pod("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "node", SA, FOO)
        .obj(),
        NODES_NODE_FOO_ABC,
        PODS_2_1_1,
        [("node-a", 0), ("node-b", 33), ("node-c", 100)],
        nip=True,
    ),
    _score(
        "NodeAffinityPolicy ignored with labelSelectors",
        pod("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "node", SA, FOO, None, IGNORE)
        .obj(),
        NODES_NODE_FOO_ABC,
        PODS_2_1_1,
        [("node-a", 66), ("node-b", 100), ("node-c", 100)],
        nip=True,
    ),
    _score(
        "NodeAffinityPolicy honoed with nodeAffinity",
        pod("p")
        .label("foo", "")
        .node_affinity_in("foo", [""])
        .spread_constraint(1, "node", SA, FOO)
        .obj(),
        NODES_NODE_FOO_ABC,
        PODS_2_1_1,
        [("node-a", 0), ("node-b", 33), ("node-c", 100)],
        nip=True,
    ),
    _score(
        "NodeAffinityPolicy ignored with nodeAffinity",
        pod("p")
        .label("foo", "")
        .node_affinity_in("foo", [""])
        .spread_constraint(1, "node", SA, FOO, None, IGNORE)
        .obj(),
        NODES_NODE_FOO_ABC,
        PODS_2_1_1,
        [("node-a", 66), ("node-b", 100), ("node-c", 100)],
        nip=True,
    ),
    _score(
        "NodeTaintsPolicy honored",
        pod("p").label("foo", "").spread_constraint(1, "node", SA, FOO, None, None, HONOR).obj(),
        NODES_NODE_ABC_TAINTED,
        PODS_2_1_1,
        [("node-a", 0), ("node-b", 33), ("node-c", 100)],
        nip=True,
    ),
    _score(
        "NodeTaintsPolicy ignored",
        pod("p").label("foo", "").spread_constraint(1, "node", SA, FOO).obj(),
        NODES_NODE_ABC_TAINTED,
        PODS_2_1_1,
        [("node-a", 66), ("node-b", 100), ("node-c", 100)],
        nip=True,
    ),
    _score(
        "matchLabelKeys ignored when feature gate disabled",
        pod("p")
        .label("foo", "")
        .label("bar", "")
        .label("baz", "")
        .spread_constraint(1, "zone", SA, FOO, None, None, None, ["baz"])
        .spread_constraint(1, HOSTNAME, SA, BAR, None, None, None, ["baz"])
        .obj(),
        NODES_ZH_ABCD,
        PODS_MLK,
        [("node-a", 60), ("node-b", 20), ("node-c", 60), ("node-d", 100)],
        mlk=False,
    ),
    _score(
        "matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
        pod("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", SA, sel().obj(), None, None, None, ["foo"])
        .spread_constraint(1, HOSTNAME, SA, sel().obj(), None, None, None, ["bar"])
        .obj(),
        NODES_ZH_ABCD,
        PODS_MLK,
        [("node-a", 60), ("node-b", 20), ("node-c", 60), ("node-d", 100)],
        mlk=True,
    ),
    _score(
        "matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
        pod("p")
        .label("foo", "")
        .label("bar", "")
        .label("baz", "")
        .spread_constraint(1, "zone", SA, FOO)
        .spread_constraint(1, HOSTNAME, SA, BAR, None, None, None, ["baz"])
        .obj(),
        NODES_ZH_ABCD,
        [
            pod("p-a1").node("node-a").label("foo", "").obj(),
            pod("p-b1").node("node-b").label("foo", "").label("bar", "").label("baz", "").obj(),
            pod("p-c1").node("node-c").label("foo", "").obj(),
            pod("p-c2").node("node-c").label("bar", "").obj(),
            pod("p-d3").node("node-c").label("bar", "").label("baz", "").obj(),
        ],
        [("node-a", 60), ("node-b", 20), ("node-c", 60), ("node-d", 100)],
        mlk=True,
    ),
]


@pytest.mark.parametrize("tc", SCORE_CASES)
def test_pod_topology_spread_score(tc: dict[str, Any]) -> None:
    all_nodes = [*tc["nodes"], *tc["failed"]]
    pl = make_plugin(
        all_nodes,
        tc["existing"],
        tc["objs"],
        {"defaultingType": "System"},
        nip=tc["nip"],
        mlk=tc["mlk"],
    )
    snapshot = pl._handle.snapshot()
    state = CycleState()
    p = Pod(tc["pod"])
    candidates = [
        NodeInfo(Node(n)) for n in tc["nodes"]
    ]  # tf.BuildNodeInfos(tt.nodes): nodes without pods
    assert pl.pre_score(state, p, candidates) is None
    got = []
    for n in tc["nodes"]:
        name = n["metadata"]["name"]
        score = pl.score(state, p, snapshot.get(name))
        assert isinstance(score, int)
        got.append(NodeScore(name, score))
    assert pl.normalize_score(state, p, got) is None
    assert [(s.name, s.score) for s in got] == tc["want"]


# =====================================================================================================
# plugin_test.go: Test_isSchedulableAfterNodeChange / Test_isSchedulableAfterPodChange
# =====================================================================================================

Q = QueueingHint.QUEUE
SKIP = QueueingHint.SKIP
POD_ZONE = pod("p").spread_constraint(1, "zone", DNS, FOO).obj()
POD_ZONE_NODE = (
    pod("p").spread_constraint(1, "zone", DNS, FOO).spread_constraint(1, "node", DNS, FOO).obj()
)
TAINT_AAA = [{"key": "aaa", "value": "bbb", "effect": "NoSchedule"}]
TAINT_CCC = [{"key": "ccc", "value": "bbb", "effect": "NoSchedule"}]


def _nh(name: str, pod: Any, old: Any, new: Any, want: QueueingHint) -> Any:
    return P("Test_isSchedulableAfterNodeChange", name, dict(pod=pod, old=old, new=new, want=want))


NODE_HINT_CASES = [
    _nh(
        "node updates label which matches topologyKey",
        POD_ZONE,
        node("node-a").label("zone", "zone1").obj(),
        node("node-a").label("zone", "zone2").obj(),
        Q,
    ),
    _nh(
        "node that doesn't match topologySpreadConstraints updates non-related label",
        POD_ZONE,
        node("node-a").label("foo", "bar1").obj(),
        node("node-a").label("foo", "bar2").obj(),
        SKIP,
    ),
    _nh(
        "node that match topologySpreadConstraints adds non-related label",
        POD_ZONE_NODE,
        node("node-a").label("zone", "zone1").label("node", "node1").label("foo", "bar").obj(),
        node("node-a").label("zone", "zone1").label("node", "node1").obj(),
        SKIP,
    ),
    _nh(
        "create node with non-related labels",
        POD_ZONE,
        None,
        node("node-a").label("foo", "bar").obj(),
        SKIP,
    ),
    _nh(
        "create node with related labels",
        POD_ZONE,
        None,
        node("node-a").label("zone", "zone1").obj(),
        Q,
    ),
    _nh(
        "delete node with non-related labels",
        POD_ZONE,
        node("node-a").label("foo", "bar").obj(),
        None,
        SKIP,
    ),
    _nh(
        "delete node with related labels",
        POD_ZONE,
        node("node-a").label("zone", "zone1").obj(),
        None,
        Q,
    ),
    _nh(
        "add node with related labels that only match one of topologySpreadConstraints",
        POD_ZONE_NODE,
        None,
        node("node-a").label("zone", "zone1").obj(),
        SKIP,
    ),
    _nh(
        "add node with related labels that match all topologySpreadConstraints",
        POD_ZONE_NODE,
        None,
        node("node-a").label("zone", "zone1").label("node", "node1").obj(),
        Q,
    ),
    _nh(
        "update node with related labels that only match one of topologySpreadConstraints",
        POD_ZONE_NODE,
        node("node-a").label("zone", "zone1").obj(),
        node("node-a").label("zone", "zone1").obj(),
        SKIP,
    ),
    _nh(
        "update node with related labels that match all topologySpreadConstraints",
        POD_ZONE_NODE,
        node("node-a").label("zone", "zone1").label("node", "node1").obj(),
        node("node-a").label("zone", "zone1").label("node", "node2").obj(),
        Q,
    ),
    _nh(
        "update node with different taints that match all topologySpreadConstraints",
        POD_ZONE_NODE,
        node("node-a").label("zone", "zone1").label("node", "node1").taints(TAINT_AAA).obj(),
        node("node-a").label("zone", "zone1").label("node", "node1").taints(TAINT_CCC).obj(),
        Q,
    ),
    _nh(
        "update node with different taints that only match one of topologySpreadConstraints",
        POD_ZONE_NODE,
        node("node-a").label("node", "node1").taints(TAINT_AAA).obj(),
        node("node-a").label("node", "node1").taints(TAINT_CCC).obj(),
        SKIP,
    ),
]


@pytest.mark.parametrize("tc", NODE_HINT_CASES)
def test_is_schedulable_after_node_change(tc: dict[str, Any]) -> None:
    pl = make_plugin()
    assert pl.is_schedulable_after_node_change(Pod(tc["pod"]), tc["old"], tc["new"]) == tc["want"]


def _ph(name: str, pod: Any, old: Any, new: Any, want: QueueingHint, nip: bool = False) -> Any:
    return P(
        "Test_isSchedulableAfterPodChange",
        name,
        dict(pod=pod, old=old, new=new, want=want, nip=nip),
    )


def upod(uid: str):
    """``st.MakePod().UID(uid)``."""
    return make_pod().uid(uid)


P_FOO_ZONE = upod("p").name("p").label("foo", "").spread_constraint(1, "zone", DNS, FOO).obj()
P_FOO_ZONE_BAR_NODE = (
    upod("p")
    .name("p")
    .label("foo", "")
    .spread_constraint(1, "zone", DNS, FOO)
    .spread_constraint(1, "node", DNS, BAR)
    .obj()
)


def _p_taints_policy(policy: str) -> dict[str, Any]:
    return (
        upod("p")
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DNS, FOO, None, None, policy)
        .spread_constraint(1, "node", DNS, BAR)
        .obj()
    )


POD_HINT_CASES = [
    _ph(
        "add pod with labels match topologySpreadConstraints selector",
        P_FOO_ZONE,
        None,
        upod("p2").node("fake-node").label("foo", "").obj(),
        Q,
    ),
    _ph("add un-scheduled pod", P_FOO_ZONE, None, upod("p2").label("foo", "").obj(), SKIP),
    _ph(
        "update un-scheduled pod",
        P_FOO_ZONE,
        upod("p2").label("bar", "").obj(),
        upod("p2").label("foo", "").obj(),
        SKIP,
    ),
    _ph("delete un-scheduled pod", P_FOO_ZONE, upod("p2").label("foo", "").obj(), None, SKIP),
    _ph(
        "add pod with different namespace",
        P_FOO_ZONE,
        None,
        upod("p2").node("fake-node").namespace("fake-namespace").label("foo", "").obj(),
        SKIP,
    ),
    _ph(
        "add pod with labels don't match topologySpreadConstraints selector",
        P_FOO_ZONE,
        None,
        upod("p2").node("fake-node").label("bar", "").obj(),
        SKIP,
    ),
    _ph(
        "delete pod with labels that match topologySpreadConstraints selector",
        P_FOO_ZONE,
        upod("p2").node("fake-node").label("foo", "").obj(),
        None,
        Q,
    ),
    _ph(
        "delete pod with labels that don't match topologySpreadConstraints selector",
        P_FOO_ZONE,
        upod("p2").node("fake-node").label("bar", "").obj(),
        None,
        SKIP,
    ),
    _ph(
        "delete nominated pod with labels that don't match topologySpreadConstraints selector",
        P_FOO_ZONE,
        upod("p2").nominated_node_name("fake-node").label("bar", "").obj(),
        None,
        SKIP,
    ),
    _ph(
        "delete nominated pod with labels that match topologySpreadConstraints selector",
        P_FOO_ZONE,
        upod("p2").nominated_node_name("fake-node").label("foo", "").obj(),
        None,
        Q,
    ),
    _ph(
        "update pod's non-related label",
        P_FOO_ZONE,
        upod("p2").node("fake-node").label("foo", "").label("bar", "bar1").obj(),
        upod("p2").node("fake-node").label("foo", "").label("bar", "bar2").obj(),
        SKIP,
    ),
    _ph(
        "add pod's label that matches topologySpreadConstraints selector",
        P_FOO_ZONE,
        upod("p2").node("fake-node").obj(),
        upod("p2").node("fake-node").label("foo", "").obj(),
        Q,
    ),
    _ph(
        "delete pod label that matches topologySpreadConstraints selector",
        P_FOO_ZONE,
        upod("p2").node("fake-node").label("foo", "").obj(),
        upod("p2").node("fake-node").obj(),
        Q,
    ),
    _ph(
        "change pod's label that matches topologySpreadConstraints selector",
        P_FOO_ZONE,
        upod("p2").node("fake-node").label("foo", "foo1").obj(),
        upod("p2").node("fake-node").label("foo", "foo2").obj(),
        SKIP,
    ),
    _ph(
        "change pod's label that doesn't match topologySpreadConstraints selector",
        P_FOO_ZONE,
        upod("p2").node("fake-node").label("foo", "").label("bar", "bar1").obj(),
        upod("p2").node("fake-node").label("foo", "").label("bar", "bar2").obj(),
        SKIP,
    ),
    _ph(
        "add pod's label that matches topologySpreadConstraints selector with multi topologySpreadConstraints",
        P_FOO_ZONE_BAR_NODE,
        upod("p2").node("fake-node").label("foo", "").obj(),
        upod("p2").node("fake-node").label("foo", "").label("bar", "bar2").obj(),
        Q,
    ),
    _ph(
        "change pod's label that doesn't match topologySpreadConstraints selector with multi topologySpreadConstraints",
        P_FOO_ZONE_BAR_NODE,
        upod("p2").node("fake-node").label("foo", "").obj(),
        upod("p2").node("fake-node").label("foo", "").label("baz", "").obj(),
        SKIP,
    ),
    _ph(
        "change pod's label that match topologySpreadConstraints selector with multi topologySpreadConstraints",
        P_FOO_ZONE_BAR_NODE,
        upod("p2").node("fake-node").label("foo", "").label("bar", "").obj(),
        upod("p2").node("fake-node").label("foo", "").label("bar", "bar2").obj(),
        SKIP,
    ),
    _ph(
        "the unschedulable Pod has topologySpreadConstraint with NodeTaintsPolicy:Honor and has got a new toleration",
        _p_taints_policy(HONOR),
        upod("p").name("p").label("foo", "").obj(),
        upod("p")
        .name("p")
        .label("foo", "")
        .toleration("node.kubernetes.io/unschedulable", operator="Exists")
        .obj(),
        Q,
        nip=True,
    ),
    _ph(
        "the unschedulable Pod has topologySpreadConstraint without NodeTaintsPolicy:Honor and has got a new toleration",
        _p_taints_policy(IGNORE),
        upod("p").name("p").label("foo", "").obj(),
        upod("p")
        .name("p")
        .label("foo", "")
        .toleration("node.kubernetes.io/unschedulable", operator="Exists")
        .obj(),
        SKIP,
    ),
    _ph(
        "the unschedulable Pod has topologySpreadConstraint and has got a new label matching the selector of the constraint",
        _p_taints_policy(IGNORE),
        upod("p").name("p").obj(),
        upod("p").name("p").label("foo", "").obj(),
        Q,
    ),
    _ph(
        "the unschedulable Pod has topologySpreadConstraint and has got a new unrelated label",
        _p_taints_policy(IGNORE),
        upod("p").name("p").obj(),
        upod("p").name("p").label("unrelated", "").obj(),
        SKIP,
    ),
]


@pytest.mark.parametrize("tc", POD_HINT_CASES)
def test_is_schedulable_after_pod_change(tc: dict[str, Any]) -> None:
    pl = make_plugin(nip=tc["nip"])
    assert pl.is_schedulable_after_pod_change(Pod(tc["pod"]), tc["old"], tc["new"]) == tc["want"]


def test_events_to_register() -> None:
    """EventsToRegister with queueing hints enabled (the v1.34 default)."""
    pl = make_plugin()
    events = pl.events_to_register()
    assert [e.event for e in events] == [
        ClusterEvent(
            "Pod",
            ActionType.ADD
            | ActionType.UPDATE_POD_LABEL
            | ActionType.UPDATE_POD_TOLERATION
            | ActionType.DELETE,
        ),
        ClusterEvent(
            "Node",
            ActionType.ADD
            | ActionType.DELETE
            | ActionType.UPDATE_NODE_LABEL
            | ActionType.UPDATE_NODE_TAINT,
        ),
    ]
    assert events[0].hint == pl.is_schedulable_after_pod_change
    assert events[1].hint == pl.is_schedulable_after_node_change


# =====================================================================================================
# PodTopologySpreadArgs: v1 defaults and validation_pluginargs_test.go TestValidatePodTopologySpreadArgs
# =====================================================================================================


def test_args_defaults() -> None:
    """SetDefaults_PodTopologySpreadArgs (v1): defaultingType System; System means hostname maxSkew 3
    and zone maxSkew 5, both ScheduleAnyway (plugin.go systemDefaultConstraints)."""
    a = PodTopologySpreadArgs()
    assert (a.default_constraints, a.defaulting_type) == ([], "System")
    pl = build_plugin(PodTopologySpread, {}, make_handle())
    assert pl.system_defaulted
    assert pl.default_constraints == [
        {"topologyKey": HOSTNAME, "whenUnsatisfiable": SA, "maxSkew": 3},
        {"topologyKey": ZONE, "whenUnsatisfiable": SA, "maxSkew": 5},
    ]
    assert PodTopologySpread.args_kind == "PodTopologySpreadArgs"
    assert PodTopologySpread.name == "PodTopologySpread"
    listed = build_plugin(PodTopologySpread, list_args([tsc(1, "node", DNS)]), make_handle())
    assert not listed.system_defaulted and listed.default_constraints == [tsc(1, "node", DNS)]


def _va(name: str, args: dict[str, Any], err: str | None) -> Any:
    return P("TestValidatePodTopologySpreadArgs", name, args, err)


VALIDATION_CASES = [
    _va("valid config", list_args([tsc(1, "node", DNS), tsc(2, "zone", SA)]), None),
    _va(
        "maxSkew less than zero",
        list_args([tsc(-1, "node", DNS)]),
        "args.defaultConstraints[0].maxSkew: Invalid value: -1: not in valid range (0, inf)",
    ),
    _va(
        "empty topology key",
        list_args([tsc(1, "", DNS)]),
        "args.defaultConstraints[0].topologyKey: Required value: can not be empty",
    ),
    _va(
        "whenUnsatisfiable is empty",
        list_args([tsc(1, "node", "")]),
        "args.defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty",
    ),
    _va(
        "whenUnsatisfiable contains unsupported action",
        list_args([tsc(1, "node", "unknown action")]),
        'args.defaultConstraints[0].whenUnsatisfiable: Unsupported value: "unknown action": supported values: "DoNotSchedule", "ScheduleAnyway"',
    ),
    _va(
        "duplicated constraints",
        list_args([tsc(1, "node", DNS), tsc(2, "node", DNS)]),
        'args.defaultConstraints[1]: Duplicate value: "{node, DoNotSchedule}"',
    ),
    _va(
        "label selector present",
        list_args([{**tsc(1, "key", DNS), "labelSelector": {"matchLabels": {"a": "b"}}}]),
        "args.defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod",
    ),
    _va("list default constraints, no constraints", {"defaultingType": "List"}, None),
    _va("system default constraints", {"defaultingType": "System"}, None),
    _va(
        "wrong constraints",
        {"defaultingType": "unknown"},
        'args.defaultingType: Unsupported value: "unknown": supported values: "System", "List"',
    ),
    _va(
        "system default constraints, but has constraints",
        {"defaultConstraints": [tsc(1, "key", DNS)], "defaultingType": "System"},
        'args.defaultingType: Invalid value: "System": when .defaultConstraints are not empty',
    ),
]


@pytest.mark.parametrize(("args", "err"), VALIDATION_CASES)
def test_validate_pod_topology_spread_args(args: dict[str, Any], err: str | None) -> None:
    if err is None:
        build_plugin(PodTopologySpread, args, make_handle())
        return
    with pytest.raises(ArgsError) as ei:
        build_plugin(PodTopologySpread, args, make_handle())
    assert str(ei.value) == err


def test_validate_args_extra() -> None:
    """Beyond the Go table: defaultConstraints without defaultingType get the v1 default (System)
    and are rejected; several errors are aggregated as ``[e1, e2]``; topologyKey is a label name."""
    with pytest.raises(ArgsError) as ei:
        build_plugin(
            PodTopologySpread, {"defaultConstraints": [tsc(1, "node", DNS)]}, make_handle()
        )
    assert (
        str(ei.value)
        == 'args.defaultingType: Invalid value: "System": when .defaultConstraints are not empty'
    )
    with pytest.raises(ArgsError) as ei:
        build_plugin(PodTopologySpread, list_args([tsc(0, "", DNS)]), make_handle())
    assert str(ei.value) == (
        "args: [defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf), "
        "defaultConstraints[0].topologyKey: Required value: can not be empty]"
    )
    with pytest.raises(ArgsError) as ei:
        build_plugin(PodTopologySpread, list_args([tsc(1, "a/b/c", DNS)]), make_handle())
    assert "a valid label key must consist of alphanumeric characters" in str(ei.value)
    assert str(ei.value).startswith(
        'args.defaultConstraints[0].topologyKey: Invalid value: "a/b/c": '
    )


# =====================================================================================================
# helper/spread_test.go: TestGetPodServices (DefaultSelector's service lookup)
# =====================================================================================================

_SERVICES = [service({"app": f"test-{i}"}, name=f"service-{i}", namespace="test") for i in range(3)]


@pytest.mark.parametrize(
    ("i", "want"),
    [
        P("TestGetPodServices", f"GetPodServices for pod-{i}", i, [f"service-{i}"] if i < 3 else [])
        for i in range(5)
    ],
)
def test_get_pod_services(i: int, want: list[str]) -> None:
    handle = make_handle(objects=_SERVICES)
    p = (
        make_pod()
        .name(f"test-pod-{i}")
        .namespace("test")
        .labels({"app": f"test-{i}", "label": f"label-{i}"})
        .pod()
    )
    assert [s["metadata"]["name"] for s in get_pod_services(handle.objects, p)] == want


# =====================================================================================================
# Beyond the Go tables (ids prefixed "kubesched/"): DefaultSelector owners, v1.34 quirks, cloning
# =====================================================================================================


def _owned(kind: str, api_version: str, name: str = "owner") -> dict[str, Any]:
    return (
        pod("p")
        .namespace("default")
        .label("app", "web")
        .label("tier", "fe")
        .owner_reference(name, kind, api_version=api_version)
        .obj()
    )


@pytest.mark.parametrize(
    ("owner_pod", "objs", "want"),
    [
        pytest.param(
            _owned("ReplicationController", "v1"),
            [
                {
                    "apiVersion": "v1",
                    "kind": "ReplicationController",
                    "metadata": {"name": "owner"},
                    "spec": {"selector": {"app": "web"}},
                },
                service({"tier": "fe"}),
            ],
            sel().label("app", "web").label("tier", "fe").obj(),
            id="kubesched/DefaultSelector/service and replication controller labels are merged",
        ),
        pytest.param(
            _owned("StatefulSet", "apps/v1"),
            [
                {
                    "apiVersion": "apps/v1",
                    "kind": "StatefulSet",
                    "metadata": {"name": "owner"},
                    "spec": {"selector": sel().in_("app", ["web", "api"]).obj()},
                }
            ],
            sel().in_("app", ["web", "api"]).obj(),
            id="kubesched/DefaultSelector/statefulset selector expressions",
        ),
        pytest.param(
            _owned("ReplicaSet", "extensions/v1beta1"),
            [replica_set("owner", FOO)],
            None,
            id="kubesched/DefaultSelector/owner of an unsupported group version is ignored",
        ),
        pytest.param(
            _owned("ReplicaSet", "apps/v1"),
            [service(None)],
            None,
            id="kubesched/DefaultSelector/service with nil selector matches nothing and owner is missing",
        ),
    ],
)
def test_default_selector(owner_pod: dict[str, Any], objs: list[dict[str, Any]], want: Any) -> None:
    pl = make_plugin([hn("node-a").obj()], [], objs, list_args([tsc(1, HOSTNAME, SA)]))
    cs = CycleState()
    s = pl.pre_score(cs, Pod(owner_pod), pl._handle.snapshot().list())
    if want is None:
        assert s is not None and s.is_skip()
        return
    assert s is None
    assert got_constraints(cs.read(PRE_SCORE_STATE_KEY).constraints) == [C(1, HOSTNAME, want)]


def test_empty_label_selector_counts_no_pod_as_v1_36() -> None:
    """countPodsMatchSelector returns 0 for an empty (match-all) selector in v1.34 and still in
    v1.36.3 (kubernetes#116607, fixed on master after v1.36 by kubernetes#141339): ``labelSelector: {}`` spreads nothing,
    although the incoming pod still matches itself."""
    p = pod("p").label("foo", "").spread_constraint(1, "zone", DNS, sel().obj()).obj()
    pl = make_plugin(NODES_AB_XY, PODS_5, nip=True, mlk=True)
    cs = CycleState()
    assert pl.pre_filter(cs, Pod(p), pl._handle.snapshot().list()) is None
    state = cs.read(PRE_FILTER_STATE_KEY)
    assert state.tp_value_to_match_num == [{"zone1": 0, "zone2": 0}]
    assert state.self_match == [1]
    assert all(pl.filter(cs, Pod(p), ni) is None for ni in pl._handle.snapshot().list())


def test_match_label_keys_already_merged_by_the_api_server() -> None:
    """MatchLabelKeysInPodTopologySpreadSelectorMerge (beta, on since v1.34) is API-server side:
    pod creation appends ``key In (value)`` for each matchLabelKeys key to the labelSelector
    (registry/core/pod/strategy.go ``applyMatchLabelKeys``), and the scheduler merges the keys
    again. A pod as the API server stores it (from ``kubesched run``) and the same pod as written
    (from a ``simulate`` file) count the same pods: the repeated requirement changes nothing."""
    written = pod("p").label("foo", "a").spread_constraint(1, "zone", DNS, sel().obj(), None, None, None, ["foo"]).obj()
    stored = (
        pod("p")
        .label("foo", "a")
        .spread_constraint(
            1,
            "zone",
            DNS,
            {"matchExpressions": [{"key": "foo", "operator": "In", "values": ["a"]}]},
            None,
            None,
            None,
            ["foo"],
        )
        .obj()
    )
    counts = []
    for p in (written, stored):
        pl = make_plugin(NODES_AB_XY, PODS_FOO_A_5, nip=True, mlk=True)
        cs = CycleState()
        assert pl.pre_filter(cs, Pod(p), pl._handle.snapshot().list()) is None
        counts.append(cs.read(PRE_FILTER_STATE_KEY).tp_value_to_match_num)
    assert counts == [[{"zone1": 3, "zone2": 2}], [{"zone1": 3, "zone2": 2}]]


def test_pre_filter_state_clone_is_independent() -> None:
    """Preemption clones the CycleState and adds/removes pods on the copy."""
    p = Pod(PREEMPTOR_NODE)
    pl = make_plugin(
        [zn("node-a", "zone1"), zn("node-b", "zone1")], _foo_pods(("p-b1", "node-b")), nip=True
    )
    snapshot = pl._handle.snapshot()
    cs = CycleState()
    assert pl.pre_filter(cs, p, snapshot.list()) is None
    copy_ = cs.clone()
    assert (
        pl.pre_filter_add_pod(
            copy_, p, Pod(pod("p-a1").node("node-a").label("foo", "").obj()), snapshot.get("node-a")
        )
        is None
    )
    assert copy_.read(PRE_FILTER_STATE_KEY).tp_value_to_match_num == [{"node-a": 1, "node-b": 1}]
    assert cs.read(PRE_FILTER_STATE_KEY).tp_value_to_match_num == [{"node-a": 0, "node-b": 1}]
    assert cs.read(PRE_FILTER_STATE_KEY).critical_paths[0].as_tuples() == (
        ("node-a", 0),
        ("node-b", 1),
    )


def test_missing_state_is_an_error() -> None:
    pl = make_plugin([zn("node-a", "zone1")])
    ni = pl._handle.snapshot().get("node-a")
    p = Pod(PREEMPTOR_NODE)
    for status in (
        pl.pre_filter_add_pod(CycleState(), p, p, ni),
        pl.pre_filter_remove_pod(CycleState(), p, p, ni),
        pl.normalize_score(CycleState(), p, []),
        pl.score(CycleState(), p, ni)[1],
    ):
        assert status.code == Code.ERROR and status.message.endswith("from cycleState: not found")


def test_invalid_label_selector_is_an_error() -> None:
    p = (
        pod("p")
        .spread_constraint(
            1, "zone", DNS, {"matchExpressions": [{"key": "a", "operator": "Bogus"}]}
        )
        .obj()
    )
    pl = make_plugin([zn("node-a", "zone1")])
    s = pl.pre_filter(CycleState(), Pod(p), pl._handle.snapshot().list())
    assert s is not None and s.code == Code.ERROR
    assert s.message.startswith(
        "get constraints from pod: obtaining pod's hard topology spread constraints: "
    )
