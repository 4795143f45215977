"""Which URL serves a kind: the built-in table and API discovery for the rest."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...kinds import CLUSTER_SCOPED_KINDS, RESOURCE_API_VERSION, RESOURCE_KINDS
from .errors import ApiError

if TYPE_CHECKING:
    from .api import KubeClient

__all__ = ["BUILTIN_RESOURCES", "CLUSTER_SCOPED_KINDS", "Discovery", "api_path", "group_path"]

_BUILTIN: dict[str, tuple[str, str]] = {
    "Pod": ("v1", "pods"),
    "Node": ("v1", "nodes"),
    "Namespace": ("v1", "namespaces"),
    "PersistentVolume": ("v1", "persistentvolumes"),
    "PersistentVolumeClaim": ("v1", "persistentvolumeclaims"),
    "Service": ("v1", "services"),
    "ReplicationController": ("v1", "replicationcontrollers"),
    "Event": ("events.k8s.io/v1", "events"),
    "ReplicaSet": ("apps/v1", "replicasets"),
    "StatefulSet": ("apps/v1", "statefulsets"),
    "Deployment": ("apps/v1", "deployments"),
    "StorageClass": ("storage.k8s.io/v1", "storageclasses"),
    "CSINode": ("storage.k8s.io/v1", "csinodes"),
    "CSIDriver": ("storage.k8s.io/v1", "csidrivers"),
    "CSIStorageCapacity": ("storage.k8s.io/v1", "csistoragecapacities"),
    "VolumeAttachment": ("storage.k8s.io/v1", "volumeattachments"),
    "PodDisruptionBudget": ("policy/v1", "poddisruptionbudgets"),
    "PriorityClass": ("scheduling.k8s.io/v1", "priorityclasses"),
    "Lease": ("coordination.k8s.io/v1", "leases"),
    **{kind: (RESOURCE_API_VERSION, plural) for kind, plural in RESOURCE_KINDS.items()},
}

#: kind -> (group/version, plural, namespaced) of the kinds served without asking discovery
BUILTIN_RESOURCES: dict[str, tuple[str, str, bool]] = {
    kind: (gv, plural, kind not in CLUSTER_SCOPED_KINDS) for kind, (gv, plural) in _BUILTIN.items()
}


def group_path(gv: str) -> str:
    """``/api/v1`` for the core group, ``/apis/<group>/<version>`` for the others."""
    return f"/api/{gv}" if "/" not in gv else f"/apis/{gv}"


def api_path(gv: str, plural: str, namespaced: bool, namespace: str | None = None, name: str | None = None, sub: str | None = None) -> str:
    p = group_path(gv)
    if namespaced and namespace:
        p += f"/namespaces/{namespace}"
    p += f"/{plural}"
    if name:
        p += f"/{name}"
    if sub:
        p += f"/{sub}"
    return p


class Discovery:
    """(group/version, plural, namespaced) of a kind: the built-in table, else API discovery
    (``/apis`` for the preferred version of every group when ``api_version`` is empty), cached."""

    def __init__(self, client: KubeClient) -> None:
        self.client = client
        self._found: dict[tuple[str, str], tuple[str, str, bool]] = {}

    def resolve(self, api_version: str, kind: str) -> tuple[str, str, bool]:
        """Raises KeyError when no served resource has this kind."""
        builtin = BUILTIN_RESOURCES.get(kind)
        if builtin is not None and (not api_version or api_version == builtin[0]):
            return builtin
        key = (api_version, kind)
        found = self._found.get(key)
        if found is not None:
            return found
        groups = [api_version] if api_version else []
        if not groups:
            try:
                data = self.client.request("GET", "/apis")
            except ApiError:
                data = {}
            for g in data.get("groups") or []:
                pv = (g.get("preferredVersion") or {}).get("groupVersion")
                if pv:
                    groups.append(pv)
        for gv in groups:
            try:
                res = self.client.request("GET", group_path(gv))
            except ApiError:
                continue
            for r in res.get("resources") or []:
                if r.get("kind") == kind and "/" not in r.get("name", ""):
                    out = (gv, r["name"], bool(r.get("namespaced")))
                    self._found[key] = out
                    return out
        raise KeyError(f"{api_version} {kind}".strip())
