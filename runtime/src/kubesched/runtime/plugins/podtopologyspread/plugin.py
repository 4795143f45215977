"""PodTopologySpread: kube-scheduler's ``pkg/scheduler/framework/plugins/podtopologyspread``
(plugin.go, filtering.go, scoring.go, common.go), ported with v1.36 semantics.

* PreFilter/Filter enforce the ``DoNotSchedule`` constraints: for each constraint,
  ``matching pods in the node's domain + (1 if the pod itself matches) - global minimum``
  must not exceed ``maxSkew``; the global minimum is 0 while fewer than ``minDomains``
  domains are eligible. PreFilter keeps, per constraint, the matching-pod count per domain
  and the two "critical paths" (smallest domains) so that preemption can update them with
  pre_filter_add_pod/pre_filter_remove_pod.
* PreScore/Score/NormalizeScore rank nodes for the ``ScheduleAnyway`` constraints:
  ``score = sum(count(domain) * log(#domains + 2) + maxSkew - 1)``, rounded, then reversed and
  scaled so the emptiest domain gets 100. Nodes missing a topology key are scored 0.
* Pods without constraints get the default constraints (the system ones, or
  ``defaultConstraints`` with ``defaultingType: List``) with a selector deduced from the
  Services, ReplicationControllers, ReplicaSets and StatefulSets that select the pod.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
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
    Handle,
    InvalidObjectError,
    Node,
    NodeColumns,
    NodeInfo,
    NodeScore,
    Pod,
    QueueingHint,
    StateData,
    Status,
    hookimpl,
)
from kubesched.sdk.columns import rows_of

from ...podindex import PodIndex, snapshot_columns
from ..helper import SKIP, as_views
from .args import DO_NOT_SCHEDULE, SCHEDULE_ANYWAY, SYSTEM_DEFAULTING, PodTopologySpreadArgs
from .columns import (
    FilterColumns,
    ScoreColumns,
    filter_codes,
    normalize_rows,
    pre_filter_counts,
    pre_score_counts,
    score_rows,
)
from .common import (
    HONOR,
    LABEL_HOSTNAME,
    LABEL_TOPOLOGY_ZONE,
    TopologySpreadConstraint,
    count_pods_match_selector,
    default_selector,
    filter_topology_spread_constraints,
    match_node_inclusion_policies,
    node_affinity_matcher,
    node_labels_match_spread_constraints,
    pod_labels_match_spread_constraints,
)

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "PodTopologySpread",
]

NAME = "PodTopologySpread"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

#: Filter's reason when the skew would exceed maxSkew.
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
#: Filter's reason when the node lacks a constraint's topology key.
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

#: systemDefaultConstraints (defaultingType: System).
SYSTEM_DEFAULT_CONSTRAINTS: tuple[dict[str, Any], ...] = (
    {"topologyKey": LABEL_HOSTNAME, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 3},
    {"topologyKey": LABEL_TOPOLOGY_ZONE, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 5},
)

_MAX_INT32 = 2**31 - 1
_INVALID_SCORE = -1
_NOT_FOUND = "not found"  # framework.ErrNotFound, what CycleState.Read returns


# --- PreFilter state ---------------------------------------------------------------------------------


class _CriticalPaths:
    """criticalPaths: the two domains with the fewest matching pods, ``paths[0]`` holding the
    minimum (``paths[1]`` is >= but not necessarily the second minimum).

    CAVEAT (as in kube-scheduler): two paths are enough only because preemption removes pods
    from one node at a time, each node on its own copy of the state.
    """

    __slots__ = ("paths",)

    def __init__(self, paths: list[list[Any]] | None = None) -> None:
        # newCriticalPaths: {{"", MaxInt32}, {"", MaxInt32}}
        self.paths: list[list[Any]] = (
            paths if paths is not None else [["", _MAX_INT32], ["", _MAX_INT32]]
        )

    def update(self, tp_val: str, num: int) -> None:
        p = self.paths
        # first verify if `tp_val` exists or not
        i = 0 if tp_val == p[0][0] else 1 if tp_val == p[1][0] else -1
        if i >= 0:
            p[i][1] = num
            if p[0][1] > p[1][1]:
                p[0], p[1] = p[1], p[0]
        elif num < p[0][1]:
            # paths[1] gets paths[0]; paths[0] gets the new value
            p[1] = p[0]
            p[0] = [tp_val, num]
        elif num < p[1][1]:
            p[1] = [tp_val, num]

    def clone(self) -> _CriticalPaths:
        return _CriticalPaths([list(self.paths[0]), list(self.paths[1])])

    def as_tuples(self) -> tuple[tuple[str, int], tuple[str, int]]:
        return (tuple(self.paths[0]), tuple(self.paths[1]))  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f"criticalPaths({self.paths!r})"


class PreFilterState(StateData):
    """preFilterState: computed at PreFilter, read at Filter, updated by AddPod/RemovePod.

    ``constraints`` are the pod's DoNotSchedule constraints; per constraint ``i``:
    ``critical_paths[i]``, ``tp_value_to_match_num[i]`` (domain -> matching pods) and
    ``self_match[i]`` (whether the pod itself matches the selector; fixed for the cycle).
    """

    __slots__ = ("columns", "constraints", "critical_paths", "self_match", "tp_value_to_match_num")

    def __init__(
        self,
        constraints: list[TopologySpreadConstraint] | None = None,
        critical_paths: list[_CriticalPaths] | None = None,
        tp_value_to_match_num: list[dict[str, int]] | None = None,
        self_match: list[int] | None = None,
    ) -> None:
        self.constraints = constraints or []
        self.critical_paths = critical_paths or []
        self.tp_value_to_match_num = tp_value_to_match_num or []
        self.self_match = self_match or []
        #: the arrays of the Filter column form (None: it declines)
        self.columns: FilterColumns | None = None

    def min_match_num(self, i: int, min_domains: int) -> int:
        """The global minimum for the skew, taking minDomains into account."""
        if len(self.tp_value_to_match_num[i]) < min_domains:
            # Fewer eligible domains than minDomains: the global minimum is treated as 0.
            return 0
        return self.critical_paths[i].paths[0][1]

    def clone(self) -> PreFilterState:
        # Constraints (and self_match) are shared because they don't change.
        return PreFilterState(
            self.constraints,
            [p.clone() for p in self.critical_paths],
            [dict(m) for m in self.tp_value_to_match_num],
            self.self_match,
        )


class PreScoreState(StateData):
    """preScoreState: computed at PreScore, read at Score and NormalizeScore.

    ``ignored_nodes`` miss some topology key; ``topology_value_to_pod_counts[i]`` maps the
    domains of the filtered nodes to matching pods (not kept for the hostname key: Score counts
    those on the node); ``topology_normalizing_weight[i]`` is ``log(#domains + 2)``.
    """

    __slots__ = (
        "columns",
        "constraints",
        "ignored_nodes",
        "topology_normalizing_weight",
        "topology_value_to_pod_counts",
    )

    def __init__(self) -> None:
        self.constraints: list[TopologySpreadConstraint] = []
        self.ignored_nodes: set[str] = set()
        self.topology_value_to_pod_counts: list[dict[str, int]] = []
        self.topology_normalizing_weight: list[float] = []
        #: the arrays of the Score column form (None: it declines)
        self.columns: ScoreColumns | None = None

    def clone(self) -> PreScoreState:
        # Not mutated after PreScore: no need to copy (as kube-scheduler).
        return self


def topology_normalizing_weight(size: int) -> float:
    """log(size + 2): in <1.09, 8.52> for 1..5000 domains."""
    return math.log(size + 2)


def score_for_count(cnt: int, max_skew: int, tp_weight: float) -> float:
    """``maxSkew - 1`` is added so that differences between domains are watered down."""
    return cnt * tp_weight + (max_skew - 1)


def _go_round(x: float) -> int:
    """math.Round: half away from zero."""
    t = math.trunc(x)
    if abs(x - t) >= 0.5:  # exact: x - trunc(x) has no rounding error
        t += 1 if x > 0 else -1
    return t


def _uid(pod: Pod) -> str:
    # The API object's UID (empty when unset), not the SDK's namespace/name fallback.
    return str(pod.metadata.get("uid") or "")


# --- the plugin ---------------------------------------------------------------------------------------


class PodTopologySpread:
    """Spreads pods over topology domains (zones, nodes, ...) per ``topologySpreadConstraints``."""

    name = NAME
    Args = PodTopologySpreadArgs
    #: read through handle.objects: default constraints select pods by their Services,
    #: ReplicationControllers, ReplicaSets and StatefulSets
    watches = (
        ("v1", "Service"),
        ("v1", "ReplicationController"),
        ("apps/v1", "ReplicaSet"),
        ("apps/v1", "StatefulSet"),
    )
    args_kind = "PodTopologySpreadArgs"

    def __init__(self, args: PodTopologySpreadArgs | None, handle: Handle) -> None:
        if args is None:
            args = PodTopologySpreadArgs()
            args.validate()
        self._handle = handle
        self.system_defaulted = args.defaulting_type == SYSTEM_DEFAULTING
        self.default_constraints: list[Mapping[str, Any]] = (
            list(SYSTEM_DEFAULT_CONSTRAINTS)
            if self.system_defaulted
            else list(args.default_constraints)
        )
        # Feature gates, at their v1.36 defaults (on; NodeInclusionPolicyInPodTopologySpread is GA). Unit tests switch them off to check the
        # behaviour kube-scheduler keeps for a disabled gate.
        self.enable_node_inclusion_policy = True
        self.enable_match_label_keys = True
        #: the parsed default constraints per (action, feature gates), when no default
        #: constraint has matchLabelKeys (they do not depend on the pod then)
        self._templates: dict[tuple[str, bool, bool], list[TopologySpreadConstraint]] = {}
        #: matching pods per node, kept up to date (PreFilter/PreScore read it)
        self.index = PodIndex()
        #: build PreFilter/PreScore states from the index (off: the scans, as kube-scheduler)
        self.use_index = True

    # --- constraints ------------------------------------------------------------------------------
    def _filter_constraints(
        self,
        constraints: Sequence[Mapping[str, Any]],
        pod_labels: Mapping[str, str],
        action: str,
        field: str,
    ) -> list[TopologySpreadConstraint]:
        return filter_topology_spread_constraints(
            constraints,
            pod_labels,
            action,
            enable_match_label_keys=self.enable_match_label_keys,
            enable_node_inclusion_policy=self.enable_node_inclusion_policy,
            field=field,
        )

    def _default_templates(self, pod: Pod, action: str) -> list[TopologySpreadConstraint]:
        """The default constraints for ``action``, parsed (their selector is replaced by the
        caller). Without ``matchLabelKeys`` they do not depend on the pod: parsed once per
        action and feature gates, and shared (the caller copies each before use)."""
        key = (action, self.enable_match_label_keys, self.enable_node_inclusion_policy)
        got = self._templates.get(key)
        if got is not None:
            return got
        constraints = self._filter_constraints(
            self.default_constraints, pod.labels, action, "defaultConstraints"
        )
        if not any(c.get("matchLabelKeys") for c in self.default_constraints):
            self._templates[key] = constraints
        return constraints

    def build_default_constraints(self, pod: Pod, action: str) -> list[TopologySpreadConstraint]:
        """buildDefaultConstraints: the default constraints for ``action`` with the selector
        deduced from the pod's Services and controller; none if that selector is empty."""
        constraints = self._default_templates(pod, action)
        if not constraints:
            return []
        selector = default_selector(pod, self._handle.objects)
        if selector.is_empty():
            return []
        return [c.copy_with_selector(selector) for c in constraints]

    def get_constraints(
        self, pod: Pod, action: str = DO_NOT_SCHEDULE
    ) -> list[TopologySpreadConstraint]:
        """getConstraints: the pod's constraints for ``action``, or the default ones."""
        tsc = pod.topology_spread_constraints
        if tsc:
            return self._filter_constraints(
                tsc, pod.labels, action, "spec.topologySpreadConstraints"
            )
        return self.build_default_constraints(pod, action)

    # --- PreFilter ----------------------------------------------------------------------------------
    def cal_pre_filter_state(self, pod: Pod, all_nodes: Sequence[NodeInfo]) -> PreFilterState:
        """calPreFilterState: how the matching pods are spread over the domains."""
        constraints = self.get_constraints(pod, DO_NOT_SCHEDULE)
        if not constraints:
            return PreFilterState()
        n = len(constraints)
        tp_value_to_match_num: list[dict[str, int]] = [{} for _ in range(n)]
        affinity_match = node_affinity_matcher(pod)
        enable_nip = self.enable_node_inclusion_policy
        ns = pod.namespace
        keys = [c.topology_key for c in constraints]
        for node_info in all_nodes:
            node = node_info.node
            if node is None:
                continue
            if not enable_nip and not affinity_match(node):
                # spreading is applied to nodes that pass those filters.
                continue
            labels = node.labels
            # Ensure current node's labels contain all topologyKeys in constraints.
            if not all(k in labels for k in keys):
                continue
            pods = node_info.pods
            for i, c in enumerate(constraints):
                if enable_nip and not match_node_inclusion_policies(c, pod, node, affinity_match):
                    continue
                value = labels[c.topology_key]
                counts = tp_value_to_match_num[i]
                counts[value] = counts.get(value, 0) + count_pods_match_selector(
                    pods, c.selector, ns
                )
        critical_paths = []
        for i in range(n):
            paths = _CriticalPaths()
            for value, num in tp_value_to_match_num[i].items():
                paths.update(value, num)
            critical_paths.append(paths)
        pod_labels = pod.labels
        self_match = [1 if c.selector.matches(pod_labels) else 0 for c in constraints]
        return PreFilterState(constraints, critical_paths, tp_value_to_match_num, self_match)

    def _indexed_columns(self, nodes: Sequence[NodeInfo] | None) -> NodeColumns | None:
        """The snapshot's columns when PreFilter/PreScore may count through the index: the
        index is on, node inclusion policies are on, and ``nodes`` (PreFilter's) are the
        snapshot's."""
        if not self.use_index or not self.enable_node_inclusion_policy:
            return None
        return snapshot_columns(self._handle, nodes)

    def _pre_filter_from_index(self, pod: Pod, columns: NodeColumns) -> PreFilterState:
        """calPreFilterState through the index (the same state, with the column form's arrays)."""
        constraints = self.get_constraints(pod, DO_NOT_SCHEDULE)
        if not constraints:
            return PreFilterState()
        matched, paths, fc = pre_filter_counts(self.index, columns, pod, constraints)
        pod_labels = pod.labels
        self_match = [1 if c.selector.matches(pod_labels) else 0 for c in constraints]
        s = PreFilterState(constraints, [_CriticalPaths(p) for p in paths], matched, self_match)
        s.columns = fc
        return s

    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        try:
            cols = self._indexed_columns(nodes)
            s = self.cal_pre_filter_state(pod, nodes) if cols is None else self._pre_filter_from_index(pod, cols)
        except InvalidObjectError as e:
            return Status.failed(
                f"get constraints from pod: obtaining pod's hard topology spread constraints: {e}",
                e,
            )
        if not s.constraints:
            return SKIP
        state.write(PRE_FILTER_STATE_KEY, s)
        return None

    def _update_with_pod(
        self,
        s: PreFilterState,
        updated_pod: Pod,
        preemptor_pod: Pod,
        node_info: NodeInfo,
        delta: int,
    ) -> None:
        node = node_info.node
        if updated_pod.namespace != preemptor_pod.namespace or node is None:
            return
        s.columns = None  # the counts change: the column form declines
        labels = node.labels
        if not node_labels_match_spread_constraints(labels, s.constraints):
            return
        affinity_match = node_affinity_matcher(preemptor_pod)
        if not self.enable_node_inclusion_policy and not affinity_match(node):
            # spreading is applied to nodes that pass those filters.
            return
        pod_labels = updated_pod.labels
        for i, c in enumerate(s.constraints):
            if not c.selector.matches(pod_labels):
                continue
            if self.enable_node_inclusion_policy and not match_node_inclusion_policies(
                c, preemptor_pod, node, affinity_match
            ):
                continue
            v = labels[c.topology_key]
            counts = s.tp_value_to_match_num[i]
            counts[v] = counts.get(v, 0) + delta
            s.critical_paths[i].update(v, counts[v])

    @hookimpl
    def pre_filter_add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return _state_error(PRE_FILTER_STATE_KEY, s)
        self._update_with_pod(s, pod_to_add, pod_to_schedule, node_info, 1)
        return None

    @hookimpl
    def pre_filter_remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return _state_error(PRE_FILTER_STATE_KEY, s)
        self._update_with_pod(s, pod_to_remove, pod_to_schedule, node_info, -1)
        return None

    # --- Filter ---------------------------------------------------------------------------------------
    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return _state_error(PRE_FILTER_STATE_KEY, s)
        constraints = s.constraints
        # An "empty" state is legit: it tolerates every pod.
        if not constraints:
            return None
        labels = node_info.node.labels  # type: ignore[union-attr]
        for i, c in enumerate(constraints):
            tp_val = labels.get(c.topology_key)
            if tp_val is None:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_LABEL_NOT_MATCH)
            counts = s.tp_value_to_match_num[i]
            # 'existing matching num' + 'if self-match (1 or 0)' - 'global minimum' <= 'maxSkew'
            if len(counts) < c.min_domains:
                min_match_num = 0
            else:
                min_match_num = s.critical_paths[i].paths[0][1]
            skew = counts.get(tp_val, 0) + s.self_match[i] - min_match_num
            if skew > c.max_skew:
                return Status(Code.UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH)
        return None

    @hookimpl
    def filter_columns(self, state: CycleState, pod: Pod, columns: NodeColumns) -> Any:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState) or s.columns is None or s.columns.columns is not columns:
            return None
        return filter_codes(s.columns, s.constraints, s.self_match), (
            None,
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_LABEL_NOT_MATCH),
            Status(Code.UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH),
        )

    # --- PreScore ---------------------------------------------------------------------------------------
    def _score_constraints(self, pod: Pod) -> list[TopologySpreadConstraint]:
        tsc = pod.topology_spread_constraints
        if tsc:
            return self._filter_constraints(tsc, pod.labels, SCHEDULE_ANYWAY, "spec.topologySpreadConstraints")
        return self.build_default_constraints(pod, SCHEDULE_ANYWAY)

    def init_pre_score_state(
        self,
        s: PreScoreState,
        pod: Pod,
        filtered_nodes: Sequence[NodeInfo],
        require_all_topologies: bool,
    ) -> None:
        """initPreScoreState: the constraints, the ignored nodes, the domains of the filtered
        nodes and the per-constraint normalizing weight."""
        s.constraints = self._score_constraints(pod)
        if not s.constraints:
            return
        n = len(s.constraints)
        s.topology_value_to_pod_counts = [{} for _ in range(n)]
        topo_size = [0] * n
        for node_info in filtered_nodes:
            node = node_info.node
            if node is None:
                continue
            labels = node.labels
            if require_all_topologies and not node_labels_match_spread_constraints(
                labels, s.constraints
            ):
                # Nodes which don't have all required topologyKeys present are ignored when scoring.
                s.ignored_nodes.add(node.name)
                continue
            for i, c in enumerate(s.constraints):
                # per-node counts are calculated during Score.
                if c.topology_key == LABEL_HOSTNAME:
                    continue
                value = labels.get(c.topology_key, "")
                counts = s.topology_value_to_pod_counts[i]
                if value not in counts:
                    counts[value] = 0
                    topo_size[i] += 1
        weights = []
        for i, c in enumerate(s.constraints):
            sz = topo_size[i]
            if c.topology_key == LABEL_HOSTNAME:
                sz = len(filtered_nodes) - len(s.ignored_nodes)
            weights.append(topology_normalizing_weight(sz))
        s.topology_normalizing_weight = weights

    @hookimpl
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        all_nodes = self._handle.snapshot().list()
        if not all_nodes:
            # No need to score.
            return SKIP
        s = PreScoreState()
        # Only require that nodes have all the topology labels if using non-system-default
        # spreading rules. This allows nodes that don't have a zone label to still have
        # hostname spreading.
        require_all_topologies = bool(pod.topology_spread_constraints) or not self.system_defaulted
        cols = self._indexed_columns(None)
        if cols is not None:
            # the constraints first: a pod without any is skipped without looking at a node
            try:
                s.constraints = self._score_constraints(pod)
            except InvalidObjectError as e:
                return Status.failed(
                    f"calculating preScoreState: obtaining pod's soft topology spread constraints: {e}",
                    e,
                )
            if not s.constraints:
                return SKIP
            rows = _rows_in(cols, nodes)
            if rows is not None:
                s.ignored_nodes, s.topology_value_to_pod_counts, s.topology_normalizing_weight, s.columns = pre_score_counts(
                    self.index, cols, pod, s.constraints, rows, require_all_topologies
                )
                state.write(PRE_SCORE_STATE_KEY, s)
                return None
            s = PreScoreState()
        try:
            self.init_pre_score_state(s, pod, nodes, require_all_topologies)
        except InvalidObjectError as e:
            return Status.failed(
                f"calculating preScoreState: obtaining pod's soft topology spread constraints: {e}",
                e,
            )
        # Skip if the pod has no soft topology spread constraints.
        if not s.constraints:
            return SKIP

        affinity_match = node_affinity_matcher(pod)
        enable_nip = self.enable_node_inclusion_policy
        constraints = s.constraints
        ns = pod.namespace
        for node_info in all_nodes:
            node = node_info.node
            if node is None:
                continue
            if not enable_nip and not affinity_match(node):
                # `node` should satisfy the pod's NodeSelector/NodeAffinity.
                continue
            labels = node.labels
            # All topologyKeys need to be present in `node`.
            if require_all_topologies and not node_labels_match_spread_constraints(
                labels, constraints
            ):
                continue
            for i, c in enumerate(constraints):
                if enable_nip and not match_node_inclusion_policies(c, pod, node, affinity_match):
                    continue
                value = labels.get(c.topology_key, "")
                counts = s.topology_value_to_pod_counts[i]
                # Skip domains with no candidate node; hostname domains are counted in Score.
                if value not in counts:
                    continue
                counts[value] += count_pods_match_selector(node_info.pods, c.selector, ns)
        state.write(PRE_SCORE_STATE_KEY, s)
        return None

    # --- Score ------------------------------------------------------------------------------------------
    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Any:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return 0, _state_error(PRE_SCORE_STATE_KEY, s, prefix="error reading")
        node = node_info.node
        if node is None or node.name in s.ignored_nodes:
            return 0
        # For each present <pair>, the node gets a credit of <matchSum>.
        labels = node.labels
        score = 0.0
        for i, c in enumerate(s.constraints):
            tp_val = labels.get(c.topology_key)
            if tp_val is None:
                continue
            if c.topology_key == LABEL_HOSTNAME:
                cnt = count_pods_match_selector(node_info.pods, c.selector, pod.namespace)
            else:
                cnt = s.topology_value_to_pod_counts[i].get(tp_val, 0)
            score += cnt * s.topology_normalizing_weight[i] + (c.max_skew - 1)
        return _go_round(score)

    @hookimpl
    def score_columns(self, state: CycleState, pod: Pod, columns: NodeColumns, rows: Any) -> Any:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState) or s.columns is None or s.columns.columns is not columns:
            return None
        return score_rows(s.columns, s.constraints, s.topology_normalizing_weight, rows)

    @hookimpl
    def normalize_score_columns(self, state: CycleState, pod: Pod, scores: Any) -> Any:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState) or s.columns is None or s.columns.last_ignored is None:
            return _state_error(PRE_SCORE_STATE_KEY, s, prefix="error reading")
        return normalize_rows(np.asarray(scores, np.int64), s.columns.last_ignored, MAX_NODE_SCORE)

    @hookimpl
    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return _state_error(PRE_SCORE_STATE_KEY, s, prefix="error reading")
        ignored = s.ignored_nodes
        min_score = 2**63 - 1
        max_score = 0
        for ns in scores:
            # it's mandatory to check if the node is ignored
            if ns.name in ignored:
                ns.score = _INVALID_SCORE
                continue
            if ns.score < min_score:
                min_score = ns.score
            if ns.score > max_score:
                max_score = ns.score
        for ns in scores:
            if ns.score == _INVALID_SCORE:
                ns.score = 0
                continue
            if max_score == 0:
                ns.score = MAX_NODE_SCORE
                continue
            ns.score = MAX_NODE_SCORE * (max_score + min_score - ns.score) // max_score
        return None

    # --- EnqueueExtensions ----------------------------------------------------------------------------
    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        # With queueing hints (GA since v1.34) a Pod update that adds a toleration may
        # help a constraint with nodeTaintsPolicy: Honor, so UpdatePodToleration is registered.
        pod_actions = (
            ActionType.ADD
            | ActionType.UPDATE_POD_LABEL
            | ActionType.UPDATE_POD_TOLERATION
            | ActionType.DELETE
        )
        node_actions = (
            ActionType.ADD
            | ActionType.DELETE
            | ActionType.UPDATE_NODE_LABEL
            | ActionType.UPDATE_NODE_TAINT
        )
        return [
            # Add: an assigned pod may fill a domain that was too empty; UpdatePodLabel: a label
            # change (e.g. removal) may change what matches; Delete: a removed pod may lower a skew.
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD.value, pod_actions),
                self.is_schedulable_after_pod_change,
            ),
            # Node add|delete|updateLabel|updateTaint may change the topology domains.
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE.value, node_actions),
                self.is_schedulable_after_node_change,
            ),
        ]

    def is_schedulable_after_pod_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """isSchedulableAfterPodChange."""
        target = pod
        original, modified = as_views(Pod, old_obj, new_obj)
        if (modified is not None and not _involved_in_topology_spreading(modified, target)) or (
            original is not None and not _involved_in_topology_spreading(original, target)
        ):
            # unscheduled, or in another namespace: cannot make the target pod schedulable
            return QueueingHint.SKIP
        try:
            constraints = self.get_constraints(target, DO_NOT_SCHEDULE)
        except Exception:
            return QueueingHint.QUEUE
        if modified is not None and original is not None:
            # The target pod itself got a new toleration and a constraint honors taints.
            if (
                _uid(target) == _uid(modified)
                and (modified.spec.get("tolerations") or [])
                != (original.spec.get("tolerations") or [])
                and any(c.node_taints_policy == HONOR for c in constraints)
            ):
                return QueueingHint.QUEUE
            if dict(modified.labels) == dict(original.labels):
                return QueueingHint.SKIP
            for c in constraints:
                if c.selector.matches(original.labels) != c.selector.matches(modified.labels):
                    # The pod now matches (or no longer matches) this constraint.
                    return QueueingHint.QUEUE
            return QueueingHint.SKIP
        if modified is not None:
            # Added: Queue when the pod matches a constraint's selector.
            if pod_labels_match_spread_constraints(constraints, modified.labels):
                return QueueingHint.QUEUE
            return QueueingHint.SKIP
        # Deleted: Queue when the pod matched a constraint's selector.
        if original is not None and pod_labels_match_spread_constraints(
            constraints, original.labels
        ):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def is_schedulable_after_node_change(
        self, pod: Pod, old_obj: Any, new_obj: Any
    ) -> QueueingHint:
        """isSchedulableAfterNodeChange: Queue when the node has the topology keys (or had)."""
        try:
            constraints = self.get_constraints(pod, DO_NOT_SCHEDULE)
        except Exception:
            return QueueingHint.QUEUE
        original, modified = as_views(Node, old_obj, new_obj)
        original_labels = original.labels if original is not None else {}
        modified_labels = modified.labels if modified is not None else {}
        original_matching = original is not None and node_labels_match_spread_constraints(
            original_labels, constraints
        )
        modified_matching = modified is not None and node_labels_match_spread_constraints(
            modified_labels, constraints
        )
        if original is not None and modified is not None:
            # Update: Queue when the node starts or stops matching, or still matches and a
            # topology value or the taints changed.
            if original_matching != modified_matching:
                return QueueingHint.QUEUE
            if modified_matching and (
                _topology_key_labels_changed(original_labels, modified_labels, constraints)
                or (original.spec.get("taints") or [])
                != (modified.spec.get("taints") or [])
            ):
                return QueueingHint.QUEUE
            return QueueingHint.SKIP
        if modified is not None:
            # Add: Queue when the created node matches.
            return QueueingHint.QUEUE if modified_matching else QueueingHint.SKIP
        # Delete: Queue when the deleted node matched.
        return QueueingHint.QUEUE if original_matching else QueueingHint.SKIP


def _rows_in(columns: NodeColumns, nodes: Sequence[NodeInfo]) -> Any:
    """The rows of ``nodes`` in ``columns``, or None when one of them is not a node of the
    columns."""
    try:
        return rows_of(columns, nodes)
    except KeyError:
        return None


def _involved_in_topology_spreading(incoming: Pod, pod_with_spreading: Pod) -> bool:
    """involvedInTopologySpreading (v1.36): the pod itself, or a pod in its namespace that is
    assigned or nominated to a node."""
    if _uid(incoming) == _uid(pod_with_spreading):
        return True
    if incoming.node_name == "" and incoming.nominated_node_name == "":
        return False
    return incoming.namespace == pod_with_spreading.namespace


def _topology_key_labels_changed(
    original: Mapping[str, str],
    modified: Mapping[str, str],
    constraints: Sequence[TopologySpreadConstraint],
) -> bool:
    """checkTopologyKeyLabelsChanged."""
    for c in constraints:
        if original.get(c.topology_key, "") != modified.get(c.topology_key, ""):
            return True
    return False


def _state_error(key: str, value: Any, prefix: str = "reading") -> Status:
    if value is None:
        return Status.failed(f"{prefix} {_go_quote(key)} from cycleState: {_NOT_FOUND}")
    kind = "preFilterState" if key == PRE_FILTER_STATE_KEY else "preScoreState"
    sep = "  " if key == PRE_SCORE_STATE_KEY else " "
    return Status.failed(f"{value!r}{sep}convert to podtopologyspread.{kind} error")


def _go_quote(s: str) -> str:
    return '"' + s + '"'
