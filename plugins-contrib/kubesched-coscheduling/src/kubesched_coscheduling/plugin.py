"""Coscheduling: gang scheduling of PodGroups, with the semantics of kubernetes-sigs/scheduler-plugins'
``pkg/coscheduling`` (QueueSort, PreFilter, PostFilter, Reserve/Unreserve, Permit).

A gang is the set of pods labelled ``scheduling.x-k8s.io/pod-group: <name>`` in the namespace of
the PodGroup ``<name>``. Its members are placed one by one and held at Permit until
``spec.minMember`` of them are placed (bound or waiting); then all are let through together. When
the rest cannot be placed, the waiting members are rejected and unreserved, so no partial gang is
ever bound.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.sdk import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    EventResource,
    Handle,
    InvalidObjectError,
    NodeInfo,
    ObjectNotFound,
    Pod,
    QueuedPodInfo,
    QueueingHint,
    Status,
    hookimpl,
)

from .podgroup import (
    API_VERSION,
    KIND,
    POD_GROUP_LABEL,
    PodGroup,
    pod_group_full_name,
    pod_group_name,
)

__all__ = ["DEFAULT_WAIT_SECONDS", "Coscheduling", "CoschedulingArgs"]

#: Permit's wait when neither the PodGroup nor the args give one (scheduler-plugins' DefaultWaitTime).
DEFAULT_WAIT_SECONDS = 60
#: How long a group that passed the minResources check is not checked again, when
#: permitWaitingTimeSeconds is 0 (go-cache's default expiration in scheduler-plugins).
_PERMITTED_DEFAULT_TTL = 3.0
_TERMINAL_PHASES = ("Succeeded", "Failed")


@dataclass
class CoschedulingArgs:
    """``CoschedulingArgs`` of scheduler-plugins (camelCase keys in ``pluginConfig``)."""

    #: How long placed members wait at Permit for the rest of their group, unless the PodGroup
    #: sets ``spec.scheduleTimeoutSeconds``.
    permit_waiting_time_seconds: int = 60
    #: After a member fails and the gang is rejected, no member of the group is tried for this
    #: long (0: no backoff).
    pod_group_backoff_seconds: int = 0
    #: PostFilter does not reject the gang when at most this percentage of ``minMember`` is still
    #: unplaced: the waiting members keep waiting for the last few (scheduler-plugins' 10%).
    pod_group_reject_percentage: int = 10

    def validate(self) -> None:
        if self.permit_waiting_time_seconds < 0:
            raise ValueError(
                f"permitWaitingTimeSeconds: Invalid value: {self.permit_waiting_time_seconds}: "
                "must be greater than or equal to 0"
            )
        if self.pod_group_backoff_seconds < 0:
            raise ValueError(
                f"podGroupBackoffSeconds: Invalid value: {self.pod_group_backoff_seconds}: "
                "must be greater than or equal to 0"
            )
        if not 0 <= self.pod_group_reject_percentage <= 100:
            raise ValueError(
                f"podGroupRejectPercentage: Invalid value: {self.pod_group_reject_percentage}: "
                "must be between 0 and 100"
            )


class Coscheduling:
    """Gang scheduling: all ``minMember`` pods of a PodGroup are bound together, or none is."""

    name = "Coscheduling"
    Args = CoschedulingArgs
    args_kind = "CoschedulingArgs"

    def __init__(self, args: CoschedulingArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle
        self._lock = threading.Lock()
        #: group full name -> when its backoff ends (PodGroupManager.backedOffPG)
        self._backed_off: dict[str, float] = {}
        #: group full name -> until when its minResources check stays passed (permittedPG)
        self._permitted: dict[str, float] = {}

    # helpers ------------------------------------------------------------------------------------
    def _now(self) -> float:
        return float(self.handle.clock.now())

    def _get_pod_group(self, namespace: str, name: str) -> PodGroup | None:
        try:
            raw = self.handle.objects.get(API_VERSION, KIND, name, namespace)
        except ObjectNotFound:
            return None
        return PodGroup(raw)

    def _member_pods(self, namespace: str, name: str) -> list[dict[str, Any]]:
        """The group's pods that exist (not finished), from the object store / informer."""
        pods = self.handle.objects.list("v1", "Pod", namespace, label_selector={POD_GROUP_LABEL: name})
        return [p for p in pods if ((p.get("status") or {}).get("phase") or "") not in _TERMINAL_PHASES]

    def _assigned(self, namespace: str, name: str, exclude_uid: str = "") -> int:
        """Members with a node in the snapshot: bound, or assumed (waiting at Permit or binding).
        ``exclude_uid`` is left out: the pod of this cycle, which the live snapshot may hold."""
        count = 0
        for ni in self.handle.snapshot().list():
            for p in ni.pods:
                if (
                    p.node_name
                    and p.namespace == namespace
                    and p.uid != exclude_uid
                    and p.labels.get(POD_GROUP_LABEL) == name
                ):
                    count += 1
        return count

    def _siblings_waiting(self, namespace: str, name: str, exclude_uid: str = "") -> list[Any]:
        out = []
        for wp in self.handle.iterate_over_waiting_pods():
            p = wp.pod
            if p.uid != exclude_uid and p.namespace == namespace and p.labels.get(POD_GROUP_LABEL) == name:
                out.append(wp)
        return out

    def _in_backoff(self, full_name: str) -> bool:
        with self._lock:
            until = self._backed_off.get(full_name)
            if until is None:
                return False
            if until > self._now():
                return True
            del self._backed_off[full_name]
            return False

    def _backoff(self, full_name: str, seconds: float) -> None:
        """As go-cache's Add: a group already in backoff keeps its deadline."""
        if seconds <= 0:
            return
        now = self._now()
        with self._lock:
            until = self._backed_off.get(full_name)
            if until is None or until <= now:
                self._backed_off[full_name] = now + seconds

    def _is_permitted(self, full_name: str) -> bool:
        with self._lock:
            until = self._permitted.get(full_name)
            if until is None:
                return False
            if until > self._now():
                return True
            del self._permitted[full_name]
            return False

    def _set_permitted(self, full_name: str) -> None:
        ttl = float(self.args.permit_waiting_time_seconds) or _PERMITTED_DEFAULT_TTL
        with self._lock:
            self._permitted[full_name] = self._now() + ttl

    def _forget_permitted(self, full_name: str) -> None:
        with self._lock:
            self._permitted.pop(full_name, None)

    def _wait_seconds(self, pg: PodGroup) -> float:
        """scheduler-plugins' GetWaitTimeDuration: the group's scheduleTimeoutSeconds, else the
        args' permitWaitingTimeSeconds, else 60 seconds."""
        try:
            own = pg.schedule_timeout_seconds
        except InvalidObjectError:
            own = None
        return float(own or self.args.permit_waiting_time_seconds or DEFAULT_WAIT_SECONDS)

    # QueueSort ----------------------------------------------------------------------------------
    def _sort_time(self, qpi: QueuedPodInfo) -> float:
        """The PodGroup's creation time for a member (so a gang sorts as one), else the time the
        pod was first tried (or queued)."""
        pod = qpi.pod
        own = qpi.initial_attempt_timestamp if qpi.initial_attempt_timestamp is not None else qpi.timestamp
        name = pod_group_name(pod)
        if not name:
            return own
        try:
            pg = self._get_pod_group(pod.namespace, name)
            if pg is None:
                return own
            ts = pg.creation_timestamp
        except InvalidObjectError:
            return own
        # A PodGroup without creationTimestamp (hand-written YAML) sorts as created at the epoch,
        # as a zero time does in Go; its members stay together through the key below.
        return ts if ts is not None else 0.0

    @staticmethod
    def _sort_key(pod: Pod) -> tuple[str, str]:
        """``namespace/group`` (``namespace/pod`` outside groups), then ``namespace/pod``: with
        equal times, gangs stay adjacent and pods of a gang are in name order."""
        group = pod_group_full_name(pod)
        return (group or pod.key, pod.key)

    @hookimpl
    def queue_sort_less(self, pod_info_1: QueuedPodInfo, pod_info_2: QueuedPodInfo) -> bool:
        """Priority (higher first), then the group's creation time or the pod's, then keys."""
        p1 = pod_info_1.pod.priority
        p2 = pod_info_2.pod.priority
        if p1 != p2:
            return p1 > p2
        t1 = self._sort_time(pod_info_1)
        t2 = self._sort_time(pod_info_2)
        if t1 != t2:
            return t1 < t2
        return self._sort_key(pod_info_1.pod) < self._sort_key(pod_info_2.pod)

    # PreFilter ----------------------------------------------------------------------------------
    @hookimpl
    def pre_filter(self, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """The group must exist, not be in backoff, have at least minMember pods, and (with
        minResources) fit in the cluster's free capacity. Failures are
        UnschedulableAndUnresolvable: preemption cannot help a gang one pod at a time."""
        name = pod_group_name(pod)
        if not name:
            return None
        full_name = f"{pod.namespace}/{name}"
        pg = self._get_pod_group(pod.namespace, name)
        if pg is None:
            return Status.unresolvable(
                f"PodGroup {full_name} not found (pod {pod.key} has label {POD_GROUP_LABEL}={name})"
            )
        try:
            pg.validate()
        except InvalidObjectError as e:
            return Status.unresolvable(f"PodGroup {full_name} is invalid: {e}")
        if self._in_backoff(full_name):
            return Status.unresolvable(f"podGroup {full_name} failed recently")
        members = len(self._member_pods(pod.namespace, name))
        if members < pg.min_member:
            return Status.unresolvable(
                f"pre-filter pod {pod.name} cannot find enough sibling pods, "
                f"current pods number: {members}, minMember of group: {pg.min_member}"
            )
        min_resources = pg.min_resources
        if min_resources is None or self._is_permitted(full_name):
            return None
        request = dict(min_resources)
        request["pods"] = pg.min_member
        gap = resource_gap(nodes, request, full_name)
        if gap:
            shown = ", ".join(f"{k}={_show(k, v)}" for k, v in sorted(gap.items()))
            return Status.unresolvable(f"PodGroup {full_name} does not fit in the cluster's free resources: resource gap: {shown}")
        self._set_permitted(full_name)
        return None

    # PostFilter ---------------------------------------------------------------------------------
    @hookimpl
    def post_filter(self, pod: Pod) -> Status:
        """A member could not be placed: reject the gang's waiting members (so none stays
        reserved) and back the group off, unless enough members are placed already or only a
        few (``podGroupRejectPercentage``) are missing."""
        name = pod_group_name(pod)
        if not name:
            return Status.unschedulable()
        full_name = f"{pod.namespace}/{name}"
        pg = self._get_pod_group(pod.namespace, name)
        if pg is None:
            return Status.unschedulable()  # PreFilter already said so
        try:
            min_member = pg.min_member
        except InvalidObjectError:
            return Status.unschedulable()
        assigned = self._assigned(pod.namespace, name, exclude_uid=pod.uid)
        if assigned >= min_member:
            return Status.unschedulable()
        # a small gap (<= podGroupRejectPercentage of minMember): let the next members try
        if (min_member - assigned) * 100 <= self.args.pod_group_reject_percentage * min_member:
            return Status.unschedulable()
        msg = f"optimistic rejection in PostFilter: pod {pod.key} of PodGroup {full_name} is unschedulable"
        for wp in self._siblings_waiting(pod.namespace, name, exclude_uid=pod.uid):
            wp.reject(self.name, msg)
        if self.args.pod_group_backoff_seconds > 0 and len(self._member_pods(pod.namespace, name)) >= min_member:
            self._backoff(full_name, self.args.pod_group_backoff_seconds)
        self._forget_permitted(full_name)
        return Status.unschedulable(
            f"PodGroup {full_name} gets rejected due to Pod {pod.name} is unschedulable even after PostFilter"
        )

    # Reserve ------------------------------------------------------------------------------------
    @hookimpl
    def reserve(self) -> Status | None:
        """Nothing to reserve; the plugin is a Reserve plugin for its Unreserve."""
        return None

    @hookimpl
    def unreserve(self, pod: Pod) -> None:
        """A member was unreserved (Permit timeout or rejection, a failed bind, another
        plugin's Reserve): reject its waiting siblings, so the gang goes back to the queue
        together."""
        name = pod_group_name(pod)
        if not name:
            return
        full_name = f"{pod.namespace}/{name}"
        msg = f"rejection in Unreserve: pod {pod.key} of PodGroup {full_name} was unreserved"
        for wp in self._siblings_waiting(pod.namespace, name, exclude_uid=pod.uid):
            wp.reject(self.name, msg)
        self._forget_permitted(full_name)

    # Permit -------------------------------------------------------------------------------------
    @hookimpl
    def permit(self, state: CycleState, pod: Pod) -> Status | tuple[Status, float] | None:
        """Allow the gang when this pod makes minMember placed members (bound or waiting): every
        waiting sibling is allowed with it. Otherwise wait (``scheduleTimeoutSeconds`` of the
        group, else ``permitWaitingTimeSeconds``); the first member to wait asks for its siblings
        to be moved to the active queue."""
        name = pod_group_name(pod)
        if not name:
            return None
        full_name = f"{pod.namespace}/{name}"
        pg = self._get_pod_group(pod.namespace, name)
        if pg is None:
            return Status.unschedulable("PodGroup not found")
        try:
            min_member = pg.min_member
        except InvalidObjectError as e:
            return Status.unschedulable(f"PodGroup {full_name} is invalid: {e}")
        assigned = self._assigned(pod.namespace, name, exclude_uid=pod.uid)
        if assigned + 1 >= min_member:
            for wp in self._siblings_waiting(pod.namespace, name, exclude_uid=pod.uid):
                wp.allow(self.name)
            return None
        if assigned == 0:
            self._activate_siblings(state, pod, name)
        return (
            Status.wait(f"PodGroup {full_name}: {assigned + 1} of {min_member} members placed"),
            self._wait_seconds(pg),
        )

    def _activate_siblings(self, state: CycleState, pod: Pod, name: str) -> None:
        """PodsToActivate: the group's other pending pods go to the active queue after this
        cycle, so the gang is tried together (scheduler-plugins' ActivateSiblings)."""
        for raw in self._member_pods(pod.namespace, name):
            sibling = Pod(raw)
            if sibling.uid == pod.uid or sibling.node_name:
                continue
            state.pods_to_activate[sibling.uid] = sibling

    # EnqueueExtensions --------------------------------------------------------------------------
    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(KIND, ActionType.ADD | ActionType.UPDATE), self._pod_group_hint),
            ClusterEventWithHint(ClusterEvent(EventResource.POD.value, ActionType.ADD), self._member_pod_hint),
            # a member created after the others failed ("cannot find enough sibling pods"):
            # kubesched delivers an unscheduled pod's add to plugins that register it by name
            ClusterEventWithHint(
                ClusterEvent(EventResource.UNSCHEDULABLE_POD.value, ActionType.ADD), self._member_pod_hint
            ),
            # a node added, or one whose allocatable, labels or taints changed (a new node gets its
            # allocatable from the kubelet after it is created), may make room for the whole gang
            ClusterEventWithHint(ClusterEvent(EventResource.NODE.value, _NODE_ACTIONS), self._node_hint),
        ]

    # The group backoff keeps a gang that cannot fit from being retried in an unchanged cluster.
    # An event that may help it (a node, a member, its PodGroup) ends the backoff: with the
    # v1.36 queue (SchedulerPopFromBackoffQ) the requeued members are tried at once, and a
    # "failed recently" rejection then would leave them waiting for another event.
    def _end_backoff(self, pod: Pod, hint: QueueingHint) -> QueueingHint:
        if hint is QueueingHint.QUEUE:
            with self._lock:
                self._backed_off.pop(pod_group_full_name(pod), None)
        return hint

    def _pod_group_hint(self, pod: Pod, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> QueueingHint:
        return self._end_backoff(pod, _pod_group_hint(pod, old, new))

    def _member_pod_hint(self, pod: Pod, old: Pod | None, new: Pod | None) -> QueueingHint:
        return self._end_backoff(pod, _member_pod_hint(pod, old, new))

    def _node_hint(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        return self._end_backoff(pod, QueueingHint.QUEUE)


_NODE_ACTIONS = (
    ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT
)


def _pod_group_hint(pod: Pod, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> QueueingHint:
    """Only the pod's own PodGroup being added or changed may help it."""
    obj = new if new is not None else old
    md = (obj or {}).get("metadata") or {}
    if md.get("name") == pod_group_name(pod) and (md.get("namespace") or "default") == pod.namespace:
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def _member_pod_hint(pod: Pod, old: Pod | None, new: Pod | None) -> QueueingHint:
    """Only a new member of the pod's own group may complete the gang."""
    name = pod_group_name(pod)
    if name and new is not None and new.labels.get(POD_GROUP_LABEL) == name and new.namespace == pod.namespace:
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def _node_free(ni: NodeInfo, full_name: str) -> dict[str, int]:
    """What is left on the node if the group's own pods were not there (getNodeResource)."""
    requested = ni.requested.clone()
    others = 0
    for p in ni.pods:
        if pod_group_full_name(p) == full_name:
            requested.add(p.requests, -1)
        else:
            others += 1
    alloc = ni.allocatable
    free = {
        "pods": alloc.allowed_pod_number - others,
        "cpu": alloc.milli_cpu - requested.milli_cpu,
        "memory": alloc.memory - requested.memory,
        "ephemeral-storage": alloc.ephemeral_storage - requested.ephemeral_storage,
    }
    for k, v in alloc.scalar.items():
        free[k] = v - requested.scalar.get(k, 0)
    return free


def resource_gap(nodes: Sequence[NodeInfo], request: Mapping[str, int], full_name: str) -> dict[str, int]:
    """scheduler-plugins' CheckClusterResource: subtract each node's free resources (ignoring
    the group's own pods) from ``request`` until nothing is left; return what is left (empty
    when the cluster can hold the group). Amounts in kube-scheduler's units (milli-CPU, bytes)."""
    left = {k: v for k, v in request.items() if v > 0}
    for ni in nodes:
        if not left:
            break
        if ni.node is None:
            continue
        free = _node_free(ni, full_name)
        for k in list(left):
            rest = left[k] - free.get(k, 0)
            if rest <= 0:
                del left[k]
            else:
                left[k] = rest
    return left


def _show(name: str, amount: int) -> str:
    if name == "cpu":
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    return str(amount)
