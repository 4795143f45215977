"""NodeVolumeLimits, transcribed from kube-scheduler's ``nodevolumelimits/csi_test.go``
(TestCSILimits, TestCSILimitsQHint, TestCSILimitsAddedPVCQHint,
TestCSILimitsDeletedVolumeAttachmentQHint).

One message differs on purpose: the Go test's fake PVC lister says
``persistentvolumeclaims "abc-xyz" not found``; kube-scheduler's informer lister (what users
see) says ``persistentvolumeclaim "abc-xyz" not found``, which kubesched uses.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.runtime.plugins.nodevolumelimits import (
    ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,
    NodeVolumeLimits,
)
from kubesched.sdk import ActionType, CycleState, Pod, QueueingHint, Status
from kubesched.testing import build_plugin, make_handle, make_pod

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
AWS_IN_TREE = "kubernetes.io/aws-ebs"
HOSTPATH_IN_TREE = "kubernetes.io/hostpath"
SC_NAME = "csi-sc"
NODE_NAME = "node-for-max-pd-test-1"
EXCEEDED = Status.unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)


def pvc_pod(*claims: str, name: str = "") -> dict[str, Any]:
    w = make_pod().name(name or "p-" + "-".join(c.replace("/", "_") for c in claims))
    for c in claims:
        w.pvc(c)
    return w.obj()


def vol_pod(*volumes: dict[str, Any], name: str = "vp", namespace: str = "default", uid: str = "") -> dict[str, Any]:
    w = make_pod().name(name).namespace(namespace)
    if uid:
        w.uid(uid)
    for i, v in enumerate(volumes):
        w.volume({"name": v.pop("name", f"v{i}"), **v})
    return w.obj()


RUNNING = pvc_pod("csi-ebs.csi.aws.com-3")
PENDING = pvc_pod("csi-4")
UNBOUND2 = pvc_pod("csi-4", name="unbound-2")
MISSING_PV = pvc_pod("csi-6")
NO_SC = pvc_pod("csi-5")
GCE_TWO = pvc_pod("csi-pd.csi.storage.gke.io-1", "csi-pd.csi.storage.gke.io-2")
IN_TREE_ONE = pvc_pod("csi-kubernetes.io/aws-ebs-0")
IN_TREE_TWO = pvc_pod("csi-kubernetes.io/aws-ebs-1", "csi-kubernetes.io/aws-ebs-2")
EBS_ONE = pvc_pod("csi-ebs.csi.aws.com-0")
EBS_TWO = pvc_pod("csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2")
NON_MIGRATABLE = pvc_pod("csi-kubernetes.io/hostpath-0")
EPHEMERAL = vol_pod({"name": "xyz", "ephemeral": {}}, name="abc", namespace="test", uid="12345")
EPHEMERAL_TWO = vol_pod({"name": "x", "ephemeral": {}}, {"name": "y", "ephemeral": {}}, name="abc", namespace="test", uid="12345II")
IN_TREE_INLINE = vol_pod({"awsElasticBlockStore": {"volumeID": "aws-inline1"}}, name="inline")
IN_TREE_INLINE_SAME_ID = vol_pod({"awsElasticBlockStore": {"volumeID": "csi-ebs.csi.aws.com-1"}}, name="inline-same")
ONLY_CM_SECRET = vol_pod({"configMap": {}}, {"secret": {}}, name="cm")
PVC_CM_SECRET = vol_pod({"configMap": {}}, {"secret": {}}, {"persistentVolumeClaim": {"claimName": "csi-ebs.csi.aws.com-0"}}, name="pvc-cm")
EPHEMERAL_CM_SECRET = vol_pod({"configMap": {}}, {"secret": {}}, {"name": "xyz", "ephemeral": {}}, name="abc", namespace="test")
INLINE_CM_SECRET = vol_pod({"configMap": {}}, {"secret": {}}, {"awsElasticBlockStore": {"volumeID": "aws-inline1"}}, name="inline-cm")


def _owned_claim(name: str, owner_uid: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": name,
            "namespace": "test",
            "ownerReferences": [{"kind": "Pod", "name": "abc", "uid": owner_uid, "controller": True}],
        },
        "spec": {"storageClassName": SC_NAME},
    }


EPHEMERAL_CLAIM = _owned_claim("abc-xyz", "12345")
CONFLICTING_CLAIM = {**_owned_claim("abc-xyz", "12345"), "metadata": {"name": "abc-xyz", "namespace": "test"}}
EPHEMERAL_CLAIM_X = _owned_claim("abc-x", "12345II")
EPHEMERAL_CLAIM_Y = _owned_claim("abc-y", "12345II")


def fake_pvs(drivers: list[str]) -> list[dict[str, Any]]:
    out = []
    for d in drivers:
        for j in range(4):
            h = f"csi-{d}-{j}"
            if d == AWS_IN_TREE:
                src: dict[str, Any] = {"awsElasticBlockStore": {"volumeID": h}}
            elif d == HOSTPATH_IN_TREE:
                src = {"hostPath": {"path": "/tmp"}}
            else:
                src = {"csi": {"driver": d, "volumeHandle": h}}
            out.append({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": h}, "spec": src})
    return out


def fake_pvcs(drivers: list[str]) -> list[dict[str, Any]]:
    def pvc(name: str, **spec: Any) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"}, "spec": spec}

    out = [pvc(f"csi-{d}-{j}", volumeName=f"csi-{d}-{j}") for d in drivers for j in range(4)]
    out.append(pvc("csi-4", storageClassName=SC_NAME))
    out.append(pvc("csi-5"))
    out.append(pvc("csi-6", storageClassName=SC_NAME, volumeName="missing-in-action"))
    return out


def fake_vas(count: int, drivers: list[str]) -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "VolumeAttachment",
            "metadata": {"name": f"va-{d}-{j}"},
            "spec": {"nodeName": NODE_NAME, "attacher": d, "source": {"persistentVolumeName": f"csi-{d}-{j}"}},
        }
        for d in drivers
        for j in range(count)
    ]


def csi_node(limit_source: str, limit: int, drivers: list[str]) -> dict[str, Any] | None:
    if limit_source not in ("csinode", "csinode-with-no-limit", "no-csi-driver"):
        return None
    ds = []
    if limit_source != "no-csi-driver":
        for d in drivers:
            drv: dict[str, Any] = {"name": d, "nodeID": NODE_NAME}
            if limit_source == "csinode":
                drv["allocatable"] = {"count": limit}
            ds.append(drv)
    # enableMigrationOnNode(csiNode, AWSEBSInTreePluginName)
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {"name": NODE_NAME, "annotations": {"storage.alpha.kubernetes.io/migrated-plugins": AWS_IN_TREE}},
        "spec": {"drivers": ds},
    }


def case(
    test: str,
    new_pod: dict[str, Any],
    existing: list[dict[str, Any]],
    max_vols: int,
    drivers: list[str],
    limit_source: str = "",
    want: Status | None = None,
    want_pre: Status | None = None,
    extra_claims: tuple[dict[str, Any], ...] = (),
    va_count: int = 0,
    go_test: str = "TestCSILimits",
) -> Any:
    return pytest.param(new_pod, existing, max_vols, drivers, limit_source, want, want_pre, list(extra_claims), va_count, id=f"{go_test}/{test}")


def _csi_driver(name: str, prevent_if_missing: bool) -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": {"name": name},
        "spec": {"preventPodSchedulingIfMissing": prevent_if_missing},
    }


def _unannotated(cn: dict[str, Any]) -> dict[str, Any]:
    return {**cn, "metadata": {"name": NODE_NAME}}


def _va_of(pv: str, attacher: str = EBS) -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "VolumeAttachment",
        "metadata": {"name": f"va-{pv}"},
        "spec": {"nodeName": NODE_NAME, "attacher": attacher, "source": {"persistentVolumeName": pv}},
    }


CASES = [
    case("should count VolumeAttachments towards volume limit when no pods exist", EBS_ONE, [], 2, [EBS], "csinode", EXCEEDED, va_count=2),
    case("should schedule pod when VolumeAttachments count does not exceed limit", EBS_ONE, [], 2, [EBS], "csinode", va_count=1),
    case("fits when node volume limit >= new pods CSI volume", EBS_ONE, [RUNNING, EBS_TWO], 4, [EBS], "csinode"),
    case("doesn't when node volume limit <= pods CSI volume", EBS_ONE, [RUNNING, EBS_TWO], 2, [EBS], "csinode", EXCEEDED),
    case("should when driver does not support volume limits", EBS_ONE, [RUNNING, EBS_TWO], 2, [EBS], "csinode-with-no-limit"),
    case("count pending PVCs towards volume limit <= pods CSI volume", EBS_ONE, [PENDING, EBS_TWO], 2, [EBS], "csinode", EXCEEDED),
    case("count multiple pending pvcs towards volume limit >= pods CSI volume", EBS_ONE, [PENDING, UNBOUND2, EBS_TWO], 4, [EBS], "csinode"),
    case("should count PVCs with invalid PV name but valid SC", EBS_ONE, [MISSING_PV, EBS_TWO], 2, [EBS], "csinode", EXCEEDED),
    case("don't count pvcs with missing SC towards volume limit", EBS_ONE, [RUNNING, NO_SC], 2, [EBS], "csinode"),
    case("count pvcs with the same type towards volume limit", EBS_ONE, [GCE_TWO, EBS_TWO], 2, [EBS, GCE], "csinode", EXCEEDED),
    case("don't count pvcs with different type towards volume limit", GCE_TWO, [EBS_TWO, RUNNING], 2, [EBS, GCE], "csinode"),
    case("should count in-tree volumes if migration is enabled", IN_TREE_ONE, [IN_TREE_TWO], 2, [AWS_IN_TREE, EBS], "csinode", EXCEEDED),
    case("nil csi node", IN_TREE_INLINE, [IN_TREE_TWO], 0, [AWS_IN_TREE, EBS]),
    case("should count unbound in-tree volumes if migration is enabled", PENDING, [IN_TREE_TWO], 2, [AWS_IN_TREE, EBS], "csinode", EXCEEDED),
    case("should not limit pod if volume used does not report limits", IN_TREE_ONE, [IN_TREE_TWO], 2, [AWS_IN_TREE, EBS], "csinode-with-no-limit"),
    case("should not count non-migratable in-tree volumes", NON_MIGRATABLE, [EBS_TWO], 2, [HOSTPATH_IN_TREE, EBS], "csinode"),
    case("should count in-tree inline volumes if migration is enabled", IN_TREE_INLINE, [IN_TREE_TWO], 2, [AWS_IN_TREE, EBS], "csinode", EXCEEDED),
    case("should count in-tree and csi volumes if migration is enabled (when scheduling in-tree volumes)", IN_TREE_ONE, [EBS_TWO], 2, [AWS_IN_TREE, EBS], "csinode", EXCEEDED),
    case("should count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)", IN_TREE_INLINE, [EBS_TWO, IN_TREE_ONE], 3, [AWS_IN_TREE, EBS], "csinode", EXCEEDED),
    case("should not count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)", IN_TREE_INLINE_SAME_ID, [EBS_TWO, IN_TREE_ONE], 3, [AWS_IN_TREE, EBS], "csinode"),
    case("should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)", EBS_ONE, [IN_TREE_TWO], 2, [AWS_IN_TREE, EBS], "csinode", EXCEEDED),
    case("ephemeral volume missing", EPHEMERAL, [], 0, [EBS], "csinode-with-no-limit",
         Status.unresolvable('looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found')),
    case("ephemeral volume not owned", EPHEMERAL, [], 0, [EBS], "csinode-with-no-limit",
         Status.failed("PVC test/abc-xyz was not created for pod test/abc (pod is not owner)"), extra_claims=(CONFLICTING_CLAIM,)),
    case("ephemeral volume unbound", EPHEMERAL, [], 0, [EBS], "csinode-with-no-limit", extra_claims=(EPHEMERAL_CLAIM,)),
    case("ephemeral doesn't when node volume limit <= pods CSI volume", EPHEMERAL, [RUNNING, EBS_TWO], 2, [EBS], "csinode", EXCEEDED,
         extra_claims=(EPHEMERAL_CLAIM,)),
    case("ephemeral doesn't when node volume limit <= pods ephemeral CSI volume", EBS_ONE, [RUNNING, EPHEMERAL_TWO], 2, [EBS], "csinode",
         EXCEEDED, extra_claims=(EPHEMERAL_CLAIM_X, EPHEMERAL_CLAIM_Y)),
    case("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume, ephemeral disabled", EBS_ONE,
         [RUNNING, EPHEMERAL, EBS_TWO], 3, [EBS], "csinode", EXCEEDED, extra_claims=(EPHEMERAL_CLAIM,)),
    case("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume", EBS_ONE,
         [RUNNING, EPHEMERAL, EBS_TWO], 3, [EBS], "csinode", EXCEEDED, extra_claims=(EPHEMERAL_CLAIM,)),
    case("persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume", EBS_ONE,
         [RUNNING, EPHEMERAL, EBS_TWO], 5, [EBS], "csinode", extra_claims=(EPHEMERAL_CLAIM,)),
    case("skip Filter when the pod only uses secrets and configmaps", ONLY_CM_SECRET, [], 2, [EBS], "csinode", want_pre=Status.skip()),
    case("don't skip Filter when the pod has pvcs", PVC_CM_SECRET, [], 2, [EBS], "csinode"),
    case("don't skip Filter when the pod has ephemeral volumes", EPHEMERAL_CM_SECRET, [], 0, [EBS], "csinode-with-no-limit",
         Status.unresolvable('looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found')),
    case("don't skip Filter when the pod has inline migratable volumes", INLINE_CM_SECRET, [IN_TREE_TWO], 2, [AWS_IN_TREE, EBS], "csinode",
         EXCEEDED),
    # VolumeLimitScaling is alpha in v1.36 (off): a CSIDriver's preventPodSchedulingIfMissing
    # does not reject a node whose CSINode lacks the driver.
    case("gate disabled - skip driver presence check (regardless of CSIDriver presence)", EBS_ONE, [], 0, [EBS], "no-csi-driver",
         extra_claims=(_csi_driver(EBS, True),), go_test="TestVolumeLimitScalingGate"),
]


def _run_filter(new_pod: dict[str, Any], existing: list[dict[str, Any]], objects: list[dict[str, Any]]) -> Status | None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE_NAME}, "status": {"allocatable": {}}}
    pods = [{**p, "spec": {**p["spec"], "nodeName": NODE_NAME}} for p in existing]
    sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": SC_NAME}, "provisioner": EBS}
    handle = make_handle([node], pods, [*objects, sc])
    pl = build_plugin(NodeVolumeLimits, None, handle)
    state = CycleState()
    p = Pod(new_pod)
    assert pl.pre_filter(state, p, handle.snapshot().list()) is None
    return pl.filter(state, p, handle.snapshot().get(NODE_NAME))


def test_in_tree_volumes_counted_without_migrated_plugins_annotation() -> None:
    """v1.36 isCSIMigrationOn: a CSINode is enough; the migrated-plugins annotation (read by
    v1.34 for Portworx, and by kubesched for all five) is not consulted."""
    cn = _unannotated(csi_node("csinode", 2, [AWS_IN_TREE, EBS]))  # type: ignore[arg-type]
    objects = [*fake_pvs([AWS_IN_TREE, EBS]), *fake_pvcs([AWS_IN_TREE, EBS]), cn]
    assert _run_filter(IN_TREE_ONE, [IN_TREE_TWO], objects) == EXCEEDED
    assert _run_filter(IN_TREE_INLINE, [IN_TREE_TWO], objects) == EXCEEDED
    px = vol_pod({"portworxVolume": {"volumeID": "px-1"}}, {"portworxVolume": {"volumeID": "px-2"}}, name="px")
    px_new = vol_pod({"portworxVolume": {"volumeID": "px-3"}}, name="px-new")
    px_node = _unannotated(csi_node("csinode", 2, ["pxd.portworx.com"]))  # type: ignore[arg-type]
    assert _run_filter(px_new, [px], [px_node]) == EXCEEDED
    assert _run_filter(px_new, [], [px_node]) is None


def test_volume_attachments_add_to_existing_pods_volumes() -> None:
    """csi.go Filter: a VolumeAttachment counts unless an existing pod's volume is the same one
    (``attacher/volumeHandle``); it adds to the pods' volumes, not max(pods, attachments)."""
    objects = [*fake_pvs([EBS]), *fake_pvcs([EBS]), csi_node("csinode", 3, [EBS])]
    # pods: csi-...-1, csi-...-2; attachment: csi-...-0 -> 3 in use, the new csi-...-3 exceeds 3
    assert _run_filter(RUNNING, [EBS_TWO], [*objects, _va_of("csi-ebs.csi.aws.com-0")]) == EXCEEDED
    # attachments of the pods' own volumes are not counted twice
    assert _run_filter(RUNNING, [EBS_TWO], [*objects, _va_of("csi-ebs.csi.aws.com-1"), _va_of("csi-ebs.csi.aws.com-2")]) is None


def test_volume_attachments_without_a_csi_pv_do_not_count() -> None:
    """getNodeVolumeAttachmentInfo skips a VolumeAttachment whose PV is missing or not CSI."""
    objects = [*fake_pvs([EBS, AWS_IN_TREE]), *fake_pvcs([EBS]), csi_node("csinode", 1, [EBS])]
    assert _run_filter(EBS_ONE, [], [*objects, _va_of("missing-pv")]) is None
    assert _run_filter(EBS_ONE, [], [*objects, _va_of("csi-kubernetes.io/aws-ebs-0")]) is None
    assert _run_filter(EBS_ONE, [], [*objects, _va_of("csi-ebs.csi.aws.com-1")]) == EXCEEDED


@pytest.mark.parametrize("new_pod,existing,max_vols,drivers,limit_source,want,want_pre,extra_claims,va_count", CASES)
def test_csi_limits(
    new_pod: dict[str, Any],
    existing: list[dict[str, Any]],
    max_vols: int,
    drivers: list[str],
    limit_source: str,
    want: Status | None,
    want_pre: Status | None,
    extra_claims: list[dict[str, Any]],
    va_count: int,
) -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE_NAME}, "status": {"allocatable": {}}}
    pods = [{**p, "spec": {**p["spec"], "nodeName": NODE_NAME}} for p in existing]
    objects: list[dict[str, Any]] = [*fake_pvs(drivers), *fake_pvcs(drivers), *extra_claims]
    objects.append({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": SC_NAME}, "provisioner": drivers[0]})
    objects.extend(fake_vas(va_count, drivers))
    cn = csi_node(limit_source, max_vols, drivers)
    if cn is not None:
        objects.append(cn)
    handle = make_handle([node], pods, objects)
    pl = build_plugin(NodeVolumeLimits, None, handle)
    state = CycleState()
    p = Pod(new_pod)
    got_pre = pl.pre_filter(state, p, handle.snapshot().list())
    assert (got_pre or Status()) == (want_pre or Status())
    if got_pre is not None and got_pre.is_skip():
        return
    got = pl.filter(state, p, handle.snapshot().get(NODE_NAME))
    assert (got or Status()) == (want or Status())
    if got is not None:
        assert got.code == want.code


# queueing hints ----------------------------------------------------------------------------------

Q, S = QueueingHint.QUEUE, QueueingHint.SKIP
POD_EBS = Pod(pvc_pod("csi-ebs.csi.aws.com-2"))


@pytest.mark.parametrize(
    "deleted,scheduled,want",
    [
        pytest.param(pvc_pod("placeholder"), True, Q, id="TestCSILimitsQHint/return a Queue when a deleted pod has a PVC"),
        pytest.param(vol_pod({"awsElasticBlockStore": {}}), True, Q, id="TestCSILimitsQHint/return a Queue when a deleted pod has a inline migratable volume"),
        pytest.param(make_pod().name("empty").obj(), True, S, id="TestCSILimitsQHint/return a QueueSkip when a deleted pod doesn't have any volume"),
        pytest.param(pvc_pod("csi-ebs.csi.aws.com-0"), False, S, id="TestCSILimitsQHint/return a QueueSkip when a deleted pod is not scheduled."),
    ],
)
def test_hint_pod_deleted(deleted: dict[str, Any], scheduled: bool, want: QueueingHint) -> None:
    if scheduled:
        deleted = {**deleted, "spec": {**deleted["spec"], "nodeName": NODE_NAME}}
    assert NodeVolumeLimits.is_schedulable_after_pod_deleted(POD_EBS, deleted, None) is want


def _claim(name: str, ns: str, volume: str = "") -> dict[str, Any]:
    spec = {"volumeName": volume} if volume else {}
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": ns}, "spec": spec}


@pytest.mark.parametrize(
    "pod,pvc,want",
    [
        pytest.param(make_pod().name("p").namespace("ns1").pod(), _claim("pvc", "ns2"), S, id="TestCSILimitsAddedPVCQHint/a pod isn't in the same namespace as an added PVC"),
        pytest.param(make_pod().name("p").namespace("ns1").pvc("pvc1").pod(), _claim("pvc1", "ns1"), Q, id="TestCSILimitsAddedPVCQHint/a pod is in the same namespace as an added PVC"),
        pytest.param(
            make_pod().name("pod1").namespace("ns1").volume({"name": "ephemeral", "ephemeral": {}}).pod(), _claim("pod1-ephemeral", "ns1"), Q,
            id="TestCSILimitsAddedPVCQHint/a pod has an ephemeral volume related to an added PVC",
        ),
        pytest.param(make_pod().name("p").namespace("ns1").pvc("pvc1").pod(), _claim("pvc2", "ns1"), S, id="TestCSILimitsAddedPVCQHint/a pod doesn't have the same PVC as an added PVC"),
        pytest.param(make_pod().name("p").namespace("ns1").pod(), _claim("pvc2", "ns1"), S, id="TestCSILimitsAddedPVCQHint/a pod doesn't have any PVC attached"),
    ],
)
def test_hint_pvc_added(pod: Pod, pvc: dict[str, Any], want: QueueingHint) -> None:
    assert NodeVolumeLimits.is_schedulable_after_pvc_added(pod, None, pvc) is want


def _va(attacher: str, pv: str | None = None, inline_driver: str | None = None) -> dict[str, Any]:
    source: dict[str, Any] = {}
    if pv:
        source["persistentVolumeName"] = pv
    if inline_driver:
        source["inlineVolumeSpec"] = {"csi": {"driver": inline_driver}}
    return {"metadata": {"name": "volumeattachment1"}, "spec": {"nodeName": "fake-node", "attacher": attacher, "source": source}}


_PVC1 = make_pod().name("p").namespace("ns1").pvc("pvc1")
_EBS_INLINE = {"name": "e", "awsElasticBlockStore": {"volumeID": "test"}}
_GCE_INLINE = {"name": "g", "gcePersistentDisk": {"pdName": "test"}}


@pytest.mark.parametrize(
    "pod,existing_pvc,va,want",
    [
        pytest.param(_PVC1.pod(), _claim("pvc1", "ns1", "pv1"), _va("test.storage.gke.io", pv="pv1"), Q,
                     id="TestCSILimitsDeletedVolumeAttachmentQHint/a pod has PVC when VolumeAttachment is deleting"),
        pytest.param(make_pod().name("p").namespace("ns1").volume(_EBS_INLINE).pod(), None, _va(EBS, inline_driver=EBS), Q,
                     id="TestCSILimitsDeletedVolumeAttachmentQHint/a pod has an Inline Migratable volume (AWSEBSDriver) when VolumeAttachment (AWSEBSDriver) is deleting (match)"),
        pytest.param(make_pod().name("p").namespace("ns1").volume(_GCE_INLINE).pod(), None, _va(EBS, inline_driver=EBS), S,
                     id="TestCSILimitsDeletedVolumeAttachmentQHint/a pod has an Inline Migratable volume (GCEPDDriver) when VolumeAttachment (AWSEBSDriver) is deleting (no match)"),
        pytest.param(make_pod().name("p").namespace("ns1").volume(_EBS_INLINE).pvc("pvc1").pod(), _claim("pvc1", "ns1", "pv1"), _va(EBS, inline_driver=EBS), Q,
                     id="TestCSILimitsDeletedVolumeAttachmentQHint/a pod has an Inline Migratable volume (AWSEBSDriver) and PVC when VolumeAttachment (AWSEBSDriver) is deleting"),
        pytest.param(make_pod().name("p").namespace("ns1").volume(_EBS_INLINE).pvc("pvc1").pod(), _claim("pvc1", "ns1", "pv1"), _va("test.storage.gke.io", pv="pv1"), Q,
                     id="TestCSILimitsDeletedVolumeAttachmentQHint/a pod has an Inline Migratable volume (AWSEBSDriver) and PVC when VolumeAttachment (AWSEBSDriver)  is deleting"),
        pytest.param(make_pod().name("p").namespace("ns1").pod(), None, _va("test.storage.gke.io", pv="pv1"), S,
                     id="TestCSILimitsDeletedVolumeAttachmentQHint/a pod has no PVC when VolumeAttachment is deleting"),
    ],
)
def test_hint_volume_attachment_deleted(pod: Pod, existing_pvc: dict[str, Any] | None, va: dict[str, Any], want: QueueingHint) -> None:
    pl = build_plugin(NodeVolumeLimits, None, make_handle([], [], [existing_pvc] if existing_pvc else []))
    assert pl.is_schedulable_after_volume_attachment_deleted(pod, va, None) is want


def test_events_to_register() -> None:
    pl = build_plugin(NodeVolumeLimits, None, make_handle())
    got = [(e.event.resource, e.event.action, e.hint is not None) for e in pl.events_to_register()]
    assert got == [
        ("CSINode", ActionType.ADD, False),
        ("Pod", ActionType.DELETE, True),
        ("PersistentVolumeClaim", ActionType.ADD, True),
        ("VolumeAttachment", ActionType.DELETE, True),
    ]


@pytest.mark.parametrize(
    "csinode",
    [pytest.param(None, id="no CSINode"), pytest.param(csi_node("csinode-with-no-limit", 0, [EBS]), id="CSINode without a count")],
)
def test_node_allocatable_attachable_volumes_are_not_a_limit(csinode: dict[str, Any] | None) -> None:
    """v1.36.3 csi.go Filter reads its limits from getVolumeLimits(csiNode) alone (CSINode
    spec.drivers[].allocatable.count, keyed by driver name): a node allocatable
    attachable-volumes-csi-<driver> of 1 does not stop a second volume of that driver
    (kubesched read it as a limit before)."""
    node = {
        "apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE_NAME},
        "status": {"allocatable": {"attachable-volumes-csi-ebs.csi.aws.com": "1", "attachable-volumes-aws-ebs": "1"}},
    }
    extra = [csinode] if csinode is not None else []
    handle = make_handle([node], [{**RUNNING, "spec": {**RUNNING["spec"], "nodeName": NODE_NAME}}], [*fake_pvs([EBS]), *fake_pvcs([EBS]), *extra])
    pl = build_plugin(NodeVolumeLimits, None, handle)
    state = CycleState()
    p = Pod(EBS_ONE)
    assert pl.pre_filter(state, p, []) is None
    assert pl.filter(state, p, handle.snapshot().get(NODE_NAME)) is None
