"""Helpers for e2e tests: Nodes without kubelets, Pods, waiting.

``api`` arguments accept a ``kubernetes.client.ApiClient`` or a ``CoreV1Api``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from kubernetes import client

T = TypeVar("T")

PAUSE_IMAGE = "registry.k8s.io/pause:3.10"


def core_v1(api: Any) -> client.CoreV1Api:
    if isinstance(api, client.CoreV1Api):
        return api
    if isinstance(api, client.ApiClient):
        return client.CoreV1Api(api)
    raise TypeError(f"expected ApiClient or CoreV1Api, got {type(api).__name__}")


def unique_name(prefix: str = "e2e") -> str:
    """``<prefix>-<8 hex>``: objects and namespaces are never reused across tests (no namespace
    controller runs, so a deleted namespace stays Terminating)."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _taint(t: Any) -> Any:
    if isinstance(t, Mapping):
        return {"effect": "NoSchedule", **t}
    return t


def make_node(
    api: Any,
    name: str,
    cpu: str = "4",
    memory: str = "16Gi",
    pods: str = "110",
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Mapping[str, str] | client.V1Taint] | None = None,
    *,
    extra_resources: Mapping[str, str] | None = None,
    unschedulable: bool = False,
) -> client.V1Node:
    """Create a Node (no kubelet behind it) and give it status: capacity = allocatable =
    ``cpu``/``memory``/``pods`` (+ ``extra_resources``), a Ready=True condition and an
    InternalIP. Status is dropped on create, so it is set with a patch of the ``status``
    subresource. ``taints`` are dicts (``key``, ``value``, ``effect`` defaulting to
    NoSchedule) or V1Taint. Returns the Node as the apiserver has it after the status patch."""
    v1 = core_v1(api)
    all_labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}
    all_labels.update(labels or {})
    body: Any = {  # dicts are accepted as bodies; Any keeps the typed client quiet
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": all_labels},
        "spec": {"unschedulable": unschedulable},
    }
    if taints:
        body["spec"]["taints"] = [_taint(t) for t in taints]
    v1.create_node(body)
    resources = {"cpu": cpu, "memory": memory, "pods": pods, **(extra_resources or {})}
    now = _now()
    status = {
        "status": {
            "capacity": resources,
            "allocatable": resources,
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "message": "kubesched e2e fake node",
                    "lastHeartbeatTime": now,
                    "lastTransitionTime": now,
                }
            ],
            "addresses": [
                {"type": "InternalIP", "address": "10.1.0.1"},
                {"type": "Hostname", "address": name},
            ],
        }
    }
    return v1.patch_node_status(name, status)


def make_pod(
    api: Any,
    name: str,
    namespace: str = "default",
    cpu: str | None = "100m",
    memory: str | None = "128Mi",
    labels: Mapping[str, str] | None = None,
    *,
    node_selector: Mapping[str, str] | None = None,
    tolerations: Sequence[Mapping[str, Any]] | None = None,
    affinity: Mapping[str, Any] | None = None,
    scheduler_name: str | None = None,
    node_name: str | None = None,
    priority: int | None = None,
    annotations: Mapping[str, str] | None = None,
    image: str = PAUSE_IMAGE,
    spec_overrides: Mapping[str, Any] | None = None,
) -> client.V1Pod:
    """Create a one-container Pod requesting ``cpu``/``memory`` (None: no request) and return
    it. ``node_name`` binds it directly (bypassing the scheduler); ``spec_overrides`` are merged
    into the spec last."""
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    container: dict[str, Any] = {"name": "main", "image": image}
    if requests:
        container["resources"] = {"requests": requests}
    spec: dict[str, Any] = {"containers": [container], "terminationGracePeriodSeconds": 0}
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    if tolerations:
        spec["tolerations"] = [dict(t) for t in tolerations]
    if affinity:
        spec["affinity"] = dict(affinity)
    if scheduler_name:
        spec["schedulerName"] = scheduler_name
    if node_name:
        spec["nodeName"] = node_name
    if priority is not None:
        spec["priority"] = priority
    spec.update(spec_overrides or {})
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        metadata["labels"] = dict(labels)
    if annotations:
        metadata["annotations"] = dict(annotations)
    body: Any = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}
    return core_v1(api).create_namespaced_pod(namespace, body)


def make_namespace(api: Any, prefix: str = "e2e") -> str:
    """Create a fresh namespace and return its name."""
    name = unique_name(prefix)
    ns: Any = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    core_v1(api).create_namespace(ns)
    return name


def wait_for(
    predicate: Callable[[], T],
    timeout: float = 30.0,
    interval: float = 0.2,
    message: str | None = None,
) -> T:
    """Call ``predicate`` until it returns something truthy and return that. Exceptions count as
    "not yet". On timeout raise TimeoutError naming ``message`` and the last result/exception."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        try:
            result = predicate()
            if result:
                return result
            last = result
        except Exception as e:
            last = e
        if time.monotonic() >= deadline:
            what = message or getattr(predicate, "__name__", "condition")
            raise TimeoutError(f"timed out after {timeout}s waiting for {what}; last: {last!r}")
        time.sleep(interval)
