"""VolumeRestrictions, transcribed from kube-scheduler's
``volumerestrictions/volume_restrictions_test.go`` (TestGCEDiskConflicts, TestAWSDiskConflicts,
TestRBDDiskConflicts, TestISCSIDiskConflicts, TestAccessModeConflicts), plus kubesched tests of
the preemption extensions and queueing hints (ids ``kubesched/...``)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.runtime.plugins.volumerestrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,
    VolumeRestrictions,
)
from kubesched.sdk import ActionType, CycleState, NodeInfo, Pod, QueueingHint, Status
from kubesched.testing import build_plugin, make_handle, make_node, make_pod

ERR = Status.unschedulable(ERR_REASON_DISK_CONFLICT)


def vpod(*volumes: dict[str, Any]) -> Pod:
    w = make_pod().name("p")
    for i, v in enumerate(volumes):
        w.volume({"name": f"v{i}", **v})
    return w.pod()


def empty_pod() -> Pod:
    return make_pod().name("empty").pod()


GCE = {"gcePersistentDisk": {"pdName": "foo"}}
GCE2 = {"gcePersistentDisk": {"pdName": "bar"}}
AWS = {"awsElasticBlockStore": {"volumeID": "foo"}}
AWS2 = {"awsElasticBlockStore": {"volumeID": "bar"}}
RBD = {"rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar", "fsType": "ext4"}}
RBD2 = {"rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar", "fsType": "ext4"}}
ISCSI = {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01", "fsType": "ext4", "lun": 0}}
ISCSI2 = {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2017-12.server:storage.target01", "fsType": "ext4", "lun": 0}}
NO_RESTRICTION = {"name": "volume with no restriction"}


def _disk_cases(test: str, vol: dict[str, Any], vol2: dict[str, Any]) -> list[Any]:
    return [
        pytest.param(empty_pod(), [], Status.skip(), None, id=f"{test}/nothing"),
        pytest.param(empty_pod(), [vpod(vol)], Status.skip(), None, id=f"{test}/one state"),
        pytest.param(vpod(vol), [vpod(vol)], None, ERR, id=f"{test}/same state"),
        pytest.param(vpod(vol2), [vpod(vol)], None, None, id=f"{test}/different state"),
    ]


DISK_CASES = [
    *_disk_cases("TestGCEDiskConflicts", GCE, GCE2),
    pytest.param(
        make_pod().name("p").volume(NO_RESTRICTION).pod(), [], Status.skip(), None,
        id="TestGCEDiskConflicts/pod with a volume that doesn't have restrictions",
    ),
    *_disk_cases("TestAWSDiskConflicts", AWS, AWS2),
    *_disk_cases("TestRBDDiskConflicts", RBD, RBD2),
    *_disk_cases("TestISCSIDiskConflicts", ISCSI, ISCSI2),
]


@pytest.mark.parametrize("pod,existing,want_pre,want", DISK_CASES)
def test_disk_conflicts(pod: Pod, existing: list[Pod], want_pre: Status | None, want: Status | None) -> None:
    pl = build_plugin(VolumeRestrictions, None, make_handle())
    state = CycleState()
    got = pl.pre_filter(state, pod, [])
    assert (got or Status()) == (want_pre or Status())
    if got is None or got.is_success():
        ni = NodeInfo(make_node().name("n").node(), existing)
        assert (pl.filter(state, pod, ni) or Status()) == (want or Status())


@pytest.mark.parametrize(
    "a,b,conflict",
    [
        pytest.param({"gcePersistentDisk": {"pdName": "x", "readOnly": True}}, {"gcePersistentDisk": {"pdName": "x", "readOnly": True}}, False, id="kubesched/gce both read-only"),
        pytest.param({"gcePersistentDisk": {"pdName": "x", "readOnly": True}}, {"gcePersistentDisk": {"pdName": "x"}}, True, id="kubesched/gce one read-write"),
        pytest.param({"awsElasticBlockStore": {"volumeID": "x", "readOnly": True}}, {"awsElasticBlockStore": {"volumeID": "x", "readOnly": True}}, True, id="kubesched/aws always conflicts"),
        pytest.param({"iscsi": {"iqn": "q", "readOnly": True}}, {"iscsi": {"iqn": "q", "readOnly": True}}, False, id="kubesched/iscsi both read-only"),
        pytest.param({"rbd": {"monitors": ["a"], "image": "i"}}, {"rbd": {"monitors": ["a", "z"], "pool": "rbd", "image": "i"}}, True, id="kubesched/rbd default pool"),
        pytest.param({"rbd": {"monitors": ["a"], "image": "i", "readOnly": True}}, {"rbd": {"monitors": ["a"], "image": "i", "readOnly": True}}, False, id="kubesched/rbd both read-only"),
    ],
)
def test_read_only_rules(a: dict[str, Any], b: dict[str, Any], conflict: bool) -> None:
    pl = build_plugin(VolumeRestrictions, None, make_handle())
    pod = vpod(a)
    state = CycleState()
    assert pl.pre_filter(state, pod, []) is None
    ni = NodeInfo(make_node().name("n").node(), [vpod(b)])
    assert (pl.filter(state, pod, ni) == ERR) is conflict


# TestAccessModeConflicts ---------------------------------------------------------------------


def _pvc(name: str, mode: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"accessModes": [mode]},
    }


RWOP1 = _pvc("claim-with-rwop-1", "ReadWriteOncePod")
RWOP2 = _pvc("claim-with-rwop-2", "ReadWriteOncePod")
RWX = _pvc("claim-with-rwx", "ReadWriteMany")


def _claim_pod(name: str, *claims: str) -> dict[str, Any]:
    w = make_pod().name(name).namespace("default").node("node-1")
    for c in claims:
        w.pvc(c)
    return w.obj()


POD_WITH_ONE_PVC = _claim_pod("pod-with-one-pvc", "claim-with-rwop-1")
POD_WITH_TWO_PVCS = _claim_pod("pod-with-two-pvcs", "claim-with-rwop-1", "claim-with-rwop-2")
POD_WITH_ONE_CONFLICT = _claim_pod("pod-with-one-conflict", "claim-with-rwop-1")
POD_WITH_TWO_CONFLICTS = _claim_pod("pod-with-two-conflicts", "claim-with-rwop-1", "claim-with-rwop-2")
POD_WITH_RWX = _claim_pod("pod-with-rwx", "claim-with-rwx")
NODE = make_node().name("node-1").obj()

ACCESS_CASES = [
    pytest.param(make_pod().name("nothing").obj(), [], [], [], Status.skip(), None, id="TestAccessModeConflicts/nothing"),
    pytest.param(
        POD_WITH_ONE_PVC, [], [], [],
        Status.unresolvable('persistentvolumeclaim "claim-with-rwop-1" not found'), None,
        id="TestAccessModeConflicts/failed to get PVC",
    ),
    pytest.param(
        POD_WITH_ONE_PVC, [POD_WITH_RWX], [NODE], [RWOP1, RWX], Status.skip(), None,
        id="TestAccessModeConflicts/no access mode conflict",
    ),
    pytest.param(
        POD_WITH_ONE_CONFLICT, [POD_WITH_ONE_PVC, POD_WITH_RWX], [NODE], [RWOP1, RWX], None,
        Status.unschedulable(ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT),
        id="TestAccessModeConflicts/access mode conflict, unschedulable",
    ),
    pytest.param(
        POD_WITH_TWO_CONFLICTS, [POD_WITH_TWO_PVCS, POD_WITH_RWX], [NODE], [RWOP1, RWOP2, RWX], None,
        Status.unschedulable(ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT),
        id="TestAccessModeConflicts/two conflicts, unschedulable",
    ),
]


@pytest.mark.parametrize("pod,existing,nodes,pvcs,want_pre,want", ACCESS_CASES)
def test_access_mode_conflicts(
    pod: dict[str, Any],
    existing: list[dict[str, Any]],
    nodes: list[dict[str, Any]],
    pvcs: list[dict[str, Any]],
    want_pre: Status | None,
    want: Status | None,
) -> None:
    handle = make_handle(nodes, existing, pvcs)
    pl = build_plugin(VolumeRestrictions, None, handle)
    state = CycleState()
    p = Pod(pod)
    got = pl.pre_filter(state, p, handle.snapshot().list())
    assert (got or Status()) == (want_pre or Status())
    if got is None or got.is_success():
        ni = NodeInfo(make_node().name("node-1").node(), [Pod(e) for e in existing])
        assert (pl.filter(state, p, ni) or Status()) == (want or Status())


def test_remove_pod_lifts_read_write_once_pod_conflict() -> None:
    """kubesched/preemption: removing the pod that holds the RWOP claim makes the node fit;
    the cloned state keeps the original count."""
    handle = make_handle([NODE], [POD_WITH_ONE_PVC], [RWOP1])
    pl = build_plugin(VolumeRestrictions, None, handle)
    state = CycleState()
    p = Pod(POD_WITH_ONE_CONFLICT)
    assert pl.pre_filter(state, p, handle.snapshot().list()) is None
    ni = handle.snapshot().get("node-1")
    clone = state.clone()
    assert pl.pre_filter_remove_pod(clone, p, Pod(POD_WITH_ONE_PVC), ni) is None
    assert pl.filter(clone, p, ni) is None
    assert pl.filter(state, p, ni) == Status.unschedulable(ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)
    assert pl.pre_filter_add_pod(clone, p, Pod(POD_WITH_ONE_PVC), ni) is None
    assert pl.filter(clone, p, ni) == Status.unschedulable(ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)


def test_events_to_register() -> None:
    pl = build_plugin(VolumeRestrictions, None, make_handle())
    got = [(e.event.resource, e.event.action, e.hint is not None) for e in pl.events_to_register()]
    assert got == [
        ("Pod", ActionType.DELETE, True),
        ("Node", ActionType.ADD, False),
        ("PersistentVolumeClaim", ActionType.ADD, True),
    ]


def test_queueing_hints() -> None:
    Q, S = QueueingHint.QUEUE, QueueingHint.SKIP
    pod = Pod(POD_WITH_ONE_CONFLICT)
    f = VolumeRestrictions.is_schedulable_after_persistent_volume_claim_added
    assert f(pod, None, RWOP1) is Q
    assert f(pod, None, RWX) is S
    assert f(pod, None, {**RWOP1, "metadata": {"name": "claim-with-rwop-1", "namespace": "other"}}) is S
    g = VolumeRestrictions.is_schedulable_after_pod_deleted
    assert g(pod, POD_WITH_ONE_PVC, None) is Q
    assert g(pod, POD_WITH_RWX, None) is S
    disk_pod = vpod(GCE)
    assert g(disk_pod, vpod(GCE).raw, None) is Q
    assert g(disk_pod, vpod(GCE2).raw, None) is S


def test_reason_texts_are_kube_schedulers() -> None:
    """volume_restrictions.go's reasons, word for word (v1.36.3; the tables above use the
    constants; the differential test found the ReadWriteOncePod one worded as before 1.27)."""
    assert ERR_REASON_DISK_CONFLICT == "node(s) had no available disk"
    assert ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT == (
        "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
    )
