"""A Handle for calling a plugin's hooks directly in unit tests (as kube-scheduler's plugin
unit tests do with a fake framework handle)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.runtime.objectstore import ObjectStore
from kubesched.runtime.snapshot import Snapshot
from kubesched.sdk import (
    CycleState,
    Node,
    NodeInfo,
    NodeScore,
    Pod,
    Status,
    WaitingPod,
    build_args,
)

__all__ = ["FakeClock", "RecordedEvent", "TestHandle", "build_plugin", "make_handle"]


class FakeClock:
    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self._now = now

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += seconds


@dataclass
class RecordedEvent:
    regarding: Mapping[str, Any]
    event_type: str
    reason: str
    action: str
    note: str


@dataclass
class _Recorder:
    events: list[RecordedEvent] = field(default_factory=list)

    def event(self, regarding: Mapping[str, Any], event_type: str, reason: str, action: str, note: str, related: Mapping[str, Any] | None = None) -> None:
        self.events.append(RecordedEvent(regarding, event_type, reason, action, note))


class TestHandle:
    """Snapshot, object store, clock and event recorder; no framework runners unless a
    framework is attached (``handle.framework = fw``)."""

    __test__ = False  # not a pytest test class

    def __init__(self, snapshot: Snapshot, objects: ObjectStore, profile_name: str = "default-scheduler") -> None:
        self._snapshot = snapshot
        self._objects = objects
        self._profile_name = profile_name
        self._clock = FakeClock()
        self._recorder = _Recorder()
        self.waiting_pods: dict[str, WaitingPod] = {}
        self.nominated: dict[str, list[Pod]] = {}
        #: the pods handed to :meth:`activate`, in order
        self.activated: list[Pod] = []
        #: (pod, plugin) handed to :meth:`recheck_gated`, in order
        self.rechecked: list[tuple[Pod, str]] = []
        self.framework: Any = None

    @property
    def profile_name(self) -> str:
        return self._profile_name

    @property
    def clock(self) -> FakeClock:
        return self._clock

    @property
    def event_recorder(self) -> _Recorder:
        return self._recorder

    @property
    def objects(self) -> ObjectStore:
        return self._objects

    def snapshot(self) -> Snapshot:
        return self._snapshot

    def set_snapshot(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self.waiting_pods.get(uid)

    def iterate_over_waiting_pods(self) -> Iterable[WaitingPod]:
        return list(self.waiting_pods.values())

    def reject_waiting_pod(self, uid: str) -> bool:
        wp = self.waiting_pods.get(uid)
        if wp is None:
            return False
        wp.reject("", "removed")
        return True

    def nominated_pods_for_node(self, node_name: str) -> list[Pod]:
        return list(self.nominated.get(node_name, []))

    def run_async(self, fn: Callable[[], None]) -> None:
        """Runs ``fn`` at once (assign a list's ``append`` to run it later, by hand)."""
        fn()

    def activate(self, pods: Iterable[Pod]) -> None:
        """Records the pods (``handle.activated``)."""
        self.activated.extend(pods)

    def recheck_gated(self, pods: Iterable[Pod], plugin: str) -> None:
        """Records the pods and the plugin (``handle.rechecked``)."""
        self.rechecked.extend((p, plugin) for p in pods)

    def _fw(self) -> Any:
        if self.framework is None:
            raise NotImplementedError("attach a framework to the TestHandle to use the runners")
        return self.framework

    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return self._fw().run_filter_plugins(state, pod, node_info)

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return self._fw().run_filter_plugins_with_nominated_pods(state, pod, node_info)

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status:
        return self._fw().run_pre_filter_extension_add_pod(state, pod_to_schedule, pod_to_add, node_info)

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> Status:
        return self._fw().run_pre_filter_extension_remove_pod(state, pod_to_schedule, pod_to_remove, node_info)

    def run_pre_score_plugins(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        return self._fw().run_pre_score_plugins(state, pod, nodes)

    def run_score_plugins(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> tuple[list[NodeScore], Status]:
        return self._fw().run_score_plugins(state, pod, nodes)


def make_handle(
    nodes: Iterable[Mapping[str, Any] | Node] = (),
    pods: Iterable[Mapping[str, Any] | Pod] = (),
    objects: Iterable[Mapping[str, Any]] = (),
    *,
    profile_name: str = "default-scheduler",
    object_client: Any = None,
) -> TestHandle:
    """A TestHandle whose snapshot holds ``nodes`` with the assigned ``pods`` on them, and whose
    object store holds ``objects`` (PVCs, Namespaces, PodGroups, ...) plus the nodes and pods."""
    nodes = list(nodes)
    pods = list(pods)
    store = ObjectStore()
    for o in objects:
        store.create(o, notify=False)
    for n in nodes:
        store.create(n.raw if isinstance(n, Node) else n, notify=False)
    for p in pods:
        raw = p.raw if isinstance(p, Pod) else p
        try:
            store.create({"apiVersion": "v1", "kind": "Pod", **raw}, notify=False)
        except Exception:
            pass
    handle = TestHandle(Snapshot.from_objects(nodes, pods), store, profile_name)
    if object_client is not None:
        handle._objects = object_client  # e.g. a wrapper that injects conflicts
    return handle


def build_plugin(plugin_cls: Any, args: Mapping[str, Any] | None = None, handle: Any = None) -> Any:
    """Build a plugin as the runtime does: ``Args`` from ``args`` (validated), then
    ``plugin_cls(args=..., handle=...)`` with whichever of the two it accepts."""
    args_cls = getattr(plugin_cls, "Args", None)
    built = build_args(args_cls, args) if args_cls is not None else (dict(args) if args else None)
    if handle is None:
        handle = make_handle()
    try:
        params = inspect.signature(plugin_cls).parameters
    except (TypeError, ValueError):
        params = {}  # type: ignore[assignment]
    kwargs: dict[str, Any] = {}
    if "args" in params:
        kwargs["args"] = built
    if "handle" in params:
        kwargs["handle"] = handle
    return plugin_cls(**kwargs)
