"""A live cluster as a workload file (``kubesched snapshot``, docs/importers.md).

Read-only: one paged ``list`` per kind. What is read: Nodes, Pods and every kind the configured
plugins watch (``required_kinds``); never Secrets, and ConfigMaps only when a plugin watches them.
What is written: the objects as the scheduler reads them, without the noise:

* every object: ``metadata.managedFields``, ``resourceVersion``, ``generation``, ``selfLink`` and
  the ``kubectl.kubernetes.io/last-applied-configuration`` annotation are dropped (``uid`` and
  ``creationTimestamp`` are kept: a PV's ``claimRef`` names its claim's uid, and a pending pod
  with a creation time is pending from the start of a simulation);
* a Node's status keeps ``capacity``, ``allocatable``, ``conditions``, ``images`` (ImageLocality)
  and ``declaredFeatures`` (NodeDeclaredFeatures);
* a Pod's status keeps what the scheduler reads: ``phase``, ``nominatedNodeName``, ``startTime``
  (preemption's victim order), the ``PodResizePending`` condition and the resources of an
  in-place resize (``resources``, ``allocatedResources``, and each container status's
  ``name``/``resources``/``allocatedResources``);
* terminated pods (Succeeded, Failed) and pods being deleted are left out.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..cluster.kubernetes import KubeClient

__all__ = [
    "LAST_APPLIED",
    "NEVER_READ",
    "NODE_STATUS",
    "SnapshotError",
    "read_cluster",
    "snapshot_kinds",
    "strip_node",
    "strip_object",
    "strip_pod",
]

#: kinds a snapshot never lists, whatever a plugin watches
NEVER_READ = frozenset({"Secret"})
#: the annotation ``kubectl apply`` keeps a whole copy of the object in
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
_METADATA_NOISE = ("managedFields", "resourceVersion", "generation", "selfLink")
#: the parts of a Node's status the scheduler's plugins read
NODE_STATUS = ("capacity", "allocatable", "conditions", "images", "declaredFeatures")
_POD_STATUS = ("phase", "nominatedNodeName", "startTime", "resources", "allocatedResources")
#: the pod conditions the scheduler reads (an in-place resize that cannot be done)
_POD_CONDITIONS = ("PodResizePending",)
_CONTAINER_STATUS = ("name", "resources", "allocatedResources")
#: how long a failing server is tried again before the snapshot gives up (as ``explain``)
FAIL_AFTER = 3.0


class SnapshotError(Exception):
    """The cluster could not be read: one line naming the server and what is wrong."""


def snapshot_kinds(watched: Iterable[str]) -> list[str]:
    """The kinds to read: Nodes, Pods, and the watched kinds (in their order) but Secrets."""
    out = ["Node", "Pod"]
    for k in watched:
        if k not in out and k not in NEVER_READ:
            out.append(k)
    return out


def _strip_metadata(md: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in md.items() if k not in _METADATA_NOISE}
    ann = out.get("annotations")
    if isinstance(ann, Mapping) and LAST_APPLIED in ann:
        ann = {k: v for k, v in ann.items() if k != LAST_APPLIED}
        if ann:
            out["annotations"] = ann
        else:
            del out["annotations"]
    return out


def _base(obj: Mapping[str, Any], api_version: str, kind: str) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": obj.get("apiVersion") or api_version, "kind": obj.get("kind") or kind}
    for k, v in obj.items():
        if k in ("apiVersion", "kind"):
            continue
        out[k] = _strip_metadata(v) if k == "metadata" and isinstance(v, Mapping) else v
    return out


def strip_node(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A Node without the noise: its status reduced to :data:`NODE_STATUS`."""
    out = _base(obj, "v1", "Node")
    st = obj.get("status")
    if isinstance(st, Mapping):
        out["status"] = {k: st[k] for k in NODE_STATUS if st.get(k) is not None}
    return out


def strip_pod(obj: Mapping[str, Any]) -> dict[str, Any] | None:
    """A Pod without the noise (its status reduced to what the scheduler reads), or None for a
    pod a snapshot leaves out: terminated (Succeeded, Failed) or being deleted."""
    md = obj.get("metadata") or {}
    st = obj.get("status")
    st = st if isinstance(st, Mapping) else {}
    if st.get("phase") in ("Succeeded", "Failed") or md.get("deletionTimestamp"):
        return None
    out = _base(obj, "v1", "Pod")
    status = {k: st[k] for k in _POD_STATUS if st.get(k) is not None}
    conditions = [c for c in st.get("conditions") or () if isinstance(c, Mapping) and c.get("type") in _POD_CONDITIONS]
    if conditions:
        status["conditions"] = conditions
    for part in ("initContainerStatuses", "containerStatuses"):
        kept = [
            {k: cs[k] for k in _CONTAINER_STATUS if cs.get(k) is not None}
            for cs in st.get(part) or ()
            if isinstance(cs, Mapping) and (cs.get("resources") is not None or cs.get("allocatedResources") is not None)
        ]
        if kept:
            status[part] = kept
    if status:
        out["status"] = status
    else:
        out.pop("status", None)
    return out


def strip_object(obj: Mapping[str, Any], api_version: str, kind: str) -> dict[str, Any] | None:
    """Any object without the noise (see the module docstring); None when a snapshot leaves it out."""
    if kind == "Pod":
        return strip_pod(obj)
    if kind == "Node":
        return strip_node(obj)
    return _base(obj, api_version, kind)


def _sort_key(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("creationTimestamp") or "")


def _lister(client: KubeClient, path: str, query: dict[str, Any]) -> Callable[[], Any]:
    return lambda: client.request("GET", path, query=query, timeout=60)


def read_cluster(
    client: KubeClient,
    kinds: Iterable[str],
    *,
    page_size: int = 500,
    warn: Callable[[str], None] | None = None,
    fail_after: float = FAIL_AFTER,
) -> list[dict[str, Any]]:
    """List ``kinds`` (:func:`snapshot_kinds`) and return the stripped objects: the cluster-scoped
    kinds first (Namespaces, then in ``kinds`` order, Nodes last of them), then the namespaced
    ones, Pods last in creation order. A kind the server does not serve is skipped (``warn`` is
    told). Raises SnapshotError, in words, when the server cannot be read."""
    from ..cluster.kubernetes.discovery import Discovery, api_path
    from ..cluster.kubernetes.errors import retryable
    from ..cluster.kubernetes.problems import ServerProblems
    from ..cluster.kubernetes.retry import Backoff, retry

    problems = ServerProblems(client)
    discovery = Discovery(client)

    def attempt(kind: str, call: Callable[[], Any]) -> Any:
        """``call()``, tried again for ``fail_after`` seconds while it fails in a way worth it."""
        try:
            return retry(call, Backoff(0.2, 1.0), retry_on=retryable, deadline=time.monotonic() + fail_after)
        except KeyError:
            raise
        except Exception as e:
            raise SnapshotError("cannot read the cluster: " + problems.describe(kind, e)[1]) from None

    cluster_scoped: list[tuple[str, list[dict[str, Any]]]] = []
    namespaced: list[tuple[str, list[dict[str, Any]]]] = []
    for kind in snapshot_kinds(kinds):
        try:
            gv, plural, is_namespaced = attempt(kind, functools.partial(discovery.resolve, "", kind))
        except KeyError:
            if warn is not None:
                warn(f"the API server serves no kind {kind}: left out")
            continue
        path = api_path(gv, plural, False)
        items: list[dict[str, Any]] = []
        cont: str | None = None
        while True:
            q: dict[str, Any] = {"limit": page_size, "continue": cont}
            if kind == "Pod":
                q["fieldSelector"] = "status.phase!=Succeeded,status.phase!=Failed"
            data = attempt(kind, _lister(client, path, q))
            for it in data.get("items") or ():
                o = strip_object(it, gv, kind)
                if o is not None:
                    items.append(o)
            cont = (data.get("metadata") or {}).get("continue")
            if not cont:
                break
        if kind == "Pod":
            items.sort(key=_sort_key)
        (namespaced if is_namespaced else cluster_scoped).append((kind, items))
    cluster_scoped.sort(key=lambda e: (e[0] != "Namespace", e[0] == "Node"))
    namespaced.sort(key=lambda e: e[0] == "Pod")
    return [o for _, items in cluster_scoped + namespaced for o in items]
