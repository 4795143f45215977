"""InterPodAffinity, table-driven tests transcribed from kube-scheduler's Go tests.

Sources (kubernetes/kubernetes, pkg/scheduler/framework/plugins/interpodaffinity/):
``filtering_test.go`` (TestRequiredAffinitySingleNode, TestRequiredAffinityMultipleNodes,
TestPreFilterDisabled, TestPreFilterStateAddRemovePod, TestPreFilterStateClone,
TestGetTPMapMatchingIncomingAffinityAntiAffinity), ``scoring_test.go`` (TestPreferredAffinity,
TestPreferredAffinityWithHardPodAffinitySymmetricWeight), ``plugin_test.go``
(Test_isSchedulableAfterPodChange, Test_isSchedulableAfterNodeChange) and
``pkg/scheduler/apis/config/validation/validation_pluginargs_test.go``
(TestValidateInterPodAffinityArgs).

Go's empty namespace ("") is kubesched's "default" (a Pod view without a namespace is in
"default"), so ``Namespaces: []string{""}`` is transcribed as ``["default"]``. Go test pods
often have no name; each gets a unique uid here so the snapshot keeps them apart.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from kubesched.runtime.plugins.interpodaffinity import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    InterPodAffinity,
    InterPodAffinityArgs,
)
from kubesched.runtime.plugins.interpodaffinity.filtering import (
    PRE_FILTER_STATE_KEY,
    PreFilterState,
    incoming_affinity_anti_affinity_counts,
)
from kubesched.runtime.plugins.interpodaffinity.terms import pod_terms
from kubesched.sdk import (
    ActionType,
    ArgsError,
    Code,
    CycleState,
    NodeScore,
    Pod,
    QueueingHint,
    Status,
)
from kubesched.sdk.status import as_status
from kubesched.testing import build_plugin, make_handle, make_node, make_pod

# helpers ------------------------------------------------------------------------------------

_uids = itertools.count(1)


def _uid() -> str:
    return f"uid-{next(_uids)}"


def mk() -> Any:
    """st.MakePod(), with a unique uid."""
    return make_pod().uid(_uid())


def pod(
    name: str = "",
    namespace: str = "",
    labels: dict[str, str] | None = None,
    node: str = "",
    affinity: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``&v1.Pod{...}`` literal."""
    md: dict[str, Any] = {"name": name, "uid": _uid()}
    if namespace:
        md["namespace"] = namespace
    if labels:
        md["labels"] = dict(labels)
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "pause"}]}
    if node:
        spec["nodeName"] = node
    if affinity is not None:
        spec["affinity"] = affinity
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec, "status": {}}


def node(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    """A ``v1.Node{ObjectMeta: {Name, Labels}}`` literal (no hostname label added)."""
    md: dict[str, Any] = {"name": name}
    if labels is not None:
        md["labels"] = dict(labels)
    return {"apiVersion": "v1", "kind": "Node", "metadata": md, "spec": {}, "status": {}}


def expr(key: str, op: str, values: list[str] | None = None) -> dict[str, Any]:
    e: dict[str, Any] = {"key": key, "operator": op}
    if values is not None:
        e["values"] = list(values)
    return e


def term(
    *exprs: dict[str, Any],
    topology_key: str = "",
    namespaces: list[str] | None = None,
    namespace_selector: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A v1.PodAffinityTerm whose labelSelector has these matchExpressions."""
    t: dict[str, Any] = {"labelSelector": {"matchExpressions": list(exprs)}, "topologyKey": topology_key}
    if namespaces is not None:
        t["namespaces"] = list(namespaces)
    if namespace_selector is not None:
        t["namespaceSelector"] = namespace_selector
    return t


def weighted(weight: int, t: dict[str, Any]) -> dict[str, Any]:
    return {"weight": weight, "podAffinityTerm": t}


def create_pod_with_affinity_terms(
    namespace: str, node_name: str, labels: dict[str, str], affinity: list[Any] | None, anti_affinity: list[Any] | None
) -> dict[str, Any]:
    """createPodWithAffinityTerms."""
    return pod(
        namespace=namespace,
        node=node_name,
        labels=labels,
        affinity={
            "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": affinity},
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": anti_affinity},
        },
    )


def namespace_obj(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name}
    if labels:
        md["labels"] = dict(labels)
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": md}


def unschedulable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE, *reasons)


def unresolvable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)


def assert_status(got: Any, want: Status | None) -> None:
    g = as_status(got)
    w = as_status(want)
    assert (g.code, g.reasons) == (w.code, w.reasons)


NS_LABEL_T1 = {"team": "team1"}
NS_LABEL_T2 = {"team": "team2"}
NAMESPACES = [
    namespace_obj("subteam1.team1", NS_LABEL_T1),
    namespace_obj("subteam2.team1", NS_LABEL_T1),
    namespace_obj("subteam1.team2", NS_LABEL_T2),
    namespace_obj("subteam2.team2", NS_LABEL_T2),
]

DEFAULT_NAMESPACE = "default"  # Go's defaultNamespace = ""

BAD_VALUE_MSG = (
    'parsing pod: requiredAffinityTerms: values[0][service]: Invalid value: "{{.bad-value.}}": '
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
    "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


# filtering_test.go: TestRequiredAffinitySingleNode -------------------------------------------

_podLabel = {"service": "securityscan"}
_podLabel2 = {"security": "S1"}
_labels1 = {"region": "r1", "zone": "z11"}


def _single_node_cases() -> list[Any]:
    existing = mk().labels(_podLabel).node("node1").obj()
    node1 = node("node1", _labels1)
    T = "TestRequiredAffinitySingleNode/"
    team1_sel = {"matchExpressions": [expr("team", "In", ["team1"])]}
    return [
        pytest.param(
            pod(), [], node1, Status.skip(), None,
            id=T + "A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
        ),
        pytest.param(
            mk().namespace(DEFAULT_NAMESPACE).labels(_podLabel2).pod_affinity_in("service", "region", ["securityscan", "value2"]).obj(),
            [existing], node1, None, None,
            id=T + "satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches the existing pod",
        ),
        pytest.param(
            mk().namespace(DEFAULT_NAMESPACE).labels(_podLabel2)
            .pod_affinity_term(term(expr("service", "NotIn", ["securityscan3", "value3"]), topology_key="region")).obj(),
            [existing], node1, None, None,
            id=T + "satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator in labelSelector that matches the existing pod",
        ),
        pytest.param(
            create_pod_with_affinity_terms(
                DEFAULT_NAMESPACE, "", _podLabel2,
                [term(expr("service", "In", ["securityscan", "value2"]), namespaces=["DiffNameSpace"])], None,
            ),
            [mk().namespace("ns").label("service", "securityscan").node("node1").obj()], node1,
            None, unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH),
            id=T + "Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
        ),
        pytest.param(
            mk().namespace(DEFAULT_NAMESPACE).labels(_podLabel).pod_affinity_in("service", "", ["antivirusscan", "value2"]).obj(),
            [existing], node1, None, unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH),
            id=T + "Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
        ),
        pytest.param(
            create_pod_with_affinity_terms(
                DEFAULT_NAMESPACE, "", _podLabel2,
                [
                    term(expr("service", "Exists"), expr("wrongkey", "DoesNotExist"), topology_key="region"),
                    term(expr("service", "In", ["securityscan"]), expr("service", "NotIn", ["WrongValue"]), topology_key="region"),
                ],
                None,
            ),
            [existing], node1, None, None,
            id=T + "satisfies the PodAffinity with different label Operators in multiple RequiredDuringSchedulingIgnoredDuringExecution ",
        ),
        pytest.param(
            create_pod_with_affinity_terms(
                DEFAULT_NAMESPACE, "", _podLabel2,
                [
                    term(expr("service", "Exists"), expr("wrongkey", "DoesNotExist"), topology_key="region"),
                    term(expr("service", "In", ["securityscan2"]), expr("service", "NotIn", ["WrongValue"]), topology_key="region"),
                ],
                None,
            ),
            [existing], node1, None, unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH),
            id=T + "The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the node because one of the matchExpression item don't match.",
        ),
        pytest.param(
            mk().namespace(DEFAULT_NAMESPACE).labels(_podLabel2)
            .pod_affinity_in("service", "region", ["securityscan", "value2"])
            .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"]).obj(),
            [existing], node1, None, None,
            id=T + "satisfies the PodAffinity and PodAntiAffinity with the existing pod",
        ),
        pytest.param(
            mk().namespace(DEFAULT_NAMESPACE).labels(_podLabel2)
            .pod_affinity_in("service", "region", ["securityscan", "value2"])
            .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"]).obj(),
            [mk().namespace(DEFAULT_NAMESPACE).node("node1").labels(_podLabel)
             .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"]).obj()],
            node1, None, None,
            id=T + "satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
        ),
        pytest.param(
            mk().namespace(DEFAULT_NAMESPACE).labels(_podLabel2)
            .pod_affinity_in("service", "region", ["securityscan", "value2"])
            .pod_anti_affinity_in("service", "zone", ["securityscan", "value2"]).obj(),
            [existing], node1, None, unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
            id=T + "satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
        ),
        pytest.param(
            mk().namespace(DEFAULT_NAMESPACE).labels(_podLabel)
            .pod_affinity_in("service", "region", ["securityscan", "value2"])
            .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"]).obj(),
            [mk().namespace(DEFAULT_NAMESPACE).labels(_podLabel).node("node1")
             .pod_anti_affinity_in("service", "zone", ["securityscan", "value2"]).obj()],
            node1, None, unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH),
            id=T + "satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the existing pod",
        ),
        pytest.param(
            mk().namespace(DEFAULT_NAMESPACE).labels(_podLabel)
            .pod_affinity_term(term(expr("service", "NotIn", ["securityscan", "value2"]), topology_key="region")).obj(),
            [mk().label("service", "securityscan").node("node2").obj()], node1,
            None, unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH),
            id=T + "pod matches its own Label in PodAffinity and that matches the existing pod Labels",
        ),
        pytest.param(
            mk().labels(_podLabel).obj(),
            [mk().namespace(DEFAULT_NAMESPACE).node("node1").labels(_podLabel)
             .pod_anti_affinity_in("service", "zone", ["securityscan", "value2"]).obj()],
            node1, None, unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH),
            id=T + "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod",
        ),
        pytest.param(
            mk().labels(_podLabel).obj(),
            [mk().namespace(DEFAULT_NAMESPACE).node("node1").labels(_podLabel)
             .pod_affinity_term(term(expr("service", "NotIn", ["securityscan", "value2"]), topology_key="zone"), anti=True).obj()],
            node1, Status.skip(), None,
            id=T + "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. satisfy PodAntiAffinity symmetry with the existing pod",
        ),
        pytest.param(
            mk().namespace(DEFAULT_NAMESPACE).labels(_podLabel)
            .pod_anti_affinity_exists("service", "region").pod_anti_affinity_exists("security", "region").obj(),
            [mk().namespace(DEFAULT_NAMESPACE).node("node1").labels(_podLabel2)
             .pod_anti_affinity_exists("security", "zone").obj()],
            node1, None, unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
            id=T + "satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with incoming pod",
        ),
        pytest.param(
            mk().namespace(DEFAULT_NAMESPACE).labels(_podLabel)
            .pod_anti_affinity_exists("service", "zone").pod_anti_affinity_exists("security", "zone").obj(),
            [mk().namespace(DEFAULT_NAMESPACE).node("node1").labels(_podLabel2)
             .pod_anti_affinity_exists("security", "zone").obj()],
            node1, None, unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
            id=T + "PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms",
        ),
        pytest.param(
            mk().namespace(DEFAULT_NAMESPACE).labels(_podLabel2).pod_anti_affinity_exists("security", "zone").obj(),
            [mk().namespace(DEFAULT_NAMESPACE).node("node1").labels(_podLabel)
             .pod_anti_affinity_exists("service", "zone").pod_anti_affinity_exists("security", "zone").obj()],
            node1, None, unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH),
            id=T + "PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms",
        ),
        pytest.param(
            mk().namespace(DEFAULT_NAMESPACE).labels({"abc": "", "xyz": ""})
            .pod_anti_affinity_exists("abc", "zone").pod_anti_affinity_exists("def", "zone").obj(),
            [mk().namespace(DEFAULT_NAMESPACE).node("node1").labels({"def": "", "xyz": ""})
             .pod_anti_affinity_exists("abc", "zone").pod_anti_affinity_exists("def", "zone").obj()],
            node1, None, unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
            id=T + "PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on AffinityTerms",
        ),
        pytest.param(
            mk().namespace(DEFAULT_NAMESPACE).labels({"def": "", "xyz": ""})
            .pod_anti_affinity_exists("abc", "zone").pod_anti_affinity_exists("def", "zone").obj(),
            [mk().namespace(DEFAULT_NAMESPACE).node("node1").labels({"abc": "", "xyz": ""})
             .pod_anti_affinity_exists("abc", "zone").pod_anti_affinity_exists("def", "zone").obj()],
            node1, None, unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
            id=T + "PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on AffinityTerms",
        ),
        pytest.param(
            mk().namespace(DEFAULT_NAMESPACE).labels(_podLabel)
            .pod_affinity_in("service", "region", ["{{.bad-value.}}"])
            .pod_affinity_in("service", "node", ["antivirusscan", "value2"]).obj(),
            [], node1, unresolvable(BAD_VALUE_MSG), None,
            id=T + "PodAffinity fails PreFilter with an invalid affinity label syntax",
        ),
        pytest.param(
            mk().namespace(DEFAULT_NAMESPACE).labels(_podLabel)
            .pod_affinity_in("service", "region", ["foo"])
            .pod_affinity_in("service", "node", ["{{.bad-value.}}"]).obj(),
            [], node1, unresolvable(BAD_VALUE_MSG), None,
            id=T + "PodAntiAffinity fails PreFilter with an invalid antiaffinity label syntax",
        ),
        pytest.param(
            create_pod_with_affinity_terms(
                DEFAULT_NAMESPACE, "", _podLabel2,
                [term(expr("service", "In", ["securityscan", "value2"]), namespace_selector=team1_sel, topology_key="region")], None,
            ),
            [pod(node="node1", namespace="subteam1.team1", labels=_podLabel)], node1, None, None,
            id=T + "affinity with NamespaceSelector",
        ),
        pytest.param(
            create_pod_with_affinity_terms(
                DEFAULT_NAMESPACE, "", _podLabel2,
                [term(expr("service", "In", ["securityscan", "value2"]), namespace_selector=team1_sel, topology_key="region")], None,
            ),
            [pod(node="node1", namespace="subteam1.team2", labels=_podLabel)], node1,
            None, unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH),
            id=T + "affinity with non-matching NamespaceSelector",
        ),
        pytest.param(
            create_pod_with_affinity_terms(
                "subteam1.team1", "", _podLabel2, None,
                [term(expr("service", "In", ["securityscan", "value2"]), namespace_selector=team1_sel, topology_key="zone")],
            ),
            [pod(node="node1", namespace="subteam2.team1", labels=_podLabel)], node1,
            None, unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
            id=T + "anti-affinity with matching NamespaceSelector",
        ),
        pytest.param(
            create_pod_with_affinity_terms(
                "subteam1.team1", "", _podLabel2, None,
                [term(expr("service", "In", ["securityscan", "value2"]), namespace_selector={}, topology_key="zone")],
            ),
            [pod(node="node1", namespace="subteam2.team1", labels=_podLabel)], node1,
            None, unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
            id=T + "anti-affinity with matching all NamespaceSelector",
        ),
        pytest.param(
            create_pod_with_affinity_terms(
                "subteam1.team1", "", _podLabel2, None,
                [term(expr("service", "In", ["securityscan", "value2"]), namespace_selector=team1_sel, topology_key="zone")],
            ),
            [pod(node="node1", namespace="subteam1.team2", labels=_podLabel)], node1, None, None,
            id=T + "anti-affinity with non-matching NamespaceSelector",
        ),
    ]


@pytest.mark.parametrize(("incoming", "pods", "node1", "want_pre_filter", "want_filter"), _single_node_cases())
def test_required_affinity_single_node(
    incoming: dict[str, Any], pods: list[dict[str, Any]], node1: dict[str, Any], want_pre_filter: Status | None, want_filter: Status | None
) -> None:
    handle = make_handle([node1], pods, NAMESPACES)
    pl = build_plugin(InterPodAffinity, {}, handle)
    state = CycleState()
    p = Pod(incoming)
    got_pre = as_status(pl.pre_filter(state, p, handle.snapshot().list()))
    assert_status(got_pre, want_pre_filter)
    if not got_pre.is_success():
        return
    ni = handle.snapshot().get(node1["metadata"]["name"])
    assert_status(pl.filter(state, p, ni), want_filter)


# filtering_test.go: TestRequiredAffinityMultipleNodes ----------------------------------------

_podLabelA = {"foo": "bar"}
_labelRgChina = {"region": "China"}
_labelRgChinaAzAz1 = {"region": "China", "az": "az1"}
_labelRgIndia = {"region": "India"}


def _multi_node_cases() -> list[Any]:
    T = "TestRequiredAffinityMultipleNodes/"
    anti = unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
    existing_anti = unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
    aff = unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH)

    def ab(za: str = "z1", zb: str = "z1") -> list[dict[str, Any]]:
        return [
            node("nodeA", {"region": "r1", "zone": za, "hostname": "nodeA"}),
            node("nodeB", {"region": "r1", "zone": zb, "hostname": "nodeB"}),
        ]

    return [
        pytest.param(
            mk().namespace(DEFAULT_NAMESPACE).pod_affinity_in("foo", "region", ["bar"]).obj(),
            [mk().name("p1").node("node1").labels(_podLabelA).obj()],
            [node("node1", _labelRgChina), node("node2", _labelRgChinaAzAz1), node("node3", _labelRgIndia)],
            None, [None, None, aff],
            id=T + "A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them has an existing pod that matches the affinity rules",
        ),
        pytest.param(
            mk().namespace(DEFAULT_NAMESPACE).labels({"foo": "bar", "service": "securityscan"})
            .pod_affinity_in("foo", "zone", ["bar"]).pod_affinity_in("service", "zone", ["securityscan"]).obj(),
            [mk().name("p1").node("nodeA").labels({"foo": "bar"}).obj()],
            [node("nodeA", {"zone": "az1", "hostname": "h1"}), node("nodeB", {"zone": "az2", "hostname": "h2"})],
            None, [None, None],
            id=T + "The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of the collection "
            "should not be blocked from being scheduled onto any node, even there's no existing pod that matches the rule anywhere.",
        ),
        pytest.param(
            mk().namespace(DEFAULT_NAMESPACE).labels({"foo": "bar", "service": "securityscan"})
            .pod_affinity_in("foo", "zone", ["bar"]).pod_affinity_in("service", "zone", ["securityscan"]).obj(),
            [mk().name("p1").node("nodeA").labels({"foo": "bar"}).obj()],
            [node("nodeA", {"zoneLabel": "az1", "hostname": "h1"}), node("nodeB", {"zoneLabel": "az2", "hostname": "h2"})],
            None, [aff, aff],
            id=T + "The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys",
        ),
        pytest.param(
            mk().namespace(DEFAULT_NAMESPACE).pod_anti_affinity_in("foo", "region", ["abc"]).obj(),
            [mk().node("nodeA").labels({"foo": "abc"}).obj()],
            [node("nodeA", {"region": "r1", "hostname": "nodeA"}), node("nodeB", {"region": "r1", "hostname": "nodeB"})],
            None, [anti, anti],
            id=T + "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
        ),
        pytest.param(
            mk().namespace(DEFAULT_NAMESPACE).pod_anti_affinity_in("foo", "region", ["abc"])
            .pod_anti_affinity_in("service", "zone", ["securityscan"]).obj(),
            [mk().node("nodeA").labels({"foo": "abc", "service": "securityscan"}).obj()],
            [node("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}), node("nodeB", {"region": "r1", "zone": "z2", "hostname": "nodeB"})],
            None, [anti, anti],
            id=T + "This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod.",
        ),
        pytest.param(
            mk().namespace(DEFAULT_NAMESPACE).pod_anti_affinity_in("foo", "region", ["abc"]).obj(),
            [mk().node("nodeA").labels({"foo": "abc"}).obj()],
            [node("nodeA", _labelRgChina), node("nodeB", _labelRgChinaAzAz1), node("nodeC", _labelRgIndia)],
            None, [anti, anti, None],
            id=T + "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
        ),
        pytest.param(
            mk().namespace("NS1").labels({"foo": "123"}).pod_anti_affinity_in("foo", "region", ["bar"]).obj(),
            [
                mk().node("nodeA").namespace("NS1").labels({"foo": "bar"}).obj(),
                mk().node("nodeC").namespace("NS2").pod_anti_affinity_in("foo", "region", ["123"]).obj(),
            ],
            [node("nodeA", _labelRgChina), node("nodeB", _labelRgChinaAzAz1), node("nodeC", _labelRgIndia)],
            None, [anti, anti, None],
            id=T + "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC has an existing pod that match the inter pod affinity rule but in different namespace)",
        ),
        pytest.param(
            mk().label("foo", "").obj(),
            [mk().node("nodeA").namespace(DEFAULT_NAMESPACE).pod_anti_affinity_exists("foo", "invalid-node-label").obj()],
            ab(),
            Status.skip(), [None, None],
            id=T + "Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector of the term is firstly checked, and then topologyKey of the term is also checked",
        ),
        pytest.param(
            mk().node("nodeA").namespace(DEFAULT_NAMESPACE).pod_anti_affinity_exists("foo", "invalid-node-label").obj(),
            [mk().node("nodeA").labels({"foo": ""}).obj()],
            ab(),
            None, [None, None],
            id=T + "Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches",
        ),
        pytest.param(
            mk().label("foo", "").label("bar", "").obj(),
            [
                mk().node("nodeA").namespace(DEFAULT_NAMESPACE).pod_anti_affinity_exists("foo", "zone").obj(),
                mk().node("nodeA").namespace(DEFAULT_NAMESPACE).pod_anti_affinity_exists("bar", "region").obj(),
            ],
            ab("z1", "z2"),
            None, [existing_anti, existing_anti],
            id=T + "Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each existingPod's terms on all nodes",
        ),
        pytest.param(
            mk().namespace(DEFAULT_NAMESPACE).pod_anti_affinity_exists("foo", "zone").pod_anti_affinity_exists("bar", "region").obj(),
            [mk().node("nodeA").labels({"foo": ""}).obj(), mk().node("nodeB").labels({"bar": ""}).obj()],
            ab("z1", "z2"),
            None, [anti, anti],
            id=T + "Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least violates one anti-affinity rule of existingPod",
        ),
        pytest.param(
            mk().label("foo", "").label("bar", "").obj(),
            [mk().node("nodeA").namespace(DEFAULT_NAMESPACE).pod_anti_affinity_exists("foo", "invalid-node-label")
             .pod_anti_affinity_exists("bar", "zone").obj()],
            ab("z1", "z2"),
            None, [existing_anti, None],
            id=T + "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey",
        ),
        pytest.param(
            mk().namespace(DEFAULT_NAMESPACE).pod_anti_affinity_exists("foo", "invalid-node-label")
            .pod_anti_affinity_exists("bar", "zone").obj(),
            [mk().name("podA").node("nodeA").labels({"foo": "", "bar": ""}).obj()],
            ab("z1", "z2"),
            None, [anti, None],
            id=T + "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey",
        ),
        pytest.param(
            mk().label("foo", "").label("bar", "").obj(),
            [mk().namespace(DEFAULT_NAMESPACE).node("nodeA").pod_anti_affinity_exists("foo", "region")
             .pod_anti_affinity_exists("bar", "zone").obj()],
            ab("z1", "z2"),
            None, [existing_anti, existing_anti],
            id=T + "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey",
        ),
        pytest.param(
            mk().namespace(DEFAULT_NAMESPACE).pod_anti_affinity_exists("foo", "region").pod_anti_affinity_exists("bar", "zone").obj(),
            [mk().node("nodeA").labels({"foo": "", "bar": ""}).obj()],
            ab("z1", "z2"),
            None, [anti, anti],
            id=T + "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey",
        ),
        pytest.param(
            mk().label("foo", "").label("bar", "").obj(),
            [
                mk().node("nodeA").namespace(DEFAULT_NAMESPACE).pod_anti_affinity_exists("foo", "zone")
                .pod_anti_affinity_exists("labelA", "zone").obj(),
                mk().node("nodeB").namespace(DEFAULT_NAMESPACE).pod_anti_affinity_exists("bar", "zone")
                .pod_anti_affinity_exists("labelB", "zone").obj(),
            ],
            [*ab("z1", "z2"), node("nodeC", {"region": "r1", "zone": "z3", "hostname": "nodeC"})],
            None, [existing_anti, existing_anti, None],
            id=T + "Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity term matches incoming pod, so incoming pod can only be scheduled to nodeC",
        ),
        pytest.param(
            mk().namespace(DEFAULT_NAMESPACE).pod_affinity_exists("foo", "region").pod_affinity_exists("bar", "zone").obj(),
            [mk().name("pod1").labels({"foo": "", "bar": ""}).node("nodeA").obj()],
            ab("z1", "z1"),
            None, [None, None],
            id=T + "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match",
        ),
        pytest.param(
            mk().namespace(DEFAULT_NAMESPACE).pod_affinity_exists("foo", "region").pod_affinity_exists("bar", "zone").obj(),
            [
                mk().node("nodeA").name("pod1").namespace(DEFAULT_NAMESPACE).labels({"foo": ""}).obj(),
                mk().node("nodeB").name("pod2").namespace(DEFAULT_NAMESPACE).labels({"bar": ""}).obj(),
            ],
            ab("z1", "z2"),
            None, [aff, aff],
            id=T + "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match, and the match logic should be satisfied on the same pod",
        ),
    ]


@pytest.mark.parametrize(("incoming", "pods", "nodes", "want_pre_filter", "want_filters"), _multi_node_cases())
def test_required_affinity_multiple_nodes(
    incoming: dict[str, Any],
    pods: list[dict[str, Any]],
    nodes: list[dict[str, Any]],
    want_pre_filter: Status | None,
    want_filters: list[Status | None],
) -> None:
    handle = make_handle(nodes, pods, [namespace_obj("NS1")])
    pl = build_plugin(InterPodAffinity, {}, handle)
    state = CycleState()
    p = Pod(incoming)
    got_pre = as_status(pl.pre_filter(state, p, handle.snapshot().list()))
    assert_status(got_pre, want_pre_filter)
    if got_pre.is_skip():
        return
    for n, want in zip(nodes, want_filters, strict=True):
        ni = handle.snapshot().get(n["metadata"]["name"])
        assert_status(pl.filter(state, p, ni), want)


# filtering_test.go: TestPreFilterDisabled ----------------------------------------------------


def test_pre_filter_disabled() -> None:
    """TestPreFilterDisabled: Filter without PreFilter's state is an error."""
    handle = make_handle([node("n")])
    pl = build_plugin(InterPodAffinity, {}, handle)
    got = as_status(pl.filter(CycleState(), Pod(pod()), handle.snapshot().get("n")))
    assert got.code == Code.ERROR
    assert got.reasons == ['error reading "PreFilterInterPodAffinity" from cycleState: not found']


# filtering_test.go: TestPreFilterStateAddRemovePod -------------------------------------------

_label1 = {"region": "r1", "zone": "z11"}
_label2 = {"region": "r1", "zone": "z12"}
_label3 = {"region": "r2", "zone": "z21"}
_selector1 = {"foo": "bar"}
_antiAffinityFooBar = {"requiredDuringSchedulingIgnoredDuringExecution": [term(expr("foo", "In", ["bar"]), topology_key="region")]}
_antiAffinityComplex = {
    "requiredDuringSchedulingIgnoredDuringExecution": [
        term(expr("foo", "In", ["bar", "buzz"]), topology_key="region"),
        term(expr("service", "NotIn", ["bar", "security", "test"]), topology_key="zone"),
    ]
}
_affinityComplex = {
    "requiredDuringSchedulingIgnoredDuringExecution": [
        term(expr("foo", "In", ["bar", "buzz"]), topology_key="region"),
        term(expr("service", "NotIn", ["bar", "security", "test"]), topology_key="zone"),
    ]
}


def _add_remove_cases() -> list[Any]:
    T = "TestPreFilterStateAddRemovePod/"
    nodes = [node("nodeA", _label1), node("nodeB", _label2), node("nodeC", _label3)]
    return [
        pytest.param(
            pod(name="pending", labels=_selector1, affinity={"podAntiAffinity": _antiAffinityFooBar}),
            [pod(name="p1", labels=_selector1, node="nodeA"), pod(name="p2", node="nodeC", affinity={"podAntiAffinity": _antiAffinityFooBar})],
            pod(name="addedPod", labels=_selector1, node="nodeB", affinity={"podAntiAffinity": _antiAffinityFooBar}),
            nodes,
            {("region", "r1"): 2},
            {},
            id=T + "preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
        ),
        pytest.param(
            pod(name="pending", labels=_selector1, affinity={"podAntiAffinity": _antiAffinityComplex}),
            [pod(name="p1", labels=_selector1, node="nodeA"), pod(name="p2", node="nodeC", affinity={"podAntiAffinity": _antiAffinityFooBar})],
            pod(name="addedPod", labels=_selector1, node="nodeA", affinity={"podAntiAffinity": _antiAffinityComplex}),
            nodes,
            {("region", "r1"): 2, ("zone", "z11"): 2, ("zone", "z21"): 1},
            {},
            id=T + "preFilterState anti-affinity terms are updated correctly after adding and removing a pod (2)",
        ),
        pytest.param(
            pod(name="pending", labels=_selector1, affinity={"podAffinity": _affinityComplex}),
            [
                pod(name="p1", labels=_selector1, node="nodeA"),
                pod(name="p2", node="nodeC", affinity={"podAntiAffinity": _antiAffinityFooBar, "podAffinity": _affinityComplex}),
            ],
            pod(name="addedPod", labels=_selector1, node="nodeA", affinity={"podAntiAffinity": _antiAffinityComplex}),
            nodes,
            {},
            {("region", "r1"): 2, ("zone", "z11"): 2},
            id=T + "preFilterState matching pod affinity and anti-affinity are updated correctly after adding and removing a pod",
        ),
    ]


def _counts(s: PreFilterState) -> tuple[dict[Any, int], dict[Any, int], dict[Any, int]]:
    return (s.existing_anti_affinity_counts, s.affinity_counts, s.anti_affinity_counts)


@pytest.mark.parametrize(
    ("pending", "existing_pods", "added", "nodes", "expected_anti_affinity", "expected_affinity"), _add_remove_cases()
)
def test_pre_filter_state_add_remove_pod(
    pending: dict[str, Any],
    existing_pods: list[dict[str, Any]],
    added: dict[str, Any],
    nodes: list[dict[str, Any]],
    expected_anti_affinity: dict[Any, int],
    expected_affinity: dict[Any, int],
) -> None:
    pending_pod = Pod(pending)
    added_pod = Pod(added)

    def get_state(pods: list[Any]) -> tuple[Any, CycleState, PreFilterState, Any]:
        handle = make_handle(nodes, pods, [])
        pl = build_plugin(InterPodAffinity, {}, handle)
        cs = CycleState()
        st = as_status(pl.pre_filter(cs, pending_pod, handle.snapshot().list()))
        assert st.is_success(), st
        return pl, cs, cs.read(PRE_FILTER_STATE_KEY), handle

    # allPodsState is the state produced when all pods, including the added pod, are given to prefilter.
    _, _, all_pods_state, _ = get_state([*existing_pods, added_pod])
    # state is produced for the existing pods (without the added pod).
    pl, cs, state, handle = get_state(existing_pods)
    original_state = state.clone()

    ni = handle.snapshot().get(added_pod.node_name)
    assert as_status(pl.pre_filter_add_pod(cs, pending_pod, added_pod, ni)).is_success()
    new_state = cs.read(PRE_FILTER_STATE_KEY)
    assert new_state.anti_affinity_counts == expected_anti_affinity
    assert new_state.affinity_counts == expected_affinity
    assert _counts(all_pods_state) == _counts(state)

    # Remove the added pod and make sure it is equal to the original state.
    assert as_status(pl.pre_filter_remove_pod(cs, pending_pod, added_pod, ni)).is_success()
    assert _counts(original_state) == _counts(state)


# filtering_test.go: TestPreFilterStateClone --------------------------------------------------


def test_pre_filter_state_clone() -> None:
    """TestPreFilterStateClone."""
    source = PreFilterState(
        Pod(pod(name="p")),
        (),
        (),
        {},
        {("name", "node1"): 1, ("name", "node2"): 1},
        {("name", "nodeA"): 1, ("name", "nodeC"): 2},
        {("name", "nodeN"): 3, ("name", "nodeM"): 1},
    )
    clone = source.clone()
    assert clone is not source
    assert _counts(clone) == _counts(source)
    for a, b in zip(_counts(clone), _counts(source), strict=True):
        assert a is not b  # deep enough: AddPod/RemovePod on the clone leaves the source alone
    # the state is cloned by CycleState.clone() too
    cs = CycleState()
    cs.write(PRE_FILTER_STATE_KEY, source)
    assert cs.clone().read(PRE_FILTER_STATE_KEY) is not source


# filtering_test.go: TestGetTPMapMatchingIncomingAffinityAntiAffinity -------------------------


def _tpmap_cases() -> list[Any]:
    T = "TestGetTPMapMatchingIncomingAffinityAntiAffinity/"

    def new_pod(*labels: str) -> dict[str, Any]:
        w = mk().name("normal").node("nodeA")
        for lbl in labels:
            w.label(lbl, "")
        return w.obj()

    normal_a = new_pod("aaa")
    normal_b = new_pod("bbb")
    normal_ab = new_pod("aaa", "bbb")
    node_a = node("nodeA", {"hostname": "nodeA"})
    return [
        pytest.param([], [node_a], mk().name("aaa-normal").obj(), {}, {}, id=T + "nil test"),
        pytest.param(
            [normal_a], [node_a], mk().name("aaa-normal").obj(), {}, {},
            id=T + "incoming pod without affinity/anti-affinity causes a no-op",
        ),
        pytest.param(
            [normal_b], [node_a],
            mk().name("aaa-anti").pod_affinity_exists("aaa", "hostname").pod_anti_affinity_exists("aaa", "hostname").obj(),
            {}, {},
            id=T + "no pod has label that violates incoming pod's affinity and anti-affinity",
        ),
        pytest.param(
            [normal_a], [node_a],
            mk().name("affi-antiaffi").pod_affinity_exists("aaa", "hostname").pod_anti_affinity_exists("aaa", "hostname").obj(),
            {("hostname", "nodeA"): 1}, {("hostname", "nodeA"): 1},
            id=T + "existing pod matches incoming pod's affinity and anti-affinity - single term case",
        ),
        pytest.param(
            [normal_ab], [node_a],
            mk().name("affi-antiaffi").pod_affinity_exists("aaa", "hostname").pod_affinity_exists("bbb", "hostname")
            .pod_anti_affinity_exists("aaa", "hostname").obj(),
            {("hostname", "nodeA"): 2}, {("hostname", "nodeA"): 1},
            id=T + "existing pod matches incoming pod's affinity and anti-affinity - multiple terms case",
        ),
        pytest.param(
            [normal_a], [node_a],
            mk().name("affi-antiaffi").pod_affinity_exists("aaa", "hostname").pod_affinity_exists("bbb", "hostname")
            .pod_anti_affinity_exists("aaa", "hostname").pod_anti_affinity_exists("bbb", "hostname").obj(),
            {}, {("hostname", "nodeA"): 1},
            id=T + "existing pod not match incoming pod's affinity but matches anti-affinity",
        ),
        pytest.param(
            [normal_ab], [node_a],
            mk().name("anaffi-antiaffiti").pod_affinity_exists("aaa", "hostname").pod_affinity_exists("ccc", "hostname")
            .pod_anti_affinity_exists("aaa", "hostname").pod_anti_affinity_exists("ccc", "hostname").obj(),
            {}, {("hostname", "nodeA"): 1},
            id=T + "incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 1",
        ),
        pytest.param(
            [normal_b], [node_a],
            mk().name("affi-antiaffi").pod_affinity_exists("aaa", "hostname").pod_affinity_exists("bbb", "hostname")
            .pod_anti_affinity_exists("aaa", "hostname").pod_anti_affinity_exists("bbb", "hostname").obj(),
            {}, {("hostname", "nodeA"): 1},
            id=T + "incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 2",
        ),
    ]


@pytest.mark.parametrize(("existing_pods", "nodes", "incoming", "want_affinity", "want_anti_affinity"), _tpmap_cases())
def test_get_tp_map_matching_incoming_affinity_anti_affinity(
    existing_pods: list[dict[str, Any]],
    nodes: list[dict[str, Any]],
    incoming: dict[str, Any],
    want_affinity: dict[Any, int],
    want_anti_affinity: dict[Any, int],
) -> None:
    handle = make_handle(nodes, existing_pods)
    terms = pod_terms(Pod(incoming))
    got_aff, got_anti = incoming_affinity_anti_affinity_counts(terms.req_affinity, terms.req_anti_affinity, handle.snapshot().list())
    assert got_aff == want_affinity
    assert got_anti == want_anti_affinity


# scoring_test.go: TestPreferredAffinity --------------------------------------------------------

_labelAzAz1 = {"az": "az1"}
_labelAzAz2 = {"az": "az2"}
_S1 = {"security": "S1"}
_S2 = {"security": "S2"}


def _pref_aff(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": list(terms)}}


def _pref_anti(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": list(terms)}}


_team1_sel = {"matchExpressions": [expr("team", "In", ["team1"])]}
stayWithS1InRegion = _pref_aff(weighted(5, term(expr("security", "In", ["S1"]), topology_key="region")))
stayWithS2InRegion = _pref_aff(weighted(6, term(expr("security", "In", ["S2"]), topology_key="region")))
affinity3 = _pref_aff(
    weighted(8, term(expr("security", "NotIn", ["S1"]), expr("security", "In", ["S2"]), topology_key="region")),
    weighted(2, term(expr("security", "Exists"), expr("wrongkey", "DoesNotExist"), topology_key="region")),
)
hardAffinity = {
    "podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            term(expr("security", "In", ["S1", "value2"]), topology_key="region"),
            term(expr("security", "Exists"), expr("wrongkey", "DoesNotExist"), topology_key="region"),
        ]
    }
}
awayFromS1InAz = _pref_anti(weighted(5, term(expr("security", "In", ["S1"]), topology_key="az")))
awayFromS2InAz = _pref_anti(weighted(5, term(expr("security", "In", ["S2"]), topology_key="az")))
stayWithS1InRegionAwayFromS2InAz = {
    **_pref_aff(weighted(8, term(expr("security", "In", ["S1"]), topology_key="region"))),
    **_pref_anti(weighted(5, term(expr("security", "In", ["S2"]), topology_key="az"))),
}
affinityNamespaceSelector = _pref_aff(
    weighted(5, term(expr("security", "In", ["S1"]), topology_key="region", namespaces=["subteam2.team2"], namespace_selector=_team1_sel))
)
antiAffinityNamespaceSelector = _pref_anti(
    weighted(5, term(expr("security", "In", ["S1"]), topology_key="region", namespaces=["subteam2.team2"], namespace_selector=_team1_sel))
)
invalidAffinityLabels = _pref_aff(weighted(8, term(expr("security", "In", ["{{.bad-value.}}"]), topology_key="region")))
invalidAntiAffinityLabels = _pref_anti(weighted(5, term(expr("security", "In", ["{{.bad-value.}}"]), topology_key="az")))

MAX = 100


def _preferred_cases() -> list[Any]:
    T = "TestPreferredAffinity/"
    china, india = _labelRgChina, _labelRgIndia
    return [
        pytest.param(
            pod(labels=_S1), [],
            [node("node1", china), node("node2", india), node("node3", _labelAzAz1)],
            None, Status.skip(), False,
            id=T + "all nodes are same priority as Affinity is nil",
        ),
        pytest.param(
            pod(affinity=stayWithS1InRegion, labels=_S1),
            [pod(node="node1", labels=_S1), pod(node="node2", labels=_S2), pod(node="node3", labels=_S1)],
            [node("node1", china), node("node2", india), node("node3", _labelAzAz1)],
            [("node1", MAX), ("node2", 0), ("node3", 0)], None, False,
            id=T + "Affinity: pod that matches topology key & pods in nodes will get high score comparing to others"
            "which doesn't match either pods in nodes or in topology key",
        ),
        pytest.param(
            pod(affinity=stayWithS1InRegion),
            [pod(node="node1", labels=_S1)],
            [node("node1", china), node("node2", _labelRgChinaAzAz1), node("node3", india)],
            [("node1", MAX), ("node2", MAX), ("node3", 0)], None, False,
            id=T + "All the nodes that have the same topology key & label value with one of them has an existing pod that match the affinity rules, have the same score",
        ),
        pytest.param(
            pod(affinity=stayWithS2InRegion, labels=_S1),
            [
                pod(node="node1", labels=_S2), pod(node="node1", labels=_S2), pod(node="node2", labels=_S2),
                pod(node="node3", labels=_S2), pod(node="node4", labels=_S2), pod(node="node5", labels=_S2),
            ],
            [node("node1", china), node("node2", india), node("node3", china), node("node4", china), node("node5", india)],
            [("node1", MAX), ("node2", 0), ("node3", MAX), ("node4", MAX), ("node5", 0)], None, False,
            id=T + "Affinity: nodes in one region has more matching pods comparing to other region, so the region which has more matches will get high score",
        ),
        pytest.param(
            pod(affinity=affinity3, labels=_S1),
            [pod(node="node1", labels=_S1), pod(node="node2", labels=_S2), pod(node="node3", labels=_S1)],
            [node("node1", china), node("node2", india), node("node3", _labelAzAz1)],
            [("node1", 20), ("node2", MAX), ("node3", 0)], None, False,
            id=T + "Affinity: different Label operators and values for pod affinity scheduling preference, including some match failures ",
        ),
        pytest.param(
            pod(labels=_S2),
            [pod(node="node1", affinity=stayWithS1InRegion, labels=_S1), pod(node="node2", affinity=stayWithS2InRegion, labels=_S2)],
            [node("node1", china), node("node2", india), node("node3", _labelAzAz1)],
            [("node1", 0), ("node2", MAX), ("node3", 0)], None, False,
            id=T + "Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
        ),
        pytest.param(
            pod(namespace="subteam1.team1", labels=_S1),
            [pod(node="node1", affinity=affinityNamespaceSelector, labels=_S1), pod(node="node2", affinity=stayWithS2InRegion, labels=_S2)],
            [node("node1", china), node("node2", india), node("node3", _labelAzAz1)],
            [("node1", MAX), ("node2", 0), ("node3", 0)], None, False,
            id=T + "Affinity symmetry with namespace selector",
        ),
        pytest.param(
            pod(namespace="subteam1.team1", labels=_S1),
            [pod(node="node1", affinity=antiAffinityNamespaceSelector, labels=_S1), pod(node="node2", affinity=stayWithS2InRegion, labels=_S2)],
            [node("node1", china), node("node2", india), node("node3", _labelAzAz1)],
            [("node1", 0), ("node2", MAX), ("node3", MAX)], None, False,
            id=T + "AntiAffinity symmetry with namespace selector",
        ),
        pytest.param(
            pod(labels=_S1),
            [pod(node="node1", affinity=hardAffinity, labels=_S1), pod(node="node2", affinity=hardAffinity, labels=_S2)],
            [node("node1", china), node("node2", india), node("node3", _labelAzAz1)],
            [("node1", MAX), ("node2", MAX), ("node3", 0)], None, False,
            id=T + "Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
        ),
        pytest.param(
            pod(affinity=awayFromS1InAz, labels=_S1),
            [pod(node="node1", labels=_S1), pod(node="node2", labels=_S2)],
            [node("node1", _labelAzAz1), node("node2", china)],
            [("node1", 0), ("node2", MAX)], None, False,
            id=T + "Anti Affinity: pod that does not match existing pods in node will get high score ",
        ),
        pytest.param(
            pod(affinity=awayFromS1InAz, labels=_S1),
            [pod(node="node1", labels=_S1), pod(node="node2", labels=_S1)],
            [node("node1", _labelAzAz1), node("node2", china)],
            [("node1", 0), ("node2", MAX)], None, False,
            id=T + "Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score comparing to others ",
        ),
        pytest.param(
            pod(affinity=awayFromS1InAz, labels=_S1),
            [pod(node="node1", labels=_S1), pod(node="node1", labels=_S1), pod(node="node2", labels=_S2)],
            [node("node1", _labelAzAz1), node("node2", india)],
            [("node1", 0), ("node2", MAX)], None, False,
            id=T + "Anti Affinity: one node has more matching pods comparing to other node, so the node which has more unmatches will get high score",
        ),
        pytest.param(
            pod(labels=_S2),
            [pod(node="node1", affinity=awayFromS2InAz, labels=_S1), pod(node="node2", affinity=awayFromS1InAz, labels=_S2)],
            [node("node1", _labelAzAz1), node("node2", _labelAzAz2)],
            [("node1", 0), ("node2", MAX)], None, False,
            id=T + "Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
        ),
        pytest.param(
            pod(affinity=stayWithS1InRegionAwayFromS2InAz, labels=_S1),
            [pod(node="node1", labels=_S1), pod(node="node2", labels=_S1)],
            [node("node1", china), node("node2", _labelAzAz1)],
            [("node1", MAX), ("node2", 0)], None, False,
            id=T + "Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity",
        ),
        pytest.param(
            pod(affinity=stayWithS1InRegionAwayFromS2InAz, labels=_S1),
            [
                pod(node="node1", labels=_S1), pod(node="node1", labels=_S1), pod(node="node2", labels=_S1),
                pod(node="node3", labels=_S1), pod(node="node3", labels=_S1), pod(node="node4", labels=_S1),
                pod(node="node5", labels=_S1),
            ],
            [node("node1", _labelRgChinaAzAz1), node("node2", india), node("node3", china), node("node4", china), node("node5", india)],
            [("node1", MAX), ("node2", 0), ("node3", MAX), ("node4", MAX), ("node5", 0)], None, False,
            id=T + "Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and existing pods have the same labels",
        ),
        pytest.param(
            pod(affinity=stayWithS1InRegionAwayFromS2InAz, labels=_S1),
            [
                pod(node="node1", labels=_S1), pod(node="node2", labels=_S2),
                pod(node="node3", affinity=stayWithS1InRegionAwayFromS2InAz), pod(node="node4", affinity=awayFromS1InAz),
            ],
            [node("node1", china), node("node2", _labelAzAz1), node("node3", india), node("node4", _labelAzAz2)],
            [("node1", MAX), ("node2", 0), ("node3", MAX), ("node4", 0)], None, False,
            id=T + "Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity & symmetry",
        ),
        pytest.param(
            pod(labels=_S1),
            [pod(node="node1", labels=_S1), pod(node="node2", affinity=stayWithS1InRegionAwayFromS2InAz)],
            [node("node1", china), node("node2", china)],
            [("node1", 0), ("node2", 0)], None, False,
            id=T + "Avoid panic when partial nodes in a topology don't have pods with affinity",
        ),
        pytest.param(
            pod(affinity=invalidAffinityLabels), [],
            [node("node1", china), node("node2", china)],
            None, Status(Code.ERROR, 'Invalid value: "{{.bad-value.}}"'), False,
            id=T + "invalid Affinity fails PreScore",
        ),
        pytest.param(
            pod(affinity=invalidAntiAffinityLabels), [],
            [node("node1", china), node("node2", china)],
            None, Status(Code.ERROR, 'Invalid value: "{{.bad-value.}}"'), False,
            id=T + "invalid AntiAffinity fails PreScore",
        ),
        pytest.param(
            pod(affinity=affinityNamespaceSelector, namespace="subteam1.team1", labels=_S1),
            [
                pod(node="node1", namespace="subteam1.team1", labels=_S1), pod(node="node1", namespace="subteam1.team1", labels=_S1),
                pod(node="node1", namespace="subteam1.team2", labels=_S1), pod(node="node2", namespace="subteam2.team1", labels=_S1),
            ],
            [node("node1", china), node("node2", india)],
            [("node1", MAX), ("node2", 0)], None, False,
            id=T + "Affinity with pods matching NamespaceSelector",
        ),
        pytest.param(
            pod(affinity=affinityNamespaceSelector, namespace="subteam1.team1", labels=_S1),
            [
                pod(node="node1", namespace="subteam1.team1", labels=_S1), pod(node="node1", namespace="subteam1.team1", labels=_S1),
                pod(node="node1", namespace="subteam2.team2", labels=_S1), pod(node="node2", namespace="subteam2.team1", labels=_S1),
            ],
            [node("node1", china), node("node2", india)],
            [("node1", MAX), ("node2", 0)], None, False,
            id=T + "Affinity with pods matching both NamespaceSelector and Namespaces fields",
        ),
        pytest.param(
            pod(affinity=antiAffinityNamespaceSelector, namespace="subteam1.team1", labels=_S1),
            [
                pod(node="node1", namespace="subteam1.team1", labels=_S1), pod(node="node1", namespace="subteam1.team1", labels=_S1),
                pod(node="node1", namespace="subteam1.team2", labels=_S1), pod(node="node2", namespace="subteam2.team1", labels=_S1),
            ],
            [node("node1", china), node("node2", india)],
            [("node1", 0), ("node2", MAX)], None, False,
            id=T + "Affinity with pods matching NamespaceSelector (anti-affinity)",
        ),
        pytest.param(
            pod(affinity=antiAffinityNamespaceSelector, namespace="subteam1.team1", labels=_S1),
            [
                pod(node="node1", namespace="subteam1.team1", labels=_S1), pod(node="node1", namespace="subteam1.team1", labels=_S1),
                pod(node="node1", namespace="subteam2.team2", labels=_S1), pod(node="node2", namespace="subteam2.team1", labels=_S1),
            ],
            [node("node1", china), node("node2", india)],
            [("node1", 0), ("node2", MAX)], None, False,
            id=T + "Affinity with pods matching both NamespaceSelector and Namespaces fields (anti-affinity)",
        ),
        pytest.param(
            pod(labels=_S2),
            [pod(node="node1", affinity=stayWithS1InRegionAwayFromS2InAz, labels=_S1), pod(node="node2", affinity=stayWithS2InRegion, labels=_S2)],
            [node("node1", china), node("node2", india)],
            [("node1", 0), ("node2", 0)], Status.skip(), True,
            id=T + "Ignore preferred terms of existing pods",
        ),
        pytest.param(
            pod(labels=_S2),
            [pod(node="node1", affinity=stayWithS1InRegionAwayFromS2InAz, labels=_S1), pod(node="node2", affinity=stayWithS2InRegion, labels=_S2)],
            [node("node1", china), node("node2", india)],
            [("node1", 0), ("node2", MAX)], None, False,
            id=T + "Do not ignore preferred terms of existing pods",
        ),
        pytest.param(
            pod(labels=_S2), [], [], None, Status.skip(), False,
            id=T + "No nodes to score",
        ),
    ]


def _run_scoring(
    incoming: dict[str, Any], pods: list[dict[str, Any]], nodes: list[dict[str, Any]], args: dict[str, Any]
) -> tuple[Status, list[tuple[str, int]]]:
    handle = make_handle(nodes, pods, NAMESPACES)
    pl = build_plugin(InterPodAffinity, args, handle)
    state = CycleState()
    p = Pod(incoming)
    snap = handle.snapshot()
    st = as_status(pl.pre_score(state, p, snap.list()))
    if not st.is_success():
        return st, []
    scores = []
    for n in nodes:
        name = n["metadata"]["name"]
        got = pl.score(state, p, snap.get(name))
        assert isinstance(got, int), got
        scores.append(NodeScore(name, got))
    assert as_status(pl.normalize_score(state, p, scores)).is_success()
    return st, [(s.name, s.score) for s in scores]


@pytest.mark.parametrize(("incoming", "pods", "nodes", "expected", "want_status", "ignore_preferred"), _preferred_cases())
def test_preferred_affinity(
    incoming: dict[str, Any],
    pods: list[dict[str, Any]],
    nodes: list[dict[str, Any]],
    expected: list[tuple[str, int]] | None,
    want_status: Status | None,
    ignore_preferred: bool,
) -> None:
    st, got = _run_scoring(
        incoming, pods, nodes, {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": ignore_preferred}
    )
    if not st.is_success():
        want = as_status(want_status)
        assert st.code == want.code
        assert want.message in st.message
        return
    assert want_status is None
    assert got == expected


# scoring_test.go: TestPreferredAffinityWithHardPodAffinitySymmetricWeight --------------------

_podLabelServiceS1 = {"service": "S1"}
hardPodAffinity = {
    "podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            term(
                expr("service", "In", ["S1"]),
                # Go's "" namespace is kubesched's "default"
                namespaces=["default", "subteam2.team2"],
                namespace_selector=_team1_sel,
                topology_key="region",
            )
        ]
    }
}


def _hard_weight_cases() -> list[Any]:
    T = "TestPreferredAffinityWithHardPodAffinitySymmetricWeight/"
    nodes = [node("node1", _labelRgChina), node("node2", _labelRgIndia), node("node3", _labelAzAz1)]

    def pods() -> list[dict[str, Any]]:
        return [pod(node="node1", affinity=hardPodAffinity), pod(node="node2", affinity=hardPodAffinity)]

    return [
        pytest.param(
            pod(labels=_podLabelServiceS1), pods(), nodes, 1,
            [("node1", MAX), ("node2", MAX), ("node3", 0)], None,
            id=T + "with default weight",
        ),
        pytest.param(
            pod(labels=_podLabelServiceS1), pods(), nodes, 0, None, Status.skip(),
            id=T + "with zero weight",
        ),
        pytest.param(
            pod(namespace="subteam1.team2", labels=_podLabelServiceS1), pods(), nodes, 1, None, Status.skip(),
            id=T + "with no matching namespace",
        ),
        pytest.param(
            pod(namespace="subteam1.team1", labels=_podLabelServiceS1), pods(), nodes, 1,
            [("node1", MAX), ("node2", MAX), ("node3", 0)], None,
            id=T + "with matching NamespaceSelector",
        ),
        pytest.param(
            pod(namespace="subteam2.team2", labels=_podLabelServiceS1), pods(), nodes, 1,
            [("node1", MAX), ("node2", MAX), ("node3", 0)], None,
            id=T + "with matching Namespaces",
        ),
    ]


@pytest.mark.parametrize(("incoming", "pods", "nodes", "weight", "expected", "want_status"), _hard_weight_cases())
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(
    incoming: dict[str, Any],
    pods: list[dict[str, Any]],
    nodes: list[dict[str, Any]],
    weight: int,
    expected: list[tuple[str, int]] | None,
    want_status: Status | None,
) -> None:
    st, got = _run_scoring(incoming, pods, nodes, {"hardPodAffinityWeight": weight})
    assert_status(st, want_status)
    if st.is_success():
        assert got == expected


# plugin_test.go: Test_isSchedulableAfterPodChange --------------------------------------------


def _pod_change_cases() -> list[Any]:
    T = "Test_isSchedulableAfterPodChange/"
    Q, S = QueueingHint.QUEUE, QueueingHint.SKIP

    def p_aff() -> Any:
        return make_pod().uid("p").name("p").pod_affinity_in("service", "region", ["securityscan", "value2"])

    def p_anti() -> Any:
        return make_pod().uid("p").name("p").pod_anti_affinity_in("service", "region", ["securityscan", "value2"])

    def other() -> Any:
        return make_pod().uid("other")

    def multi() -> Any:
        return make_pod().uid("p").name("p").pod_affinity_exists("aaa", "hostname").pod_affinity_exists("bbb", "hostname")

    return [
        pytest.param(p_aff().obj(), None, other().node("fake-node").label("service", "securityscan").obj(), Q,
                     id=T + "add a pod which matches the pod affinity"),
        pytest.param(p_aff().obj(), None, other().label("service", "securityscan").obj(), S,
                     id=T + "add an un-scheduled pod"),
        pytest.param(p_aff().obj(), None, other().node("fake-node").label("aaa", "a").obj(), S,
                     id=T + "add a pod which doesn't match the pod affinity"),
        pytest.param(p_aff().obj(), other().node("fake-node").label("aaa", "a").obj(),
                     other().node("fake-node").label("service", "securityscan").obj(), Q,
                     id=T + "update a pod from non-match to match pod affinity"),
        pytest.param(p_aff().obj(), other().node("fake-node").label("service", "value2").obj(),
                     other().node("fake-node").label("service", "securityscan").obj(), S,
                     id=T + "the updating pod matches target pod's affinity both before and after label changes"),
        pytest.param(p_aff().obj(), other().label("aaa", "a").obj(), other().label("service", "securityscan").obj(), S,
                     id=T + "update an un-scheduled pod"),
        pytest.param(p_aff().obj(), other().node("fake-node").label("service", "securityscan").obj(),
                     other().node("fake-node").label("aaa", "a").obj(), S,
                     id=T + "update a pod from match to non-match the pod affinity"),
        pytest.param(multi().obj(), other().node("fake-node").label("aaa", "a").obj(),
                     other().node("fake-node").label("service", "securityscan").obj(), S,
                     id=T + "update a pod from match to non-match pod's affinity - multiple terms case"),
        pytest.param(multi().obj(), other().node("fake-node").label("aaa", "a").obj(),
                     other().node("fake-node").label("aaa", "").label("bbb", "").obj(), Q,
                     id=T + "update a pod from non-match to match pod's affinity - multiple terms case"),
        pytest.param(make_pod().uid("p").name("p").label("foo", "baz").obj(),
                     make_pod().uid("p").name("p").label("foo", "bar").obj(),
                     make_pod().uid("p").name("p").label("foo", "baz").obj(), Q,
                     id=T + "updated pod is the target pod"),
        pytest.param(p_anti().obj(), other().node("fake-node").label("service", "securityscan").obj(),
                     other().node("fake-node").label("service", "aaaa").obj(), Q,
                     id=T + "modify pod label to change it from satisfying pod anti-affinity to not satisfying anti-affinity"),
        pytest.param(p_anti().obj(), other().node("fake-node").label("service", "bbb").obj(),
                     other().node("fake-node").label("service", "securityscan").obj(), S,
                     id=T + "modify pod label to change it from not satisfying pod anti-affinity to satisfying anti-affinity"),
        pytest.param(p_anti().obj(), other().node("fake-node").label("aaa", "a").obj(), None, S,
                     id=T + "delete a pod which doesn't match pod's anti-affinity"),
        pytest.param(p_anti().obj(), other().node("fake-node").label("service", "securityscan").obj(), None, Q,
                     id=T + "delete a pod which matches pod's anti-affinity"),
        pytest.param(make_pod().name("p").label("service", "securityscan").obj(),
                     make_pod().node("fake-node").pod_anti_affinity_in("service", "region", ["securityscan", "value2"]).obj(),
                     None, Q,
                     id=T + "delete a pod with anti-affinity that matches pending pod"),
        pytest.param(make_pod().name("p").label("service", "foo").obj(),
                     make_pod().node("fake-node").pod_anti_affinity_in("service", "region", ["securityscan", "value2"]).obj(),
                     None, S,
                     id=T + "delete a pod with anti-affinity that doesn't match pending pod"),
        pytest.param(make_pod().name("p").pod_anti_affinity_in("service", "region", ["securityscan", "value2"]).label("service", "foo").obj(),
                     make_pod().node("fake-node").pod_anti_affinity_in("service", "region", ["securityscan", "value2"]).label("service", "foo").obj(),
                     None, S,
                     id=T + "delete a pod which doesn't match pending pod's anti-affinity and has anti-affinity that doesn't match pending pod"),
        # v1.36: a nominated pod counts as placed
        pytest.param(make_pod().name("p").pod_anti_affinity_in("service", "region", ["securityscan", "value2"]).obj(),
                     make_pod().nominated_node_name("fake-node").label("aaa", "a").obj(), None, S,
                     id=T + "delete a nominated pod which doesn't match pod's anti-affinity"),
        pytest.param(make_pod().name("p").pod_anti_affinity_in("service", "region", ["securityscan", "value2"]).obj(),
                     make_pod().nominated_node_name("fake-node").label("service", "securityscan").obj(), None, Q,
                     id=T + "delete a nominated pod which matches pod's anti-affinity"),
    ]


@pytest.mark.parametrize(("target", "old_pod", "new_pod", "expected"), _pod_change_cases())
def test_is_schedulable_after_pod_change(
    target: dict[str, Any], old_pod: dict[str, Any] | None, new_pod: dict[str, Any] | None, expected: QueueingHint
) -> None:
    pl = build_plugin(InterPodAffinity, {}, make_handle([], [], NAMESPACES))
    assert pl.is_schedulable_after_pod_change(Pod(target), old_pod, new_pod) == expected


# plugin_test.go: Test_isSchedulableAfterNodeChange -------------------------------------------


def _node_change_cases() -> list[Any]:
    T = "Test_isSchedulableAfterNodeChange/"
    Q, S = QueueingHint.QUEUE, QueueingHint.SKIP

    def aff(topology: str = "zone") -> dict[str, Any]:
        return make_pod().name("p").pod_affinity_in("service", topology, ["securityscan", "value2"]).obj()

    def anti() -> dict[str, Any]:
        return make_pod().name("p").pod_affinity_term(
            {"labelSelector": {"matchLabels": {"another": "label"}}, "topologyKey": "zone"}, anti=True
        ).obj()

    def n() -> Any:
        return make_node().name("node-a")

    return [
        # affinity
        pytest.param(aff(), None, n().label("zone", "zone1").obj(), Q, id=T + "add a new node with matched pod affinity topologyKey"),
        pytest.param(aff("region"), None, n().label("zone", "zone1").obj(), S, id=T + "add a new node without matched topologyKey"),
        pytest.param(aff(), n().label("aaa", "a").obj(), n().label("aaa", "b").obj(), S, id=T + "update node label but not topologyKey"),
        pytest.param(aff(), n().label("zone", "zone1").obj(), n().label("zone", "zone1").label("unrelated-label", "unrelated").obj(), S,
                     id=T + "update node label that isn't related to the pod affinity"),
        pytest.param(aff(), n().label("zone", "zone1").obj(), n().label("zone", "zone2").obj(), Q,
                     id=T + "update node with different affinity topologyKey value"),
        pytest.param(aff(), n().label("aaa", "a").obj(), n().label("zone", "zone1").obj(), Q,
                     id=T + "update node to have the affinity topology label"),
        # anti-affinity
        pytest.param(anti(), None, n().label("zone", "zone1").obj(), Q, id=T + "add a new node with matched pod anti-affinity topologyKey"),
        pytest.param(anti(), None, n().obj(), Q, id=T + "add a new node without matched pod anti-affinity topologyKey"),
        pytest.param(anti(), n().label("zone", "zone1").obj(), n().label("zone", "zone1").label("unrelated-label", "unrelated").obj(), S,
                     id=T + "update node label that isn't related to the pod anti-affinity"),
        pytest.param(anti(), n().label("zone", "zone1").obj(), n().label("zone", "zone2").obj(), Q,
                     id=T + "update node with different anti-affinity topologyKey value"),
        pytest.param(anti(), n().label("aaa", "a").obj(), n().label("zone", "zone1").obj(), S,
                     id=T + "update node to have the anti-affinity topology label"),
        pytest.param(anti(), n().label("zone", "zone1").obj(), n().label("aaa", "a").obj(), Q,
                     id=T + "update node label not to have anti-affinity topology label"),
    ]


@pytest.mark.parametrize(("target", "old_node", "new_node", "expected"), _node_change_cases())
def test_is_schedulable_after_node_change(
    target: dict[str, Any], old_node: dict[str, Any] | None, new_node: dict[str, Any], expected: QueueingHint
) -> None:
    pl = build_plugin(InterPodAffinity, {}, make_handle([], [], NAMESPACES))
    assert pl.is_schedulable_after_node_change(Pod(target), old_node, new_node) == expected


# validation_pluginargs_test.go: TestValidateInterPodAffinityArgs, defaults.go ----------------


@pytest.mark.parametrize(
    ("args", "want_err"),
    [
        pytest.param({"hardPodAffinityWeight": 10}, None, id="TestValidateInterPodAffinityArgs/valid args"),
        pytest.param(
            {"hardPodAffinityWeight": -1},
            "args.hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]",
            id="TestValidateInterPodAffinityArgs/hardPodAffinityWeight less than min",
        ),
        pytest.param(
            {"hardPodAffinityWeight": 101},
            "args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]",
            id="TestValidateInterPodAffinityArgs/hardPodAffinityWeight more than max",
        ),
    ],
)
def test_validate_args(args: dict[str, Any], want_err: str | None) -> None:
    if want_err is None:
        pl = build_plugin(InterPodAffinity, args, make_handle())
        assert pl.args.hard_pod_affinity_weight == args["hardPodAffinityWeight"]
        return
    with pytest.raises(ArgsError) as ei:
        build_plugin(InterPodAffinity, args, make_handle())
    assert str(ei.value) == want_err
    assert ei.value.field == "args.hardPodAffinityWeight"


def test_args_defaults() -> None:
    """SetDefaults_InterPodAffinityArgs: hardPodAffinityWeight 1; ignorePreferredTermsOfExistingPods false."""
    pl = build_plugin(InterPodAffinity, None, make_handle())
    assert pl.args == InterPodAffinityArgs(hard_pod_affinity_weight=1, ignore_preferred_terms_of_existing_pods=False)
    assert InterPodAffinity.args_kind == "InterPodAffinityArgs"
    assert InterPodAffinity.name == "InterPodAffinity"


def test_events_to_register() -> None:
    """EventsToRegister with queueing hints enabled (v1.34's default)."""
    pl = build_plugin(InterPodAffinity, {}, make_handle())
    evs = pl.events_to_register()
    assert [(e.event.resource, e.event.action) for e in evs] == [
        ("Pod", ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
        ("Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
    ]
    assert all(e.hint is not None for e in evs)


# kubesched-specific cases (not from the Go tests) --------------------------------------------


def test_self_affinity_only_when_no_pod_matches_anywhere() -> None:
    """kubesched: the "first pod of a series" exception applies only while no existing pod
    matches the terms anywhere (len(affinityCounts) == 0 in satisfyPodAffinity)."""
    incoming = mk().label("app", "web").pod_affinity_in("app", "zone", ["web"]).obj()
    nodes = [node("a", {"zone": "z1"}), node("b", {"zone": "z2"})]
    pods = [mk().node("a").label("app", "web").obj()]
    handle = make_handle(nodes, pods)
    pl = build_plugin(InterPodAffinity, {}, handle)
    state = CycleState()
    p = Pod(incoming)
    assert as_status(pl.pre_filter(state, p, handle.snapshot().list())).is_success()
    assert_status(pl.filter(state, p, handle.snapshot().get("a")), None)
    assert_status(pl.filter(state, p, handle.snapshot().get("b")), unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH))
    # without the matching pod, both zones are allowed
    handle = make_handle(nodes, [])
    pl = build_plugin(InterPodAffinity, {}, handle)
    state = CycleState()
    assert as_status(pl.pre_filter(state, p, handle.snapshot().list())).is_success()
    assert_status(pl.filter(state, p, handle.snapshot().get("b")), None)


def test_match_label_keys_are_merged_into_the_selector() -> None:
    """kubesched: matchLabelKeys/mismatchLabelKeys are applied as the API server does at pod
    creation (the simulated cluster has no API server)."""
    t = {
        "labelSelector": {"matchExpressions": [expr("app", "In", ["web"])]},
        "topologyKey": "zone",
        "matchLabelKeys": ["version"],
    }
    incoming = mk().labels({"app": "web", "version": "v2"}).pod_affinity_term(t, anti=True).obj()
    nodes = [node("a", {"zone": "z1"}), node("b", {"zone": "z2"})]
    pods = [
        mk().node("a").labels({"app": "web", "version": "v1"}).obj(),
        mk().node("b").labels({"app": "web", "version": "v2"}).obj(),
    ]
    handle = make_handle(nodes, pods)
    pl = build_plugin(InterPodAffinity, {}, handle)
    state = CycleState()
    p = Pod(incoming)
    assert as_status(pl.pre_filter(state, p, handle.snapshot().list())).is_success()
    assert_status(pl.filter(state, p, handle.snapshot().get("a")), None)
    assert_status(pl.filter(state, p, handle.snapshot().get("b")), unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH))

    t2 = {**t, "matchLabelKeys": [], "mismatchLabelKeys": ["version"]}
    terms = pod_terms(Pod(mk().labels({"app": "web", "version": "v2"}).pod_affinity_term(t2).obj()))
    (merged,) = terms.req_affinity
    assert merged.selector.matches({"app": "web", "version": "v1"})
    assert not merged.selector.matches({"app": "web", "version": "v2"})


def test_namespace_selector_of_existing_pod_with_missing_namespace_object() -> None:
    """kubesched: a Namespace that cannot be read has no labels (GetNamespaceLabelsSnapshot)."""
    anti = {
        "labelSelector": {"matchLabels": {"app": "db"}},
        "topologyKey": "zone",
        "namespaceSelector": {"matchLabels": {"team": "team1"}},
    }
    existing = mk().node("a").namespace("subteam1.team1").pod_affinity_term(anti, anti=True).obj()
    nodes = [node("a", {"zone": "z1"})]
    for ns, objs, want in [
        ("subteam2.team1", NAMESPACES, unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)),
        ("subteam2.team1", [], Status.skip()),  # no Namespace object: empty labels, no match
    ]:
        handle = make_handle(nodes, [existing], objs)
        pl = build_plugin(InterPodAffinity, {}, handle)
        state = CycleState()
        p = Pod(mk().namespace(ns).label("app", "db").obj())
        pre = as_status(pl.pre_filter(state, p, handle.snapshot().list()))
        if pre.is_skip():
            assert_status(pre, want)
            continue
        assert_status(pl.filter(state, p, handle.snapshot().get("a")), want)


def test_preemption_clone_and_remove_victim() -> None:
    """kubesched: removing the victim on a cloned state frees the node; the original state is
    left as it was (what DefaultPreemption does through CycleState.clone)."""
    nodes = [node("a", {"zone": "z1"})]
    victim = Pod(mk().name("victim").node("a").label("app", "db").obj())
    handle = make_handle(nodes, [victim])
    pl = build_plugin(InterPodAffinity, {}, handle)
    state = CycleState()
    p = Pod(mk().pod_anti_affinity_in("app", "zone", ["db"]).obj())
    assert as_status(pl.pre_filter(state, p, handle.snapshot().list())).is_success()
    ni = handle.snapshot().get("a")
    assert_status(pl.filter(state, p, ni), unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH))
    clone = state.clone()
    ni2 = ni.clone()
    ni2.remove_pod(victim)
    assert as_status(pl.pre_filter_remove_pod(clone, p, victim, ni2)).is_success()
    assert_status(pl.filter(clone, p, ni2), None)
    assert_status(pl.filter(state, p, ni), unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH))


def test_score_without_pre_score_is_an_error() -> None:
    handle = make_handle([node("n", {"zone": "z"})])
    pl = build_plugin(InterPodAffinity, {}, handle)
    got = pl.score(CycleState(), Pod(pod()), handle.snapshot().get("n"))
    assert isinstance(got, tuple)
    assert got[1].code == Code.ERROR
    assert got[1].reasons == ['failed to read "PreScoreInterPodAffinity" from cycleState: not found']
