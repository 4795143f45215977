"""InterPodAffinity: required and preferred pod affinity and anti-affinity.

A port of kube-scheduler's ``pkg/scheduler/framework/plugins/interpodaffinity`` (``plugin.go``,
``filtering.go``, ``scoring.go``) with v1.36 semantics (the filter and score formulas are
unchanged from v1.34; the pod hint changed). Sources followed (kubernetes/kubernetes):

* ``filtering.go`` of the v1.34 line, the one on ``fwk "k8s.io/kube-scheduler/framework"``
  types (``fwk.PodInfo``/``fwk.NodeInfo`` getters, ``HavePodsWithRequiredAntiAffinityList``,
  PreFilter returning Skip, no per-state lock — the lock and the memo/cache files came later);
* ``scoring.go`` as of v1.33 (``framework.PodInfo`` fields; the formulas are unchanged in
  v1.34, only the types moved to ``fwk``);
* ``plugin.go`` (events and hints) and ``plugin_test.go`` of v1.36.3;
* ``filtering_test.go`` at 072825f9a367e9ca0f73f91830945f1b7f46e0d9 and ``scoring_test.go`` at
  8a4d98ac2f6dfd69fc5649b7bb23de0add56be56;
* args validation from ``pkg/scheduler/apis/config/validation/validation_pluginargs.go``
  (``ValidateInterPodAffinityArgs``: ``not in valid range [0, 100]``) and defaults from
  ``pkg/scheduler/apis/config/v1/defaults.go`` (``SetDefaults_InterPodAffinityArgs``:
  hardPodAffinityWeight 1, ignorePreferredTermsOfExistingPods false).

* PreFilter counts, per (topology key, value): existing pods whose required anti-affinity
  matches the incoming pod; existing pods matching ALL the incoming pod's required affinity
  terms; existing pods matching each of its required anti-affinity terms. It returns Skip when
  there is nothing to check. The incoming pod's ``namespaceSelector`` is resolved against the
  Namespace objects once (``mergeAffinityTermNamespacesIfNotEmpty``); existing pods' selectors
  are matched against the incoming pod's namespace labels (a missing Namespace has none).
* Filter rejects with ``node(s) didn't match pod affinity rules`` (UnschedulableAndUnresolvable),
  ``node(s) didn't match pod anti-affinity rules`` or ``node(s) didn't satisfy existing pods
  anti-affinity rules`` (Unschedulable), and lets the first pod of a self-affine series through.
* PreScore sums weights per topology pair (the pod's preferred terms, existing pods' required
  affinity terms times ``hardPodAffinityWeight`` and their preferred terms), Score adds the
  pairs of a node, NormalizeScore scales min..max to 0..100.

``events_to_register`` and the hints follow ``plugin.go`` of v1.36: an update of the pod's own
labels queues it; an added, updated or deleted pod with neither ``nodeName`` nor
``nominatedNodeName`` is skipped (a nominated pod counts as placed); a deleted pod queues the
pod when it matched the pod's anti-affinity or the pod matches all of its required
anti-affinity terms. v1.36's ``SignPod`` (opportunistic batching) is not ported: kubesched's
``sign_pod`` promises results that depend on the node alone, which affinity never does, so the
plugin does not sign (the decisions are the same; only reuse is forgone).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.sdk import (
    MAX_NODE_SCORE,
    ActionType,
    AffinityTerm,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    EventResource,
    Node,
    NodeColumns,
    NodeInfo,
    NodeScore,
    ObjectNotFound,
    Pod,
    QueueingHint,
    Status,
    hookimpl,
)
from kubesched.sdk.selectors import NOTHING

from ...podindex import PodIndex, snapshot_columns
from ..helper import SKIP, as_views
from .columns import filter_codes, normalize_rows, pre_filter_counts, pre_score_map, score_rows
from .filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    PRE_FILTER_STATE_KEY,
    CountTables,
    PreFilterState,
    existing_anti_affinity_counts,
    incoming_affinity_anti_affinity_counts,
    satisfy_existing_pods_anti_affinity,
    satisfy_pod_affinity,
    satisfy_pod_anti_affinity,
)
from .scoring import PRE_SCORE_STATE_KEY, PreScoreState, ScoreMap, normalize, process_existing_pod
from .terms import match_all_terms, pod_terms

__all__ = ["InterPodAffinity", "InterPodAffinityArgs"]

NAME = "InterPodAffinity"

_MIN_HARD_POD_AFFINITY_WEIGHT = 0
_MAX_HARD_POD_AFFINITY_WEIGHT = 100

_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
_NO_LABELS: Mapping[str, str] = {}


@dataclass
class InterPodAffinityArgs:
    """InterPodAffinityArgs (kubescheduler.config.k8s.io/v1)."""

    #: Scoring weight for existing pods with a matching hard affinity to the incoming pod.
    hard_pod_affinity_weight: int = 1
    #: Ignore existing pods' preferred terms when the incoming pod has no preferred terms.
    ignore_preferred_terms_of_existing_pods: bool = False

    def validate(self) -> None:
        """ValidateInterPodAffinityArgs."""
        w = self.hard_pod_affinity_weight
        if w < _MIN_HARD_POD_AFFINITY_WEIGHT or w > _MAX_HARD_POD_AFFINITY_WEIGHT:
            raise ValueError(
                f"hardPodAffinityWeight: Invalid value: {w}: not in valid range "
                f"[{_MIN_HARD_POD_AFFINITY_WEIGHT}, {_MAX_HARD_POD_AFFINITY_WEIGHT}]"
            )


class InterPodAffinity:
    """Checks inter-pod affinity and anti-affinity, and scores by preferred terms."""

    name = NAME
    Args = InterPodAffinityArgs
    #: read through handle.objects (namespaceSelector terms): the runtime keeps them watched
    watches = (("v1", "Namespace"),)
    args_kind = "InterPodAffinityArgs"

    def __init__(self, args: InterPodAffinityArgs | None, handle: Any) -> None:
        self.args = args if args is not None else InterPodAffinityArgs()
        self.handle = handle
        #: pods per node, kept up to date (PreFilter counts through it)
        self.index = PodIndex()
        #: count through the index (off: the scans, as kube-scheduler)
        self.use_index = True

    # namespaces ---------------------------------------------------------------------------
    def _namespace_labels(self, namespace: str) -> Mapping[str, str]:
        """GetNamespaceLabelsSnapshot: a copy of the namespace's labels; none when the
        Namespace cannot be read."""
        try:
            ns = self.handle.objects.get("v1", "Namespace", namespace)
        except ObjectNotFound:
            return {}
        except Exception:  # the lister's error is logged and ignored in Go
            return {}
        return dict((ns.get("metadata") or {}).get("labels") or {})

    def _merge_namespaces(self, terms: Sequence[AffinityTerm], cache: list[Any]) -> tuple[AffinityTerm, ...]:
        """mergeAffinityTermNamespacesIfNotEmpty for each term of the incoming pod: the
        namespaces its namespaceSelector selects join ``namespaces`` and the selector becomes
        Nothing. An empty selector (all namespaces) stays as it is."""
        out = []
        for t in terms:
            sel = t.namespace_selector
            if sel.is_empty() or sel.is_nothing():
                out.append(t)
                continue
            if not cache:
                cache.append(self.handle.objects.list("v1", "Namespace"))
            names = set(t.namespaces)
            for ns in cache[0]:
                md = ns.get("metadata") or {}
                if sel.matches(md.get("labels") or {}):
                    names.add(str(md.get("name") or ""))
            out.append(dataclasses.replace(t, namespaces=frozenset(names), namespace_selector=NOTHING))
        return tuple(out)

    # EnqueueExtensions --------------------------------------------------------------------
    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Pod: Delete (an existing pod's anti-affinity, or a pod matching the pod's
        # anti-affinity, goes away), UpdatePodLabel (labels change whether a pod matches),
        # Add (an assigned pod may satisfy the pod's affinity).
        # Node: with queueing hints kube-scheduler has no preCheck and registers
        # Add | UpdateNodeLabel (UpdateNodeTaint only without hints).
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD.value, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
                self.is_schedulable_after_pod_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE.value, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                self.is_schedulable_after_node_change,
            ),
        ]

    def is_schedulable_after_pod_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """isSchedulableAfterPodChange."""
        original, modified = as_views(Pod, old_obj, new_obj)
        if modified is not None and original is not None and modified.uid == pod.uid:
            # The only update event registered is UpdatePodLabel: the pod's own labels changed,
            # and e.g. another pod's anti-affinity may match its old labels but not the new.
            return QueueingHint.QUEUE
        # A change of nodeName or nominatedNodeName comes as Add/Delete, so a pod that has
        # either is (about to be) on a node; only a pod with neither is skipped.
        if (modified is not None and not modified.node_name and not modified.nominated_node_name) or (
            original is not None and not original.node_name and not original.nominated_node_name
        ):
            # the added/updated/deleted pod is unscheduled: it doesn't make the pod schedulable
            return QueueingHint.SKIP
        terms = pod_terms(pod)
        if terms.required_error:
            return QueueingHint.QUEUE
        aff = terms.req_affinity
        anti = terms.req_anti_affinity
        # Note that we don't need to check each affinity individually when the pod has more
        # than one term: a **single** existing pod must satisfy **all** the terms.
        if modified is not None and original is not None:
            if not match_all_terms(aff, original, _NO_LABELS) and match_all_terms(aff, modified, _NO_LABELS):
                return QueueingHint.QUEUE
            if match_all_terms(anti, original, _NO_LABELS) and not match_all_terms(anti, modified, _NO_LABELS):
                return QueueingHint.QUEUE
            return QueueingHint.SKIP
        if modified is not None:
            # added: Queue when it matches the pod's affinity
            return QueueingHint.QUEUE if match_all_terms(aff, modified, _NO_LABELS) else QueueingHint.SKIP
        if original is None:
            return QueueingHint.QUEUE
        # deleted: Queue when it matched the pod's anti-affinity
        if match_all_terms(anti, original, _NO_LABELS):
            return QueueingHint.QUEUE
        # or when the pod matches ALL the deleted pod's required anti-affinity terms (matched
        # without namespace labels, as podMatchesAllAffinityTerms does)
        deleted_terms = pod_terms(original)
        if deleted_terms.required_error:
            return QueueingHint.QUEUE
        if match_all_terms(deleted_terms.req_anti_affinity, pod, _NO_LABELS):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def is_schedulable_after_node_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        """isSchedulableAfterNodeChange."""
        original, modified = as_views(Node, old_obj, new_obj)
        if modified is None:
            return QueueingHint.QUEUE
        terms = pod_terms(pod)
        if terms.required_error:
            return QueueingHint.QUEUE
        mod_labels = modified.labels
        # Affinity: 1. a node is added with the topology key; 2. a node gets the key;
        # 3. the node's value for the key changed.
        for t in terms.req_affinity:
            tk = t.topology_key
            if original is None:
                if tk in mod_labels:
                    return QueueingHint.QUEUE
                continue
            orig_labels = original.labels
            if tk not in orig_labels and tk in mod_labels:
                return QueueingHint.QUEUE
            if tk in orig_labels and tk in mod_labels and orig_labels[tk] != mod_labels[tk]:
                return QueueingHint.QUEUE
        # Anti-affinity: 1. a node is added; 2. a node loses the topology key; 3. the node's
        # value for the key changed.
        for t in terms.req_anti_affinity:
            if original is None:
                return QueueingHint.QUEUE
            tk = t.topology_key
            orig_labels = original.labels
            if tk in orig_labels and tk not in mod_labels:
                return QueueingHint.QUEUE
            if tk in orig_labels and tk in mod_labels and orig_labels[tk] != mod_labels[tk]:
                return QueueingHint.QUEUE
        return QueueingHint.SKIP

    # PreFilter ----------------------------------------------------------------------------
    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        cols = self._indexed_columns(nodes)
        nodes_with_anti: Sequence[NodeInfo] = ()
        if cols is None:  # (the snapshot's lists never fail: the index path does not list)
            try:
                nodes_with_anti = self.handle.snapshot().have_pods_with_required_anti_affinity_list()
            except Exception as e:
                return Status.failed(f"failed to list NodeInfos with pods with affinity: {e}", e)
        terms = pod_terms(pod)
        if terms.error:
            return Status.unresolvable(f"parsing pod: {terms.error}")
        ns_cache: list[Any] = []
        try:
            req_aff = self._merge_namespaces(terms.req_affinity, ns_cache)
            req_anti = self._merge_namespaces(terms.req_anti_affinity, ns_cache)
        except Exception as e:
            return Status.from_exception(e)
        if cols is not None and not req_aff and not req_anti and not self.handle.snapshot().have_pods_with_required_anti_affinity_list():
            # Nothing to count: no term of the pod, and no pod on a node of the snapshot has a
            # required anti-affinity term (the snapshot keeps those nodes), so every table is
            # empty. The namespace is not read.
            return SKIP
        ns_labels = self._namespace_labels(pod.namespace)
        if cols is not None:
            tables = pre_filter_counts(self.index, cols, pod, ns_labels, req_aff, req_anti)
            if not req_aff and not req_anti and not CountTables.any(tables.existing):
                return SKIP
            state.write(PRE_FILTER_STATE_KEY, PreFilterState.from_tables(pod, req_aff, req_anti, ns_labels, tables))
            return None
        existing = existing_anti_affinity_counts(pod, ns_labels, nodes_with_anti)
        affinity, anti = incoming_affinity_anti_affinity_counts(req_aff, req_anti, nodes)
        if not existing and not req_aff and not req_anti:
            return SKIP
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(pod, req_aff, req_anti, ns_labels, existing, affinity, anti))
        return None

    def _indexed_columns(self, nodes: Sequence[NodeInfo] | None) -> NodeColumns | None:
        """The snapshot's columns when PreFilter/PreScore may count through the index (on, and
        ``nodes``, PreFilter's, are the snapshot's)."""
        return snapshot_columns(self.handle, nodes) if self.use_index else None

    def _pre_filter_state(self, state: CycleState) -> PreFilterState | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        return s if isinstance(s, PreFilterState) else None

    @staticmethod
    def _missing_pre_filter_state() -> Status:
        return Status.failed(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')

    @hookimpl
    def pre_filter_add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status | None:
        s = self._pre_filter_state(state)
        if s is None:
            return self._missing_pre_filter_state()
        s.update_with_pod(pod_to_add, node_info.node, 1)
        return None

    @hookimpl
    def pre_filter_remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None:
        s = self._pre_filter_state(state)
        if s is None:
            return self._missing_pre_filter_state()
        s.update_with_pod(pod_to_remove, node_info.node, -1)
        return None

    # Filter -------------------------------------------------------------------------------
    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return self._missing_pre_filter_state()
        node = node_info.node
        if node is None:
            return Status.failed("node not found")
        labels = node.labels
        if s.affinity_keys and not satisfy_pod_affinity(s, labels):
            return Status.unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH)
        if s.anti_affinity_counts and not satisfy_pod_anti_affinity(s, labels):
            return Status.unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
        if s.existing_anti_affinity_counts and not satisfy_existing_pods_anti_affinity(s, labels):
            return Status.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
        return None

    @hookimpl
    def filter_columns(self, state: CycleState, pod: Pod, columns: NodeColumns) -> Any:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return None
        return filter_codes(s, columns), (
            None,
            Status.unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH),
            Status.unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
            Status.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH),
        )

    # PreScore / Score ---------------------------------------------------------------------
    @hookimpl
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        aff = pod.affinity
        has_pref_affinity = bool((aff.get("podAffinity") or {}).get(_PREFERRED))
        has_pref_anti_affinity = bool((aff.get("podAntiAffinity") or {}).get(_PREFERRED))
        has_constraints = has_pref_affinity or has_pref_anti_affinity

        # Optionally ignore calculating preferences of existing pods' affinity rules
        # if the incoming pod has no inter-pod affinities.
        if self.args.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return SKIP

        # Unless the pod being scheduled has preferred affinity terms, we only
        # need to process nodes hosting pods with affinity.
        snapshot = self.handle.snapshot()
        cols = self._indexed_columns(None)
        all_nodes: Sequence[NodeInfo] = ()
        if cols is None:  # (the snapshot's lists never fail: the index path does not list)
            try:
                all_nodes = snapshot.list() if has_constraints else snapshot.have_pods_with_affinity_list()
            except Exception as e:
                what = "get all nodes from shared lister" if has_constraints else "get pods with affinity list"
                return Status.failed(f"failed to {what}: {e}", e)

        terms = pod_terms(pod)
        if terms.error:
            # Ideally we never reach here, because errors will be caught by PreFilter
            return Status.failed(f"failed to parse pod: {terms.error}")
        ns_cache: list[Any] = []
        try:
            pref_aff = self._merge_namespaces(terms.pref_affinity, ns_cache)
        except Exception as e:
            return Status.failed(f"updating PreferredAffinityTerms: {e}", e)
        try:
            pref_anti = self._merge_namespaces(terms.pref_anti_affinity, ns_cache)
        except Exception as e:
            return Status.failed(f"updating PreferredAntiAffinityTerms: {e}", e)
        if cols is not None and not pref_aff and not pref_anti and not snapshot.have_pods_with_affinity_list():
            # Nothing to score: no preferred term of the pod, and no pod on a node of the
            # snapshot has an affinity term (the snapshot keeps those nodes). The namespace is
            # not read.
            return SKIP
        ns_labels = self._namespace_labels(pod.namespace)
        weight = self.args.hard_pod_affinity_weight

        if cols is not None:
            score_map, tables = pre_score_map(self.index, cols, pod, pref_aff, pref_anti, ns_labels, weight)
            if not score_map:
                return SKIP
            state.write(PRE_SCORE_STATE_KEY, PreScoreState(score_map, cols, tables))
            return None
        topology_score: ScoreMap = {}
        for ni in all_nodes:
            node = ni.node
            if node is None:
                continue
            # Unless the pod being scheduled has preferred affinity terms, we only
            # need to process pods with affinity in the node.
            for existing in ni.pods if has_constraints else ni.pods_with_affinity:
                process_existing_pod(topology_score, pod, pref_aff, pref_anti, ns_labels, existing, node, weight)
        if not topology_score:
            return SKIP
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(topology_score))
        return None

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Any:
        """The sum of the weights of the topology pairs the node is in: positive for
        affinity, negative for anti-affinity; normalized later."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return 0, Status.failed(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        labels = node_info.node.labels  # type: ignore[union-attr]
        total = 0
        for tk, values in s.items:
            v = labels.get(tk)
            if v is not None:
                total += values.get(v, 0)
        return total

    @hookimpl
    def score_columns(self, state: CycleState, pod: Pod, columns: NodeColumns, rows: Any) -> Any:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return None  # Score reports the missing state
        return score_rows(s, columns, rows)

    @hookimpl
    def normalize_score_columns(self, state: CycleState, pod: Pod, scores: Any) -> Any:
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return Status.failed(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        scores = np.asarray(scores, np.int64)
        if not s.topology_score:
            return scores.copy()
        return normalize_rows(scores, MAX_NODE_SCORE)

    @hookimpl
    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return Status.failed(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        if not s.topology_score:
            return None
        normalize(scores)
        return None
