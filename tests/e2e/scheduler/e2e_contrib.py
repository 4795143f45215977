"""Helpers for the e2e tests of the contrib plugins (StickyNode, Coscheduling): owner objects
and owned pods (no controllers run in the test control plane), pod deletion without a kubelet,
the PodGroup CRD, and a pod watcher that records when each pod was first seen bound."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import yaml
from e2e_sched import GROUP_LABEL, PodWatchThread
from helpers import PAUSE_IMAGE, wait_for
from kubernetes import client

# ---------------------------------------------------------------------------------------------
# owners and owned pods


def make_statefulset(
    kube_client: Any, name: str, namespace: str, labels: Mapping[str, str]
) -> dict[str, Any]:
    """An apps/v1 StatefulSet (nothing reconciles it: no controller runs); returns it as a dict
    (its ``metadata.uid`` is what the pods' ownerReference needs)."""
    body: Any = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "serviceName": name,
            "replicas": 1,
            "selector": {"matchLabels": dict(labels)},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {"containers": [{"name": "main", "image": PAUSE_IMAGE}]},
            },
        },
    }
    sts = client.AppsV1Api(kube_client).create_namespaced_stateful_set(namespace, body)
    return kube_client.sanitize_for_serialization(sts)


def owner_reference(owner: Mapping[str, Any]) -> dict[str, Any]:
    md = owner["metadata"]
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": md["name"],
        "uid": md["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def make_owned_pod(
    core_v1: client.CoreV1Api,
    name: str,
    namespace: str,
    owner: Mapping[str, Any] | None,
    *,
    scheduler_name: str,
    group: str,
    labels: Mapping[str, str] | None = None,
    cpu: str = "100m",
    memory: str = "128Mi",
) -> client.V1Pod:
    """A pod controlled by ``owner`` (an object dict; None: no owner) that selects the nodes of
    ``group``."""
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, "labels": dict(labels or {})}
    if owner is not None:
        metadata["ownerReferences"] = [owner_reference(owner)]
    body: Any = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {
            "schedulerName": scheduler_name,
            "nodeSelector": {GROUP_LABEL: group},
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {
                    "name": "main",
                    "image": PAUSE_IMAGE,
                    "resources": {"requests": {"cpu": cpu, "memory": memory}},
                }
            ],
        },
    }
    return core_v1.create_namespaced_pod(namespace, body)


def delete_pod_and_wait(
    core_v1: client.CoreV1Api, name: str, namespace: str, timeout: float = 30.0
) -> None:
    """Delete a pod at once (grace period 0: there is no kubelet to confirm a graceful
    deletion of a bound pod) and wait until the name is free."""
    try:
        core_v1.delete_namespaced_pod(name, namespace, grace_period_seconds=0)
    except client.ApiException as e:
        if e.status != 404:
            raise

    def gone() -> bool:
        try:
            core_v1.read_namespaced_pod(name, namespace)
        except client.ApiException as e:
            if e.status == 404:
                return True
            raise
        return False

    wait_for(gone, timeout=timeout, message=f"pod {namespace}/{name} to be deleted")


# ---------------------------------------------------------------------------------------------
# the PodGroup CRD


def ensure_podgroup_crd(kube_client: Any, timeout: float = 60.0) -> None:
    """Install the PodGroup CRD shipped with kubesched-coscheduling (idempotent: the control
    plane is shared by the session) and wait until it is Established and served (discovery
    lists ``podgroups``, which is how kubesched resolves the kind)."""
    from kubesched_coscheduling import GROUP, podgroup_crd

    crd = yaml.safe_load(podgroup_crd())
    name = crd["metadata"]["name"]
    ext = client.ApiextensionsV1Api(kube_client)
    try:
        ext.create_custom_resource_definition(crd)
    except client.ApiException as e:
        if e.status != 409:
            raise

    def established() -> bool:
        got = ext.read_custom_resource_definition(name)
        conds = (got.status.conditions if got.status else None) or []
        return any(c.type == "Established" and c.status == "True" for c in conds)

    wait_for(established, timeout=timeout, message=f"CRD {name} to be Established")
    version = crd["spec"]["versions"][0]["name"]

    def served() -> bool:
        res = client.CustomObjectsApi(kube_client).get_api_resources(GROUP, version)
        return any(r.name == "podgroups" for r in res.resources or [])

    wait_for(served, timeout=timeout, message=f"{GROUP}/{version} podgroups in discovery")


def make_pod_group(
    kube_client: Any, name: str, namespace: str, spec: Mapping[str, Any]
) -> dict[str, Any]:
    from kubesched_coscheduling import API_VERSION, GROUP, KIND

    body = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": name, "namespace": namespace},
        "spec": dict(spec),
    }
    version = API_VERSION.split("/", 1)[1]
    created: Any = client.CustomObjectsApi(kube_client).create_namespaced_custom_object(
        GROUP, version, namespace, "podgroups", body
    )
    return dict(created)


# ---------------------------------------------------------------------------------------------
# watching bindings


class BindWatcher(PodWatchThread):
    """Watches the pods of a namespace from a background thread (list, then watch from the
    list's resourceVersion, relisting on errors) and records, for each pod name, the monotonic
    time and node of the first event in which it had ``spec.nodeName``. A binding is permanent,
    so no binding is missed, and the recorded times are those of the watch events."""

    thread_name = "bind-watcher"

    def __init__(self, core_v1: client.CoreV1Api, namespace: str) -> None:
        super().__init__(core_v1, namespace)
        self.bound: dict[str, tuple[float, str]] = {}

    def snapshot(self) -> dict[str, tuple[float, str]]:
        with self._lock:
            return dict(self.bound)

    def on_pod(self, etype: str, pod: Any) -> None:
        node = pod.spec.node_name if pod.spec else None
        if node:
            with self._lock:
                self.bound.setdefault(pod.metadata.name, (time.monotonic(), node))
