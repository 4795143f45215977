"""DefaultPreemption, transcribed from kube-scheduler v1.36.3's default_preemption_test.go
(TestPostFilter, TestSelectBestCandidate, TestCustomSelection, TestCustomOrdering,
TestPodEligibleToPreemptOthers), preemption/executor_test.go (TestPreemptPod, TestPrepareCandidate,
TestRemoveNominatedNodeName) and validation_pluginargs_test.go, plus end-to-end runs on the
simulated cluster."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from kubesched.runtime.cluster.simulated import SimulatedCluster
from kubesched.runtime.config import load_config_data
from kubesched.runtime.framework.waiting import WaitingPodImpl
from kubesched.runtime.plugins.defaultpreemption import (
    NO_VICTIMS_MSG,
    Candidate,
    DefaultPreemption,
    filter_pods_with_pdb_violation,
    pick_one_node_for_preemption,
)
from kubesched.runtime.registry import Registry
from kubesched.runtime.scheduler import Scheduler
from kubesched.sdk import (
    ActionType,
    ArgsError,
    Code,
    CycleState,
    NodeInfo,
    Pod,
    QueueingHint,
    Status,
    hookimpl,
)
from kubesched.testing import build_plugin, make_handle, make_node, make_pod

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
ONE_POD = {"pods": "1"}
NODE_RES = {"cpu": "200m", "memory": "400"}


# --- a tiny NodeResourcesFit stand-in and a fake framework --------------------------------------


def fit_status(pod: Pod, node_info: Any) -> Status | None:
    """fitsRequest for pods, cpu and memory (the reasons of NodeResourcesFit)."""
    reasons: list[str] = []
    if len(node_info.pods) + 1 > node_info.allocatable.allowed_pod_number:
        reasons.append("Too many pods")
    req = pod.requests
    if req.milli_cpu > 0 and req.milli_cpu > node_info.allocatable.milli_cpu - node_info.requested.milli_cpu:
        reasons.append("Insufficient cpu")
    if req.memory > 0 and req.memory > node_info.allocatable.memory - node_info.requested.memory:
        reasons.append("Insufficient memory")
    return Status.unschedulable(*reasons) if reasons else None


class TestFit:
    __test__ = False
    name = "TestFit"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    @hookimpl
    def filter(self, pod: Pod, node_info: Any) -> Status | None:
        return fit_status(pod, node_info)


class FakeFramework:
    """The runners preemption uses, over the TestFit filter only (no PreFilter extensions)."""

    def __init__(self) -> None:
        self.num_filter_called = 0

    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: Any) -> Status:
        self.num_filter_called += 1
        return fit_status(pod, node_info) or Status.success()

    run_filter_plugins_with_nominated_pods = run_filter_plugins

    def run_pre_filter_extension_add_pod(self, *a: Any) -> Status:
        return Status.success()

    run_pre_filter_extension_remove_pod = run_pre_filter_extension_add_pod


def pod(name: str, *, node: str = "", prio: int | None = None, req: dict[str, str] | None = None,
        start: float | None = None, labels: dict[str, str] | None = None, ns: str = "default") -> dict[str, Any]:
    w = make_pod().name(name).uid(name).namespace(ns)
    if node:
        w.node(node)
    if prio is not None:
        w.priority(prio)
    if req:
        w.req(req)
    if labels:
        w.labels(labels)
    o = w.obj()
    if start is not None:
        o.setdefault("status", {})["startTime"] = start  # seconds; epochTimeN = N ns
    return o


def ns_time(n: int) -> float:
    return n * 1e-9


def pdb(name: str, match: dict[str, str], allowed: int = 0, ns: str = "default") -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"selector": {"matchLabels": dict(match)}},
        "status": {"disruptionsAllowed": allowed},
    }


def setup(nodes: list[dict[str, Any]], pods: list[dict[str, Any]], preemptor: dict[str, Any] | None = None,
          objects: list[dict[str, Any]] = (), args: dict[str, Any] | None = None) -> tuple[DefaultPreemption, Any]:
    objs = list(objects)
    if preemptor is not None:
        objs.append({"apiVersion": "v1", "kind": "Pod", **preemptor})
    h = make_handle(nodes, pods, objs)
    h.framework = FakeFramework()
    pl = build_plugin(DefaultPreemption, args, h)
    return pl, h


def nodes_named(names: list[str], res: dict[str, str]) -> list[dict[str, Any]]:
    return [make_node().name(n).capacity(res).obj() for n in names]


# --- args ----------------------------------------------------------------------------------------


def test_args_defaults() -> None:
    pl = build_plugin(DefaultPreemption, None, make_handle())
    assert pl.args.min_candidate_nodes_percentage == 10
    assert pl.args.min_candidate_nodes_absolute == 100


@pytest.mark.parametrize(
    "args, want",
    [
        pytest.param({"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}, None,
                     id="TestValidateDefaultPreemptionArgs/valid args (default)"),
        pytest.param({"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": 100},
                     "minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]",
                     id="TestValidateDefaultPreemptionArgs/negative minCandidateNodesPercentage"),
        pytest.param({"minCandidateNodesPercentage": 900, "minCandidateNodesAbsolute": 100},
                     "minCandidateNodesPercentage: Invalid value: 900: not in valid range [0, 100]",
                     id="TestValidateDefaultPreemptionArgs/minCandidateNodesPercentage over 100"),
        pytest.param({"minCandidateNodesPercentage": 20, "minCandidateNodesAbsolute": -1},
                     "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)",
                     id="TestValidateDefaultPreemptionArgs/negative minCandidateNodesAbsolute"),
        pytest.param({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
                     "[minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as "
                     "minCandidateNodesAbsolute, minCandidateNodesAbsolute: Invalid value: 0: cannot be zero "
                     "at the same time as minCandidateNodesPercentage]",
                     id="TestValidateDefaultPreemptionArgs/all zero"),
        pytest.param({"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": -1},
                     "[minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100], "
                     "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)]",
                     id="TestValidateDefaultPreemptionArgs/both negative"),
    ],
)
def test_args_validation(args: dict[str, Any], want: str | None) -> None:
    if want is None:
        build_plugin(DefaultPreemption, args, make_handle())
        return
    with pytest.raises(ArgsError) as e:
        build_plugin(DefaultPreemption, args, make_handle())
    # the runtime prefixes the path inside the profile ("args." / "args: ")
    assert str(e.value) in ("args." + want, "args: " + want)


@pytest.mark.parametrize(
    "pct, abs_, num_nodes, want",
    [
        pytest.param(10, 100, 10, 10, id="TestCalculateNumCandidates/no candidates"),
        pytest.param(10, 100, 1000, 100, id="TestCalculateNumCandidates/absolute wins"),
        pytest.param(10, 100, 2000, 200, id="TestCalculateNumCandidates/percentage wins"),
        pytest.param(40, 2, 5, 2, id="TestCalculateNumCandidates/percentage 40 of 5"),
        pytest.param(0, 1, 10, 1, id="TestCalculateNumCandidates/zero percentage"),
    ],
)
def test_calculate_num_candidates(pct: int, abs_: int, num_nodes: int, want: int) -> None:
    pl = build_plugin(DefaultPreemption, {"minCandidateNodesPercentage": pct, "minCandidateNodesAbsolute": abs_}, make_handle())
    assert pl.calculate_num_candidates(num_nodes) == want


# --- TestPostFilter --------------------------------------------------------------------------------

_U = Status(Code.UNSCHEDULABLE)
_UU = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
_PDB_NV = ("test.kubernetes.io/is-violating-pdb", "non-violating")
_PDB_V = ("test.kubernetes.io/is-violating-pdb", "violating")

POST_FILTER_CASES = [
    pytest.param(
        pod("p", prio=HIGH), [pod("p1", node="node1")], [], nodes_named(["node1"], ONE_POD),
        {"node1": _U}, "node1", Code.SUCCESS, "",
        id="TestPostFilter/pod with higher priority can be made schedulable",
    ),
    pytest.param(
        pod("p"), [pod("p1", node="node1")], [], nodes_named(["node1"], ONE_POD),
        {"node1": _U}, "", Code.UNSCHEDULABLE,
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
        id="TestPostFilter/pod with tied priority is still unschedulable",
    ),
    pytest.param(
        pod("p", prio=HIGH), [pod("p1", node="node1")], [], nodes_named(["node1"], ONE_POD),
        {"node1": _UU}, "", Code.UNSCHEDULABLE,
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
        id="TestPostFilter/preemption should respect filteredNodesStatuses",
    ),
    pytest.param(
        pod("p", prio=HIGH), [pod("p1", node="node1")], [], nodes_named(["node1"], ONE_POD),
        {}, "", Code.UNSCHEDULABLE,
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
        id="TestPostFilter/preemption should respect absent NodeToStatusReader entry meaning UnschedulableAndUnresolvable",
    ),
    pytest.param(
        pod("p", prio=MID), [pod("p1", node="node1", prio=HIGH), pod("p2", node="node2", prio=LOW)], [],
        nodes_named(["node1", "node2"], ONE_POD),
        {"node1": _U, "node2": _U}, "node2", Code.SUCCESS, "",
        id="TestPostFilter/pod can be made schedulable on one node",
    ),
    pytest.param(
        pod("p", prio=VERY_HIGH),
        [
            pod("p1", node="node1", prio=HIGH, labels=dict([_PDB_NV])),
            pod("p2", node="node1", prio=LOW, labels=dict([_PDB_V])),
            pod("p3", node="node2", prio=MID, labels=dict([_PDB_V])),
        ],
        [pdb("violating-pdb", dict([_PDB_V]), 0), pdb("non-violating-pdb", dict([_PDB_NV]), 2**31 - 1)],
        nodes_named(["node1", "node2"], ONE_POD),
        {"node1": _U, "node2": _U}, "node2", Code.SUCCESS, "",
        id="TestPostFilter/pod can be made schedulable on minHighestPriority node",
    ),
    pytest.param(
        pod("p", prio=HIGH, req=LARGE), [pod("p1", node="node1"), pod("p2", node="node2")], [],
        nodes_named(["node1", "node2"], NODE_RES),
        {"node1": _U, "node2": _U}, "", Code.UNSCHEDULABLE,
        "preemption: 0/2 nodes are available: 2 Insufficient cpu.",
        id="TestPostFilter/no candidate nodes found, no enough resource after removing low priority pods",
    ),
    pytest.param(
        pod("p", prio=HIGH, req=LARGE),
        [pod("p1", node="node1", prio=HIGH), pod("p2", node="node2"), pod("p3", node="node3", prio=HIGH)], [],
        [make_node().name("node1").capacity(ONE_POD).obj(), make_node().name("node2").capacity(NODE_RES).obj(),
         make_node().name("node3").capacity(ONE_POD).obj()],
        {"node1": _U, "node2": _U, "node3": _U}, "", Code.UNSCHEDULABLE,
        "preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found for incoming pod.",
        id="TestPostFilter/no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource",
    ),
    pytest.param(
        pod("p", prio=HIGH, req=LARGE), [pod("p1", node="node1"), pod("p2", node="node2")], [],
        nodes_named(["node1", "node2", "node3", "node4"], NODE_RES),
        {"node1": _U, "node2": _U, "node3": _UU, "node4": _UU}, "", Code.UNSCHEDULABLE,
        "preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not helpful for scheduling.",
        id="TestPostFilter/no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes "
        "and 2 nodes don't have enough CPU resource",
    ),
    pytest.param(
        # v1.36: WorkloadAwarePreemption and TopologyAwareWorkloadScheduling are alpha and off,
        # so a pod of a pod group preempts as any pod (no PodGroup object is needed)
        {**pod("p-with-podgroup", prio=HIGH), "spec": {**pod("p-with-podgroup", prio=HIGH)["spec"],
                                                        "schedulingGroup": {"podGroupName": "foo"}}},
        [pod("p1", node="node1")], [], nodes_named(["node1"], ONE_POD),
        {"node1": _U}, "node1", Code.SUCCESS, "",
        id="TestPostFilter/pod with SchedulingGroup with TAS and WAP disabled should preempt",
    ),
]


@pytest.mark.parametrize("preemptor, pods, pdbs, nodes, statuses, want_node, want_code, want_msg", POST_FILTER_CASES)
def test_post_filter(preemptor: Any, pods: Any, pdbs: Any, nodes: Any, statuses: Any, want_node: str,
                     want_code: Code, want_msg: str) -> None:
    pl, _h = setup(nodes, pods, preemptor, pdbs)
    result, status = pl.post_filter(CycleState(), Pod(preemptor), statuses)
    assert status.code is want_code, status
    assert status.message == want_msg
    assert result is not None
    assert result.nominated_node_name == want_node


# --- TestSelectBestCandidate ----------------------------------------------------------------------

E = ns_time(0)
SELECT_BEST_CASES = [
    pytest.param(["node1", "node2"], pod("p", prio=HIGH, req=LARGE),
                 [pod("p1", node="node1", prio=MID, req=LARGE, start=E), pod("p2", node="node2", prio=MID, req=LARGE, start=E)],
                 ["node1", "node2"],
                 id="TestSelectBestCandidate/a pod that fits on both nodes when lower priority pods are preempted"),
    pytest.param(["node1", "node2", "node3"], pod("p", prio=HIGH, req=VERY_LARGE),
                 [pod("p1.1", node="node1", prio=MID, req=MEDIUM, start=E), pod("p1.2", node="node1", prio=MID, req=LARGE, start=E),
                  pod("p2.1", node="node2", prio=MID, req=MEDIUM, start=E), pod("p2.2", node="node2", prio=LOW, req=MEDIUM, start=E),
                  pod("p3.1", node="node3", prio=LOW, req=MEDIUM, start=E), pod("p3.2", node="node3", prio=LOW, req=MEDIUM, start=E)],
                 ["node3"], id="TestSelectBestCandidate/node with min highest priority pod is picked"),
    pytest.param(["node1", "node2", "node3"], pod("p", prio=HIGH, req=VERY_LARGE),
                 [pod("p1.1", node="node1", prio=MID, req=MEDIUM, start=E), pod("p1.2", node="node1", prio=MID, req=LARGE, start=E),
                  pod("p2.1", node="node2", prio=MID, req=LARGE, start=E), pod("p2.2", node="node2", prio=LOW, req=MEDIUM, start=E),
                  pod("p3.1", node="node3", prio=MID, req=MEDIUM, start=E), pod("p3.2", node="node3", prio=MID, req=MEDIUM, start=E)],
                 ["node2"], id="TestSelectBestCandidate/when highest priorities are the same, minimum sum of priorities is picked"),
    pytest.param(["node1", "node2", "node3"], pod("p", prio=HIGH, req=VERY_LARGE),
                 [pod("p1.1", node="node1", prio=MID, req=SMALL, start=E), pod("p1.2", node="node1", prio=NEG, req=SMALL, start=E),
                  pod("p1.3", node="node1", prio=MID, req=SMALL, start=E), pod("p1.4", node="node1", prio=NEG, req=SMALL, start=E),
                  pod("p2.1", node="node2", prio=MID, req=LARGE, start=E), pod("p2.2", node="node2", prio=NEG, req=MEDIUM, start=E),
                  pod("p3.1", node="node3", prio=MID, req=MEDIUM, start=E), pod("p3.2", node="node3", prio=NEG, req=SMALL, start=E),
                  pod("p3.3", node="node3", prio=LOW, req=SMALL, start=E)],
                 ["node2"], id="TestSelectBestCandidate/when highest priority and sum are the same, minimum number of pods is picked"),
    pytest.param(["node1", "node2", "node3"], pod("p", prio=HIGH, req=VERY_LARGE),
                 [pod("p1.1", node="node1", prio=MID, req=SMALL, start=E), pod("p1.2", node="node1", prio=NEG, req=SMALL, start=E),
                  pod("p1.3", node="node1", prio=NEG, req=SMALL, start=E),
                  pod("p2.1", node="node2", prio=MID, req=LARGE, start=E), pod("p2.2", node="node2", prio=NEG, req=MEDIUM, start=E),
                  pod("p3.1", node="node3", prio=MID, req=MEDIUM, start=E), pod("p3.2", node="node3", prio=NEG, req=SMALL, start=E),
                  pod("p3.3", node="node3", prio=LOW, req=SMALL, start=E)],
                 ["node2"], id="TestSelectBestCandidate/sum of adjusted priorities is considered"),
    pytest.param(["node1", "node2", "node3", "node4"], pod("p", prio=VERY_HIGH, req=VERY_LARGE),
                 [pod("p1.1", node="node1", prio=MID, req=SMALL, start=E), pod("p1.2", node="node1", prio=LOW, req=SMALL, start=E),
                  pod("p1.3", node="node1", prio=LOW, req=SMALL, start=E),
                  pod("p2.1", node="node2", prio=HIGH, req=LARGE, start=E),
                  pod("p3.1", node="node3", prio=MID, req=MEDIUM, start=E), pod("p3.2", node="node3", prio=LOW, req=SMALL, start=E),
                  pod("p3.3", node="node3", prio=LOW, req=SMALL, start=E), pod("p3.4", node="node3", prio=LOW, req=MEDIUM, start=E),
                  pod("p4.1", node="node4", prio=MID, req=MEDIUM, start=E), pod("p4.2", node="node4", prio=MID, req=SMALL, start=E),
                  pod("p4.3", node="node4", prio=MID, req=SMALL, start=E), pod("p4.4", node="node4", prio=NEG, req=SMALL, start=E)],
                 ["node1"], id="TestSelectBestCandidate/non-overlapping lowest high priority, sum priorities, and number of pods"),
    pytest.param(["node1", "node2", "node3"], pod("p", prio=HIGH, req=VERY_LARGE),
                 [pod("p1.1", node="node1", prio=MID, req=MEDIUM, start=ns_time(2)), pod("p1.2", node="node1", prio=MID, req=MEDIUM, start=ns_time(2)),
                  pod("p2.1", node="node2", prio=MID, req=MEDIUM, start=ns_time(3)), pod("p2.2", node="node2", prio=MID, req=MEDIUM, start=ns_time(3)),
                  pod("p3.1", node="node3", prio=MID, req=MEDIUM, start=ns_time(1)), pod("p3.2", node="node3", prio=MID, req=MEDIUM, start=ns_time(1))],
                 ["node2"], id="TestSelectBestCandidate/same priority, same number of victims, different start time for each node's pod"),
    pytest.param(["node1", "node2", "node3"], pod("p", prio=HIGH, req=VERY_LARGE),
                 [pod("p1.1", node="node1", prio=MID, req=MEDIUM, start=ns_time(4)), pod("p1.2", node="node1", prio=MID, req=MEDIUM, start=ns_time(2)),
                  pod("p2.1", node="node2", prio=MID, req=MEDIUM, start=ns_time(5)), pod("p2.2", node="node2", prio=MID, req=MEDIUM, start=ns_time(1)),
                  pod("p3.1", node="node3", prio=MID, req=MEDIUM, start=ns_time(3)), pod("p3.2", node="node3", prio=MID, req=MEDIUM, start=ns_time(6))],
                 ["node3"], id="TestSelectBestCandidate/same priority, same number of victims, different start time for all pods"),
    pytest.param(["node1", "node2", "node3"], pod("p", prio=HIGH, req=VERY_LARGE),
                 [pod("p1.1", node="node1", prio=LOW, req=MEDIUM, start=ns_time(4)), pod("p1.2", node="node1", prio=MID, req=MEDIUM, start=ns_time(2)),
                  pod("p2.1", node="node2", prio=MID, req=MEDIUM, start=ns_time(6)), pod("p2.2", node="node2", prio=LOW, req=MEDIUM, start=ns_time(1)),
                  pod("p3.1", node="node3", prio=LOW, req=MEDIUM, start=ns_time(3)), pod("p3.2", node="node3", prio=MID, req=MEDIUM, start=ns_time(5))],
                 ["node2"], id="TestSelectBestCandidate/different priority, same number of victims, different start time for all pods"),
]


@pytest.mark.parametrize("offset", [0, 1, 2])
@pytest.mark.parametrize("node_names, preemptor, pods, expected", SELECT_BEST_CASES)
def test_select_best_candidate(node_names: list[str], preemptor: Any, pods: Any, expected: list[str], offset: int) -> None:
    pl, h = setup(nodes_named(node_names, VERY_LARGE), pods, preemptor)
    pl.get_offset_rand = lambda n: offset % n
    node_infos = list(h.snapshot().list())
    off, num = pl.get_offset_and_num_candidates(len(node_infos))
    candidates, _, _ = pl.dry_run_preemption(CycleState(), Pod(preemptor), node_infos, [], off, num)
    best = pl.select_candidate(candidates)
    assert best is not None and best.name in expected


# --- TestCustomSelection / TestCustomOrdering -----------------------------------------------------


def _label_is(key: str, val: str) -> Any:
    return lambda ni, victim, preemptor: victim.labels.get(key) == val


def _node_is(name: str) -> Any:
    return lambda ni, victim, preemptor: ni.name == name


def _preemptor_at_least(p: int) -> Any:
    return lambda ni, victim, preemptor: preemptor.priority >= p


def _victim_at_most(p: int) -> Any:
    return lambda ni, victim, preemptor: victim.priority <= p


def _v(name: str, node: str, prio: int, req: dict[str, str], label: str | None = None) -> dict[str, Any]:
    return pod(name, node=node, prio=prio, req=req, start=E, labels={"preemptible": label} if label else None)


_LABEL_PODS = [_v("v1", "node1", MID, LARGE, "no"), _v("v2", "node2", MID, LARGE, "yes"),
               _v("v3", "node3", LOW, LARGE, "yes"), _v("v4", "node4", LOW, LARGE)]
_NODE_PODS_HIGH = [_v("v1", "node1", HIGH, MEDIUM), _v("v2", "node1", MID, SMALL), _v("v3", "node1", LOW, SMALL),
                   _v("v4", "node2", MID, LARGE), _v("v5", "node3", LOW, LARGE)]
_NODE_PODS = [_v("v1", "node1", HIGH, SMALL), _v("v2", "node1", MID, SMALL), _v("v3", "node1", LOW, SMALL),
              _v("v4", "node2", MID, LARGE), _v("v5", "node3", LOW, LARGE)]
_PRIO_PODS = [_v("v1", "node1", HIGH, LARGE), _v("v2", "node2", MID, LARGE), _v("v3", "node3", LOW, LARGE)]
N4 = ["node1", "node2", "node3", "node4"]
N3 = ["node1", "node2", "node3"]

CUSTOM_SELECTION_CASES = [
    pytest.param(_label_is("preemptible", "yes"), N4, pod("p1", prio=HIGH, req=LARGE), _LABEL_PODS,
                 {"node2": ["v2"], "node3": ["v3"]}, id="TestCustomSelection/filter for matching pod label: high priority"),
    pytest.param(_label_is("preemptible", "yes"), N4, pod("p2", prio=MID, req=LARGE), _LABEL_PODS,
                 {"node3": ["v3"]}, id="TestCustomSelection/filter for matching pod label: mid priority"),
    pytest.param(_label_is("preemptible", "yes"), N4, pod("p3", prio=LOW, req=LARGE), _LABEL_PODS,
                 {}, id="TestCustomSelection/filter for matching pod label: low priority"),
    pytest.param(_node_is("node1"), N3, pod("p3", prio=HIGH, req=LARGE), _NODE_PODS_HIGH,
                 {"node1": ["v2", "v3"]}, id="TestCustomSelection/filter for matching victim node: high priority"),
    pytest.param(_node_is("node1"), N3, pod("p3", prio=MID, req=LARGE), _NODE_PODS,
                 {"node1": ["v3"]}, id="TestCustomSelection/filter for matching victim node: mid priority"),
    pytest.param(_node_is("node1"), N3, pod("p3", prio=LOW, req=LARGE), _NODE_PODS,
                 {}, id="TestCustomSelection/filter for matching victim node: low priority"),
    pytest.param(_preemptor_at_least(HIGH), N3, pod("p1", prio=HIGH, req=LARGE), _PRIO_PODS,
                 {"node2": ["v2"], "node3": ["v3"]},
                 id="TestCustomSelection/only pods at or above specified priority can preempted: high priority"),
    pytest.param(_preemptor_at_least(HIGH), N3, pod("p2", prio=MID, req=LARGE), _PRIO_PODS,
                 {}, id="TestCustomSelection/only pods at or above specified priority can preempted: mid priority"),
    pytest.param(_victim_at_most(MID), N3, pod("p1", prio=HIGH, req=LARGE), _PRIO_PODS,
                 {"node2": ["v2"], "node3": ["v3"]},
                 id="TestCustomSelection/only pods at or below specified priority can be preempted: high priority"),
]


@pytest.mark.parametrize("eligible, node_names, preemptor, pods, expected", CUSTOM_SELECTION_CASES)
def test_custom_selection(eligible: Any, node_names: list[str], preemptor: Any, pods: Any, expected: dict[str, list[str]]) -> None:
    pl, h = setup(nodes_named(node_names, VERY_LARGE), pods, preemptor)
    pl.is_eligible_pod = eligible
    node_infos = list(h.snapshot().list())
    off, num = pl.get_offset_and_num_candidates(len(node_infos))
    candidates, _, _ = pl.dry_run_preemption(CycleState(), Pod(preemptor), node_infos, [], off, num)
    assert len(candidates) == len(expected), [c.name for c in candidates]
    while candidates:
        sel = pl.select_candidate(candidates)
        assert sel is not None and sel.name in expected
        assert [p.name for p in sel.victims] == expected[sel.name]
        candidates = [c for c in candidates if c.name != sel.name]


def _start(p: Pod) -> float:
    return float(p.status.get("startTime") or 0)


@pytest.mark.parametrize(
    "order, pods, expected",
    [
        pytest.param(lambda a, b: _start(a) < _start(b),
                     [pod("v1", node="node1", prio=LOW, req=MEDIUM, start=ns_time(2)),
                      pod("v2", node="node1", prio=LOW, req=MEDIUM, start=ns_time(0)),
                      pod("v3", node="node1", prio=MID, req=MEDIUM, start=ns_time(1))],
                     ["v3", "v1"], id="TestCustomOrdering/select newest pods"),
        pytest.param(lambda a, b: a.name < b.name,
                     [{**pod("foo", node="node1", prio=LOW, req=MEDIUM, start=E)},
                      pod("bar", node="node1", prio=LOW, req=MEDIUM, start=E),
                      pod("baz", node="node1", prio=MID, req=MEDIUM, start=E)],
                     ["baz", "foo"], id="TestCustomOrdering/select alphabetically-last pods"),
    ],
)
def test_custom_ordering(order: Any, pods: Any, expected: list[str]) -> None:
    preemptor = pod("p2", prio=HIGH, req=LARGE)
    pl, h = setup(nodes_named(["node1"], VERY_LARGE), pods, preemptor)
    pl.more_important_pod = order
    node_infos = list(h.snapshot().list())
    off, num = pl.get_offset_and_num_candidates(len(node_infos))
    candidates, _, _ = pl.dry_run_preemption(CycleState(), Pod(preemptor), node_infos, [], off, num)
    assert len(candidates) == 1
    assert [p.name for p in candidates[0].victims] == expected


# --- TestPodEligibleToPreemptOthers ---------------------------------------------------------------


def _terminating(p: dict[str, Any], preempted: bool = False) -> dict[str, Any]:
    p["metadata"]["deletionTimestamp"] = "2020-01-01T00:00:00Z"
    if preempted:
        p.setdefault("status", {})["conditions"] = [
            {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
        ]
    return p


def _nominated(p: dict[str, Any], node: str) -> dict[str, Any]:
    p.setdefault("status", {})["nominatedNodeName"] = node
    return p


@pytest.mark.parametrize(
    "preemptor, pods, nodes, status, expected",
    [
        pytest.param(_nominated(pod("p_with_nominated_node", prio=HIGH), "node1"),
                     [_terminating(pod("p1", node="node1", prio=LOW))], ["node1"],
                     Status.unresolvable("node(s) had untolerated taint"), True,
                     id="TestPodEligibleToPreemptOthers/Pod with nominated node"),
        pytest.param(pod("p_without_nominated_node", prio=HIGH), [], [], None, True,
                     id="TestPodEligibleToPreemptOthers/Pod without nominated node"),
        pytest.param(make_pod().name("p_with_preempt_never_policy").uid("p").priority(HIGH).preemption_policy("Never").obj(),
                     [], [], None, False,
                     id="TestPodEligibleToPreemptOthers/Pod with 'PreemptNever' preemption policy"),
        pytest.param(_nominated(pod("p_with_nominated_node", prio=HIGH), "node1"),
                     [_terminating(pod("p1", node="node1", prio=LOW), preempted=True)], ["node1"], None, False,
                     id="TestPodEligibleToPreemptOthers/preemption victim pod terminating, as indicated by the "
                     "dedicated DisruptionTarget condition"),
        pytest.param(_nominated(pod("p_with_nominated_node", prio=HIGH), "node1"),
                     [_terminating(pod("p1", node="node1", prio=LOW))], ["node1"], None, True,
                     id="TestPodEligibleToPreemptOthers/non-victim Pods terminating"),
    ],
)
def test_pod_eligible_to_preempt_others(preemptor: Any, pods: Any, nodes: list[str], status: Status | None, expected: bool) -> None:
    pl, _ = setup([make_node().name(n).obj() for n in nodes], pods, preemptor)
    got, _ = pl.pod_eligible_to_preempt_others(Pod(preemptor), status)
    assert got is expected


def test_preemption_policy_never_message() -> None:
    p = make_pod().name("p").uid("p").priority(HIGH).preemption_policy("Never").obj()
    pl, _ = setup(nodes_named(["node1"], ONE_POD), [pod("p1", node="node1")], p)
    result, status = pl.post_filter(CycleState(), Pod(p), {"node1": _U})
    assert result is None
    assert status.code is Code.UNSCHEDULABLE
    assert status.message == "preemption: not eligible due to preemptionPolicy=Never."


# --- helpers: pickOneNodeForPreemption and filterPodsWithPDBViolation -----------------------------


def test_pick_one_node_prefers_fewer_pdb_violations() -> None:
    a = Candidate("a", [Pod(pod("x", prio=LOW))], 1)
    b = Candidate("b", [Pod(pod("y", prio=MID))], 0)
    assert pick_one_node_for_preemption({"a": a, "b": b}, 0.0) == "b"


def test_filter_pods_with_pdb_violation_counts_budget() -> None:
    pods = [Pod(pod(f"p{i}", labels={"app": "foo"})) for i in range(3)]
    violating, ok = filter_pods_with_pdb_violation(pods, [pdb("b", {"app": "foo"}, 2)])
    assert [p.name for p in ok] == ["p0", "p1"]
    assert [p.name for p in violating] == ["p2"]
    # disruptedPods are not counted again; other namespaces and empty selectors do not match
    b = pdb("b", {"app": "foo"}, 0)
    b["status"]["disruptedPods"] = {"p0": "2020-01-01T00:00:00Z"}
    other = pdb("o", {"app": "foo"}, 0, ns="other")
    empty = {**pdb("e", {}, 0), "spec": {"selector": {}}}
    violating, ok = filter_pods_with_pdb_violation(pods, [b, other, empty])
    assert [p.name for p in ok] == ["p0"]
    assert [p.name for p in violating] == ["p1", "p2"]


def test_events_to_register() -> None:
    """EventsToRegister with SchedulerAsyncPreemption: Pod/Delete, whose hint is always Skip
    (isPodSchedulableAfterPodDeletion); nothing with the gate off."""
    pl = build_plugin(DefaultPreemption, None, make_handle())
    (ewh,) = pl.events_to_register()
    assert (ewh.event.resource, ewh.event.action) == ("Pod", ActionType.DELETE)
    assert ewh.hint(Pod(PREEMPTOR), Pod(pod("v")), None) is QueueingHint.SKIP
    pl._async_preemption = False
    assert pl.events_to_register() == []


# --- Executor (v1.36 executor_test.go): PreemptPod, prepareCandidate, clearing nominations -------


class RecordingObjects:
    """The handle's object store, recording the verb and object of each write (Go's tests read
    ``clientset.Actions()``); writes to a name in ``fail_patch``/``fail_delete`` fail as Go's
    fake clientset reactors make them fail."""

    def __init__(self, store: Any, fail_patch: tuple[str, ...] = (), fail_delete: tuple[str, ...] = ()) -> None:
        self.store = store
        self.actions: list[tuple[str, str]] = []
        self.fail_patch = fail_patch
        self.fail_delete = fail_delete

    def patch(self, api_version: str, kind: str, name: str, patch: Any, namespace: str | None = None, **kw: Any) -> Any:
        self.actions.append(("patch", name))
        if name in self.fail_patch:
            raise RuntimeError("patch pod status failed")
        return self.store.patch(api_version, kind, name, patch, namespace, **kw)

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> None:
        self.actions.append(("delete", name))
        if name in self.fail_delete:
            raise RuntimeError("delete pod failed")
        self.store.delete(api_version, kind, name, namespace)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.store, attr)


_DISRUPTION = {
    "type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
    "message": "default-scheduler: preempting to accommodate a higher priority pod",
}


def _victim(name: str, prio: int = MID, *, condition: bool = False, deleting: bool = False) -> dict[str, Any]:
    v = pod(name, node="node1", prio=prio)
    if condition:
        v.setdefault("status", {})["conditions"] = [dict(_DISRUPTION)]
    if deleting:
        v["metadata"]["deletionTimestamp"] = "2020-01-01T00:00:00Z"
        v["metadata"]["finalizers"] = ["test"]
    return v


def executor_setup(stored: list[dict[str, Any]], **fail: tuple[str, ...]) -> tuple[DefaultPreemption, Any, RecordingObjects]:
    """DefaultPreemption over a handle whose store holds ``stored`` pods (the victims that exist)."""
    h = make_handle(nodes_named(["node1"], ONE_POD))
    for o in stored:
        h.objects.create({"apiVersion": "v1", "kind": "Pod", **o}, notify=False)
    rec = RecordingObjects(h.objects, **fail)
    h._objects = rec
    return build_plugin(DefaultPreemption, None, h), h, rec


def _preempted_notes(h: Any) -> list[tuple[str, str]]:
    return [(e.regarding["metadata"]["name"], e.note) for e in h.event_recorder.events if e.reason == "Preempted"]


def _waiting(v: dict[str, Any], done: list[Status]) -> WaitingPodImpl:
    return WaitingPodImpl(Pod(v), {"waitingPermitPlugin": 10.0}, 0.0, lambda wp, st: done.append(st))


PREEMPTOR = pod("p", prio=HIGH)


def test_preempt_pod_waiting_victim_is_preempted_in_memory() -> None:
    """TestPreemptPod/victim is in waiting pods, it should be rejected (no calls to apiserver):
    v1.36 Preempts it (an Error for its binding cycle: back to the queue through backoff) and
    says so in the event."""
    v = pod("v", prio=MID)
    pl, h, rec = executor_setup([v])
    done: list[Status] = []
    h.waiting_pods["v"] = _waiting(v, done)
    pl.preempt_pod(Candidate("fake-node"), Pod(PREEMPTOR), Pod(v))
    assert rec.actions == []
    assert [(st.code, st.message, st.plugin) for st in done] == [(Code.ERROR, "preempted", "DefaultPreemption")]
    assert _preempted_notes(h) == [("v", "Preempted by pod p on node fake-node (in kube-scheduler memory).")]
    assert h.objects.peek("v1", "Pod", "v", "default") is not None


def test_preempt_pod_victim_not_waiting_is_deleted() -> None:
    """TestPreemptPod/victim is not in waiting/preBind pods, pod should be deleted."""
    v = pod("v", prio=MID)
    pl, h, rec = executor_setup([v])
    pl.preempt_pod(Candidate("fake-node"), Pod(PREEMPTOR), Pod(v))
    assert rec.actions == [("patch", "v"), ("delete", "v")]
    assert _preempted_notes(h) == [("v", "Preempted by pod p on node fake-node")]
    assert h.objects.peek("v1", "Pod", "v", "default") is None


def test_preempt_pod_victim_no_longer_waiting_is_deleted() -> None:
    """kubesched: waitingPod.Preempt returns false for a pod whose wait already ended; Go then
    falls through to the API deletion (skipAPICall stays false)."""
    v = pod("v", prio=MID)
    pl, h, rec = executor_setup([v])
    done: list[Status] = []
    wp = _waiting(v, done)
    wp.allow("waitingPermitPlugin")
    h.waiting_pods["v"] = wp
    pl.preempt_pod(Candidate("fake-node"), Pod(PREEMPTOR), Pod(v))
    assert [st.code for st in done] == [Code.SUCCESS]
    assert rec.actions == [("patch", "v"), ("delete", "v")]
    assert _preempted_notes(h) == [("v", "Preempted by pod p on node fake-node")]


def test_waiting_pod_preempt_returns_whether_it_was_waiting() -> None:
    """waitingPod.Preempt (waiting_pods_map.go): an Error status with the plugin, once."""
    done: list[Status] = []
    wp = _waiting(pod("v"), done)
    assert wp.preempt("DefaultPreemption", "preempted") is True
    assert wp.preempt("DefaultPreemption", "preempted") is False
    wp.reject("other", "too late")
    assert [(st.code, st.message) for st in done] == [(Code.ERROR, "preempted")]


PREPARE_CANDIDATE_CASES = [
    pytest.param([], [_victim("victim1")], [], None, [], [], id="TestPrepareCandidate/no victims"),
    pytest.param([_victim("victim1")], [_victim("victim1")], [], None,
                 [("patch", "victim1"), ("delete", "victim1")], ["victim1"],
                 id="TestPrepareCandidate/one victim without condition"),
    pytest.param([_victim("victim1-with-deletion-timestamp", deleting=True)],
                 [_victim("victim1-with-deletion-timestamp", deleting=True)], [], None, [], [],
                 id="TestPrepareCandidate/one victim, but victim is already being deleted"),
    pytest.param([_victim("not-found-victim")], [], [], None, [("patch", "not-found-victim")], [],
                 id="TestPrepareCandidate/one victim, but victim is already deleted"),
    pytest.param([_victim("victim1", condition=True)], [_victim("victim1", condition=True)], [], None,
                 [("delete", "victim1")], ["victim1"], id="TestPrepareCandidate/one victim with same condition"),
    pytest.param([_victim("victim1", condition=True)], [], [], None, [("delete", "victim1")], [],
                 id="TestPrepareCandidate/one victim, not-found victim error is ignored when patching"),
    pytest.param([_victim("fail-victim", condition=True)], [], ["fail-victim"], "delete pod failed",
                 [("delete", "fail-victim")], [], id="TestPrepareCandidate/one victim, but pod deletion failed"),
    pytest.param([_victim("victim1")], [], [], None, [("patch", "victim1")], [],
                 id="TestPrepareCandidate/one victim, not-found victim error is ignored when deleting"),
    pytest.param([_victim("fail-victim")], [], ["fail-victim"], "patch pod status failed",
                 [("patch", "fail-victim")], [], id="TestPrepareCandidate/one victim, but patch pod failed"),
    pytest.param([_victim("fail-victim"), _victim("victim2", prio=50000)], [_victim("victim1")], ["fail-victim"],
                 "patch pod status failed", [("patch", "fail-victim")], [],
                 # Go evicts in parallel, so victim2 may be deleted or not; here victims go in order
                 id="TestPrepareCandidate/two victims without condition, one passes successfully and the second fails"),
]


@pytest.mark.parametrize("victims, stored, failing, want_error, want_actions, want_events", PREPARE_CANDIDATE_CASES)
def test_prepare_candidate(victims: list[dict[str, Any]], stored: list[dict[str, Any]], failing: list[str],
                           want_error: str | None, want_actions: list[tuple[str, str]], want_events: list[str]) -> None:
    """The cases with SchedulerAsyncPreemption off (prepareCandidate), whose status PostFilter
    returns."""
    fail = {"fail_delete": tuple(failing)} if want_error == "delete pod failed" else {"fail_patch": tuple(failing)}
    pl, h, rec = executor_setup(stored, **fail)
    pl._async_preemption = False
    st = pl.actuate_pod_preemption(Candidate("node1", [Pod(v) for v in victims]), Pod(PREEMPTOR))
    if want_error is None:
        assert st.is_success(), st
    else:
        assert (st.code, st.message) == (Code.ERROR, want_error)
    assert rec.actions == want_actions
    assert [n for n, _ in _preempted_notes(h)] == want_events
    assert h.activated == []


@pytest.mark.parametrize("victims, stored, failing, want_error, want_actions, want_events", PREPARE_CANDIDATE_CASES)
def test_prepare_candidate_async(victims: list[dict[str, Any]], stored: list[dict[str, Any]], failing: list[str],
                                 want_error: str | None, want_actions: list[tuple[str, str]], want_events: list[str]) -> None:
    """The same cases with SchedulerAsyncPreemption (v1.36's default): PostFilter succeeds at
    once; the eviction runs on ``handle.run_async`` with the preemptor marked as preempting
    (held at PreEnqueue); afterwards it is not, and a failed eviction activates the preemptor
    (expectedActivatedPods)."""
    fail = {"fail_delete": tuple(failing)} if want_error == "delete pod failed" else {"fail_patch": tuple(failing)}
    pl, h, rec = executor_setup(stored, **fail)
    later: list[Any] = []
    h.run_async = later.append
    preemptor = Pod(PREEMPTOR)
    assert pl.actuate_pod_preemption(Candidate("node1", [Pod(v) for v in victims]), preemptor).is_success()
    # the preempting set is written before the work is handed over
    to_delete = [v for v in victims if not v["metadata"].get("deletionTimestamp")]
    assert pl._preempting == ({"p"} if to_delete else set())
    assert pl.pre_enqueue(preemptor) == (
        Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for the preemption for this pod to be finished") if to_delete else None
    )
    assert rec.actions == []
    for fn in later:
        fn()
    assert pl._preempting == set() and pl._last_victims == {}
    assert pl.pre_enqueue(preemptor) is None
    assert rec.actions == want_actions
    assert [n for n, _ in _preempted_notes(h)] == want_events
    assert [p.name for p in h.activated] == (["p"] if want_error else [])
    # a preemptor held at PreEnqueue meanwhile is looked at again once the eviction succeeded
    assert [(p.name, plugin) for p, plugin in h.rechecked] == ([] if want_error or not to_delete else [("p", "DefaultPreemption")])


def test_async_preemption_holds_the_preemptor_until_its_last_victim_is_being_deleted() -> None:
    """TestIsPodRunningPreemption: while the last victim's eviction runs, the preemptor is held
    only while that victim is still in the pod lister without a deletion timestamp."""
    stored = [_victim("victim1"), _victim("victim2")]
    pl, h, rec = executor_setup(stored)
    seen: list[tuple[str, Any]] = []

    class Watching:
        """The object client, asking PreEnqueue about the preemptor before each write."""

        def __getattr__(self, attr: str) -> Any:
            return getattr(rec, attr)

        def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> None:
            seen.append((name, pl.pre_enqueue(Pod(PREEMPTOR))))
            rec.delete(api_version, kind, name, namespace)
            seen.append((name + " gone", pl.pre_enqueue(Pod(PREEMPTOR))))

    h._objects = Watching()
    held = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for the preemption for this pod to be finished")
    assert pl.actuate_pod_preemption(Candidate("node1", [Pod(v) for v in stored]), Pod(PREEMPTOR)).is_success()
    assert seen == [("victim1", held), ("victim1 gone", held), ("victim2", held), ("victim2 gone", None)]
    assert pl._preempting == set()


@pytest.mark.parametrize("preempting, last, stored, want", [
    pytest.param(set(), {}, [], False, id="preemptor not in preemptingSet"),
    pytest.param(set(), {"p": ("default", "victim1")}, [], False, id="preemptor not in preemptingSet, lastVictimSet not empty"),
    pytest.param({"p"}, {"otherPod": ("default", "victim1")}, [], True, id="preemptor in preemptingSet, no lastVictim for preemptor"),
    pytest.param({"p"}, {"p": ("default", "victim1")}, [], False, id="preemptor in preemptingSet, victim in lastVictimSet, not in PodLister"),
    pytest.param({"p"}, {"p": ("default", "victim1")}, [_victim("victim1"), _victim("victim2")], True,
                 id="preemptor in preemptingSet, victim in lastVictimSet and in PodLister"),
    pytest.param({"p"}, {"p": ("default", "victim-deleted")}, [_victim("victim1"), _victim("victim-deleted", deleting=True)], False,
                 id="preemptor in preemptingSet, victim in lastVictimSet and in PodLister with deletion timestamp"),
])
def test_is_pod_running_preemption(preempting: set[str], last: dict[str, tuple[str, str]], stored: list[dict[str, Any]], want: bool) -> None:
    """TestIsPodRunningPreemption (executor_test.go)."""
    pl, _h, _rec = executor_setup(stored)
    pl._preempting, pl._last_victims = set(preempting), dict(last)
    assert pl.is_pod_running_preemption("p") is want


def _nominated_pod(name: str, prio: int, node: str = "node1") -> Pod:
    p = pod(name, prio=prio)
    p.setdefault("status", {})["nominatedNodeName"] = node
    return Pod(p)


def test_prepare_candidate_clears_lower_priority_nominations_first() -> None:
    """TestRemoveNominatedNodeName/Should make patch request to clear node name (and
    getLowerPriorityNominatedPods): only lower-priority pods nominated to the node are cleared,
    before the victims are evicted (prepareCandidateAsync's order)."""
    low, same = _nominated_pod("low", LOW), _nominated_pod("same", HIGH)
    pl, h, rec = executor_setup([_victim("victim1"), low.raw, same.raw])
    h.nominated["node1"] = [low, same]
    assert pl.actuate_pod_preemption(Candidate("node1", [Pod(_victim("victim1"))]), Pod(PREEMPTOR)).is_success()
    assert rec.actions == [("patch", "low"), ("patch", "victim1"), ("delete", "victim1")]
    assert h.objects.get("v1", "Pod", "low", "default")["status"].get("nominatedNodeName") is None
    assert h.objects.get("v1", "Pod", "same", "default")["status"]["nominatedNodeName"] == "node1"


def test_prepare_candidate_sync_clears_nominations_after_the_victims() -> None:
    """prepareCandidate (the gate off) evicts the victims first, then clears nominations."""
    low = _nominated_pod("low", LOW)
    pl, h, rec = executor_setup([_victim("victim1"), low.raw])
    h.nominated["node1"] = [low]
    assert pl.prepare_candidate(Candidate("node1", [Pod(_victim("victim1"))]), Pod(PREEMPTOR)).is_success()
    assert rec.actions == [("patch", "victim1"), ("delete", "victim1"), ("patch", "low")]


def test_prepare_candidate_does_not_patch_an_already_cleared_nomination() -> None:
    """TestRemoveNominatedNodeName/Should not make patch request if nominated node is already cleared."""
    cleared = Pod(pod("cleared", prio=LOW))
    pl, h, rec = executor_setup([_victim("victim1"), cleared.raw])
    h.nominated["node1"] = [cleared]
    assert pl.actuate_pod_preemption(Candidate("node1", [Pod(_victim("victim1"))]), Pod(PREEMPTOR)).is_success()
    assert rec.actions == [("patch", "victim1"), ("delete", "victim1")]


def test_prepare_candidate_all_victims_terminating_does_nothing() -> None:
    """prepareCandidateAsync (v1.36's default path): when every victim is already being deleted
    there is nothing to evict and lower-priority nominations are left as they are."""
    low = _nominated_pod("low", LOW)
    v = _victim("v", deleting=True)
    pl, h, rec = executor_setup([v, low.raw])
    h.nominated["node1"] = [low]
    assert pl.actuate_pod_preemption(Candidate("node1", [Pod(v)]), Pod(PREEMPTOR)).is_success()
    assert rec.actions == []
    assert _preempted_notes(h) == []


# --- end to end on the simulated cluster -----------------------------------------------------------

CFG = yaml.safe_dump({
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{
        "schedulerName": "test",
        "plugins": {
            "multiPoint": {"disabled": [{"name": "*"}]},
            "queueSort": {"enabled": [{"name": "PrioritySort"}]},
            "filter": {"enabled": [{"name": "TestFit"}]},
            "postFilter": {"enabled": [{"name": "DefaultPreemption"}]},
            "bind": {"enabled": [{"name": "DefaultBinder"}]},
        },
    }],
})


def simulate(manifests: list[dict[str, Any]]) -> tuple[SimulatedCluster, Scheduler]:
    reg = Registry.discover()
    reg.register("TestFit", TestFit)
    cfg = load_config_data(CFG, installed_plugins=reg.names())
    sim = SimulatedCluster(manifests)
    s = Scheduler(cfg, reg, sim, simulated=True, seed=1)
    sim.run(s)
    return sim, s


def spod(name: str, *, node: str = "", prio: int = 0, cpu: str = "1", labels: dict[str, str] | None = None,
         never: bool = False) -> dict[str, Any]:
    w = make_pod().name(name).uid(name).scheduler_name("test").priority(prio).req(cpu=cpu)
    if node:
        w.node(node)
    if labels:
        w.labels(labels)
    if never:
        w.preemption_policy("Never")
    return w.obj()


def snode(name: str, cpu: str = "2") -> dict[str, Any]:
    return make_node().name(name).capacity(cpu=cpu, memory="4Gi").obj()


def names_in_store(sim: SimulatedCluster) -> set[str]:
    return {p["metadata"]["name"] for p in sim.store.list("v1", "Pod")}


def result_of(s: Scheduler, name: str) -> Any:
    return next(r for r in s.results.values() if r.name == name)


def test_sim_preempts_lowest_priority_pod() -> None:
    sim, s = simulate([snode("n1"), snode("n2"),
                       spod("low1", node="n1", prio=1, cpu="2"), spod("low2", node="n2", prio=5, cpu="2"),
                       spod("high", prio=10, cpu="1")])
    assert "low1" not in names_in_store(sim)
    assert "low2" in names_in_store(sim)
    r = result_of(s, "high")
    assert (r.status, r.node) == ("Scheduled", "n1")
    pre = [e for e in sim.events if e.reason == "Preempted"]
    assert len(pre) == 1 and pre[0].regarding == "Pod default/low1"
    assert pre[0].note == "Preempted by pod high on node n1"
    assert pre[0].action == "Preempting" and pre[0].event_type == "Normal"


def test_sim_preemption_policy_never_does_not_preempt() -> None:
    sim, s = simulate([snode("n1"), spod("low", node="n1", prio=1, cpu="2"), spod("high", prio=10, cpu="1", never=True)])
    assert "low" in names_in_store(sim)
    r = result_of(s, "high")
    assert r.status == "Unschedulable"
    assert r.message == (
        # v1.34 FitError appends the PostFilter message with " %v" (no extra period)
        "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never."
    )
    assert not [e for e in sim.events if e.reason == "Preempted"]


def test_sim_pdb_protected_victim_avoided() -> None:
    # the PDB-protected pod on n1 has the lower priority, but n2 violates no budget
    sim, s = simulate([snode("n1"), snode("n2"),
                       pdb("guard", {"app": "db"}, 0),
                       spod("db", node="n1", prio=1, cpu="2", labels={"app": "db"}),
                       spod("web", node="n2", prio=5, cpu="2"),
                       spod("high", prio=10, cpu="1")])
    assert names_in_store(sim) >= {"db", "high"}
    assert "web" not in names_in_store(sim)
    assert result_of(s, "high").node == "n2"


def test_sim_minimal_victims() -> None:
    # n1 holds three 1-cpu pods of priorities 1, 2, 3 (4 cpu); the 2-cpu pod needs only two of them
    sim, s = simulate([snode("n1", cpu="4"),
                       spod("a", node="n1", prio=1), spod("b", node="n1", prio=2), spod("c", node="n1", prio=3),
                       spod("spare", node="n1", prio=100),
                       spod("high", prio=10, cpu="2")])
    left = names_in_store(sim)
    assert "c" in left and "spare" in left
    assert "a" not in left and "b" not in left
    assert result_of(s, "high").node == "n1"


def test_sim_no_victims_message() -> None:
    _sim, s = simulate([snode("n1"), spod("peer", node="n1", prio=10, cpu="2"), spod("high", prio=10, cpu="1")])
    r = result_of(s, "high")
    assert r.status == "Unschedulable"
    assert r.message == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )


def test_dry_run_preemption_looks_past_num_candidates_until_non_pdb_violating_node() -> None:
    """TestDryRunPreemption/preemption looks past numCandidates until a non-PDB violating node is found
    (the only TestDryRunPreemption case transcribed; Go seeds the offset with rand.NewSource(4),
    which gives offset 4 here)."""
    foo = {"app": "foo"}
    pods = [pod("p1", node="node1", prio=MID, req=LARGE, labels=foo), pod("p2", node="node2", prio=MID, req=LARGE, labels=foo),
            pod("p3", node="node3", prio=MID, req=LARGE), pod("p4", node="node4", prio=MID, req=LARGE),
            pod("p5", node="node5", prio=MID, req=LARGE, labels=foo)]
    preemptor = pod("p", prio=HIGH, req=LARGE)
    budget = pdb("b", foo, 0)
    pl, h = setup(nodes_named([f"node{i}" for i in range(1, 6)], VERY_LARGE), pods, preemptor,
                  args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 2})
    pl.get_offset_rand = lambda n: 4
    node_infos = sorted(h.snapshot().list(), key=lambda ni: ni.name)
    off, num = pl.get_offset_and_num_candidates(len(node_infos))
    assert (off, num) == (4, 2)
    got, _, _ = pl.dry_run_preemption(CycleState(), Pod(preemptor), node_infos, [budget], off, num)
    assert sorted((c.name, [p.name for p in c.victims], c.num_pdb_violations) for c in got) == [
        ("node1", ["p1"], 1), ("node3", ["p3"], 0), ("node5", ["p5"], 1)
    ]
    assert h.framework.num_filter_called == 8


class HoldAtPermit:
    """Permit: pods labelled hold=yes wait (60 s) for an allow that never comes."""

    name = "HoldAtPermit"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    @hookimpl
    def permit(self, pod: Pod) -> Any:
        if pod.labels.get("hold") == "yes":
            return Status.wait(), 60.0
        return None


def test_sim_victim_held_at_permit_is_preempted_in_memory() -> None:
    """v1.36 Executor.PreemptPod: the victim waiting at Permit is not deleted; its binding cycle
    ends with an Error (waitingPod.Preempt), so its failure is a SchedulerError and it is retried
    through backoff; the preemptor takes the node."""
    cfg = yaml.safe_load(CFG)
    cfg["profiles"][0]["plugins"]["permit"] = {"enabled": [{"name": "HoldAtPermit"}]}
    reg = Registry.discover()
    reg.register("TestFit", TestFit)
    reg.register("HoldAtPermit", HoldAtPermit)
    sim = SimulatedCluster([snode("n1"), spod("low", prio=1, cpu="2", labels={"hold": "yes"}), spod("high", prio=10, cpu="1")])
    s = Scheduler(load_config_data(yaml.safe_dump(cfg), installed_plugins=reg.names()), reg, sim, simulated=True, seed=1)
    sim.run(s)
    assert "low" in names_in_store(sim)
    assert (result_of(s, "high").status, result_of(s, "high").node) == ("Scheduled", "n1")
    pre = [(e.regarding, e.note) for e in sim.events if e.reason == "Preempted"]
    assert pre == [("Pod default/low", "Preempted by pod high on node n1 (in kube-scheduler memory).")]
    failed = [e.note for e in sim.events if e.reason == "FailedScheduling" and e.regarding == "Pod default/low"]
    assert failed[0] == "waiting on permit for pod: preempted"


# --- nodes without a pod of lower priority: no copy, the same outcome ---------------------------
# (test_defaultpreemption_skip.py compares whole randomized runs on the default profile)


class CountingState(CycleState):
    """A CycleState that counts its copies (the dry run copies it once per node it evaluates)."""

    copies = 0

    def clone(self) -> CycleState:
        CountingState.copies += 1
        return super().clone()


def _dry_run(skip: bool, nodes: list[dict[str, Any]], pods: list[dict[str, Any]], preemptor: dict[str, Any],
             pdbs: list[dict[str, Any]], offset: int, num: int) -> tuple[Any, int, int]:
    pl, h = setup(nodes, pods, preemptor)
    pl._skip_nodes_without_victims = skip
    node_infos = sorted(h.snapshot().list(), key=lambda ni: ni.name)
    CountingState.copies = 0
    candidates, statuses, errs = pl.dry_run_preemption(CountingState(), Pod(preemptor), node_infos, pdbs, offset, num)
    got = (
        [(c.name, [p.name for p in c.victims], c.num_pdb_violations) for c in candidates],
        [(name, st.code, st.reasons) for name, st in statuses.items()],
        errs,
    )
    return got, CountingState.copies, h.framework.num_filter_called


# five nodes: node2 and node4 hold only pods of the preemptor's priority or higher
_NODES = nodes_named([f"node{i}" for i in range(1, 6)], VERY_LARGE)
_PODS = [
    pod("p1", node="node1", prio=MID - 1, req=LARGE, labels={"app": "db"}),
    pod("p2", node="node2", prio=MID, req=LARGE),
    pod("p3a", node="node3", prio=MID - 5, req=SMALL), pod("p3b", node="node3", prio=MID - 1, req=SMALL),
    pod("p3c", node="node3", prio=MID + 1, req=SMALL),
    pod("p4", node="node4", prio=MID + 10, req=LARGE),
    pod("p5", node="node5", prio=MID - 1, req=LARGE, labels={"app": "db"}),
]
_PREEMPTOR = pod("p", prio=MID, req=LARGE)


@pytest.mark.parametrize("num", [1, 2, 5])
@pytest.mark.parametrize("offset", range(5))
@pytest.mark.parametrize("budgets", [[], [pdb("b", {"app": "db"}, 0)], [pdb("b", {"app": "db"}, 1)]])
def test_dry_run_same_with_and_without_skip(offset: int, num: int, budgets: list[dict[str, Any]]) -> None:
    fast, fast_copies, fast_filters = _dry_run(True, _NODES, _PODS, _PREEMPTOR, budgets, offset, num)
    slow, slow_copies, slow_filters = _dry_run(False, _NODES, _PODS, _PREEMPTOR, budgets, offset, num)
    assert fast == slow
    assert fast_filters == slow_filters  # nodes without victims never run the Filter plugins
    # Go's path copies every node it tries; the skip copies all but those without victims
    skipped = sum(1 for _, _, reasons in fast[1] if reasons == [NO_VICTIMS_MSG])
    assert fast_copies == slow_copies - skipped


def test_dry_run_node_without_victims_status_exact() -> None:
    # from offset 1 with two candidates wanted: node2 (no victim), node3, node4 (no victim),
    # node5; node1 is not reached
    got, copies, _ = _dry_run(True, _NODES, _PODS, _PREEMPTOR, [], 1, 2)
    assert got == (
        [("node3", ["p3a"], 0), ("node5", ["p5"], 0)],  # p3b (the more important) is reprieved
        [("node2", Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [NO_VICTIMS_MSG]),
         ("node4", Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [NO_VICTIMS_MSG])],
        [],
    )
    assert copies == 2


def test_dry_run_every_node_without_victims_copies_nothing() -> None:
    pods = [pod(f"q{i}", node=f"node{i}", prio=MID + (i % 2), req=LARGE) for i in range(1, 6)] + [
        pod("q0", node="node1", prio=MID, req=SMALL)
    ]
    for offset in range(5):
        fast, fast_copies, fast_filters = _dry_run(True, _NODES, pods, _PREEMPTOR, [], offset, 2)
        slow, slow_copies, _ = _dry_run(False, _NODES, pods, _PREEMPTOR, [], offset, 2)
        assert fast == slow
        assert fast[0] == [] and [r for _, _, r in fast[1]] == [[NO_VICTIMS_MSG]] * 5
        assert [n for n, _, _ in fast[1]] == [f"node{(offset + i) % 5 + 1}" for i in range(5)]
        assert (fast_copies, slow_copies, fast_filters) == (0, 5, 0)


def test_lowest_priority_follows_the_node_info_generation() -> None:
    # the cache of the lowest pod priority per node is keyed by NodeInfo.generation: a pod of
    # lower priority added later makes the node a candidate
    pl, h = setup(_NODES[:1], [pod("hi", node="node1", prio=MID, req=SMALL)], _PREEMPTOR)
    (ni,) = h.snapshot().list()
    got, statuses, _ = pl.dry_run_preemption(CycleState(), Pod(_PREEMPTOR), [ni], [], 0, 1)
    assert got == [] and statuses["node1"].reasons == [NO_VICTIMS_MSG]
    grown = ni.clone()
    grown.add_pod(Pod(pod("lo", node="node1", prio=MID - 1, req=LARGE)))
    assert grown.generation != ni.generation
    got, statuses, _ = pl.dry_run_preemption(CycleState(), Pod(_PREEMPTOR), [grown], [], 0, 1)
    assert [(c.name, [p.name for p in c.victims]) for c in got] == [("node1", ["lo"])] and statuses == {}
    empty = NodeInfo(grown.node)
    got, statuses, _ = pl.dry_run_preemption(CycleState(), Pod(_PREEMPTOR), [empty], [], 0, 1)
    assert got == [] and statuses["node1"].reasons == [NO_VICTIMS_MSG]


def test_subclass_overriding_is_preemption_allowed_takes_the_copying_path() -> None:
    class Everyone(DefaultPreemption):
        def is_preemption_allowed(self, node_info: Any, victim: Pod, preemptor: Pod) -> bool:
            return True  # even pods of higher priority

    _, h = setup(_NODES[:1], [pod("hi", node="node1", prio=MID + 10, req=LARGE)], _PREEMPTOR)
    pl = Everyone(None, h)
    assert not pl._skips_nodes_without_victims()
    got, statuses, _ = pl.dry_run_preemption(CycleState(), Pod(_PREEMPTOR), list(h.snapshot().list()), [], 0, 1)
    assert [(c.name, [p.name for p in c.victims]) for c in got] == [("node1", ["hi"])] and statuses == {}


def test_async_preemption_waiting_victim_lets_the_held_preemptor_in_at_once() -> None:
    """The last victim was a waiting pod preempted in memory: it stays in the pod lister (a
    pending pod), no delete event will come, so a preemptor held meanwhile is looked at again
    when the eviction ends and is not held any more."""
    v = _victim("v")
    pl, h, rec = executor_setup([v])
    done: list[Status] = []
    h.waiting_pods["v"] = _waiting(v, done)
    assert pl.actuate_pod_preemption(Candidate("node1", [Pod(v)]), Pod(PREEMPTOR)).is_success()
    assert rec.actions == [] and [st.code for st in done] == [Code.ERROR]
    assert [(p.name, plugin) for p, plugin in h.rechecked] == [("p", "DefaultPreemption")]
    assert pl.pre_enqueue(Pod(PREEMPTOR)) is None


class _WatchLag:
    """The object client of ``rec`` whose deletes reach the cache only when the test says so."""

    def __init__(self, rec: RecordingObjects) -> None:
        self.rec = rec

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.rec, attr)

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> None:
        self.rec.actions.append(("delete", name))


def test_async_preemption_holds_the_preemptor_until_the_watch_sees_its_last_victim_go() -> None:
    """kubesched: the last victim's delete call returned but the informer's cache still holds it
    (its watch event is to come): the preemptor stays held, without a recheck, until the victim
    is out of the cache; its delete event is what moves it (else its cycle would still see the
    victim and preempt again)."""
    stored = [_victim("v1"), _victim("v2")]
    pl, h, rec = executor_setup(stored)
    h._objects = _WatchLag(rec)
    held = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for the preemption for this pod to be finished")
    assert pl.actuate_pod_preemption(Candidate("node1", [Pod(v) for v in stored]), Pod(PREEMPTOR)).is_success()
    assert rec.actions == [("patch", "v1"), ("delete", "v1"), ("patch", "v2"), ("delete", "v2")]
    assert h.rechecked == [] and h.activated == []
    assert pl.pre_enqueue(Pod(PREEMPTOR)) == held
    rec.store.delete("v1", "Pod", "v1", "default")  # the first victim's watch event
    assert pl.pre_enqueue(Pod(PREEMPTOR)) == held
    rec.store.delete("v1", "Pod", "v2", "default")  # the last one's
    assert pl.pre_enqueue(Pod(PREEMPTOR)) is None
    assert pl._preempting == set() and pl._last_victims == {}


@pytest.mark.parametrize("api_version, asynchronous", [
    ("kubescheduler.config.k8s.io/v1", True),
    ("kubescheduler.config.k8s.io/v1beta3", True),
    # v1beta2's defaults list DefaultPreemption at PostFilter only: nothing would hold the
    # preemptor at PreEnqueue, so the victims are evicted within PostFilter
    ("kubescheduler.config.k8s.io/v1beta2", False),
])
def test_evictions_are_asynchronous_only_where_pre_enqueue_holds_the_preemptor(api_version: str, asynchronous: bool) -> None:
    cfg = load_config_data({"apiVersion": api_version, "kind": "KubeSchedulerConfiguration"})
    sched = Scheduler(cfg, Registry.discover(), SimulatedCluster([]), simulated=True)
    fw = sched.frameworks["default-scheduler"]
    pl = fw.plugins["DefaultPreemption"]
    assert pl._holds_at_pre_enqueue() is asynchronous
    # a failed eviction: PostFilter's Error when synchronous; activation when asynchronous
    failing = [_victim("fail-victim")]
    _pl, h, _rec = executor_setup(failing, fail_delete=("fail-victim",))
    h.plugins_at = fw.handle.plugins_at
    st = _pl.actuate_pod_preemption(Candidate("node1", [Pod(v) for v in failing]), Pod(PREEMPTOR))
    if asynchronous:
        assert st.is_success() and [p.name for p in h.activated] == ["p"]
    else:
        assert (st.code, st.message) == (Code.ERROR, "delete pod failed") and h.activated == []


def test_async_preemption_a_victim_recreated_under_its_name_does_not_hold_the_preemptor() -> None:
    """A StatefulSet recreates the victim under the same name before the loop sees its delete
    event: the cached pod of that name has another uid, so it is not the victim any more."""
    stored = [_victim("web-0")]
    pl, h, rec = executor_setup(stored)
    h._objects = _WatchLag(rec)
    assert pl.actuate_pod_preemption(Candidate("node1", [Pod(v) for v in stored]), Pod(PREEMPTOR)).is_success()
    assert pl.pre_enqueue(Pod(PREEMPTOR)) is not None  # held until the watch catches up
    rec.store.delete("v1", "Pod", "web-0", "default")
    new = _victim("web-0")
    new["metadata"]["uid"] = "web-0-new"
    rec.store.create({"apiVersion": "v1", "kind": "Pod", **new}, notify=False)
    assert pl.pre_enqueue(Pod(PREEMPTOR)) is None
    assert pl._preempting == set() and pl._last_victims == {} and pl._tokens == {}


def test_async_preemption_holds_on_the_last_victim_it_deleted_when_the_last_is_already_gone() -> None:
    """The last victim was already deleted by someone else (404): the hold lasts until the last
    victim this eviction deleted leaves the cache (the earlier ones' deletions come before it
    in the watch), so the preemptor's next cycle never sees them."""
    stored = [_victim("v1")]
    pl, h, rec = executor_setup(stored)
    h._objects = _WatchLag(rec)
    gone = _victim("v2")  # not in the store: already deleted
    assert pl.actuate_pod_preemption(Candidate("node1", [Pod(stored[0]), Pod(gone)]), Pod(PREEMPTOR)).is_success()
    assert rec.actions == [("patch", "v1"), ("delete", "v1"), ("patch", "v2")]
    assert h.rechecked == []
    assert pl.pre_enqueue(Pod(PREEMPTOR)) is not None
    rec.store.delete("v1", "Pod", "v1", "default")
    assert pl.pre_enqueue(Pod(PREEMPTOR)) is None


def test_async_preemption_an_older_eviction_ending_late_leaves_a_newer_ones_hold() -> None:
    """Two evictions for one preemptor (it was let in and preempted again before the first
    eviction's worker ended): the first one's end does not clear the second one's hold."""
    stored = [_victim("a"), _victim("b")]
    pl, h, rec = executor_setup(stored)
    later: list[Any] = []
    h.run_async = later.append
    preemptor = Pod(PREEMPTOR)
    assert pl.actuate_pod_preemption(Candidate("node1", [Pod(stored[0])]), preemptor).is_success()
    first = later.pop()
    assert pl.actuate_pod_preemption(Candidate("node1", [Pod(stored[1])]), preemptor).is_success()
    first()  # the first eviction ends now
    held = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for the preemption for this pod to be finished")
    assert pl.pre_enqueue(preemptor) == held
    assert h.rechecked == []
    later.pop()()
    assert pl.pre_enqueue(preemptor) is None
    assert [(p.name, plugin) for p, plugin in h.rechecked] == [("p", "DefaultPreemption")]


class _DeferredEvictions:
    """The scheduler's executor on the simulated cluster, but the evictions wait for the test."""

    def __init__(self) -> None:
        self.later: list[Any] = []

    def submit(self, fn: Any, /, *a: Any, **k: Any) -> None:
        if "prepare_candidate_async" in getattr(fn, "__qualname__", ""):
            self.later.append(fn)
        else:
            fn(*a, **k)

    def shutdown(self, wait: bool = True) -> None:
        pass


@pytest.mark.parametrize("case", ["evicted", "held meanwhile", "victim gone meanwhile"])
def test_async_preemption_through_the_scheduler_loop(ks: Any, case: str) -> None:
    """The loop's wiring: the eviction runs later on the executor. "held meanwhile": a pod
    deletion moves the preemptor to PreEnqueue, which holds it (gated by DefaultPreemption)
    until the eviction's delete event. "victim gone meanwhile": someone else deletes the victim
    while the preemptor is held, so no delete event is left to come; only the recheck at the
    eviction's end (handle.recheck_gated -> the queue) lets it in. Each ends with it bound."""
    ex = _DeferredEvictions()
    manifests = ks.nodes(1, cpu="4") + [ks.pod("v", cpu="3", priority=0, node_name="n1")]
    if case != "evicted":
        manifests.append(ks.pod("o", cpu="100m", priority=0, node_name="n1"))
    manifests.append(ks.pod("p", cpu="3", priority=100))
    points = {"filter": ["NodeResourcesFit"], "preFilter": ["NodeResourcesFit"], "postFilter": ["DefaultPreemption"], "preEnqueue": ["DefaultPreemption"]}
    r = ks.build({}, points, manifests, executor=ex)
    r.start()
    q = r.scheduler.queue
    assert len(ex.later) == 1 and "p" not in r.bound()
    if case != "evicted":
        r.cluster.store.delete("v1", "Pod", "o", "default")
        r.settle()
        assert q.pending()["gated"] == 1
    if case == "victim gone meanwhile":
        r.cluster.store.delete("v1", "Pod", "v", "default")
        r.settle()
        assert q.pending()["gated"] == 1  # still held: its eviction has not run
    ex.later.pop()()
    r.settle()
    assert q.pending()["gated"] == 0
    assert r.bound().get("p") == "n1"
