"""The embedded simulated cluster: ordinary multi-document Kubernetes YAML, in memory.

* Nodes, Pods and any other objects (kept for plugins that read them, e.g. PVCs, PodGroups).
* Pods with ``spec.nodeName`` count as running; pods of other ``schedulerName``s are not
  scheduled, but their resources count once they have a node.
* Pods without ``metadata.creationTimestamp`` are created in file order, one after another, each
  seeing the placements before it, as if applied with kubectl to a live cluster. Pods with a
  creation time are pending from the start.
* Time annotations (``sim.kubesched.io/arrive-at``, ...) and Deployments, ReplicaSets,
  StatefulSets and Jobs with a pod template make the file a workload replayed over virtual
  time (:mod:`kubesched.runtime.sim.replay`, docs/simulator.md).

Time is virtual: it moves only when the scheduler waits (backoff, Permit), so runs are quick
and reproducible with ``--seed``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched.sdk import InvalidObjectError, ObjectConflict, ObjectNotFound, Pod

from ..objectstore import ObjectStore
from ..timefmt import rfc3339
from .manifests import ManifestError, Manifests, apply_defaults, load_manifests

__all__ = ["ManifestError", "RecordedEvent", "SimulatedCluster", "apply_defaults", "load_manifests", "spec_problem"]


def spec_problem(obj: Mapping[str, Any]) -> str | None:
    """What ``Pod(obj).validate()`` finds in a Pod of the right shape (:func:`pod_problem`), as
    the scheduling cycle says it (``invalid pod spec: FIELD: ...``), or None."""
    try:
        Pod(obj).validate()
    except InvalidObjectError as e:
        return f"invalid pod spec: {e}"
    return None


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
    #: pods of the manifests the cluster refused, as the API server would (their shape:
    #: :func:`pod_problem`): (namespace, name) -> the message naming file, document and field
    rejected: dict[tuple[str, str], str] = field(default_factory=dict)
    #: the replay of the last run (pods controllers created, why pods left)
    replay: Any = None

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
            self.store.apply_patch("v1", "Pod", pod.name, {"metadata": {"annotations": dict(annotations)}}, pod.namespace)

    def update_pod_condition(self, pod: Pod, condition: Mapping[str, Any], nominated_node_name: str | None) -> None:
        cur = self.store.peek("v1", "Pod", pod.name, pod.namespace)
        if cur is None:
            return
        status: dict[str, Any] = {"conditions": [dict(condition)]}
        if nominated_node_name is not None:
            status["nominatedNodeName"] = nominated_node_name or None  # None: removed
        self.store.apply_patch("v1", "Pod", pod.name, {"status": status}, pod.namespace)  # no copy: nobody reads it

    def where(self, obj: Mapping[str, Any]) -> str:
        """The file, document and name of one of the manifests, for a message about it."""
        return self.manifests.where(obj) if isinstance(self.manifests, Manifests) else f"{self.source}: Pod"

    # driving a run -----------------------------------------------------------------------------------
    def run(self, scheduler: Any, *, recorder: Any = None, progress: Any = None) -> Any:
        """Apply the manifests and schedule, pod after pod, until nothing more can happen; with
        time annotations and controllers, replay the workload over virtual time
        (:class:`kubesched.runtime.sim.replay.Replay`, returned)."""
        from ..sim.replay import Replay

        replay = Replay(self, scheduler, recorder=recorder, progress=progress)
        self.replay = replay
        replay.run()
        return replay

    def _create(self, obj: Mapping[str, Any], now: float | None = None) -> dict[str, Any]:
        md = obj.get("metadata") or {}
        if not md.get("creationTimestamp") and now is not None:
            obj = {**obj, "metadata": {**md, "creationTimestamp": rfc3339(now)}}
        return self.store.create(obj)

    def pods(self) -> Iterable[dict[str, Any]]:
        return self.store.list("v1", "Pod")

