"""NodePorts: a pod fits a node only if the host ports it asks for are free there.

Ported from kube-scheduler ``pkg/scheduler/framework/plugins/nodeports/node_ports.go`` and
``pkg/scheduler/util.GetHostPorts`` at Kubernetes v1.36.3 (Go module ``k8s.io/kubernetes@v1.36.3``):
SchedulerQueueingHints is GA (locked on), so Pod/Delete (with a hint) and Node/Add are registered,
and host ports of restartable init containers (sidecars) count (kubernetes#132040). v1.36 changed
no behaviour here (the Pod/Delete hint compares the ports directly instead of through a fake
NodeInfo: same result).

``sign_pod`` covers v1.36's SignPod (``HostPortsSigner``: the sorted set of host port numbers of
the containers and init containers) with what Filter reads more precisely: the sorted
(hostIP, protocol, hostPort) of the ports that count (sidecars' and containers').

The SDK's ``Pod.host_ports`` (and so ``NodeInfo.used_ports``) only has the ports of
``spec.containers``; this module adds the sidecar ports on both sides (see ``_host_ports`` and
``_sidecar_ports``).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from kubesched.sdk import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    HostPort,
    HostPortInfo,
    InvalidObjectError,
    NodeColumns,
    NodeInfo,
    Pod,
    QueueingHint,
    StateData,
    Status,
    hookimpl,
)

from ..podindex import PodIndex
from .helper import SKIP, as_views

__all__ = ["ERR_REASON", "NodePorts", "fits"]

NAME = "NodePorts"
#: CycleState key of the host ports PreFilter collects.
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
#: Returned when the node's ports aren't free.
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"


def _sidecar_ports(pod: Pod) -> tuple[HostPort, ...]:
    """Host ports of init containers with ``restartPolicy: Always``, which run for the whole life
    of the pod (the part of util.GetHostPorts that the SDK's ``Pod.host_ports`` lacks)."""
    out: list[HostPort] = []
    for ci, c in enumerate(pod.init_containers):
        if c.get("restartPolicy") != "Always":
            continue
        for pi, p in enumerate(c.get("ports") or ()):
            hp = p.get("hostPort")
            if not hp:
                continue
            try:
                port = int(hp)
            except (TypeError, ValueError):
                raise InvalidObjectError(f"spec.initContainers[{ci}].ports[{pi}].hostPort", f"invalid value {hp!r}") from None
            if port > 0:
                out.append(HostPort(str(p.get("hostIP") or "0.0.0.0"), str(p.get("protocol") or "TCP"), port))
    return tuple(out)


def _host_ports(pod: Pod) -> tuple[HostPort, ...]:
    """util.GetHostPorts: host ports of sidecar init containers and of the containers."""
    if not pod.init_containers:
        return pod.host_ports
    return _sidecar_ports(pod) + pod.host_ports


def _fits_ports(want: tuple[HostPort, ...], in_use: HostPortInfo) -> bool:
    for hp in want:
        if in_use.check_conflict(hp.ip, hp.protocol, hp.port):
            return False
    return True


def _fits_node(want: tuple[HostPort, ...], node_info: NodeInfo) -> bool:
    if not _fits_ports(want, node_info.used_ports):
        return False
    # The sidecar ports of the pods on the node are not in used_ports (see the module docstring).
    extra = None
    for p in node_info.pods:
        if p.init_containers:
            for hp in _sidecar_ports(p):
                if extra is None:
                    extra = HostPortInfo()
                extra.add(hp.ip, hp.protocol, hp.port)
    return extra is None or _fits_ports(want, extra)


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    """Whether none of the pod's host ports conflicts with the node's (Go's ``nodeports.Fits``)."""
    return _fits_node(_host_ports(pod), node_info)


class _PreFilterState(StateData):
    __slots__ = ("ports",)

    def __init__(self, ports: tuple[HostPort, ...]) -> None:
        self.ports = ports

    def clone(self) -> _PreFilterState:
        return self  # not affected by adding or removing pods


def _holds_ports(pod: Pod) -> bool:
    """Whether the pod holds a host port (a container's or a sidecar's); True when its ports do
    not parse (Filter then reports it node by node). Nodes with such a pod are the only ones a
    pod asking for host ports can conflict with."""
    try:
        return bool(pod.host_ports) or bool(pod.init_containers and _sidecar_ports(pod))
    except InvalidObjectError:
        return True


class NodePorts:
    """PreFilter and Filter on host ports (hostIP, protocol, hostPort)."""

    name = NAME

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.handle = handle
        #: per node, how many of its pods hold host ports (recounted on nodes that changed)
        self._index = PodIndex(capacity=1)

    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        ports = _host_ports(pod)
        if not ports:
            # A pod without host ports has nothing to check.
            return SKIP
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(ports))
        return None

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # spec.containers[*].ports is immutable, so pod updates are ignored.
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD.value, ActionType.DELETE), self.is_schedulable_after_pod_deleted
            ),
            # No hint: the pod is always retried (with backoff) when a node is added.
            ClusterEventWithHint(ClusterEvent(EventResource.NODE.value, ActionType.ADD)),
        ]

    def is_schedulable_after_pod_deleted(self, pod: Any, old_obj: Any, new_obj: Any = None) -> QueueingHint:
        try:
            deleted, _ = as_views(Pod, old_obj, None)
        except TypeError:
            return QueueingHint.QUEUE  # Go: (Queue, err)
        if deleted is None:
            return QueueingHint.QUEUE
        try:
            # An unscheduled pod held no ports.
            if not deleted.node_name and not deleted.nominated_node_name:
                return QueueingHint.SKIP
            ports = _host_ports(deleted)
            if not ports:
                return QueueingHint.SKIP
            in_use = HostPortInfo()
            for hp in ports:
                in_use.add(hp.ip, hp.protocol, hp.port)
            # No port in common: deleting that pod can't make this one schedulable.
            if _fits_ports(_host_ports(pod if isinstance(pod, Pod) else Pod(pod)), in_use):
                return QueueingHint.SKIP
        except InvalidObjectError:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE

    @hookimpl
    def sign_pod(self, pod: Pod) -> Hashable:
        return tuple(sorted((hp.ip, hp.protocol, hp.port) for hp in _host_ports(pod)))

    @hookimpl
    def filter_columns(self, state: CycleState, columns: NodeColumns) -> tuple[Any, list[Status | None]] | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _PreFilterState):
            return None  # the per-node form reports the error
        # only the nodes where some pod holds a host port can conflict
        codes = np.zeros(columns.n, np.int8)
        infos = columns.infos
        want = s.ports
        try:
            for i in np.flatnonzero(self._index.counts(columns, "holds-ports", _holds_ports)).tolist():
                if not _fits_node(want, infos[i]):
                    codes[i] = 1
        except InvalidObjectError:
            return None
        return codes, [None, Status(Code.UNSCHEDULABLE, ERR_REASON)]

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _PreFilterState):
            if s is None:
                msg = f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found'
            else:
                msg = f"{s!r}  convert to nodeports.preFilterState error"
            return Status(Code.ERROR, msg)
        if not _fits_node(s.ports, node_info):
            return Status(Code.UNSCHEDULABLE, ERR_REASON)
        return None
