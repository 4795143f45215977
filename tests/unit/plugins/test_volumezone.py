"""VolumeZone, transcribed from kube-scheduler's ``volumezone/volume_zone_test.go``
(TestSingleZone, TestMultiZone, TestWithBinding, TestIsSchedulableAfterPersistentVolumeClaimAdded,
TestIsSchedulableAfterStorageClassAdded, TestIsSchedulableAfterPersistentVolumeChange).

One message differs on purpose: the Go test's fake StorageClass lister says
``storageclasses.storage.k8s.io "Class_0" not found``; kube-scheduler's informer lister (what
users see) says ``storageclass.storage.k8s.io "Class_0" not found``, which kubesched uses.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.runtime.plugins.volumezone import ERR_REASON_CONFLICT, VolumeZone
from kubesched.sdk import ActionType, CycleState, Node, NodeInfo, Pod, QueueingHint, Status
from kubesched.testing import build_plugin, make_handle, make_pod

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
CONFLICT = Status.unresolvable(ERR_REASON_CONFLICT)


def pv(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name, "labels": dict(labels)}}


def pvc(name: str, volume: str = "", sc: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if volume:
        spec["volumeName"] = volume
    if sc is not None:
        spec["storageClassName"] = sc
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def node(labels: dict[str, str] | None = None) -> dict[str, Any]:
    md: dict[str, Any] = {"name": "host1"}
    if labels:
        md["labels"] = dict(labels)
    return {"apiVersion": "v1", "kind": "Node", "metadata": md}


def pod_with_volume(pvc_name: str) -> Pod:
    return make_pod().name("pod_1").namespace("default").pvc(pvc_name).pod()


def L(**kv: str) -> dict[str, str]:
    m = {"beta_zone": BETA_ZONE, "beta_region": BETA_REGION, "zone": ZONE, "region": REGION}
    return {m.get(k, k): v for k, v in kv.items()}


SINGLE_PVS = [
    pv("Vol_1", **L(beta_zone="us-west1-a")),
    pv("Vol_2", **L(beta_region="us-west1", uselessLabel="none")),
    pv("Vol_3", **L(beta_region="us-west1")),
    pv("Vol_Stable_1", **L(zone="us-west1-a")),
    pv("Vol_Stable_2", **L(region="us-west1", uselessLabel="none")),
    pv("Vol_Stable_3", **L(zone="us-west1-a", region="us-west1-a")),
]
SINGLE_PVCS = [
    pvc("PVC_1", "Vol_1"), pvc("PVC_2", "Vol_2"), pvc("PVC_3", "Vol_3"), pvc("PVC_4", "Vol_not_exist"),
    pvc("PVC_Stable_1", "Vol_Stable_1"), pvc("PVC_Stable_2", "Vol_Stable_2"), pvc("PVC_Stable_3", "Vol_Stable_3"),
]

SINGLE = [
    pytest.param(make_pod().name("pod_1").namespace("default").pod(), node(L(beta_zone="us-west1-a")), Status.skip(), None, id="TestSingleZone/pod without volume"),
    pytest.param(pod_with_volume("PVC_1"), node(), None, None, id="TestSingleZone/node without labels"),
    pytest.param(pod_with_volume("PVC_1"), node(L(beta_zone="us-west1-a", uselessLabel="none")), None, None, id="TestSingleZone/beta zone label matched"),
    pytest.param(pod_with_volume("PVC_2"), node(L(beta_region="us-west1", uselessLabel="none")), None, None, id="TestSingleZone/beta region label matched"),
    pytest.param(pod_with_volume("PVC_2"), node(L(beta_region="no_us-west1", uselessLabel="none")), None, CONFLICT, id="TestSingleZone/beta region label doesn't match"),
    pytest.param(pod_with_volume("PVC_1"), node(L(beta_zone="no_us-west1-a", uselessLabel="none")), None, CONFLICT, id="TestSingleZone/beta zone label doesn't match"),
    pytest.param(pod_with_volume("PVC_Stable_1"), node(L(zone="us-west1-a", uselessLabel="none")), None, None, id="TestSingleZone/zone label matched"),
    pytest.param(pod_with_volume("PVC_Stable_2"), node(L(region="us-west1", uselessLabel="none")), None, None, id="TestSingleZone/region label matched"),
    pytest.param(pod_with_volume("PVC_Stable_2"), node(L(region="no_us-west1", uselessLabel="none")), None, CONFLICT, id="TestSingleZone/region label doesn't match"),
    pytest.param(pod_with_volume("PVC_Stable_1"), node(L(zone="no_us-west1-a", uselessLabel="none")), None, CONFLICT, id="TestSingleZone/zone label doesn't match"),
    pytest.param(pod_with_volume("PVC_Stable_3"), node(L(zone="us-west1-a")), None, CONFLICT, id="TestSingleZone/pv with zone and region, node with only zone"),
    pytest.param(pod_with_volume("PVC_Stable_1"), node(L(beta_zone="us-west1-a")), None, CONFLICT, id="TestSingleZone/pv with zone,node with beta zone"),
    pytest.param(pod_with_volume("PVC_1"), node(L(zone="us-west1-a")), None, None, id="TestSingleZone/pv with beta label,node with ga label, matched"),
    pytest.param(pod_with_volume("PVC_1"), node(L(zone="us-west1-b")), None, CONFLICT, id="TestSingleZone/pv with beta label,node with ga label, don't match"),
]

MULTI_PVS = [
    pv("Vol_1", **L(beta_zone="us-west1-a")),
    pv("Vol_2", **L(beta_zone="us-west1-b", uselessLabel="none")),
    pv("Vol_3", **L(beta_zone="us-west1-c__us-west1-a")),
    pv("Vol_Stable_1", **L(zone="us-west1-a")),
    pv("Vol_Stable_2", **L(zone="us-west1-c__us-west1-a")),
]
MULTI_PVCS = [
    pvc("PVC_1", "Vol_1"), pvc("PVC_2", "Vol_2"), pvc("PVC_3", "Vol_3"), pvc("PVC_4", "Vol_not_exist"),
    pvc("PVC_Stable_1", "Vol_Stable_1"), pvc("PVC_Stable_2", "Vol_Stable_2"),
]
MULTI = [
    pytest.param(pod_with_volume("PVC_3"), node(), None, None, id="TestMultiZone/node without labels"),
    pytest.param(pod_with_volume("PVC_3"), node(L(beta_zone="us-west1-a", uselessLabel="none")), None, None, id="TestMultiZone/beta zone label matched"),
    pytest.param(pod_with_volume("PVC_1"), node(L(beta_zone="us-west1-b", uselessLabel="none")), None, CONFLICT, id="TestMultiZone/beta zone label doesn't match"),
    pytest.param(pod_with_volume("PVC_Stable_2"), node(L(zone="us-west1-a", uselessLabel="none")), None, None, id="TestMultiZone/zone label matched"),
    pytest.param(pod_with_volume("PVC_Stable_1"), node(L(zone="us-west1-b", uselessLabel="none")), None, CONFLICT, id="TestMultiZone/zone label doesn't match"),
]

BINDING_SCS = [
    {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "Class_Immediate"}},
    {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "Class_Wait"}, "volumeBindingMode": "WaitForFirstConsumer"},
]
BINDING_PVS = [pv("Vol_1", **L(beta_zone="us-west1-a"))]
BINDING_PVCS = [
    pvc("PVC_1", "Vol_1"), pvc("PVC_NoSC", sc="Class_0"), pvc("PVC_EmptySC"),
    pvc("PVC_WaitSC", sc="Class_Wait"), pvc("PVC_ImmediateSC", sc="Class_Immediate"),
]
TEST_NODE = node(L(beta_zone="us-west1-a", uselessLabel="none"))
_NO_SC = Status.unresolvable("PersistentVolumeClaim had no pv name and storageClass name")
_CLASS0 = Status.unresolvable('storageclass.storage.k8s.io "Class_0" not found')
_IMM = Status.unresolvable('VolumeBindingMode not set for StorageClass "Class_Immediate"')
BINDING = [
    pytest.param(pod_with_volume("PVC_1"), TEST_NODE, None, None, id="TestWithBinding/label zone failure domain matched"),
    pytest.param(pod_with_volume("PVC_EmptySC"), TEST_NODE, _NO_SC, _NO_SC, id="TestWithBinding/unbound volume empty storage class"),
    pytest.param(pod_with_volume("PVC_NoSC"), TEST_NODE, _CLASS0, _CLASS0, id="TestWithBinding/unbound volume no storage class"),
    pytest.param(pod_with_volume("PVC_ImmediateSC"), TEST_NODE, _IMM, _IMM, id="TestWithBinding/unbound volume immediate binding mode"),
    pytest.param(pod_with_volume("PVC_WaitSC"), TEST_NODE, Status.skip(), None, id="TestWithBinding/unbound volume wait binding mode"),
]


def _run(objects: list[dict[str, Any]], pod: Pod, node_obj: dict[str, Any], want_pre: Status | None, want: Status | None) -> None:
    pl = build_plugin(VolumeZone, None, make_handle([], [], objects))
    state = CycleState()
    got = pl.pre_filter(state, pod, [])
    assert (got or Status()) == (want_pre or Status())
    if got is not None:
        assert got.code == want_pre.code
    # As the Go tests do, Filter runs even when PreFilter did not succeed.
    st = pl.filter(state, pod, NodeInfo(Node(node_obj)))
    assert (st or Status()) == (want or Status())
    if st is not None:
        assert st.code == want.code


@pytest.mark.parametrize("pod,node_obj,want_pre,want", SINGLE)
def test_single_zone(pod: Pod, node_obj: dict[str, Any], want_pre: Status | None, want: Status | None) -> None:
    _run(SINGLE_PVS + SINGLE_PVCS, pod, node_obj, want_pre, want)


@pytest.mark.parametrize("pod,node_obj,want_pre,want", MULTI)
def test_multi_zone(pod: Pod, node_obj: dict[str, Any], want_pre: Status | None, want: Status | None) -> None:
    _run(MULTI_PVS + MULTI_PVCS, pod, node_obj, want_pre, want)


@pytest.mark.parametrize("pod,node_obj,want_pre,want", BINDING)
def test_with_binding(pod: Pod, node_obj: dict[str, Any], want_pre: Status | None, want: Status | None) -> None:
    _run(BINDING_SCS + BINDING_PVS + BINDING_PVCS, pod, node_obj, want_pre, want)


def test_missing_pv() -> None:
    """kubesched: a bound claim whose PV is gone (lister message)."""
    pl = build_plugin(VolumeZone, None, make_handle([], [], SINGLE_PVCS))
    got = pl.pre_filter(CycleState(), pod_with_volume("PVC_4"), [])
    assert got == Status.unresolvable('persistentvolume "Vol_not_exist" not found')


# queueing hints --------------------------------------------------------------------------------

Q, S = QueueingHint.QUEUE, QueueingHint.SKIP
_PVC1 = pvc("PVC_1", "Vol_1")
_PVC1_NS1 = {**pvc("PVC_1", "Vol_1"), "metadata": {"name": "PVC_1", "namespace": "ns1"}}
_NO_PVC_POD = make_pod().name("pod_1").namespace("default").pod()


@pytest.mark.parametrize(
    "pod,old,new,want",
    [
        pytest.param(pod_with_volume("PVC_1"), None, "not-a-pvc", Q, id="TestIsSchedulableAfterPersistentVolumeClaimAdded/error-wrong-new-object"),
        pytest.param(_NO_PVC_POD, None, _PVC1, S, id="TestIsSchedulableAfterPersistentVolumeClaimAdded/pvc-was-added-but-pod-refers-no-pvc"),
        pytest.param(pod_with_volume("PVC_2"), None, _PVC1, S, id="TestIsSchedulableAfterPersistentVolumeClaimAdded/pvc-was-added-and-pod-was-bound-to-different-pvc"),
        pytest.param(pod_with_volume("PVC_1"), None, _PVC1_NS1, S, id="TestIsSchedulableAfterPersistentVolumeClaimAdded/pvc-was-added-and-pod-was-bound-to-pvc-but-different-ns"),
        pytest.param(pod_with_volume("PVC_1"), None, _PVC1, Q, id="TestIsSchedulableAfterPersistentVolumeClaimAdded/pvc-was-added-and-pod-was-bound-to-the-pvc"),
        pytest.param(pod_with_volume("PVC_1"), pvc("PVC_1"), _PVC1, Q, id="TestIsSchedulableAfterPersistentVolumeClaimAdded/pvc-was-updated-and-pod-was-bound-to-the-pvc"),
        pytest.param(_NO_PVC_POD, pvc("PVC_1"), _PVC1, S, id="TestIsSchedulableAfterPersistentVolumeClaimAdded/pvc-was-updated-but-pod-refers-no-pvc"),
    ],
)
def test_hint_pvc(pod: Pod, old: Any, new: Any, want: QueueingHint) -> None:
    assert VolumeZone.is_schedulable_after_persistent_volume_claim_change(pod, old, new) is want


@pytest.mark.parametrize(
    "new,want",
    [
        pytest.param("not-a-storageclass", Q, id="TestIsSchedulableAfterStorageClassAdded/error-wrong-new-object"),
        pytest.param({"metadata": {"name": "SC_1"}}, S, id="TestIsSchedulableAfterStorageClassAdded/sc-doesn't-have-volume-binding-mode"),
        pytest.param({"metadata": {"name": "SC_1"}, "volumeBindingMode": "WaitForFirstConsumer"}, Q, id="TestIsSchedulableAfterStorageClassAdded/new-sc-is-wait-for-first-consumer-mode"),
    ],
)
def test_hint_storage_class(new: Any, want: QueueingHint) -> None:
    assert VolumeZone.is_schedulable_after_storage_class_added(pod_with_volume("PVC_1"), None, new) is want


@pytest.mark.parametrize(
    "old,new,want",
    [
        pytest.param(None, "not-a-pv", Q, id="TestIsSchedulableAfterPersistentVolumeChange/error-wrong-new-object"),
        pytest.param("not-a-pv", pv("Vol_1"), Q, id="TestIsSchedulableAfterPersistentVolumeChange/error-wrong-old-object"),
        pytest.param(None, pv("Vol_1", **L(beta_zone="us-west1-b")), Q, id="TestIsSchedulableAfterPersistentVolumeChange/new-pv-was-added"),
        pytest.param(pv("Vol_1", **L(beta_zone="us-west1-a")), pv("Vol_1", **L(beta_zone="us-west1-b")), Q, id="TestIsSchedulableAfterPersistentVolumeChange/pv-was-updated-and-changed-topology"),
        pytest.param(pv("Vol_1", **L(beta_zone="us-west1-a")), pv("Vol_1", **L(beta_zone="us-west1-a", zone="zone")), Q, id="TestIsSchedulableAfterPersistentVolumeChange/pv-was-updated-and-added-topology-label"),
        pytest.param(pv("Vol_1", **L(beta_zone="us-west1-a", zone="zone")), pv("Vol_1", **L(beta_zone="us-west1-a", zone="zone")), S, id="TestIsSchedulableAfterPersistentVolumeChange/pv-was-updated-but-no-topology-is-changed"),
    ],
)
def test_hint_pv(old: Any, new: Any, want: QueueingHint) -> None:
    assert VolumeZone.is_schedulable_after_persistent_volume_change(pod_with_volume("PVC_1"), old, new) is want


def test_events_to_register() -> None:
    pl = build_plugin(VolumeZone, None, make_handle())
    got = [(e.event.resource, e.event.action, e.hint is not None) for e in pl.events_to_register()]
    assert got == [
        ("StorageClass", ActionType.ADD, True),
        ("Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL, False),
        ("PersistentVolumeClaim", ActionType.ADD | ActionType.UPDATE, True),
        ("PersistentVolume", ActionType.ADD | ActionType.UPDATE, True),
    ]
