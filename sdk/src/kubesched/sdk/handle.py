"""The Handle: what a plugin may use of the scheduler, the same on both clusters.

A plugin never sees the cluster backend. It gets a Handle when it is built and, through it,
the snapshot of nodes for the current cycle, the pods waiting at Permit, an event recorder,
the clock, object access (get/list/create/patch/delete of API objects such as a PodGroup) and the
framework's own runners (preemption uses them to re-run Filter with pods removed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from .cycle_state import CycleState
    from .objects import NodeInfo, Pod
    from .status import NodeScore, Status

__all__ = [
    "Clock",
    "EventRecorder",
    "Handle",
    "NodeInfoLister",
    "ObjectClient",
    "ObjectConflict",
    "ObjectNotFound",
    "WaitingPod",
]


class ObjectNotFound(LookupError):
    """The object does not exist (HTTP 404)."""


class ObjectConflict(RuntimeError):
    """The object changed since it was read (HTTP 409); read it again and retry."""


@runtime_checkable
class Clock(Protocol):
    def now(self) -> float:
        """Seconds since the epoch (virtual on the simulated cluster)."""
        ...


@runtime_checkable
class EventRecorder(Protocol):
    def event(
        self,
        regarding: Mapping[str, Any],
        event_type: str,
        reason: str,
        action: str,
        note: str,
        related: Mapping[str, Any] | None = None,
    ) -> None:
        """Record an ``events.k8s.io/v1`` Event about ``regarding`` (an API object dict).
        ``event_type`` is ``"Normal"`` or ``"Warning"``."""
        ...


@runtime_checkable
class NodeInfoLister(Protocol):
    """The snapshot of nodes a scheduling cycle sees (kube-scheduler's SharedLister)."""

    def list(self) -> Sequence[NodeInfo]:
        """All nodes, in a stable order."""
        ...

    def get(self, node_name: str) -> NodeInfo:
        """One node; raises ``KeyError`` when it is not in the snapshot."""
        ...

    def have_pods_with_affinity_list(self) -> Sequence[NodeInfo]:
        """Nodes with at least one pod that has (anti-)affinity."""
        ...

    def have_pods_with_required_anti_affinity_list(self) -> Sequence[NodeInfo]:
        """Nodes with at least one pod that has required anti-affinity."""
        ...


@runtime_checkable
class WaitingPod(Protocol):
    """A pod held at Permit; any plugin may allow or reject it through the Handle."""

    @property
    def pod(self) -> Pod: ...

    def pending_plugins(self) -> list[str]:
        """Plugins that returned Wait and have not allowed the pod yet."""
        ...

    def allow(self, plugin: str) -> None:
        """Allow the pod on behalf of ``plugin``; when no plugin is pending, binding goes on."""
        ...

    def reject(self, plugin: str, message: str) -> None:
        """Reject the pod: it is unreserved and goes back to the queue as Unschedulable."""
        ...

    def preempt(self, plugin: str, message: str) -> bool:
        """Preempt the pod (DefaultPreemption does, for a victim held at Permit): its binding
        cycle fails with an Error and it goes back to the queue through backoff, not as
        Unschedulable. False when the pod was no longer waiting."""
        ...


@runtime_checkable
class ObjectClient(Protocol):
    """Object access that works the same on the simulated and the Kubernetes cluster.

    ``api_version`` and ``kind`` as in manifests (``"v1"``, ``"Pod"``;
    ``"scheduling.x-k8s.io/v1alpha1"``, ``"PodGroup"``). Objects are API dicts.
    """

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
        """Raises :class:`ObjectNotFound`."""
        ...

    def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        label_selector: Mapping[str, str] | None = None,
    ) -> list[dict[str, Any]]: ...

    def patch(
        self,
        api_version: str,
        kind: str,
        name: str,
        patch: Mapping[str, Any],
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        subresource: str | None = None,
    ) -> dict[str, Any]:
        """JSON merge patch. With ``resource_version`` the patch fails with
        :class:`ObjectConflict` if the object changed since (optimistic concurrency). Status is
        written through ``subresource="status"`` (the API server ignores ``status`` in a patch of
        the object itself)."""
        ...

    def create(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """Create ``obj`` (an API dict with ``apiVersion``, ``kind`` and ``metadata``; the
        namespace from ``metadata.namespace``). Without ``metadata.name``, the server names it from
        ``metadata.generateName``. Returns the created object as the server stored it (name, uid,
        resourceVersion); treat it as read-only. Raises :class:`ObjectConflict` when an object of
        that name exists."""
        ...

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> None: ...


class Handle(Protocol):
    """What the framework gives every plugin of a profile."""

    @property
    def profile_name(self) -> str:
        """The profile's ``schedulerName``."""
        ...

    @property
    def clock(self) -> Clock: ...

    @property
    def event_recorder(self) -> EventRecorder: ...

    @property
    def objects(self) -> ObjectClient:
        """Object access; the one way a plugin writes. ``Pod``, ``Node`` and ``NodeInfo`` views
        are read-only (a write raises ``TypeError``): patch the object here, and its new version
        reaches the scheduler's views through the cluster's events."""
        ...

    def snapshot(self) -> NodeInfoLister:
        """The nodes as this scheduling cycle sees them. Once the pod is assumed (Reserve,
        Permit) its node already counts it. Call it from scheduling-cycle hooks (PreFilter to
        Permit); binding-cycle hooks (PreBind, Bind, PostBind, and Unreserve after a binding
        failure) run on other threads while the next cycle updates the snapshot."""
        ...

    def bind_pod(self, pod: Pod, node_name: str) -> None:
        """Bind the pod to the node through the cluster (the ``pods/binding`` subresource on
        Kubernetes). Raises :class:`ObjectConflict` when the pod is already bound elsewhere and
        :class:`ObjectNotFound` when it is gone; other exceptions are transient failures."""
        ...

    def get_waiting_pod(self, uid: str) -> WaitingPod | None: ...

    def iterate_over_waiting_pods(self) -> Iterable[WaitingPod]: ...

    def reject_waiting_pod(self, uid: str) -> bool:
        """Reject a waiting pod; True if it was waiting."""
        ...

    def nominated_pods_for_node(self, node_name: str) -> list[Pod]:
        """Pods nominated to run on the node (by preemption) but not bound yet."""
        ...

    def run_async(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` off the scheduling loop: on the binding workers on a real cluster, at once
        (in the caller) on the simulated cluster, so simulations stay reproducible. For API
        calls whose result the cycle does not wait for (DefaultPreemption's evictions)."""
        ...

    def activate(self, pods: Iterable[Pod]) -> None:
        """Move these pods, if they wait in the queue (unschedulable or backing off), to the
        active queue (kube-scheduler's ``Handle.Activate``); callable from any thread."""
        ...

    # runners, as kube-scheduler's PluginsRunner ------------------------------------------------
    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status: ...

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status: ...

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status: ...

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status: ...

    def run_pre_score_plugins(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status: ...

    def run_score_plugins(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[NodeScore], Status]:
        """Total weighted score per node."""
        ...
