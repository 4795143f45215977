"""Helpers for the DRA e2e tests: resource.k8s.io/v1 objects made by hand (DeviceClasses,
ResourceSlices without a driver behind them, ResourceClaims and templates), the test acting as
the resourceclaim controller (no kube-controller-manager runs), and the comparable form of a
claim's status.

The resource.k8s.io objects go through ``CustomObjectsApi`` as plain dicts, so no field of the
1.36 API is lost to the Python client's models.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from helpers import PAUSE_IMAGE
from kubernetes import client

GROUP = "resource.k8s.io"
VERSION = "v1"
API_VERSION = f"{GROUP}/{VERSION}"
#: the annotation the resourceclaim controller puts on a claim made from a template
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
#: the finalizer the scheduler adds before it writes the allocation
DELETE_PROTECTION = "resource.kubernetes.io/delete-protection"


class DraApi:
    """resource.k8s.io/v1 objects as dicts."""

    def __init__(self, api_client: Any) -> None:
        self.custom = client.CustomObjectsApi(api_client)

    # cluster-scoped: DeviceClass, ResourceSlice
    def create_cluster(self, plural: str, body: Mapping[str, Any]) -> dict[str, Any]:
        return self.custom.create_cluster_custom_object(GROUP, VERSION, plural, dict(body))

    def delete_cluster(self, plural: str, name: str) -> None:
        try:
            self.custom.delete_cluster_custom_object(GROUP, VERSION, plural, name)
        except client.ApiException as e:
            if e.status != 404:
                raise

    # namespaced: ResourceClaim, ResourceClaimTemplate
    def create(self, namespace: str, plural: str, body: Mapping[str, Any]) -> dict[str, Any]:
        return self.custom.create_namespaced_custom_object(
            GROUP, VERSION, namespace, plural, dict(body)
        )

    def get(self, namespace: str, plural: str, name: str) -> dict[str, Any]:
        return self.custom.get_namespaced_custom_object(GROUP, VERSION, namespace, plural, name)

    def claims(self, namespace: str) -> list[dict[str, Any]]:
        out = self.custom.list_namespaced_custom_object(GROUP, VERSION, namespace, "resourceclaims")
        return list(out["items"])


# ---------------------------------------------------------------------------------------------
# objects


def device_class(name: str, *expressions: str) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": e}} for e in expressions]},
    }


def attribute(value: Any) -> dict[str, Any]:
    """A v1 DeviceAttribute: bool, int, or string (a ``"v:1.2.3"`` string is a version)."""
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    if isinstance(value, str) and value.startswith("v:"):
        return {"version": value[2:]}
    return {"string": value}


def device(
    name: str, attributes: Mapping[str, Any], capacity: Mapping[str, str] | None = None
) -> dict[str, Any]:
    d: dict[str, Any] = {
        "name": name,
        "attributes": {k: attribute(v) for k, v in attributes.items()},
    }
    if capacity:
        d["capacity"] = {k: {"value": v} for k, v in capacity.items()}
    return d


def node_slice(driver: str, node: str, devices: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The one ResourceSlice of ``node``'s pool (named after the node, as drivers do)."""
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{driver.split('.')[0]}"},
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [dict(d) for d in devices],
        },
    }


def exactly(name: str, device_class_name: str, *selectors: str, count: int = 1) -> dict[str, Any]:
    """A DeviceRequest with an ExactCount request."""
    exact: dict[str, Any] = {
        "deviceClassName": device_class_name,
        "allocationMode": "ExactCount",
        "count": count,
    }
    if selectors:
        exact["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    return {"name": name, "exactly": exact}


def first_available(name: str, *subrequests: tuple[str, str, Sequence[str]]) -> dict[str, Any]:
    """A DeviceRequest with ``firstAvailable`` subrequests ``(name, class, selectors)``."""
    subs = []
    for sub, cls, selectors in subrequests:
        s: dict[str, Any] = {
            "name": sub,
            "deviceClassName": cls,
            "allocationMode": "ExactCount",
            "count": 1,
        }
        if selectors:
            s["selectors"] = [{"cel": {"expression": e}} for e in selectors]
        subs.append(s)
    return {"name": name, "firstAvailable": subs}


def claim_spec(
    requests: Sequence[Mapping[str, Any]], constraints: Sequence[Mapping[str, Any]] = ()
) -> dict[str, Any]:
    devices: dict[str, Any] = {"requests": [dict(r) for r in requests]}
    if constraints:
        devices["constraints"] = [dict(c) for c in constraints]
    return {"devices": devices}


def resource_claim(name: str, spec: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceClaim",
        "metadata": {"name": name},
        "spec": dict(spec),
    }


def claim_template(
    name: str, spec: Mapping[str, Any], labels: Mapping[str, str] | None = None
) -> dict[str, Any]:
    meta: dict[str, Any] = {"labels": dict(labels)} if labels else {}
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name},
        "spec": {"metadata": meta, "spec": dict(spec)},
    }


def claim_pod(
    name: str,
    scheduler: str,
    node_selector: Mapping[str, str],
    *,
    claims: Mapping[str, str] = {},
    templates: Mapping[str, str] = {},
) -> dict[str, Any]:
    """A pod whose container uses pod claims: ``claims`` pod-claim name -> ResourceClaim name,
    ``templates`` pod-claim name -> ResourceClaimTemplate name."""
    pod_claims = [{"name": c, "resourceClaimName": n} for c, n in claims.items()]
    pod_claims += [{"name": c, "resourceClaimTemplateName": t} for c, t in templates.items()]
    container = {
        "name": "main",
        "image": PAUSE_IMAGE,
        "resources": {
            "requests": {"cpu": "100m", "memory": "128Mi"},
            "claims": [{"name": c["name"]} for c in pod_claims],
        },
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": scheduler,
            "nodeSelector": dict(node_selector),
            "terminationGracePeriodSeconds": 0,
            "containers": [container],
            "resourceClaims": pod_claims,
        },
    }


# ---------------------------------------------------------------------------------------------
# the resourceclaim controller's part ($K/pkg/controller/resourceclaim/controller.go handleClaim)


def generate_name(pod: str, pod_claim: str) -> str:
    """``<pod>-<podClaim>-``, both parts cut in proportion when longer than 57 characters."""
    name = f"{pod}-{pod_claim}-"
    max_base = 57
    if len(name) > max_base:
        name = (
            pod[: len(pod) * max_base // len(name)]
            + "-"
            + pod_claim[: len(pod_claim) * max_base // len(name)]
        )
    return name


def instantiate_templates(
    core_v1: client.CoreV1Api, dra: DraApi, namespace: str, pod: Any
) -> dict[str, str]:
    """For each pod claim of ``pod`` (a V1Pod) with a template: create the claim as the
    resourceclaim controller does (generateName, the pod as controlling owner, the
    pod-claim-name annotation, the template's labels, annotations and spec), then write
    ``status.resourceClaimStatuses``. Returns pod-claim name -> claim name."""
    made: dict[str, str] = {}
    for pc in pod.spec.resource_claims or []:
        if not pc.resource_claim_template_name:
            continue
        template = dra.get(namespace, "resourceclaimtemplates", pc.resource_claim_template_name)
        tmeta = template["spec"].get("metadata") or {}
        annotations = {**(tmeta.get("annotations") or {}), POD_CLAIM_NAME_ANNOTATION: pc.name}
        meta: dict[str, Any] = {
            "generateName": generate_name(pod.metadata.name, pc.name),
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": pod.metadata.name,
                    "uid": pod.metadata.uid,
                    "controller": True,
                }
            ],
            "annotations": annotations,
        }
        if tmeta.get("labels"):
            meta["labels"] = tmeta["labels"]
        body = {
            "apiVersion": API_VERSION,
            "kind": "ResourceClaim",
            "metadata": meta,
            "spec": template["spec"]["spec"],
        }
        made[pc.name] = dra.create(namespace, "resourceclaims", body)["metadata"]["name"]
    if made:
        statuses: Any = {
            "status": {
                "resourceClaimStatuses": [
                    {"name": k, "resourceClaimName": v} for k, v in made.items()
                ]
            }
        }
        core_v1.patch_namespaced_pod_status(pod.metadata.name, namespace, statuses)
    return made


# ---------------------------------------------------------------------------------------------
# comparing claims


def _renamed(obj: Any, renames: Mapping[str, str]) -> Any:
    if isinstance(obj, str):
        for old, new in renames.items():
            obj = obj.replace(old, new)
        return obj
    if isinstance(obj, list):
        return [_renamed(x, renames) for x in obj]
    if isinstance(obj, dict):
        return {k: _renamed(v, renames) for k, v in obj.items()}
    return obj


def comparable_claim(
    claim: Mapping[str, Any], pods_by_uid: Mapping[str, str], renames: Mapping[str, str]
) -> dict[str, Any]:
    """What two schedulers must agree on for one claim: the allocation (results without the
    random shareID, config, nodeSelector; allocationTimestamp dropped), reservedFor (pod names
    in order, uids mapped to names) and the finalizers; ``renames`` maps per-run names (node
    and pool prefixes) to stable ones."""
    status = claim.get("status") or {}
    alloc = dict(status.get("allocation") or {})
    alloc.pop("allocationTimestamp", None)
    devices = dict(alloc.get("devices") or {})
    if devices:
        devices["results"] = [
            {k: v for k, v in r.items() if k != "shareID"} for r in devices.get("results") or []
        ]
        alloc["devices"] = devices
    reserved = [
        {
            "resource": r.get("resource"),
            "name": r.get("name"),
            "uid": pods_by_uid.get(r.get("uid", ""), "?" + str(r.get("uid"))),
        }
        for r in status.get("reservedFor") or []
    ]
    return _renamed(
        {
            "allocation": alloc,
            "reservedFor": reserved,
            "finalizers": sorted(claim["metadata"].get("finalizers") or []),
        },
        renames,
    )


def devices_of(comparable: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(request, pool, device) of each allocated device of a :func:`comparable_claim`."""
    results = ((comparable.get("allocation") or {}).get("devices") or {}).get("results") or []
    return [(r["request"], r["pool"], r["device"]) for r in results]
