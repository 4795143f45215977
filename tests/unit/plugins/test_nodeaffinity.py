"""NodeAffinity, transcribed from kube-scheduler's
pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go and the NodeAffinityArgs cases of
pkg/scheduler/apis/config/validation/validation_pluginargs_test.go (v1.36.3)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from kubesched.runtime.plugins.nodeaffinity import (
    ERR_REASON_CONFLICT,
    ERR_REASON_ENFORCED,
    ERR_REASON_POD,
    NodeAffinity,
    NodeAffinityArgs,
)
from kubesched.sdk import (
    MAX_NODE_SCORE,
    ActionType,
    ArgsError,
    Code,
    CycleState,
    EventResource,
    Node,
    NodeInfo,
    NodeScore,
    Pod,
    PreFilterResult,
    QueueingHint,
    Status,
    build_args,
)
from kubesched.testing import build_plugin, make_handle, make_pod


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    e: dict[str, Any] = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


def name_in(*values: str) -> dict[str, Any]:
    return expr("metadata.name", "In", *values)


def required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"nodeSelectorTerms": list(terms)}


def pod_with(
    required_terms: list[dict[str, Any]] | None = None,
    node_selector: dict[str, str] | None = None,
    preferred: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    na: dict[str, Any] = {}
    if required_terms is not None:
        na["requiredDuringSchedulingIgnoredDuringExecution"] = required(*required_terms)
    if preferred is not None:
        na["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
    if na:
        spec["affinity"] = {"nodeAffinity": na}
    return {"metadata": {"name": "p"}, "spec": spec}


def node(name: str = "", labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": dict(labels or {})}}


def split(ret: Any) -> tuple[PreFilterResult | None, Status | None]:
    if isinstance(ret, tuple):
        return ret
    if isinstance(ret, PreFilterResult):
        return ret, None
    return None, ret


def added_required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required(*terms)}}


POD_MISMATCH = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD)
SKIP = Status(Code.SKIP)

# (name, pod, labels, node name, want filter, want prefilter status, want prefilter result, args, run prefilter)
NODE_AFFINITY_CASES = [
    ("missing labels", pod_with(node_selector={"foo": "bar"}), None, "", POD_MISMATCH, None, None, None, True),
    ("same labels", pod_with(node_selector={"foo": "bar"}), {"foo": "bar"}, "", None, None, None, None, True),
    ("node labels are superset", pod_with(node_selector={"foo": "bar"}), {"foo": "bar", "baz": "blah"}, "", None, None, None, None, True),
    (
        "node labels are subset",
        pod_with(node_selector={"foo": "bar", "baz": "blah"}),
        {"foo": "bar"},
        "",
        POD_MISMATCH,
        None,
        None,
        None,
        True,
    ),
    (
        "Pod with matchExpressions using In operator that matches the existing node",
        pod_with([{"matchExpressions": [expr("foo", "In", "bar", "value2")]}]),
        {"foo": "bar"},
        "",
        None,
        None,
        None,
        None,
        True,
    ),
    (
        "Pod with matchExpressions using Gt operator that matches the existing node",
        pod_with([{"matchExpressions": [expr("kernel-version", "Gt", "0204")]}]),
        {"kernel-version": "0206"},
        "",
        None,
        None,
        None,
        None,
        True,
    ),
    (
        "Pod with matchExpressions using NotIn operator that matches the existing node",
        pod_with([{"matchExpressions": [expr("mem-type", "NotIn", "DDR", "DDR2")]}]),
        {"mem-type": "DDR3"},
        "",
        None,
        None,
        None,
        None,
        True,
    ),
    (
        "Pod with matchExpressions using Exists operator that matches the existing node",
        pod_with([{"matchExpressions": [expr("GPU", "Exists")]}]),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        None,
        None,
        None,
        None,
        True,
    ),
    (
        "Pod with affinity that don't match node's labels won't schedule onto the node",
        pod_with([{"matchExpressions": [expr("foo", "In", "value1", "value2")]}]),
        {"foo": "bar"},
        "",
        POD_MISMATCH,
        None,
        None,
        None,
        True,
    ),
    (
        "Pod with empty MatchExpressions is not a valid value will match no objects and won't schedule onto the node",
        pod_with([{"matchExpressions": []}]),
        {"foo": "bar"},
        "",
        POD_MISMATCH,
        None,
        None,
        None,
        True,
    ),
    ("Pod with no Affinity will schedule onto a node", {}, {"foo": "bar"}, "", None, SKIP, None, None, True),
    (
        "Pod with Affinity but nil NodeSelector will schedule onto a node",
        {"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": None}}}},
        {"foo": "bar"},
        "",
        None,
        SKIP,
        None,
        None,
        True,
    ),
    (
        "Pod with multiple matchExpressions ANDed that matches the existing node",
        pod_with([{"matchExpressions": [expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")]}]),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        None,
        None,
        None,
        None,
        True,
    ),
    (
        "Pod with multiple matchExpressions ANDed that doesn't match the existing node",
        pod_with([{"matchExpressions": [expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER")]}]),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        POD_MISMATCH,
        None,
        None,
        None,
        True,
    ),
    (
        "Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will schedule onto the node",
        pod_with(
            [
                {"matchExpressions": [expr("foo", "In", "bar", "value2")]},
                {"matchExpressions": [expr("diffkey", "In", "wrong", "value2")]},
            ]
        ),
        {"foo": "bar"},
        "",
        None,
        None,
        None,
        None,
        True,
    ),
    (
        "Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) both are satisfied, will schedule onto the node",
        pod_with([{"matchExpressions": [expr("foo", "Exists")]}], node_selector={"foo": "bar"}),
        {"foo": "bar"},
        "",
        None,
        None,
        None,
        None,
        True,
    ),
    (
        "Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing that we are deprecating) is not satisfied, won't schedule onto the node",
        pod_with([{"matchExpressions": [expr("foo", "Exists")]}], node_selector={"foo": "bar"}),
        {"foo": "barrrrrr"},
        "",
        POD_MISMATCH,
        None,
        None,
        None,
        True,
    ),
    (
        "Pod with an invalid value in Affinity term won't be scheduled onto the node",
        pod_with([{"matchExpressions": [expr("foo", "NotIn", "invalid value: ___@#$%^")]}]),
        {"foo": "bar"},
        "",
        POD_MISMATCH,
        None,
        None,
        None,
        True,
    ),
    (
        "Pod with matchFields using In operator that matches the existing node",
        pod_with([{"matchFields": [name_in("node1")]}]),
        None,
        "node1",
        None,
        None,
        PreFilterResult({"node1"}),
        None,
        True,
    ),
    (
        "Pod with matchFields using In operator that does not match the existing node",
        pod_with([{"matchFields": [name_in("node1")]}]),
        None,
        "node2",
        POD_MISMATCH,
        None,
        PreFilterResult({"node1"}),
        None,
        True,
    ),
    (
        "Pod with two terms: matchFields does not match, but matchExpressions matches",
        pod_with([{"matchFields": [name_in("node1"), name_in("node2")]}, {"matchExpressions": [expr("foo", "In", "bar")]}]),
        {"foo": "bar"},
        "node2",
        None,
        None,
        None,
        None,
        True,
    ),
    (
        "Pod with one term: matchFields does not match, but matchExpressions matches",
        pod_with([{"matchFields": [name_in("node1")], "matchExpressions": [expr("foo", "In", "bar")]}]),
        {"foo": "bar"},
        "node2",
        POD_MISMATCH,
        None,
        PreFilterResult({"node1"}),
        None,
        True,
    ),
    (
        "Pod with one term: both matchFields and matchExpressions match",
        pod_with([{"matchFields": [name_in("node1")], "matchExpressions": [expr("foo", "In", "bar")]}]),
        {"foo": "bar"},
        "node1",
        None,
        None,
        PreFilterResult({"node1"}),
        None,
        True,
    ),
    (
        "Pod with two terms: both matchFields and matchExpressions do not match",
        pod_with([{"matchFields": [name_in("node1")]}, {"matchExpressions": [expr("foo", "In", "not-match-to-bar")]}]),
        {"foo": "bar"},
        "node2",
        POD_MISMATCH,
        None,
        None,
        None,
        True,
    ),
    (
        "Pod with two terms of node.Name affinity",
        pod_with([{"matchFields": [name_in("node1")]}, {"matchFields": [name_in("node2")]}]),
        None,
        "node2",
        None,
        None,
        PreFilterResult({"node1", "node2"}),
        None,
        True,
    ),
    (
        "Pod with two conflicting mach field requirements",
        pod_with([{"matchFields": [name_in("node1"), name_in("node2")]}]),
        {"foo": "bar"},
        "node2",
        POD_MISMATCH,
        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT),
        None,
        None,
        True,
    ),
    (
        "Matches added affinity and Pod's node affinity",
        pod_with([{"matchExpressions": [expr("zone", "In", "foo")]}]),
        {"zone": "foo"},
        "node2",
        None,
        None,
        None,
        added_required({"matchFields": [name_in("node2")]}),
        True,
    ),
    (
        "Matches added affinity but not Pod's node affinity",
        pod_with([{"matchExpressions": [expr("zone", "In", "bar")]}]),
        {"zone": "foo"},
        "node2",
        POD_MISMATCH,
        None,
        None,
        added_required({"matchFields": [name_in("node2")]}),
        True,
    ),
    (
        "Doesn't match added affinity",
        {},
        {"zone": "foo"},
        "node2",
        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_ENFORCED),
        None,
        None,
        added_required({"matchExpressions": [expr("zone", "In", "bar")]}),
        True,
    ),
    (
        "Matches node selector correctly even if PreFilter is not called",
        pod_with(node_selector={"foo": "bar"}),
        {"foo": "bar", "baz": "blah"},
        "",
        None,
        None,
        None,
        None,
        False,
    ),
    (
        "Matches node affinity correctly even if PreFilter is not called",
        pod_with([{"matchExpressions": [expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")]}]),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        None,
        None,
        None,
        None,
        False,
    ),
]


@pytest.mark.parametrize(
    ("pod", "labels", "node_name", "want_status", "want_pre_filter_status", "want_pre_filter_result", "args", "run_pre_filter"),
    [pytest.param(*c[1:], id=f"TestNodeAffinity/{c[0]}") for c in NODE_AFFINITY_CASES],
)
def test_node_affinity(pod, labels, node_name, want_status, want_pre_filter_status, want_pre_filter_result, args, run_pre_filter):
    ni = NodeInfo(Node(node(node_name, labels)))
    p = build_plugin(NodeAffinity, args)
    state = CycleState()
    pod = Pod(pod)
    if run_pre_filter:
        result, status = split(p.pre_filter(state, pod, [ni]))
        assert result == want_pre_filter_result
        if want_pre_filter_status is None:
            assert status is None
        else:
            assert status == want_pre_filter_status and status.code is want_pre_filter_status.code
    got = p.filter(state, pod, ni)
    if want_status is None:
        assert got is None
    else:
        assert got == want_status and got.code is want_status.code


LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}

AFFINITY1 = [{"weight": 2, "preference": {"matchExpressions": [expr("foo", "In", "bar")]}}]
AFFINITY2 = [
    {"weight": 2, "preference": {"matchExpressions": [expr("foo", "In", "bar")]}},
    {"weight": 4, "preference": {"matchExpressions": [expr("key", "In", "value")]}},
    {
        "weight": 5,
        "preference": {"matchExpressions": [expr("foo", "In", "bar"), expr("key", "In", "value"), expr("az", "In", "az1")]},
    },
]

BROKEN_KEY_MESSAGE = (
    '[0].matchExpressions[0].key: Invalid value: "invalid key": name part must consist of alphanumeric characters, '
    "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
    "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


@pytest.mark.parametrize(
    ("pod", "nodes", "expected", "args", "run_pre_score", "want_pre_score_status"),
    [
        pytest.param(
            {"metadata": {"annotations": {}}},
            [node("node1", LABEL1), node("node2", LABEL2), node("node3", LABEL3)],
            [("node1", 0), ("node2", 0), ("node3", 0)],
            None,
            False,
            None,
            id="TestNodeAffinityPriority/all nodes are same priority as NodeAffinity is nil",
        ),
        pytest.param(
            {"metadata": {"annotations": {}}},
            [node("node1", LABEL1)],
            None,
            None,
            True,
            Status(Code.SKIP),
            id="TestNodeAffinityPriority/Skip is returned in PreScore when NodeAffinity is nil",
        ),
        pytest.param(
            pod_with(preferred=[{"weight": 2, "preference": {"matchExpressions": [expr("invalid key", "In", "bar")]}}]),
            [node("node1", LABEL1)],
            None,
            None,
            True,
            Status(Code.ERROR, BROKEN_KEY_MESSAGE),
            id="TestNodeAffinityPriority/PreScore returns error when an incoming Pod has a broken affinity",
        ),
        pytest.param(
            pod_with(preferred=AFFINITY1),
            [node("node1", LABEL4), node("node2", LABEL2), node("node3", LABEL3)],
            [("node1", 0), ("node2", 0), ("node3", 0)],
            None,
            True,
            None,
            id="TestNodeAffinityPriority/no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' priority is zero",
        ),
        pytest.param(
            pod_with(preferred=AFFINITY1),
            [node("node1", LABEL1), node("node2", LABEL2), node("node3", LABEL3)],
            [("node1", MAX_NODE_SCORE), ("node2", 0), ("node3", 0)],
            None,
            True,
            None,
            id="TestNodeAffinityPriority/only node1 matches the preferred scheduling requirements of pod",
        ),
        pytest.param(
            pod_with(preferred=AFFINITY2),
            [node("node1", LABEL1), node("node5", LABEL5), node("node2", LABEL2)],
            [("node1", 18), ("node5", MAX_NODE_SCORE), ("node2", 36)],
            None,
            True,
            None,
            id="TestNodeAffinityPriority/all nodes matches the preferred scheduling requirements of pod but with different priorities ",
        ),
        pytest.param(
            {},
            [node("node1", LABEL1), node("node2", LABEL2)],
            [("node1", MAX_NODE_SCORE), ("node2", 0)],
            {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": AFFINITY1}},
            True,
            None,
            id="TestNodeAffinityPriority/added affinity",
        ),
        pytest.param(
            pod_with(preferred=AFFINITY1),
            [node("node1", LABEL1), node("node2", LABEL2), node("node3", LABEL5)],
            [("node1", 40), ("node2", 60), ("node3", MAX_NODE_SCORE)],
            {
                "addedAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 3, "preference": {"matchExpressions": [expr("key", "In", "value")]}}
                    ]
                }
            },
            True,
            None,
            id="TestNodeAffinityPriority/added affinity and pod has default affinity",
        ),
        pytest.param(
            pod_with(preferred=AFFINITY2),
            [node("node1", LABEL1), node("node5", LABEL5), node("node2", LABEL2)],
            [("node1", 18), ("node5", MAX_NODE_SCORE), ("node2", 36)],
            None,
            False,
            None,
            id="TestNodeAffinityPriority/calculate the priorities correctly even if PreScore is not called",
        ),
    ],
)
def test_node_affinity_priority(pod, nodes, expected, args, run_pre_score, want_pre_score_status):
    handle = make_handle(nodes)
    p = build_plugin(NodeAffinity, args, handle)
    state = CycleState()
    pod = Pod(pod)
    node_infos = handle.snapshot().list()
    if run_pre_score:
        status = p.pre_score(state, pod, node_infos)
        if want_pre_score_status is None:
            assert status is None
        else:
            assert status.code is want_pre_score_status.code
            assert status.message == want_pre_score_status.message
            return
    got = []
    for ni in node_infos:
        s = p.score(state, pod, ni)
        assert isinstance(s, int)
        got.append(NodeScore(ni.name, s))
    assert p.normalize_score(state, pod, got) is None
    assert [(s.name, s.score) for s in got] == expected


POD_WITH_NODE_AFFINITY = make_pod().node_affinity_in("foo", ["bar"]).obj()
ADDED_FOO_BAR = added_required({"matchExpressions": [expr("foo", "In", "bar")]})


def bare_node(labels: dict[str, str] | None = None, capacity: dict[str, str] | None = None) -> dict[str, Any]:
    n: dict[str, Any] = {"metadata": {}, "status": {"capacity": dict(capacity or {}), "allocatable": dict(capacity or {})}}
    if labels:
        n["metadata"]["labels"] = dict(labels)
    return n


@pytest.mark.parametrize(
    ("args", "old_obj", "new_obj", "expected"),
    [
        pytest.param({}, None, "not-a-node", QueueingHint.QUEUE, id="Test_isSchedulableAfterNodeChange/backoff-wrong-new-object"),
        pytest.param({}, "not-a-node", bare_node(), QueueingHint.QUEUE, id="Test_isSchedulableAfterNodeChange/backoff-wrong-old-object"),
        pytest.param({}, None, bare_node(), QueueingHint.SKIP, id="Test_isSchedulableAfterNodeChange/skip-queue-on-add"),
        pytest.param({}, None, bare_node({"foo": "bar"}), QueueingHint.QUEUE, id="Test_isSchedulableAfterNodeChange/queue-on-add"),
        pytest.param(
            {}, bare_node(), bare_node(capacity={"cpu": "1"}), QueueingHint.SKIP, id="Test_isSchedulableAfterNodeChange/skip-unrelated-changes"
        ),
        pytest.param(
            {}, bare_node(), bare_node({"k": "v"}), QueueingHint.SKIP, id="Test_isSchedulableAfterNodeChange/skip-unrelated-changes-on-labels"
        ),
        pytest.param(
            {},
            bare_node({"foo": "bar"}),
            bare_node({"k": "v"}),
            QueueingHint.SKIP,
            id="Test_isSchedulableAfterNodeChange/skip-labels-changes-on-node-from-suitable-to-unsuitable",
        ),
        pytest.param(
            {},
            bare_node(),
            bare_node({"foo": "bar"}),
            QueueingHint.QUEUE,
            id="Test_isSchedulableAfterNodeChange/queue-on-labels-change-makes-pod-schedulable",
        ),
        pytest.param(
            {},
            bare_node({"foo": "bar"}),
            bare_node({"foo": "bar"}, capacity={"cpu": "1"}),
            QueueingHint.SKIP,
            id="Test_isSchedulableAfterNodeChange/skip-unrelated-change-that-keeps-pod-schedulable",
        ),
        pytest.param(
            ADDED_FOO_BAR,
            None,
            bare_node(),
            QueueingHint.SKIP,
            id="Test_isSchedulableAfterNodeChange/skip-queue-on-add-scheduler-enforced-node-affinity",
        ),
        pytest.param(
            ADDED_FOO_BAR,
            None,
            bare_node({"foo": "bar"}),
            QueueingHint.QUEUE,
            id="Test_isSchedulableAfterNodeChange/queue-on-add-scheduler-enforced-node-affinity",
        ),
    ],
)
def test_is_schedulable_after_node_change(args, old_obj, new_obj, expected):
    p = build_plugin(NodeAffinity, args)
    assert p.is_schedulable_after_node_change(POD_WITH_NODE_AFFINITY, old_obj, new_obj) is expected


def test_events_to_register():
    p = build_plugin(NodeAffinity)
    (ev,) = p.events_to_register()
    assert (ev.event.resource, ev.event.action, ev.hint) == (
        EventResource.NODE.value,
        ActionType.ADD | ActionType.UPDATE_NODE_LABEL,
        p.is_schedulable_after_node_change,
    )


# --- args: defaults and ValidateNodeAffinityArgs ----------------------------------------------------


def test_args_defaults():
    assert build_args(NodeAffinityArgs, None) == NodeAffinityArgs(added_affinity=None)


@pytest.mark.parametrize(
    ("args", "want_errors"),
    [
        pytest.param({}, [], id="TestValidateNodeAffinityArgs/empty"),
        pytest.param(
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": required(
                        {"matchExpressions": [expr("label-1", "In", "label-1-val")]}
                    ),
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 1, "preference": {"matchFields": [expr("metadata.name", "In", "node-1")]}}
                    ],
                }
            },
            [],
            id="TestValidateNodeAffinityArgs/valid added affinity",
        ),
        pytest.param(
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": required(
                        {"matchExpressions": [expr("invalid/label/key", "In", "label-1-val")]}
                    ),
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 1, "preference": {"matchFields": [expr("metadata.name", "In", "node-1", "node-2")]}}
                    ],
                }
            },
            [
                ("Invalid value", "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key"),
                ("Invalid value", "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchFields[0].values"),
            ],
            id="TestValidateNodeAffinityArgs/invalid added affinity",
        ),
    ],
)
def test_validate_args(args, want_errors):
    if not want_errors:
        built = build_args(NodeAffinityArgs, args)
        assert built.added_affinity == args.get("addedAffinity")
        build_plugin(NodeAffinity, args)  # the plugin accepts them too
        return
    with pytest.raises(ArgsError) as ei:
        build_args(NodeAffinityArgs, args)
    # The aggregate lists each field error as "<field>: <type>: <bad value>: <detail>".
    msg = ei.value.message
    assert ei.value.field == "args"
    assert msg.startswith("[") and msg.endswith("]")
    found = re.findall(r"(?:^\[|, )(addedAffinity[^ ]*): (Invalid value|Unsupported value)", msg)
    assert [(t, f) for f, t in found] == want_errors


# --- details of the port not covered by the Go cases ------------------------------------------------


def test_validate_args_single_error_names_the_field():
    args = added_required({"matchExpressions": [expr("foo", "Bad", "x")]})
    with pytest.raises(ArgsError) as ei:
        build_args(NodeAffinityArgs, args)
    assert ei.value.field == (
        "args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator"
    )
    assert ei.value.message == (
        'Unsupported value: "Bad": supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"'
    )


@pytest.mark.parametrize(
    ("terms", "labels", "name", "matches"),
    [
        # A term with a parse error matches nothing, but the other terms still apply (lazy errors).
        pytest.param(
            [{"matchExpressions": [expr("foo", "Gt", "x")]}, {"matchExpressions": [expr("foo", "Exists")]}],
            {"foo": "1"},
            "n",
            True,
            id="a broken term does not stop another term from matching",
        ),
        pytest.param([{"matchExpressions": [expr("n", "Lt", "10")]}], {"n": "9"}, "n", True, id="Lt matches a smaller number"),
        pytest.param([{"matchExpressions": [expr("n", "Lt", "10")]}], {"n": "x"}, "n", False, id="Lt never matches a non-number"),
        pytest.param([{"matchExpressions": [expr("n", "DoesNotExist")]}], {}, "n", True, id="DoesNotExist matches a missing label"),
        pytest.param(
            [{"matchFields": [expr("metadata.name", "NotIn", "a")]}], {}, "b", True, id="matchFields NotIn another node's name"
        ),
        pytest.param(
            [{"matchFields": [expr("metadata.name", "In", "a")]}], {}, "", True, id="matchFields are ignored for a node without name"
        ),
        pytest.param(
            [{"matchFields": [expr("metadata.name", "In", "a", "b")]}], {}, "a", False, id="matchFields with two values never match"
        ),
    ],
)
def test_required_affinity_matching(terms, labels, name, matches):
    p = build_plugin(NodeAffinity)
    got = p.filter(CycleState(), Pod(pod_with(terms)), NodeInfo(Node(node(name, labels))))
    assert (got is None) is matches


def test_pre_filter_state_clone_is_shared():
    p = build_plugin(NodeAffinity)
    state = CycleState()
    p.pre_filter(state, Pod(pod_with(node_selector={"a": "b"})), [])
    c = state.clone()
    assert c.read("PreFilterNodeAffinity") is state.read("PreFilterNodeAffinity")


@pytest.mark.parametrize(
    ("args", "field", "message"),
    [
        pytest.param(
            {"addedAffinity": {"requiredDuringScheduling": {}}},
            "args.addedAffinity.requiredDuringScheduling",
            'unknown field "requiredDuringScheduling"',
            id="an unknown field of addedAffinity",
        ),
        pytest.param(
            {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": {}}}},
            "args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms",
            "Invalid type: expected a list, got dict",
            id="nodeSelectorTerms that is not a list",
        ),
        pytest.param(
            {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": "x"}]}},
            "args.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
            "Invalid type: expected integer, got str",
            id="a weight that is not an integer",
        ),
    ],
)
def test_malformed_args_name_the_field(args, field, message):
    with pytest.raises(ArgsError) as ei:
        build_args(NodeAffinityArgs, args)
    assert (ei.value.field, ei.value.message) == (field, message)
