"""What the scheduler gives a framework (:class:`FrameworkServices`) and the Handle plugins get."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kubesched.sdk import CycleState, NodeInfo, NodeScore, Pod, Status

from .waiting import WaitingPodImpl

if TYPE_CHECKING:
    from .interface import Framework

__all__ = ["FrameworkHandle", "FrameworkServices"]


@dataclass
class FrameworkServices:
    """What the scheduler gives every framework (and, through the Handle, every plugin)."""

    snapshot: Callable[[], Any]
    objects: Any
    clock: Any
    event_recorder: Any
    bind_pod: Callable[[Pod, str], None]
    nominated_pods_for_node: Callable[[str], list[Pod]] = field(default=lambda _n: [])  # type: ignore[assignment]
    #: cheap check used to skip the nominated-pods pass of Filter entirely
    has_nominated_pods: Callable[[], bool] = field(default=lambda: True)  # type: ignore[assignment]
    #: the names of the nodes some pod is nominated to (None: not known; Filter then asks
    #: nominated_pods_for_node of every node it tries)
    nominated_nodes: Callable[[], Iterable[str]] | None = None
    waiting_pods: dict[str, WaitingPodImpl] = field(default_factory=dict)
    #: called with (waiting pod, final status) when a waiting pod is allowed or rejected
    on_permit_done: Callable[[WaitingPodImpl, Status], None] = lambda _w, _s: None
    #: registers a permit timeout: (deadline, callback)
    add_timer: Callable[[float, Callable[[], None]], None] = lambda _d, _c: None
    tracer: Any = None
    metrics: Any = None
    #: runs work off the scheduling loop (the binding workers; at once on the simulated cluster)
    run_async: Callable[[Callable[[], None]], None] = lambda fn: fn()
    #: moves pods waiting in the queue to activeQ (any thread)
    activate: Callable[[list[Pod]], None] = lambda _pods: None
    #: runs PreEnqueue again for those of the pods a plugin gates (any thread)
    recheck_gated: Callable[[list[Pod], str], None] = lambda _pods, _plugin: None


class FrameworkHandle:
    """The Handle plugins get (see ``kubesched.sdk.Handle``)."""

    def __init__(self, framework: Framework, services: FrameworkServices) -> None:
        self._fw = framework
        self._s = services

    @property
    def profile_name(self) -> str:
        return self._fw.profile_name

    @property
    def clock(self) -> Any:
        return self._s.clock

    @property
    def event_recorder(self) -> Any:
        return self._s.event_recorder

    @property
    def objects(self) -> Any:
        return self._s.objects

    def snapshot(self) -> Any:
        return self._s.snapshot()

    def bind_pod(self, pod: Pod, node_name: str) -> None:
        self._s.bind_pod(pod, node_name)

    def get_waiting_pod(self, uid: str) -> WaitingPodImpl | None:
        return self._s.waiting_pods.get(uid)

    def iterate_over_waiting_pods(self) -> list[WaitingPodImpl]:
        return list(self._s.waiting_pods.values())

    def reject_waiting_pod(self, uid: str) -> bool:
        wp = self._s.waiting_pods.get(uid)
        if wp is None:
            return False
        wp.reject("", "removed")
        return True

    def nominated_pods_for_node(self, node_name: str) -> list[Pod]:
        return self._s.nominated_pods_for_node(node_name)

    def run_async(self, fn: Callable[[], None]) -> None:
        self._s.run_async(fn)

    def activate(self, pods: Iterable[Pod]) -> None:
        self._s.activate(list(pods))

    def recheck_gated(self, pods: Iterable[Pod], plugin: str) -> None:
        """Run PreEnqueue again for those of ``pods`` that ``plugin`` holds at PreEnqueue (a
        hold the plugin lifted without a cluster event; runtime plugins only)."""
        self._s.recheck_gated(list(pods), plugin)

    def plugins_at(self, point: str) -> list[str]:
        """The names of the profile's plugins that run at an extension point (camelCase, e.g.
        ``preEnqueue``), in order (runtime plugins only)."""
        return list(self._fw.points.get(point, ()))

    @property
    def metrics(self) -> Any:
        """The scheduler's metrics (``observe.metrics.Metrics``), or None (runtime plugins)."""
        return self._s.metrics

    def filter_signature(self, state: CycleState, pod: Pod) -> tuple[Any, ...] | None:
        """``pod``'s signature (``sign_pod``) for the Filter plugins ``state``'s cycle runs (not
        skipped by their PreFilter): Filter results reuse on the same terms as the framework's
        own. None when results are not reused, a plugin whose AddPod/RemovePod extension runs is
        not one of them, or one of them does not sign the pod (or fails to)."""
        fw = self._fw
        if not fw.reuse_results:
            return None
        hooks = getattr(fw, "entries", None)  # FrameworkImpl's entries per hook
        if hooks is None:
            return None
        names = [name for name, _ in fw.active_filters(state)]
        skip = state.skip_filter_plugins
        for hook in ("pre_filter_add_pod", "pre_filter_remove_pod"):
            for name, _ in hooks.get(hook, ()):
                if name not in skip and name not in names:
                    return None
        sig = fw.sign(names, pod)
        return sig if isinstance(sig, tuple) else None

    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return self._fw.run_filter_plugins(state, pod, node_info)

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return self._fw.run_filter_plugins_with_nominated_pods(state, pod, node_info)

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status:
        return self._fw.run_pre_filter_extension_add_pod(state, pod_to_schedule, pod_to_add, node_info)

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> Status:
        return self._fw.run_pre_filter_extension_remove_pod(state, pod_to_schedule, pod_to_remove, node_info)

    def run_pre_score_plugins(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        return self._fw.run_pre_score_plugins(state, pod, nodes)

    def run_score_plugins(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> tuple[list[NodeScore], Status]:
        scores, st = self._fw.run_score_plugins(state, pod, nodes)
        return [NodeScore(s.name, s.total_score) for s in scores], st
