"""VolumeBinding, transcribed from kube-scheduler's ``volumebinding/volume_binding_test.go``
(TestVolumeBinding) and ``validation_pluginargs_test.go`` (TestValidateVolumeBindingArgs),
plus kubesched tests of Reserve/PreBind/Unreserve on the object store (ids ``kubesched/...``).

Differences from the Go file, on purpose (v1.34 semantics):

* ``all bound with local volumes``: the stored Go test (pre-v1.32) expects a PreFilterResult
  ``{node-a}``; kube-scheduler v1.32+ removed that PreFilterResult, so none is expected here.
* The capacity-scoring cases ran with ``EnableVolumeCapacityPriority``; in v1.34 the gate is
  ``StorageCapacityScoring`` (the same scorer for static bindings), turned on here through
  ``volumebinding.FEATURES``; the test keeps passing the Go test's explicit shape.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.runtime.plugins import volumebinding
from kubesched.runtime.plugins.volumebinding import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    VolumeBinding,
    VolumeBindingArgs,
)
from kubesched.runtime.plugins.volumebinding.binder import (
    AssumeCache,
    BinderError,
    BindingInfo,
    DynamicProvision,
    PodVolumes,
    VolumeBinder,
)
from kubesched.sdk import ActionType, ArgsError, Code, CycleState, Pod, QueueingHint, Status
from kubesched.testing import build_plugin, make_handle, make_pod

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"


# ---------------------------------------------------------------------------------------------
# builders (test_utils.go)


def sc(name: str, mode: str | None, provisioner: str = "") -> dict[str, Any]:
    o: dict[str, Any] = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name}}
    if mode is not None:
        o["volumeBindingMode"] = mode
    if provisioner:
        o["provisioner"] = provisioner
    return o


IMMEDIATE_SC = sc("immediate-sc", "Immediate")
WAIT_SC = sc("wait-sc", "WaitForFirstConsumer")
WAIT_HDD_SC = sc("wait-hdd-sc", "WaitForFirstConsumer")


class PVC:
    def __init__(self, name: str, sc_name: str) -> None:
        self.o: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"storageClassName": sc_name},
        }

    def bound_pv(self, pv: str) -> PVC:
        self.o["spec"]["volumeName"] = pv
        self.o["metadata"].setdefault("annotations", {})["pv.kubernetes.io/bind-completed"] = "true"
        return self

    def request(self, q: str) -> PVC:
        self.o["spec"]["resources"] = {"requests": {"storage": q}}
        return self

    def phase(self, p: str) -> PVC:
        self.o["status"] = {"phase": p}
        return self

    def access_modes(self, *modes: str) -> PVC:
        self.o["spec"]["accessModes"] = list(modes)
        return self

    def obj(self) -> dict[str, Any]:
        return copy.deepcopy(self.o)


class PV:
    def __init__(self, name: str, sc_name: str) -> None:
        self.o: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": name},
            "spec": {"storageClassName": sc_name},
        }

    def node_affinity(self, kv: dict[str, list[str]]) -> PV:
        exprs = [{"key": k, "operator": "In", "values": list(v)} for k, v in kv.items()]
        self.o["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": exprs}]}}
        return self

    def capacity(self, q: str) -> PV:
        self.o["spec"]["capacity"] = {"storage": q}
        return self

    def phase(self, p: str) -> PV:
        self.o["status"] = {"phase": p}
        return self

    def access_modes(self, *modes: str) -> PV:
        self.o["spec"]["accessModes"] = list(modes)
        return self

    def labels(self, **kv: str) -> PV:
        self.o["metadata"]["labels"] = dict(kv)
        return self

    def obj(self) -> dict[str, Any]:
        return copy.deepcopy(self.o)


def node(name: str, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {HOSTNAME: name, **{k.replace("__", "/"): v for k, v in labels.items()}}},
        "status": {"allocatable": {"pods": "32"}},
    }


def zone_node(name: str, region: str, zone: str) -> dict[str, Any]:
    n = node(name)
    n["metadata"]["labels"].update({REGION: region, ZONE: zone})
    return n


def pod(name: str, *pvcs: tuple[str, str]) -> dict[str, Any]:
    w = make_pod().name(name).namespace("default")
    for claim, vol in pvcs:
        w.volume({"name": vol, "persistentVolumeClaim": {"claimName": claim}})
    return w.obj()


DEFAULT_SHAPE = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]


@pytest.fixture
def capacity_scoring(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(volumebinding.FEATURES, "StorageCapacityScoring", True)


def _run_case(
    pod_obj: dict[str, Any],
    nodes: list[dict[str, Any]],
    pvcs: list[dict[str, Any]],
    pvs: list[dict[str, Any]],
    args: dict[str, Any] | None,
) -> tuple[Any, Any, CycleState, list[Any]]:
    handle = make_handle(nodes, [], [IMMEDIATE_SC, WAIT_SC, WAIT_HDD_SC, *pvcs, *pvs])
    pl = build_plugin(VolumeBinding, args if args is not None else {"bindTimeoutSeconds": 300}, handle)
    state = CycleState()
    infos = [handle.snapshot().get(n["metadata"]["name"]) for n in nodes]
    return pl, handle, state, infos


U = Code.UNSCHEDULABLE_AND_UNRESOLVABLE

# (name, pod, nodes, pvcs, pvs, scoring, args, want prefilter, want bound/unbound claim names,
#  want filter statuses, want prescore, want scores)
CASES = [
    pytest.param(
        pod("pod-a"), [node("node-a")], [], [], False, None,
        Status.skip(), None, [None], Status.skip(), None,
        id="TestVolumeBinding/pod has not pvcs",
    ),
    pytest.param(
        pod("pod-a", ("pvc-a", "")), [node("node-a")],
        [PVC("pvc-a", "wait-sc").bound_pv("pv-a").obj()],
        [PV("pv-a", "wait-sc").phase("Available").obj()], False, None,
        None, (["pvc-a"], [], {}), [None], Status.skip(), None,
        id="TestVolumeBinding/all bound",
    ),
    pytest.param(
        pod("pod-a", ("pvc-a", "volume-a"), ("pvc-b", "volume-b")), [node("node-a")],
        [PVC("pvc-a", "wait-sc").bound_pv("pv-a").obj(), PVC("pvc-b", "wait-sc").bound_pv("pv-b").obj()],
        [
            PV("pv-a", "wait-sc").phase("Bound").node_affinity({HOSTNAME: ["node-a"]}).obj(),
            PV("pv-b", "wait-sc").phase("Bound").node_affinity({HOSTNAME: ["node-a"]}).obj(),
        ],
        False, None,
        None, (["pvc-a", "pvc-b"], [], {}), [None], Status.skip(), None,
        id="TestVolumeBinding/all bound with local volumes",
    ),
    pytest.param(
        pod("pod-a", ("pvc-a", "")), [node("node-a")], [], [], False, None,
        Status.unresolvable('persistentvolumeclaim "pvc-a" not found'), None, None, None, None,
        id="TestVolumeBinding/PVC does not exist",
    ),
    pytest.param(
        pod("pod-a", ("pvc-a", ""), ("pvc-b", "")), [node("node-a")],
        [PVC("pvc-a", "wait-sc").bound_pv("pv-a").obj()], [], False, None,
        Status.unresolvable('persistentvolumeclaim "pvc-b" not found'), None, None, None, None,
        id="TestVolumeBinding/Part of PVCs do not exist",
    ),
    pytest.param(
        pod("pod-a", ("pvc-a", "")), [node("node-a")], [PVC("pvc-a", "immediate-sc").obj()], [], False, None,
        Status.unresolvable("pod has unbound immediate PersistentVolumeClaims"), None, None, None, None,
        id="TestVolumeBinding/immediate claims not bound",
    ),
    pytest.param(
        pod("pod-a", ("pvc-a", "")), [node("node-a")], [PVC("pvc-a", "wait-sc").obj()], [], False, None,
        None, ([], ["pvc-a"], {"wait-sc": []}),
        [Status.unresolvable(ERR_REASON_BIND_CONFLICT)], Status.skip(), None,
        id="TestVolumeBinding/unbound claims no matches",
    ),
    pytest.param(
        pod("pod-a", ("pvc-a", ""), ("pvc-b", "")), [node("node-a", foo="barbar")],
        [PVC("pvc-a", "wait-sc").bound_pv("pv-a").obj(), PVC("pvc-b", "wait-sc").obj()],
        [PV("pv-a", "wait-sc").phase("Available").node_affinity({"foo": ["bar"]}).obj()],
        False, None,
        None, (["pvc-a"], ["pvc-b"], {"wait-sc": ["pv-a"]}),
        [Status.unresolvable(ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT)], Status.skip(), None,
        id="TestVolumeBinding/bound and unbound unsatisfied",
    ),
    pytest.param(
        pod("pod-a", ("pvc-a", "")), [node("node-a")], [], [], False, None,
        Status.unresolvable('persistentvolumeclaim "pvc-a" not found'), None, None, None, None,
        id="TestVolumeBinding/pvc not found",
    ),
    pytest.param(
        pod("pod-a", ("pvc-a", "")), [node("node-a")], [PVC("pvc-a", "wait-sc").bound_pv("pv-a").obj()], [],
        False, None,
        None, (["pvc-a"], [], {}),
        [Status.unresolvable("node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)")],
        Status.skip(), None,
        id="TestVolumeBinding/pv not found",
    ),
    pytest.param(
        pod("pod-a", ("pvc-a", "")), [node("node-a")],
        [PVC("pvc-a", "wait-sc").bound_pv("pv-a").phase("Lost").obj()], [], False, None,
        Status.unresolvable('persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"'),
        None, None, None, None,
        id="TestVolumeBinding/pv not found claim lost",
    ),
    pytest.param(
        pod("pod-a", ("pvc-a", "")), [node("node-a"), node("node-b"), node("node-c")],
        [PVC("pvc-a", "wait-sc").request("50Gi").obj()],
        [
            PV("pv-a-0", "wait-sc").phase("Available").capacity("200Gi").node_affinity({HOSTNAME: ["node-a"]}).obj(),
            PV("pv-a-1", "wait-sc").phase("Available").capacity("200Gi").node_affinity({HOSTNAME: ["node-a"]}).obj(),
            PV("pv-b-0", "wait-sc").phase("Available").capacity("100Gi").node_affinity({HOSTNAME: ["node-b"]}).obj(),
            PV("pv-b-1", "wait-sc").phase("Available").capacity("100Gi").node_affinity({HOSTNAME: ["node-b"]}).obj(),
        ],
        True, None,
        None, ([], ["pvc-a"], {"wait-sc": ["pv-a-0", "pv-a-1", "pv-b-0", "pv-b-1"]}),
        [None, None, Status.unresolvable("node(s) didn't find available persistent volumes to bind")],
        None, [25, 50, 0],
        id="TestVolumeBinding/local volumes with close capacity are preferred",
    ),
    pytest.param(
        pod("pod-a", ("pvc-0", ""), ("pvc-1", "")), [node("node-a"), node("node-b"), node("node-c")],
        [PVC("pvc-0", "wait-sc").request("50Gi").obj(), PVC("pvc-1", "wait-hdd-sc").request("100Gi").obj()],
        [
            PV("pv-a-0", "wait-sc").phase("Available").capacity("200Gi").node_affinity({HOSTNAME: ["node-a"]}).obj(),
            PV("pv-a-1", "wait-sc").phase("Available").capacity("200Gi").node_affinity({HOSTNAME: ["node-a"]}).obj(),
            PV("pv-a-2", "wait-hdd-sc").phase("Available").capacity("200Gi").node_affinity({HOSTNAME: ["node-a"]}).obj(),
            PV("pv-a-3", "wait-hdd-sc").phase("Available").capacity("200Gi").node_affinity({HOSTNAME: ["node-a"]}).obj(),
            PV("pv-b-0", "wait-sc").phase("Available").capacity("100Gi").node_affinity({HOSTNAME: ["node-b"]}).obj(),
            PV("pv-b-1", "wait-sc").phase("Available").capacity("100Gi").node_affinity({HOSTNAME: ["node-b"]}).obj(),
            PV("pv-b-2", "wait-hdd-sc").phase("Available").capacity("100Gi").node_affinity({HOSTNAME: ["node-b"]}).obj(),
            PV("pv-b-3", "wait-hdd-sc").phase("Available").capacity("100Gi").node_affinity({HOSTNAME: ["node-b"]}).obj(),
        ],
        True, None,
        None,
        (
            [],
            ["pvc-0", "pvc-1"],
            {"wait-hdd-sc": ["pv-a-2", "pv-a-3", "pv-b-2", "pv-b-3"], "wait-sc": ["pv-a-0", "pv-a-1", "pv-b-0", "pv-b-1"]},
        ),
        [None, None, Status.unresolvable("node(s) didn't find available persistent volumes to bind")],
        None, [38, 75, 0],
        id="TestVolumeBinding/local volumes with close capacity are preferred (multiple pvcs)",
    ),
    pytest.param(
        pod("pod-a", ("pvc-a", "")),
        [
            zone_node("zone-a-node-a", "region-a", "zone-a"),
            zone_node("zone-a-node-b", "region-a", "zone-a"),
            zone_node("zone-b-node-a", "region-b", "zone-b"),
            zone_node("zone-b-node-b", "region-b", "zone-b"),
            zone_node("zone-c-node-a", "region-c", "zone-c"),
            zone_node("zone-c-node-b", "region-c", "zone-c"),
        ],
        [PVC("pvc-a", "wait-sc").request("50Gi").obj()],
        [
            PV("pv-a-0", "wait-sc").phase("Available").capacity("200Gi").node_affinity({REGION: ["region-a"], ZONE: ["zone-a"]}).obj(),
            PV("pv-a-1", "wait-sc").phase("Available").capacity("200Gi").node_affinity({REGION: ["region-a"], ZONE: ["zone-a"]}).obj(),
            PV("pv-b-0", "wait-sc").phase("Available").capacity("100Gi").node_affinity({REGION: ["region-b"], ZONE: ["zone-b"]}).obj(),
            PV("pv-b-1", "wait-sc").phase("Available").capacity("100Gi").node_affinity({REGION: ["region-b"], ZONE: ["zone-b"]}).obj(),
        ],
        True, None,
        None, ([], ["pvc-a"], {"wait-sc": ["pv-a-0", "pv-a-1", "pv-b-0", "pv-b-1"]}),
        [None, None, None, None,
         Status.unresolvable("node(s) didn't find available persistent volumes to bind"),
         Status.unresolvable("node(s) didn't find available persistent volumes to bind")],
        None, [25, 25, 50, 50, 0, 0],
        id="TestVolumeBinding/zonal volumes with close capacity are preferred",
    ),
    pytest.param(
        pod("pod-a", ("pvc-a", "")),
        [
            zone_node("zone-a-node-a", "region-a", "zone-a"),
            zone_node("zone-a-node-b", "region-a", "zone-a"),
            zone_node("zone-b-node-a", "region-b", "zone-b"),
            zone_node("zone-b-node-b", "region-b", "zone-b"),
            zone_node("zone-c-node-a", "region-c", "zone-c"),
            zone_node("zone-c-node-b", "region-c", "zone-c"),
        ],
        [PVC("pvc-a", "wait-sc").request("50Gi").obj()],
        [
            PV("pv-a-0", "wait-sc").phase("Available").capacity("200Gi").node_affinity({REGION: ["region-a"], ZONE: ["zone-a"]}).obj(),
            PV("pv-a-1", "wait-sc").phase("Available").capacity("200Gi").node_affinity({REGION: ["region-a"], ZONE: ["zone-a"]}).obj(),
            PV("pv-b-0", "wait-sc").phase("Available").capacity("100Gi").node_affinity({REGION: ["region-b"], ZONE: ["zone-b"]}).obj(),
            PV("pv-b-1", "wait-sc").phase("Available").capacity("100Gi").node_affinity({REGION: ["region-b"], ZONE: ["zone-b"]}).obj(),
        ],
        True,
        {
            "bindTimeoutSeconds": 300,
            "shape": [{"utilization": 0, "score": 0}, {"utilization": 50, "score": 3}, {"utilization": 100, "score": 5}],
        },
        None, ([], ["pvc-a"], {"wait-sc": ["pv-a-0", "pv-a-1", "pv-b-0", "pv-b-1"]}),
        [None, None, None, None,
         Status.unresolvable("node(s) didn't find available persistent volumes to bind"),
         Status.unresolvable("node(s) didn't find available persistent volumes to bind")],
        None, [15, 15, 30, 30, 0, 0],
        id="TestVolumeBinding/zonal volumes with close capacity are preferred (custom shape)",
    ),
]


@pytest.mark.parametrize(
    "pod_obj,nodes,pvcs,pvs,scoring,args,want_pre,want_claims,want_filter,want_prescore,want_scores", CASES
)
def test_volume_binding(
    monkeypatch: pytest.MonkeyPatch,
    pod_obj: dict[str, Any],
    nodes: list[dict[str, Any]],
    pvcs: list[dict[str, Any]],
    pvs: list[dict[str, Any]],
    scoring: bool,
    args: dict[str, Any] | None,
    want_pre: Status | None,
    want_claims: Any,
    want_filter: list[Status | None] | None,
    want_prescore: Status | None,
    want_scores: list[int] | None,
) -> None:
    monkeypatch.setitem(volumebinding.FEATURES, "StorageCapacityScoring", scoring)
    if args is None:
        args = {"bindTimeoutSeconds": 300}
        if scoring:
            args["shape"] = DEFAULT_SHAPE
    pl, _, state, infos = _run_case(pod_obj, nodes, pvcs, pvs, args)

    p = Pod(pod_obj)
    got = pl.pre_filter(state, p, infos)
    # v1.34: no PreFilterResult
    assert got is None or isinstance(got, Status)
    assert (got or Status()) == (want_pre or Status())
    if got is not None and not got.is_success():
        return
    s = state.read("VolumeBinding")
    bound, unbound, by_class = want_claims
    claims = s.pod_volume_claims
    assert [c["metadata"]["name"] for c in claims.bound_claims] == bound
    assert [c["metadata"]["name"] for c in claims.unbound_claims_delay_binding] == unbound
    assert {k: sorted(pv["metadata"]["name"] for pv in v) for k, v in claims.unbound_volumes_delay_binding.items()} == by_class
    assert s.pod_volumes_by_node == {}
    for i, ni in enumerate(infos):
        st = pl.filter(state, p, ni)
        assert (st or Status()) == (want_filter[i] or Status()), ni.name
        if st is not None:
            assert st.code == want_filter[i].code
    got_ps = pl.pre_score(state, p, infos)
    assert (got_ps or Status()) == (want_prescore or Status())
    if got_ps is not None and not got_ps.is_success():
        return
    assert [pl.score(state, p, ni) for ni in infos] == want_scores


def test_filter_reasons_are_unschedulable_and_unresolvable() -> None:
    """Every Filter rejection of the Go table is UnschedulableAndUnresolvable."""
    for case in CASES:
        for st in case.values[8] or []:
            if st is not None:
                assert st.code is U


# ---------------------------------------------------------------------------------------------
# args: defaults and TestValidateVolumeBindingArgs


def test_args_defaults() -> None:
    a = VolumeBindingArgs()
    assert a.bind_timeout_seconds == 600
    assert a.shape is None


def test_args_defaults_with_storage_capacity_scoring(capacity_scoring: None) -> None:
    a = VolumeBindingArgs()
    assert [(p.utilization, p.score) for p in a.shape or []] == [(0, 10), (100, 0)]


@pytest.mark.parametrize(
    "args,scoring,want_field",
    [
        pytest.param({"bindTimeoutSeconds": 0}, None, None, id="TestValidateVolumeBindingArgs/zero is a valid config"),
        pytest.param({"bindTimeoutSeconds": 10}, None, None, id="TestValidateVolumeBindingArgs/positive value is valid config"),
        pytest.param(
            {"bindTimeoutSeconds": -10}, None, "args.bindTimeoutSeconds",
            id="TestValidateVolumeBindingArgs/negative value is invalid config ",
        ),
        pytest.param(
            {"bindTimeoutSeconds": 10}, False, None,
            id="TestValidateVolumeBindingArgs/[StorageCapacityScoring=off] shape should be nil when the feature is off",
        ),
        pytest.param(
            {"bindTimeoutSeconds": 10, "shape": [{"utilization": 1, "score": 1}, {"utilization": 3, "score": 3}]},
            False, "args.shape",
            id="TestValidateVolumeBindingArgs/[StorageCapacityScoring=off] error if the shape is not nil when the feature is off",
        ),
        pytest.param(
            {"bindTimeoutSeconds": 10, "shape": [{"utilization": 3, "score": 3}, {"utilization": 1, "score": 1}]},
            True, "args.shape[1].utilization",
            id="TestValidateVolumeBindingArgs/[StorageCapacityScoring=on] shape points must be sorted in increasing order",
        ),
        pytest.param(
            {
                "bindTimeoutSeconds": 10,
                "shape": [
                    {"utilization": -1, "score": 1},
                    {"utilization": 10, "score": -1},
                    {"utilization": 20, "score": 11},
                    {"utilization": 101, "score": 1},
                ],
            },
            True, "args.shape[0].utilization",
            id="TestValidateVolumeBindingArgs/[StorageCapacityScoring=on] shape point: invalid utilization and score",
        ),
    ],
)
def test_validate_args(monkeypatch: pytest.MonkeyPatch, args: dict[str, Any], scoring: bool | None, want_field: str | None) -> None:
    if scoring is not None:
        monkeypatch.setitem(volumebinding.FEATURES, "StorageCapacityScoring", scoring)
    if want_field is None:
        build_plugin(VolumeBinding, args, make_handle())
        return
    with pytest.raises(ArgsError) as ei:
        build_plugin(VolumeBinding, args, make_handle())
    assert ei.value.field == want_field


def test_validate_args_empty_shape(capacity_scoring: None) -> None:
    """TestValidateVolumeBindingArgs/[StorageCapacityScoring=on] shape should not be empty.

    Validation runs on the args as given (as the Go test does); loading a config defaults an
    empty shape first (SetDefaults_VolumeBindingArgs: len(shape) == 0)."""
    a = VolumeBindingArgs(bind_timeout_seconds=10)
    a.shape = []
    with pytest.raises(ValueError) as ei:
        a.validate()
    assert str(ei.value) == "shape: Required value: at least one point must be specified"
    assert [(p.utilization, p.score) for p in VolumeBindingArgs(shape=[]).shape or []] == [(0, 10), (100, 0)]


def test_validate_args_messages(capacity_scoring: None) -> None:
    with pytest.raises(ValueError) as e2:
        build_plugin(
            VolumeBinding,
            {"shape": [{"utilization": -1, "score": 1}, {"utilization": 10, "score": -1}, {"utilization": 20, "score": 11}, {"utilization": 101, "score": 1}]},
            make_handle(),
        )
    msg = str(e2.value)
    for part in (
        "shape[0].utilization: Invalid value: -1: not in valid range [0, 100]",
        "shape[1].score: Invalid value: -1: not in valid range [0, 10]",
        "shape[2].score: Invalid value: 11: not in valid range [0, 10]",
        "shape[3].utilization: Invalid value: 101: not in valid range [0, 100]",
    ):
        assert part in msg
    with pytest.raises(ValueError, match="invalid BindTimeoutSeconds, should not be a negative value"):
        VolumeBindingArgs(bind_timeout_seconds=-1).validate()


# ---------------------------------------------------------------------------------------------
# kubesched: Reserve / PreBind / Unreserve on the object store


def _schedule(pl: VolumeBinding, handle: Any, p: Any, node_name: str) -> tuple[CycleState, Status | None]:
    state = CycleState()
    infos = list(handle.snapshot().list())
    st = pl.pre_filter(state, p, infos)
    assert st is None or st.is_skip(), st
    st = pl.filter(state, p, handle.snapshot().get(node_name))
    if st is not None:
        return state, st
    return state, pl.reserve(state, p, node_name)


def test_prebind_binds_smallest_matching_pv() -> None:
    """kubesched/static binding: the smallest available PV of the class that fits is chosen,
    Reserve assumes it, PreBind writes claimRef/volumeName/phases."""
    pvs = [
        PV("pv-big", "wait-sc").phase("Available").capacity("200Gi").access_modes("ReadWriteOnce").obj(),
        PV("pv-small", "wait-sc").phase("Available").capacity("60Gi").access_modes("ReadWriteOnce").obj(),
        PV("pv-tiny", "wait-sc").phase("Available").capacity("10Gi").access_modes("ReadWriteOnce").obj(),
        PV("pv-other-class", "wait-hdd-sc").phase("Available").capacity("50Gi").access_modes("ReadWriteOnce").obj(),
        PV("pv-rox", "wait-sc").phase("Available").capacity("50Gi").access_modes("ReadOnlyMany").obj(),
    ]
    claim = PVC("data", "wait-sc").request("50Gi").access_modes("ReadWriteOnce").obj()
    p_obj = pod("p", ("data", "data"))
    handle = make_handle([node("n1")], [], [IMMEDIATE_SC, WAIT_SC, WAIT_HDD_SC, claim, *pvs, p_obj])
    pl = build_plugin(VolumeBinding, None, handle)

    p = Pod(p_obj)
    state, st = _schedule(pl, handle, p, "n1")
    assert st is None
    assert state.read("VolumeBinding").all_bound is False
    # assumed, not yet written
    assert "claimRef" not in handle.objects.get("v1", "PersistentVolume", "pv-small")["spec"]
    assert pl.pre_bind(state, p, "n1") is None
    pv = handle.objects.get("v1", "PersistentVolume", "pv-small")
    pvc = handle.objects.get("v1", "PersistentVolumeClaim", "data", "default")
    assert pv["spec"]["claimRef"]["name"] == "data"
    assert pv["spec"]["claimRef"]["namespace"] == "default"
    assert pv["spec"]["claimRef"]["uid"] == pvc["metadata"]["uid"]
    assert pv["status"]["phase"] == "Bound"
    assert pvc["spec"]["volumeName"] == "pv-small"
    assert pvc["status"]["phase"] == "Bound"
    assert pvc["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"
    # next cycle: the claim is bound now
    state2 = CycleState()
    assert pl.pre_filter(state2, p, []) is None
    assert [c["metadata"]["name"] for c in state2.read("VolumeBinding").pod_volume_claims.bound_claims] == ["data"]


def test_assumed_pv_is_not_chosen_twice_and_unreserve_reverts() -> None:
    """kubesched/assume cache: after Reserve, another pod's claim cannot take the same PV
    until Unreserve reverts the assumption."""
    pvs = [PV("pv-1", "wait-sc").phase("Available").capacity("10Gi").obj()]
    objs = [WAIT_SC, PVC("c1", "wait-sc").request("1Gi").obj(), PVC("c2", "wait-sc").request("1Gi").obj(), *pvs]
    handle = make_handle([node("n1")], [], objs)
    pl = build_plugin(VolumeBinding, None, handle)

    p1 = Pod(pod("p1", ("c1", "v")))
    p2 = Pod(pod("p2", ("c2", "v")))
    state1, st = _schedule(pl, handle, p1, "n1")
    assert st is None
    _, st2 = _schedule(pl, handle, p2, "n1")
    assert st2 == Status.unresolvable(ERR_REASON_BIND_CONFLICT)
    pl.unreserve(state1, p1, "n1")
    _, st3 = _schedule(pl, handle, p2, "n1")
    assert st3 is None


def test_dynamic_provisioning_sets_selected_node() -> None:
    """kubesched/dynamic provisioning: a WaitForFirstConsumer class with a provisioner and no
    matching PV; PreBind annotates the claim with the selected node."""
    fast = sc("fast", "WaitForFirstConsumer", provisioner="ebs.csi.aws.com")
    fast["allowedTopologies"] = [{"matchLabelExpressions": [{"key": ZONE, "values": ["a"]}]}]
    claim = PVC("data", "fast").request("5Gi").obj()
    p_obj = pod("p", ("data", "data"))
    n_a = node("n-a")
    n_a["metadata"]["labels"][ZONE] = "a"
    n_b = node("n-b")
    n_b["metadata"]["labels"][ZONE] = "b"
    handle = make_handle([n_a, n_b], [], [fast, claim, p_obj])
    pl = build_plugin(VolumeBinding, None, handle)

    p = Pod(p_obj)
    state = CycleState()
    assert pl.pre_filter(state, p, []) is None
    assert pl.filter(state, p, handle.snapshot().get("n-b")) == Status.unresolvable(ERR_REASON_BIND_CONFLICT)
    assert pl.filter(state, p, handle.snapshot().get("n-a")) is None
    assert pl.reserve(state, p, "n-a") is None
    assert pl.pre_bind(state, p, "n-a") is None
    got = handle.objects.get("v1", "PersistentVolumeClaim", "data", "default")
    assert got["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "n-a"
    # a claim with a selected node only fits that node
    state2 = CycleState()
    assert pl.pre_filter(state2, p, []) is None
    assert pl.filter(state2, p, handle.snapshot().get("n-b")) == Status.unresolvable(ERR_REASON_BIND_CONFLICT)


def test_no_provisioner_and_no_pv() -> None:
    """kubesched: kubernetes.io/no-provisioner cannot provision."""
    local = sc("local", "WaitForFirstConsumer", provisioner="kubernetes.io/no-provisioner")
    handle = make_handle([node("n1")], [], [local, PVC("c", "local").obj()])
    pl = build_plugin(VolumeBinding, None, handle)

    p = Pod(pod("p", ("c", "v")))
    state = CycleState()
    assert pl.pre_filter(state, p, []) is None
    assert pl.filter(state, p, handle.snapshot().get("n1")) == Status.unresolvable(ERR_REASON_BIND_CONFLICT)


def test_csi_storage_capacity() -> None:
    """kubesched: a CSI driver with storageCapacity needs a CSIStorageCapacity that fits."""
    fast = sc("fast", "WaitForFirstConsumer", provisioner="csi.example.com")
    driver = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "csi.example.com"}, "spec": {"storageCapacity": True}}
    cap = {
        "apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
        "metadata": {"name": "cap-1", "namespace": "kube-system"},
        "storageClassName": "fast", "capacity": "10Gi",
        "nodeTopology": {"matchLabels": {HOSTNAME: "n1"}},
    }
    handle = make_handle([node("n1"), node("n2")], [], [fast, driver, cap, PVC("c", "fast").request("5Gi").obj(), PVC("big", "fast").request("50Gi").obj()])
    pl = build_plugin(VolumeBinding, None, handle)

    p = Pod(pod("p", ("c", "v")))
    state = CycleState()
    assert pl.pre_filter(state, p, []) is None
    assert pl.filter(state, p, handle.snapshot().get("n1")) is None
    assert pl.filter(state, p, handle.snapshot().get("n2")) == Status.unresolvable("node(s) did not have enough free storage")
    pb = Pod(pod("pb", ("big", "v")))
    state = CycleState()
    assert pl.pre_filter(state, pb, []) is None
    assert pl.filter(state, pb, handle.snapshot().get("n1")) == Status.unresolvable("node(s) did not have enough free storage")


def test_prebind_all_bound_and_missing_node() -> None:
    handle = make_handle([node("n1")], [], [])
    pl = build_plugin(VolumeBinding, None, handle)

    p = Pod(pod("p"))
    state = CycleState()
    assert pl.pre_filter(state, p, []).is_skip()
    assert pl.reserve(state, p, "n1") is None
    assert pl.pre_bind(state, p, "n1") is None
    s = state.read("VolumeBinding")
    s.all_bound = False
    st = pl.pre_bind(state, p, "n1")
    assert st.code is Code.ERROR and st.message == 'no pod volume found for node "n1"'


def _pre_bind_state(all_bound: bool = False, nodes: tuple[str, ...] = ()) -> CycleState:
    state = CycleState()
    s = volumebinding._StateData()
    s.all_bound = all_bound
    s.pod_volumes_by_node = {n: PodVolumes() for n in nodes}
    state.write("VolumeBinding", s)
    return state


@pytest.mark.parametrize(
    ("state", "want"),
    [
        pytest.param(_pre_bind_state(all_bound=True), Status.skip(), id="all bound"),
        pytest.param(_pre_bind_state(nodes=("node-a",)), None, id="volume to be bound"),
        pytest.param(_pre_bind_state(nodes=("node-b",)), Status.failed('no pod volume found for node "node-a"'), id="error: node is not found in podVolumesByNode"),
    ],
)
def test_pre_bind_pre_flight(state: CycleState, want: Status | None) -> None:
    """v1.36.3 volume_binding_test.go Test_PreBindPreFlight."""
    pl = build_plugin(VolumeBinding, None, make_handle([node("node-a")], [], []))
    assert pl.pre_bind_pre_flight(state, "node-a") == want


def test_pre_bind_pre_flight_without_state_is_an_error() -> None:
    """Test_PreBindPreFlight/error: state is nil (kubesched's message names the state key)."""
    pl = build_plugin(VolumeBinding, None, make_handle([node("node-a")], [], []))
    st = pl.pre_bind_pre_flight(CycleState(), "node-a")
    assert st.code is Code.ERROR and "not found" in st.message


def test_pre_bind_pre_flight_after_a_cycle() -> None:
    """A pod without claims skips (Reserve marked every claim bound); a pod with an unbound
    WaitForFirstConsumer claim reserved on n1 has PreBind work there."""
    pvs = [PV("pv-1", "wait-sc").phase("Available").capacity("10Gi").access_modes("ReadWriteOnce").obj()]
    claim = PVC("data", "wait-sc").request("5Gi").access_modes("ReadWriteOnce").obj()
    p_obj = pod("p", ("data", "data"))
    handle = make_handle([node("n1")], [], [WAIT_SC, claim, *pvs, p_obj])
    pl = build_plugin(VolumeBinding, None, handle)
    state, st = _schedule(pl, handle, Pod(p_obj), "n1")
    assert st is None
    assert pl.pre_bind_pre_flight(state, "n1") is None
    plain = Pod(pod("plain"))
    state2, st2 = _schedule(pl, handle, plain, "n1")
    assert st2 is None
    assert pl.pre_bind_pre_flight(state2, "n1") == Status.skip()


def test_missing_storage_class_mode_is_an_error() -> None:
    """IsDelayBindingMode: a class without volumeBindingMode is an error (the API server
    defaults it to Immediate; the Go code does not)."""
    handle = make_handle([node("n1")], [], [sc("nomode", None), PVC("c", "nomode").obj()])
    pl = build_plugin(VolumeBinding, None, handle)

    st = pl.pre_filter(CycleState(), Pod(pod("p", ("c", "v"))), [])
    assert st.code is Code.ERROR
    assert st.message == 'VolumeBindingMode not set for StorageClass "nomode"'


def test_ephemeral_volume_claims() -> None:
    p_obj = make_pod().name("p").namespace("default").uid("uid-p").volume({"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}}).obj()

    p = Pod(p_obj)
    handle = make_handle([node("n1")], [], [WAIT_SC])
    pl = build_plugin(VolumeBinding, None, handle)
    st = pl.pre_filter(CycleState(), p, [])
    assert st == Status.unresolvable('waiting for ephemeral volume controller to create the persistentvolumeclaim "p-scratch"')
    claim = PVC("p-scratch", "wait-sc").obj()
    handle = make_handle([node("n1")], [], [WAIT_SC, claim])
    pl = build_plugin(VolumeBinding, None, handle)
    st = pl.pre_filter(CycleState(), p, [])
    assert st == Status.unresolvable("PVC default/p-scratch was not created for pod default/p (pod is not owner)")
    claim["metadata"]["ownerReferences"] = [{"kind": "Pod", "name": "p", "uid": "uid-p", "controller": True}]
    handle = make_handle([node("n1")], [], [WAIT_SC, claim])
    pl = build_plugin(VolumeBinding, None, handle)
    assert pl.pre_filter(CycleState(), p, []) is None


# ---------------------------------------------------------------------------------------------
# events and queueing hints (volume_binding.go EventsToRegister, v1.34 with queueing hints)


def test_events_to_register() -> None:
    pl = build_plugin(VolumeBinding, None, make_handle())
    got = {(e.event.resource, e.event.action, e.hint is not None) for e in pl.events_to_register()}
    assert got == {
        ("StorageClass", ActionType.ADD | ActionType.UPDATE, True),
        ("PersistentVolumeClaim", ActionType.ADD | ActionType.UPDATE, True),
        ("PersistentVolume", ActionType.ADD | ActionType.UPDATE, False),
        ("Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL, False),
        ("CSINode", ActionType.ADD | ActionType.UPDATE, True),
        ("CSIDriver", ActionType.UPDATE, True),
        ("CSIStorageCapacity", ActionType.ADD | ActionType.UPDATE, True),
    }


def test_queueing_hints() -> None:

    p = Pod(pod("pod-a", ("pvc-a", "v")))
    Q, S = QueueingHint.QUEUE, QueueingHint.SKIP
    f = VolumeBinding.is_schedulable_after_persistent_volume_claim_change
    assert f(p, None, PVC("pvc-a", "sc").obj()) is Q
    assert f(p, None, PVC("pvc-b", "sc").obj()) is S
    other_ns = PVC("pvc-a", "sc").obj()
    other_ns["metadata"]["namespace"] = "ns1"
    assert f(p, None, other_ns) is S
    f = VolumeBinding.is_schedulable_after_storage_class_change
    topo = [{"matchLabelExpressions": [{"key": HOSTNAME, "values": ["node1"]}]}]
    assert f(p, None, sc("a", "Immediate")) is Q
    assert f(p, sc("a", "Immediate"), sc("a", "Immediate")) is S
    assert f(p, sc("a", "Immediate"), {**sc("a", "Immediate"), "allowedTopologies": topo}) is Q
    f = VolumeBinding.is_schedulable_after_csi_storage_capacity_change
    cap = {"storageClassName": "a", "capacity": "1Gi"}
    assert f(p, None, cap) is Q
    assert f(p, cap, {**cap, "capacity": "2Gi"}) is Q
    assert f(p, cap, {**cap, "capacity": "1Gi"}) is S
    assert f(p, cap, {**cap, "maximumVolumeSize": "2Gi"}) is Q
    f = VolumeBinding.is_schedulable_after_csi_node_change
    ann = "storage.alpha.kubernetes.io/migrated-plugins"
    assert f(p, None, {"metadata": {}}) is Q
    assert f(p, {"metadata": {}}, {"metadata": {"annotations": {ann: "kubernetes.io/aws-ebs"}}}) is Q
    assert f(p, {"metadata": {}}, {"metadata": {}}) is S
    f = VolumeBinding.is_schedulable_after_csi_driver_change
    csi_pod = Pod(make_pod().name("c").volume({"name": "v", "csi": {"driver": "d"}}).obj())
    on = {"metadata": {"name": "d"}, "spec": {"storageCapacity": True}}
    off = {"metadata": {"name": "d"}, "spec": {"storageCapacity": False}}
    assert f(csi_pod, on, off) is Q
    assert f(csi_pod, off, on) is S
    assert f(p, on, off) is S


# passive_assume_cache_test.go (v1.36): TestAssume, TestRestore --------------------------------


def _obj(name: str, rv: str, ns: str = "ns1") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": ns, "resourceVersion": rv}}


def _pvc_cache(*stored: dict[str, Any]) -> Any:
    objs = {f"{o['metadata']['namespace']}/{o['metadata']['name']}": o for o in stored}
    return AssumeCache(objs.get, "persistentvolumeclaims"), objs


@pytest.mark.parametrize(
    ("old", "new", "want_err"),
    [
        pytest.param(_obj("pvc1", "5"), _obj("pvc1", "5"), None, id="TestAssume/success-same-version"),
        pytest.param(_obj("pvc1", "5"), _obj("pvc1", "6"), '"ns1/pvc1" is out of sync (stored: 5, assume: 6)',
                     id="TestAssume/fail-new-higher-version"),
        pytest.param(_obj("pvc2", "5"), _obj("pvc1", "5"), 'persistentvolumeclaims "ns1/pvc1" not found',
                     id="TestAssume/fail-old-not-found"),
        pytest.param(_obj("pvc1", "5"), _obj("pvc1", "4"), '"ns1/pvc1" is out of sync (stored: 5, assume: 4)',
                     id="TestAssume/fail-new-lower-version"),
        pytest.param(_obj("pvc1", "5"), _obj("pvc1", "a"), '"ns1/pvc1" is out of sync (stored: 5, assume: a)',
                     id="TestAssume/fail-new-bad-version"),
        pytest.param(_obj("pvc1", "a"), _obj("pvc1", "5"), '"ns1/pvc1" is out of sync (stored: a, assume: 5)',
                     id="TestAssume/fail-old-bad-version"),
    ],
)
def test_assume_cache_assume(old: dict[str, Any], new: dict[str, Any], want_err: str | None) -> None:
    cache, objs = _pvc_cache(old)
    old_key = f"ns1/{old['metadata']['name']}"
    new_key = f"ns1/{new['metadata']['name']}"
    assert cache.overlay(old_key, objs.get(old_key)) is old
    if want_err is None:
        cache.assume(new_key, new)
    else:
        with pytest.raises(BinderError) as e:
            cache.assume(new_key, new)
        assert str(e.value) == want_err
    # Get returns the assumed object only when Assume succeeded
    assert cache.overlay(old_key, objs.get(old_key)) is (new if want_err is None else old)


def test_assume_cache_restore() -> None:
    """TestRestore: restoring an object never assumed, or the stored one, changes nothing;
    restoring the assumed one brings the stored one back."""
    old, new = _obj("pvc1", "5"), _obj("pvc1", "5")
    cache, objs = _pvc_cache(old)
    cache.restore("ns1/missing", _obj("missing", ""))
    cache.restore("ns1/pvc1", old)
    assert cache.overlay("ns1/pvc1", objs["ns1/pvc1"]) is old
    cache.assume("ns1/pvc1", new)
    assert cache.overlay("ns1/pvc1", objs["ns1/pvc1"]) is new
    # kubesched: an object with another resourceVersion does not restore the assumed one
    cache.restore("ns1/pvc1", _obj("pvc1", "4"))
    assert cache.overlay("ns1/pvc1", objs["ns1/pvc1"]) is new
    cache.restore("ns1/pvc1", new)
    assert cache.overlay("ns1/pvc1", objs["ns1/pvc1"]) is old


def test_check_bindings_messages_name_the_assume_cache_resource() -> None:
    """v1.36 checkBindings: a PV or claim gone from the assume cache is an apierrors NotFound of
    the cache's resource, keyed by name (PV) or namespace/name (claim)."""
    p = make_pod().name("pod-a").namespace("ns1").obj()
    handle = make_handle([node("node-a")], [p], [])
    binder = VolumeBinder(handle, 600)
    pvc = _obj("pvc-a", "1")
    with pytest.raises(BinderError) as e:
        binder.check_bindings(Pod(p), "node-a", [BindingInfo(pvc=pvc, pv=_obj("pv-a", "1", ""))], [])
    assert str(e.value) == 'failed to check binding: persistentvolumes "pv-a" not found'
    with pytest.raises(BinderError) as e:
        binder.check_bindings(Pod(p), "node-a", [], [DynamicProvision(pvc=pvc, node_capacity=None)])
    assert str(e.value) == 'failed to check provisioning pvc: persistentvolumeclaims "ns1/pvc-a" not found'


def test_reason_texts_are_kube_schedulers() -> None:
    """binder.go's ConflictReasons, word for word (v1.36.3; the tables above use the constants,
    so only this test pins the text kube-scheduler prints; the differential test found the
    node-affinity one worded as an older release did)."""
    from kubesched.runtime.plugins.volumebinding.binder import (
        ERR_REASON_NOT_ENOUGH_SPACE,
        ERR_REASON_PV_NOT_EXIST,
    )

    assert ERR_REASON_BIND_CONFLICT == "node(s) didn't find available persistent volumes to bind"
    assert ERR_REASON_NODE_CONFLICT == "node(s) didn't match PersistentVolume's node affinity"
    assert ERR_REASON_NOT_ENOUGH_SPACE == "node(s) did not have enough free storage"
    assert ERR_REASON_PV_NOT_EXIST == "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
