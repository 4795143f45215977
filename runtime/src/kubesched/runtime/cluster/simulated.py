"""The embedded simulated cluster: ordinary multi-document Kubernetes YAML, in memory.

* Nodes, Pods and any other objects (kept for plugins that read them, e.g. PVCs, PodGroups).
* Pods with ``spec.nodeName`` count as running; pods of other ``schedulerName``s are not
  scheduled, but their resources count once they have a node.
* Pods without ``metadata.creationTimestamp`` are created in file order, one after another, each
  seeing the placements before it, as if applied with kubectl to a live cluster. Pods with a
  creation time are pending from the start.

Time is virtual: it moves only when the scheduler waits (backoff, Permit), so runs are quick
and reproducible with ``--seed``.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from kubesched.sdk import InvalidObjectError, Node, ObjectConflict, ObjectNotFound, Pod

from ..kinds import CLUSTER_SCOPED_KINDS
from ..objectstore import ObjectStore
from ..timefmt import rfc3339

_BASE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MAP, _SEQ, _STR = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:str"
_SPECIAL_KEYS = frozenset({"tag:yaml.org,2002:merge", "tag:yaml.org,2002:value"})
_PLAIN_SCALARS = frozenset({"tag:yaml.org,2002:null", "tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:timestamp"})


class _Fallback(Exception):
    """The document has something the direct construction leaves to PyYAML's own."""


class _Loader(_BASE_LOADER):  # type: ignore[misc]
    """PyYAML's (C) safe loader, building each document directly: strings, maps and lists in
    one recursive pass, the resolved tag of each plain scalar looked up once per distinct
    value. The result is what ``SafeLoader`` builds (aliases give the same object); a document
    with anything else (merge keys, explicit tags, an unhashable key, a constructor error) is
    built again by PyYAML's own constructor, so what it accepts and its errors are unchanged."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._tags: dict[str, str] = {}

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if self.yaml_path_resolvers:  # none in the safe loader (Resolver.resolve's other branch)
            return super().resolve(kind, value, implicit)
        if kind is yaml.ScalarNode:
            if not implicit[0]:
                return _STR
            tag = self._tags.get(value)
            if tag is None:
                tag = self._tags[value] = super().resolve(kind, value, implicit)
            return tag
        return _SEQ if kind is yaml.SequenceNode else _MAP

    def construct_document(self, node: Any) -> Any:
        try:
            data = self._build(node, {})
        except Exception:
            self.constructed_objects, self.recursive_objects, self.state_generators = {}, {}, []  # type: ignore[var-annotated]
            return super().construct_document(node)
        return data

    def _build(self, node: Any, memo: dict[Any, Any]) -> Any:
        tag = node.tag
        if tag == _STR and type(node) is yaml.ScalarNode:
            return node.value
        got = memo.get(node)
        if got is not None:
            return got
        build = self._build
        if tag == _MAP and type(node) is yaml.MappingNode:
            d: dict[Any, Any] = {}
            memo[node] = d
            for k, v in node.value:
                if k.tag in _SPECIAL_KEYS:
                    raise _Fallback
                key = build(k, memo)
                if type(key) is not str and not isinstance(key, Hashable):
                    raise _Fallback
                d[key] = build(v, memo)
            return d
        if tag == _SEQ and type(node) is yaml.SequenceNode:
            seq: list[Any] = []
            memo[node] = seq
            seq.extend([build(v, memo) for v in node.value])
            return seq
        if tag in _PLAIN_SCALARS and type(node) is yaml.ScalarNode:
            return self.yaml_constructors[tag](self, node)
        raise _Fallback

__all__ = ["ManifestError", "RecordedEvent", "SimulatedCluster", "apply_defaults", "load_manifests"]

# kinds of the built-in API groups, to catch typos such as "kind: Nod"
_BUILTIN_KINDS: dict[str, set[str]] = {
    "v1": {
        "Pod", "Node", "Namespace", "PersistentVolume", "PersistentVolumeClaim", "Service",
        "ReplicationController", "ConfigMap", "Secret", "ServiceAccount", "Endpoints", "Event",
        "LimitRange", "ResourceQuota", "List",
    },
    "apps/v1": {"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "ControllerRevision"},
    "storage.k8s.io/v1": {"StorageClass", "CSINode", "CSIDriver", "CSIStorageCapacity", "VolumeAttachment"},
    "policy/v1": {"PodDisruptionBudget"},
    "scheduling.k8s.io/v1": {"PriorityClass"},
    "batch/v1": {"Job", "CronJob"},
}


class ManifestError(ValueError):
    """A bad manifest: ``str(e)`` is one line naming the file, the object and the field."""


def _where(source: str, index: int, obj: Mapping[str, Any] | None) -> str:
    if isinstance(obj, Mapping):
        kind = obj.get("kind") or "<no kind>"
        name = (obj.get("metadata") or {}).get("name") if isinstance(obj.get("metadata"), Mapping) else None
        ns = (obj.get("metadata") or {}).get("namespace") if isinstance(obj.get("metadata"), Mapping) else None
        ident = f"{ns}/{name}" if ns and name else (name or "<no name>")
        return f"{source}: document {index + 1} ({kind} {ident})"
    return f"{source}: document {index + 1}"


def load_manifests(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read a multi-document YAML file of Kubernetes objects (``kind: List`` is flattened).

    Raises ManifestError for malformed YAML, documents that are not objects, missing kind or
    apiVersion, unknown built-in kinds, missing names, duplicates, and invalid Nodes
    (quantities, taints). Pods are parsed later: a bad pod is reported as Error, not fatal.
    """
    source = os.fspath(path)
    try:
        with open(source, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ManifestError(f"{source}: {e.strerror or e}") from None
    try:
        docs = list(yaml.load_all(text, Loader=_Loader))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ManifestError(f"{source}{where}: malformed YAML: {problem}") from None
    out: list[dict[str, Any]] = []
    seen: dict[tuple[str, str, str, str], int] = {}
    flat: list[tuple[int, Any]] = []
    for i, d in enumerate(docs):
        if d is None:
            continue
        if isinstance(d, Mapping) and d.get("kind") == "List":
            for item in d.get("items") or []:
                flat.append((i, item))
        else:
            flat.append((i, d))
    for i, d in flat:
        where = _where(source, i, d if isinstance(d, Mapping) else None)
        if not isinstance(d, Mapping):
            raise ManifestError(f"{where}: expected a Kubernetes object (a mapping), got {type(d).__name__}")
        api_version = d.get("apiVersion")
        kind = d.get("kind")
        if not kind or not isinstance(kind, str):
            raise ManifestError(f"{where}: kind: Required value")
        if not api_version or not isinstance(api_version, str):
            raise ManifestError(f"{where}: apiVersion: Required value")
        known = _BUILTIN_KINDS.get(api_version)
        if known is not None and kind not in known:
            import difflib

            close = difflib.get_close_matches(kind, sorted(known), n=1)
            hint = f'; did you mean "{close[0]}"?' if close else ""
            raise ManifestError(f'{where}: kind: unknown kind "{kind}" in {api_version}{hint}')
        md = d.get("metadata")
        if not isinstance(md, Mapping) or not md.get("name"):
            raise ManifestError(f"{where}: metadata.name: Required value")
        obj = dict(d)
        if kind == "Node":
            try:
                Node(obj).validate()
            except InvalidObjectError as e:
                raise ManifestError(f"{where}: {e}") from None
        ns = "" if kind in CLUSTER_SCOPED_KINDS else str(md.get("namespace") or "default")
        key = (api_version.split("/")[0] if "/" in api_version else "", kind, ns, str(md["name"]))
        if key in seen:
            raise ManifestError(f"{where}: duplicate object: {kind} {ns + '/' if ns else ''}{md['name']} is already defined in document {seen[key] + 1}")
        seen[key] = i
        out.append(apply_defaults(obj))
    return out


def apply_defaults(obj: dict[str, Any]) -> dict[str, Any]:
    """The API server's defaulting of the fields the scheduler's plugins read (what a real
    cluster would have stored), so hand-written YAML behaves as it would after kubectl apply."""
    kind = obj.get("kind")
    if kind == "StorageClass":
        obj.setdefault("volumeBindingMode", "Immediate")
        obj.setdefault("reclaimPolicy", "Delete")
    elif kind in ("PersistentVolumeClaim", "PersistentVolume"):
        spec = obj.get("spec")
        if isinstance(spec, dict):
            spec.setdefault("volumeMode", "Filesystem")
            if kind == "PersistentVolume":
                spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
    elif kind == "Pod":
        spec = obj.get("spec")
        if isinstance(spec, dict):
            spec.setdefault("schedulerName", "default-scheduler")
    return obj


@dataclass
class RecordedEvent:
    regarding: str
    event_type: str
    reason: str
    action: str
    note: str


@dataclass
class SimulatedCluster:
    """In-memory cluster over an ObjectStore; events are delivered synchronously."""

    manifests: list[dict[str, Any]]
    source: str = "<memory>"
    store: ObjectStore = field(default_factory=ObjectStore)
    events: list[RecordedEvent] = field(default_factory=list)
    binds: list[tuple[str, str]] = field(default_factory=list)

    @property
    def objects(self) -> ObjectStore:
        return self.store

    # the Cluster protocol -------------------------------------------------------------------------
    def start(self, sink: Any) -> None:
        self.store.subscribe(sink)

    def stop(self) -> None:
        pass

    def bind(self, pod: Pod, node_name: str) -> None:
        cur = self.store.peek("v1", "Pod", pod.name, pod.namespace)
        if cur is None or (cur.get("metadata") or {}).get("uid") != pod.uid:
            raise ObjectNotFound(f'pods "{pod.name}" not found')
        if (cur.get("spec") or {}).get("nodeName"):
            raise ObjectConflict(f'pod {pod.namespace}/{pod.name} is already assigned to node "{cur["spec"]["nodeName"]}"')
        if self.store.peek("v1", "Node", node_name, None) is None:
            raise ObjectNotFound(f'nodes "{node_name}" not found')
        self.binds.append((pod.key, node_name))
        self.store.apply_patch(
            "v1",
            "Pod",
            pod.name,
            {
                "spec": {"nodeName": node_name},
                # the binding storage clears the nomination (pkg/registry/core/pod/storage/storage.go,
                # ClearingNominatedNodeNameAfterBinding, beta and on since 1.35)
                "status": {"conditions": [{"type": "PodScheduled", "status": "True"}], "phase": "Running", "nominatedNodeName": None},
            },
            pod.namespace,
        )

    def event(self, regarding: Mapping[str, Any], event_type: str, reason: str, action: str, note: str, related: Mapping[str, Any] | None = None) -> None:
        md = regarding.get("metadata") or {}
        ident = f"{md.get('namespace')}/{md.get('name')}" if md.get("namespace") else str(md.get("name"))
        self.events.append(RecordedEvent(f"{regarding.get('kind', 'Pod')} {ident}", event_type, reason, action, note))

    def annotate_pod(self, pod: Pod, annotations: Mapping[str, str]) -> None:
        if self.store.peek("v1", "Pod", pod.name, pod.namespace) is not None:
            self.store.patch("v1", "Pod", pod.name, {"metadata": {"annotations": dict(annotations)}}, pod.namespace)

    def update_pod_condition(self, pod: Pod, condition: Mapping[str, Any], nominated_node_name: str | None) -> None:
        cur = self.store.peek("v1", "Pod", pod.name, pod.namespace)
        if cur is None:
            return
        status: dict[str, Any] = {"conditions": [dict(condition)]}
        if nominated_node_name is not None:
            status["nominatedNodeName"] = nominated_node_name or None  # None: removed
        self.store.patch("v1", "Pod", pod.name, {"status": status}, pod.namespace)

    # driving a run -----------------------------------------------------------------------------------
    def run(self, scheduler: Any) -> None:
        """Apply the manifests and schedule, pod after pod, until nothing more can happen."""
        self.start(scheduler.on_cluster_event)
        later: list[dict[str, Any]] = []
        for obj in self.manifests:
            if obj.get("kind") == "Pod" and not (obj.get("spec") or {}).get("nodeName") and not (obj.get("metadata") or {}).get("creationTimestamp"):
                later.append(obj)
                continue
            self._create(obj, scheduler.clock.now())
        scheduler.run_until_idle()
        for obj in later:
            o = dict(obj)
            md = dict(o.get("metadata") or {})
            md["creationTimestamp"] = rfc3339(scheduler.clock.now())
            o["metadata"] = md
            self._create(o)
            # like `kubectl apply` of a file: the next pod arrives a few milliseconds later,
            # so timers (backoff, Permit waits) do not expire between two pods of the file
            scheduler.run_until_idle(advance_time=False)
            scheduler.clock.advance_to(scheduler.clock.now() + 0.01)
        scheduler.run_until_idle()

    def _create(self, obj: Mapping[str, Any], now: float | None = None) -> None:
        md = obj.get("metadata") or {}
        if not md.get("creationTimestamp") and now is not None:
            obj = {**obj, "metadata": {**md, "creationTimestamp": rfc3339(now)}}
        self.store.create(obj)

    def pods(self) -> Iterable[dict[str, Any]]:
        return self.store.list("v1", "Pod")

