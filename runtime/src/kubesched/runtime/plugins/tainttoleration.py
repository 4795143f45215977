"""TaintToleration: filter out nodes with NoSchedule/NoExecute taints the pod doesn't tolerate, and
prefer nodes with fewer untolerated PreferNoSchedule taints.

Ported from kube-scheduler ``pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go``
at Kubernetes v1.36.3 (Go module ``k8s.io/kubernetes@v1.36.3``):

* SchedulerQueueingHints is GA (locked on), so the queueing-hint event set is used.
* The TaintTolerationComparisonOperators gate (alpha, off by default in v1.36) is off: a
  ``Gt``/``Lt`` toleration tolerates nothing (in Filter, Score and the node-change hint).
* The Filter reason is the generic ``node(s) had untolerated taint(s)``: kubernetes#134740 removed
  the taint key and value from the message (v1.34.0/v1.34.1 still said
  ``node(s) had untolerated taint {key: value}``; cherry-picked to release-1.34 as kubernetes#135023).
* ``sign_pod`` is v1.36's SignPod (``TolerationsSigner``): the tolerations, sorted (the result does
  not depend on their order).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from kubesched.sdk import (
    MAX_NODE_SCORE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    InvalidObjectError,
    Node,
    NodeColumns,
    NodeInfo,
    NodeScore,
    Pod,
    QueueingHint,
    StateData,
    Status,
    Taint,
    Toleration,
    default_normalize_columns,
    find_untolerated_taint,
    freeze,
    hookimpl,
)

from .helper import as_views, default_normalize_score

__all__ = ["ERR_REASON_NOT_MATCH", "ERR_REASON_UNTOLERATED", "TaintToleration"]

NAME = "TaintToleration"
#: CycleState key of the data PreScore computes for Score.
PRE_SCORE_STATE_KEY = "PreScore" + NAME
#: Go's exported ErrReasonNotMatch (not returned by Filter any more; kept for parity).
ERR_REASON_NOT_MATCH = "node(s) had taints that the pod didn't tolerate"
#: The Filter reason.
ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"

_PREFER_NO_SCHEDULE = "PreferNoSchedule"
#: helper.DoNotScheduleTaintsFilterFunc: only these effects reject a pod.
_DO_NOT_SCHEDULE = frozenset(("NoSchedule", "NoExecute"))


class _PreScoreState(StateData):
    __slots__ = ("tolerations_prefer_no_schedule",)

    def __init__(self, tolerations_prefer_no_schedule: tuple[Toleration, ...]) -> None:
        self.tolerations_prefer_no_schedule = tolerations_prefer_no_schedule

    def clone(self) -> _PreScoreState:
        return self  # never mutated


class TaintToleration:
    """Filter, PreScore, Score and NormalizeScore on node taints and pod tolerations."""

    name = NAME

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.handle = handle
        self._zeros: Any = None

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # With queueing hints there is no preCheck, so UpdateNodeLabel is not needed.
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE.value, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                self.is_schedulable_after_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD.value, ActionType.UPDATE_POD_TOLERATION),
                self.is_schedulable_after_pod_toleration_change,
            ),
        ]

    def is_schedulable_after_node_change(self, pod: Any, old_obj: Any, new_obj: Any) -> QueueingHint:
        try:
            original, modified = as_views(Node, old_obj, new_obj)
            if modified is None:
                return QueueingHint.QUEUE
            tolerations = (pod if isinstance(pod, Pod) else Pod(pod)).tolerations
            was_untolerated = True
            if original is not None:
                was_untolerated = find_untolerated_taint(original.taints, tolerations, _DO_NOT_SCHEDULE) is not None
            is_untolerated = find_untolerated_taint(modified.taints, tolerations, _DO_NOT_SCHEDULE) is not None
        except (TypeError, InvalidObjectError):
            return QueueingHint.QUEUE  # Go: (Queue, err)
        if was_untolerated and not is_untolerated:
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def is_schedulable_after_pod_toleration_change(self, pod: Any, old_obj: Any, new_obj: Any) -> QueueingHint:
        try:
            _, modified = as_views(Pod, old_obj, new_obj)
        except TypeError:
            return QueueingHint.QUEUE  # Go: (Queue, err)
        if modified is None:
            return QueueingHint.QUEUE
        if (pod if isinstance(pod, Pod) else Pod(pod)).uid == modified.uid:
            # The unschedulable pod itself got a new toleration.
            return QueueingHint.QUEUE
        # Another pod's tolerations don't change this plugin's decision.
        return QueueingHint.SKIP

    @hookimpl
    def sign_pod(self, pod: Pod) -> Hashable:
        # freeze is canonical JSON text, so it also orders the tolerations
        return freeze(sorted(pod.spec.get("tolerations") or [], key=lambda t: str(freeze(t))))

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        taints = node_info.node.taints
        if not taints:
            return None
        if find_untolerated_taint(taints, pod.tolerations, _DO_NOT_SCHEDULE) is None:
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNTOLERATED)

    @hookimpl
    def filter_batch(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[Status | None]:
        tolerations = pod.tolerations
        out: list[Status | None] = []
        for ni in nodes:
            taints = ni.node.taints
            if not taints or find_untolerated_taint(taints, tolerations, _DO_NOT_SCHEDULE) is None:
                out.append(None)
            else:
                out.append(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNTOLERATED))
        return out

    @hookimpl
    def filter_columns(self, pod: Pod, columns: NodeColumns) -> tuple[Any, list[Status | None]]:
        # per distinct taint list: 1 when a NoSchedule/NoExecute taint is not tolerated
        codes, sets = columns.taint_sets()
        if any(sets):
            tolerations = pod.tolerations
            bad = [bool(taints) and find_untolerated_taint(taints, tolerations, _DO_NOT_SCHEDULE) is not None for taints in sets]
            if any(bad):
                return np.array(bad, np.int8)[codes], [None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNTOLERATED)]
        # no node has a taint the pod does not tolerate (the usual case)
        return self._passes(columns.n), [None]

    def _passes(self, n: int) -> Any:
        """Codes for "every node passes": one read-only array per node count."""
        got = self._zeros
        if got is None or len(got) != n:
            got = self._zeros = np.zeros(n, np.int8)
            got.flags.writeable = False
        return got

    @hookimpl
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        # An empty effect means all effects, PreferNoSchedule included.
        tolerations = tuple(t for t in pod.tolerations if not t.effect or t.effect == _PREFER_NO_SCHEDULE)
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(tolerations))
        return None

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Any:
        taints = node_info.node.taints
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, _PreScoreState):
            return 0, _state_error(s)
        if not taints:
            return 0
        return _count_intolerable(taints, s.tolerations_prefer_no_schedule)

    @hookimpl
    def score_batch(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[Any] | Status:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, _PreScoreState):
            return _state_error(s)
        tolerations = s.tolerations_prefer_no_schedule
        return [_count_intolerable(taints, tolerations) if (taints := ni.node.taints) else 0 for ni in nodes]

    @hookimpl
    def score_columns(self, state: CycleState, columns: NodeColumns, rows: Any) -> Any:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, _PreScoreState):
            return None  # the per-node form reports the error
        # per distinct taint list: the number of untolerated PreferNoSchedule taints
        codes, sets = columns.taint_sets()
        if not any(sets):
            return np.zeros(len(rows), np.int64)  # no node has taints
        tolerations = s.tolerations_prefer_no_schedule
        counts = np.fromiter((_count_intolerable(taints, tolerations) if taints else 0 for taints in sets), np.int64, len(sets))
        return counts[codes[rows]]

    @hookimpl
    def normalize_score_columns(self, scores: Any) -> Any:
        return default_normalize_columns(MAX_NODE_SCORE, True, scores)

    @hookimpl
    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        # More untolerated PreferNoSchedule taints mean a lower score.
        return default_normalize_score(MAX_NODE_SCORE, True, scores)


def _count_intolerable(taints: Sequence[Taint], tolerations: Sequence[Toleration]) -> int:
    """countIntolerableTaintsPreferNoSchedule."""
    count = 0
    for taint in taints:
        if taint.effect != _PREFER_NO_SCHEDULE:
            continue
        for tol in tolerations:
            if tol.tolerates(taint):
                break
        else:
            count += 1
    return count


def _state_error(s: Any) -> Status:
    if s is None:
        return Status(Code.ERROR, f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
    return Status(Code.ERROR, f"{s!r} convert to tainttoleration.preScoreState error")
