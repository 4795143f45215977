"""``kubesched snapshot``: what is read, what is kept of each object, and its setup errors."""

from __future__ import annotations

import copy
import socket
from pathlib import Path

import yaml
from click.testing import CliRunner

from kubesched.runtime.cli import main
from kubesched.runtime.sim.snapshot import snapshot_kinds, strip_node, strip_object, strip_pod

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

MANAGED = [{"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": "2026-11-24T10:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {}}}]

# as the API server lists it (items carry no kind/apiVersion)
NODE = {
    "metadata": {
        "name": "worker-1",
        "uid": "5b1c7c5e-0000-4000-8000-000000000001",
        "resourceVersion": "81723",
        "creationTimestamp": "2026-11-24T09:00:00Z",
        "labels": {"kubernetes.io/hostname": "worker-1", "topology.kubernetes.io/zone": "z1"},
        "annotations": {"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
        "managedFields": MANAGED,
    },
    "spec": {"podCIDR": "10.244.1.0/24", "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]},
    "status": {
        "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"},
        "allocatable": {"cpu": "7800m", "memory": "31Gi", "pods": "110", "ephemeral-storage": "90Gi"},
        "conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": "2026-11-24T10:00:00Z", "reason": "KubeletReady"}],
        "addresses": [{"type": "InternalIP", "address": "10.0.0.11"}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {"kubeletVersion": "v1.36.3", "machineID": "abc", "osImage": "Debian"},
        "images": [{"names": ["registry.k8s.io/pause:3.10"], "sizeBytes": 320368}],
        "declaredFeatures": ["InPlacePodVerticalScaling"],
        "volumesAttached": [{"name": "kubernetes.io/csi/x", "devicePath": ""}],
    },
}

POD = {
    "metadata": {
        "name": "web-0",
        "namespace": "shop",
        "uid": "9f0b0a43-0000-4000-8000-000000000002",
        "resourceVersion": "81800",
        "generation": 1,
        "selfLink": "/api/v1/namespaces/shop/pods/web-0",
        "creationTimestamp": "2026-11-24T09:30:00Z",
        "labels": {"app": "web"},
        "annotations": {LAST_APPLIED: '{"apiVersion":"v1","kind":"Pod"}', "team": "shop"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": "u-sts", "controller": True}],
        "managedFields": MANAGED,
    },
    "spec": {
        "nodeName": "worker-1",
        "schedulerName": "default-scheduler",
        "priority": 0,
        "containers": [{"name": "app", "image": "nginx", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}],
    },
    "status": {
        "phase": "Running",
        "hostIP": "10.0.0.11",
        "podIP": "10.244.1.7",
        "podIPs": [{"ip": "10.244.1.7"}],
        "qosClass": "Burstable",
        "startTime": "2026-11-24T09:30:02Z",
        "conditions": [
            {"type": "Ready", "status": "True"},
            {"type": "PodScheduled", "status": "True"},
            {"type": "PodResizePending", "status": "True", "reason": "Infeasible"},
        ],
        "containerStatuses": [
            {
                "name": "app",
                "ready": True,
                "restartCount": 0,
                "image": "nginx:1.27",
                "imageID": "docker.io/library/nginx@sha256:...",
                "containerID": "containerd://abc",
                "state": {"running": {"startedAt": "2026-11-24T09:30:03Z"}},
                "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},
                "allocatedResources": {"cpu": "500m", "memory": "1Gi"},
            }
        ],
        "initContainerStatuses": [{"name": "init", "ready": True, "restartCount": 0, "state": {"terminated": {"exitCode": 0}}}],
    },
}


def test_a_node_keeps_what_the_scheduler_reads() -> None:
    before = copy.deepcopy(NODE)
    assert strip_node(NODE) == {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": "worker-1",
            "uid": "5b1c7c5e-0000-4000-8000-000000000001",
            "creationTimestamp": "2026-11-24T09:00:00Z",
            "labels": {"kubernetes.io/hostname": "worker-1", "topology.kubernetes.io/zone": "z1"},
            "annotations": {"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
        },
        "spec": {"podCIDR": "10.244.1.0/24", "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]},
        "status": {
            "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"},
            "allocatable": {"cpu": "7800m", "memory": "31Gi", "pods": "110", "ephemeral-storage": "90Gi"},
            "conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": "2026-11-24T10:00:00Z", "reason": "KubeletReady"}],
            "images": [{"names": ["registry.k8s.io/pause:3.10"], "sizeBytes": 320368}],
            "declaredFeatures": ["InPlacePodVerticalScaling"],
        },
    }
    assert NODE == before  # the listed object is not changed


def test_a_running_pod_keeps_its_uid_creation_time_and_what_the_scheduler_reads() -> None:
    assert strip_pod(POD) == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web-0",
            "namespace": "shop",
            "uid": "9f0b0a43-0000-4000-8000-000000000002",
            "creationTimestamp": "2026-11-24T09:30:00Z",
            "labels": {"app": "web"},
            "annotations": {"team": "shop"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": "u-sts", "controller": True}],
        },
        "spec": POD["spec"],
        "status": {
            "phase": "Running",
            "startTime": "2026-11-24T09:30:02Z",
            "conditions": [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}],
            "containerStatuses": [
                {"name": "app", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}, "allocatedResources": {"cpu": "500m", "memory": "1Gi"}}
            ],
        },
    }


def test_a_pending_pod_keeps_its_nomination_and_loses_an_emptied_annotations_map() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "uid": "u1", "creationTimestamp": "2026-11-24T10:00:00Z", "annotations": {LAST_APPLIED: "{}"}},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
        "status": {
            "phase": "Pending",
            "nominatedNodeName": "worker-1",
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/3 nodes are available"}],
            "qosClass": "BestEffort",
        },
    }
    assert strip_pod(pod) == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "uid": "u1", "creationTimestamp": "2026-11-24T10:00:00Z"},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
        "status": {"phase": "Pending", "nominatedNodeName": "worker-1"},
    }


def test_a_pod_without_anything_to_keep_in_its_status_has_none() -> None:
    pod = {"metadata": {"name": "p", "namespace": "default"}, "spec": {"containers": []}, "status": {"qosClass": "BestEffort"}}
    assert strip_pod(pod) == {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": {"containers": []}}


def test_terminated_and_deleted_pods_are_left_out() -> None:
    for phase in ("Succeeded", "Failed"):
        assert strip_pod({**POD, "status": {**POD["status"], "phase": phase}}) is None
    assert strip_pod({**POD, "metadata": {**POD["metadata"], "deletionTimestamp": "2026-11-24T10:00:00Z"}}) is None


def test_other_kinds_keep_their_status_and_get_kind_and_api_version() -> None:
    pv = {
        "metadata": {"name": "pv-1", "uid": "u-pv", "resourceVersion": "5", "managedFields": MANAGED, "annotations": {LAST_APPLIED: "{}", "pv.kubernetes.io/bound-by-controller": "yes"}},
        "spec": {"capacity": {"storage": "10Gi"}, "claimRef": {"name": "data", "namespace": "shop", "uid": "u-pvc"}, "storageClassName": "local"},
        "status": {"phase": "Bound"},
    }
    assert strip_object(pv, "v1", "PersistentVolume") == {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "pv-1", "uid": "u-pv", "annotations": {"pv.kubernetes.io/bound-by-controller": "yes"}},
        "spec": {"capacity": {"storage": "10Gi"}, "claimRef": {"name": "data", "namespace": "shop", "uid": "u-pvc"}, "storageClassName": "local"},
        "status": {"phase": "Bound"},
    }
    sc = {"metadata": {"name": "local"}, "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"}
    assert strip_object(sc, "storage.k8s.io/v1", "StorageClass") == {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", **sc}


def test_the_kinds_read_never_include_secrets() -> None:
    assert snapshot_kinds(["PersistentVolumeClaim", "Secret", "Pod", "Namespace", "ConfigMap", "Node"]) == [
        "Node",
        "Pod",
        "PersistentVolumeClaim",
        "Namespace",
        "ConfigMap",  # only because a plugin watches it
    ]
    assert snapshot_kinds([]) == ["Node", "Pod"]


# ---------------------------------------------------------------------------------------------
# setup errors: one line, exit 2


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _kubeconfig(tmp_path: Path, server: str) -> Path:
    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "ctx",
    }
    p = tmp_path / "kubeconfig"
    p.write_text(yaml.safe_dump(cfg))
    return p


def test_cli_unreachable_server_is_one_line_exit_2(tmp_path: Path) -> None:
    port = _closed_port()
    kc = _kubeconfig(tmp_path, f"http://127.0.0.1:{port}")
    r = CliRunner().invoke(main, ["snapshot", "--kubeconfig", str(kc), "-o", str(tmp_path / "w.yaml")])
    assert r.exit_code == 2, r.output
    assert r.stderr == f"kubesched: error: cannot read the cluster: cannot reach the API server at http://127.0.0.1:{port}: connection refused\n"
    assert not (tmp_path / "w.yaml").exists()


def test_cli_unknown_context_is_one_line_exit_2(tmp_path: Path) -> None:
    kc = _kubeconfig(tmp_path, "http://127.0.0.1:1")
    r = CliRunner().invoke(main, ["snapshot", "--kubeconfig", str(kc), "--context", "nope"])
    assert r.exit_code == 2, r.output
    assert r.stderr == f"kubesched: error: kubeconfig {kc}: Invalid kube-config file. Expected object with name nope in {kc}/contexts list\n"


def test_cli_missing_kubeconfig_is_one_line_exit_2(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["snapshot", "--kubeconfig", str(tmp_path / "nope")])
    assert r.exit_code == 2, r.output
    assert r.stderr == f"kubesched: error: kubeconfig {tmp_path}/nope: no such file\n"
