"""The Cluster protocol: what the scheduler needs of a cluster, and nothing else.

A cluster delivers API object events (ADDED / MODIFIED / DELETED of Nodes, Pods and the other
objects plugins read) to ``sink``, binds pods, records events and pod conditions, and offers
object access (``objects``) that plugins reach through the Handle. As the v1.36 API server
(ClearingNominatedNodeNameAfterBinding, on since 1.35), a bind removes the pod's
``status.nominatedNodeName``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from kubesched.sdk import ObjectClient, Pod

EventSink = Callable[[str, str, "Mapping[str, Any] | None", "Mapping[str, Any] | None"], None]


class Cluster(Protocol):
    @property
    def objects(self) -> ObjectClient: ...

    def start(self, sink: EventSink) -> None:
        """Begin delivering events; the current state first, as ADDED events."""
        ...

    def bind(self, pod: Pod, node_name: str) -> None:
        """Bind through the cluster. Raises ObjectConflict (already bound) / ObjectNotFound."""
        ...

    def event(
        self,
        regarding: Mapping[str, Any],
        event_type: str,
        reason: str,
        action: str,
        note: str,
        related: Mapping[str, Any] | None = None,
    ) -> None: ...

    def update_pod_condition(self, pod: Pod, condition: Mapping[str, Any], nominated_node_name: str | None) -> None:
        """Patch the pod's status with ``condition`` and its ``nominatedNodeName``: None leaves
        it, a node name sets it, "" removes it (kube-scheduler's updatePod with NominatingInfo
        Noop / Override)."""
        ...

    def stop(self) -> None: ...
