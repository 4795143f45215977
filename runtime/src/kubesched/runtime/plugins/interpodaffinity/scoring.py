"""PreScore/Score/NormalizeScore of InterPodAffinity (kube-scheduler's
``interpodaffinity/scoring.go``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.sdk import MAX_NODE_SCORE, AffinityTerm, Node, NodeScore, Pod, StateData

from .terms import pod_terms

__all__ = [
    "PRE_SCORE_STATE_KEY",
    "PreScoreState",
    "ScoreMap",
    "append_scores",
    "normalize",
    "process_existing_pod",
]

#: The key in CycleState to the pre-computed data for Score.
PRE_SCORE_STATE_KEY = "PreScoreInterPodAffinity"

#: scoreMap: topology key -> topology value -> score.
ScoreMap = dict[str, dict[str, int]]


class PreScoreState(StateData):
    """preScoreState: computed at PreScore, read by Score and NormalizeScore."""

    __slots__ = ("columns", "items", "tables", "topology_score")

    def __init__(self, topology_score: ScoreMap, columns: Any = None, tables: Mapping[str, Any] | None = None) -> None:
        self.topology_score = topology_score
        #: (topology key, value -> score) pairs, for a lean Score loop
        self.items = tuple(topology_score.items())
        #: the snapshot's NodeColumns the state was counted over (None: by the scan), and per
        #: topology key the score by label code there (the Score column form reads them)
        self.columns = columns
        self.tables: Mapping[str, Any] = tables or {}

    def clone(self) -> PreScoreState:
        # Not mutated after PreScore: no need to copy (as kube-scheduler's Clone).
        return self


def _process_term(
    m: ScoreMap, term: AffinityTerm, weight: int, pod: Pod, ns_labels: Mapping[str, str], labels: Mapping[str, str], multiplier: int
) -> None:
    if term.matches(pod, ns_labels):
        tk = term.topology_key
        if tk in labels:
            values = m.get(tk)
            if values is None:
                values = m[tk] = {}
            tv = labels[tk]
            values[tv] = values.get(tv, 0) + weight * multiplier


def _process_terms(
    m: ScoreMap, terms: Sequence[AffinityTerm], pod: Pod, ns_labels: Mapping[str, str], labels: Mapping[str, str], multiplier: int
) -> None:
    for t in terms:
        _process_term(m, t, t.weight, pod, ns_labels, labels, multiplier)


_NO_LABELS: Mapping[str, str] = {}


def process_existing_pod(
    m: ScoreMap,
    incoming: Pod,
    pref_affinity: Sequence[AffinityTerm],
    pref_anti_affinity: Sequence[AffinityTerm],
    ns_labels: Mapping[str, str],
    existing: Pod,
    existing_node: Node,
    hard_pod_affinity_weight: int,
) -> None:
    """processExistingPod: add the contributions of one existing pod to ``m``.

    ``pref_affinity``/``pref_anti_affinity`` are the incoming pod's preferred terms with their
    namespaceSelector merged into namespaces; ``ns_labels`` are the incoming pod's namespace
    labels (matched against the existing pod's own terms).
    """
    labels = existing_node.labels
    if not labels:
        return
    # For every soft pod affinity term of <pod>, if <existingPod> matches the term,
    # increment <p.counts> for every node in the cluster with the same <term.TopologyKey>
    # value as that of <existingPods>`s node by the term`s weight.
    _process_terms(m, pref_affinity, existing, _NO_LABELS, labels, 1)
    # For every soft pod anti-affinity term of <pod>, if <existingPod> matches the term,
    # decrement <p.counts> for every node in the cluster with the same <term.TopologyKey>
    # value as that of <existingPod>`s node by the term`s weight.
    _process_terms(m, pref_anti_affinity, existing, _NO_LABELS, labels, -1)

    et = pod_terms(existing)
    # For every hard pod affinity term of <existingPod>, if <pod> matches the term,
    # increment <p.counts> for every node in the cluster with the same <term.TopologyKey>
    # value as that of <existingPod>'s node by the constant <args.hardPodAffinityWeight>
    if hard_pod_affinity_weight > 0:
        for t in et.req_affinity:
            _process_term(m, t, hard_pod_affinity_weight, incoming, ns_labels, labels, 1)
    # For every soft pod affinity term of <existingPod>, if <pod> matches the term,
    # increment <p.counts> for every node in the cluster with the same <term.TopologyKey>
    # value as that of <existingPod>'s node by the term's weight.
    _process_terms(m, et.pref_affinity, incoming, ns_labels, labels, 1)
    # For every soft pod anti-affinity term of <existingPod>, if <pod> matches the term,
    # decrement <pm.counts> for every node in the cluster with the same <term.TopologyKey>
    # value as that of <existingPod>'s node by the term's weight.
    _process_terms(m, et.pref_anti_affinity, incoming, ns_labels, labels, -1)


def append_scores(m: ScoreMap, other: ScoreMap) -> None:
    """scoreMap.append."""
    for topology, o_scores in other.items():
        scores = m.get(topology)
        if scores is None:
            m[topology] = o_scores
            continue
        for k, v in o_scores.items():
            scores[k] = scores.get(k, 0) + v


def normalize(scores: list[NodeScore]) -> None:
    """NormalizeScore: min-max scaling to 0..MaxNodeScore, truncated as Go's int64(float64)."""
    if not scores:
        return
    min_count = min(s.score for s in scores)
    max_count = max(s.score for s in scores)
    diff = max_count - min_count
    for s in scores:
        f = 0.0
        if diff > 0:
            f = float(MAX_NODE_SCORE) * (float(s.score - min_count) / float(diff))
        s.score = int(f)
