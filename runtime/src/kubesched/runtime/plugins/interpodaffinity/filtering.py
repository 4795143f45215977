"""PreFilter/Filter of InterPodAffinity (kube-scheduler's ``interpodaffinity/filtering.go``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kubesched.sdk import AffinityTerm, Node, NodeInfo, Pod, StateData

from .terms import match_all_terms, pod_terms

__all__ = [
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "PRE_FILTER_STATE_KEY",
    "CountTables",
    "PreFilterState",
    "Tables",
    "TopologyCounts",
    "existing_anti_affinity_counts",
    "incoming_affinity_anti_affinity_counts",
    "satisfy_existing_pods_anti_affinity",
    "satisfy_pod_affinity",
    "satisfy_pod_anti_affinity",
]

#: The key in CycleState to the pre-computed data for Filter.
PRE_FILTER_STATE_KEY = "PreFilterInterPodAffinity"

#: Used for ExistingPodsAntiAffinityRulesNotMatch predicate error.
ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
#: Used for PodAffinityRulesNotMatch predicate error.
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
#: Used for PodAntiAffinityRulesNotMatch predicate error.
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"

#: topologyToMatchedTermCount: (topology key, topology value) -> number of matching terms.
TopologyCounts = dict[tuple[str, str], int]

_MISSING = object()


def _update(m: TopologyCounts, node: Node, tk: str, value: int) -> None:
    """topologyToMatchedTermCount.update: entries that fall to zero are deleted."""
    labels = node.labels
    if tk in labels:
        pair = (tk, labels[tk])
        n = m.get(pair, 0) + value
        if n == 0:
            m.pop(pair, None)
        else:
            m[pair] = n


def _update_with_affinity_terms(m: TopologyCounts, terms: Sequence[AffinityTerm], pod: Pod, node: Node, value: int) -> None:
    """Counts every term's topology pair when ``pod`` matches ALL the terms (the incoming pod's
    terms have their namespaceSelector merged into namespaces: no namespace labels needed)."""
    if match_all_terms(terms, pod, {}):
        for t in terms:
            _update(m, node, t.topology_key, value)


def _update_with_anti_affinity_terms(
    m: TopologyCounts, terms: Sequence[AffinityTerm], pod: Pod, ns_labels: Mapping[str, str], node: Node, value: int
) -> None:
    """Counts the topology pair of each term that ``pod`` matches."""
    for t in terms:
        if t.matches(pod, ns_labels):
            _update(m, node, t.topology_key, value)


#: per topology key: (the label's codes per row, its values, the count per value code)
Tables = dict[str, tuple[Any, list[str], Any]]


class CountTables:
    """PreFilter's three counts as tables per topology key over a snapshot's columns (what the
    pod index gives): the Filter column form reads them as they are, the pairs are built only
    when something reads them as dicts."""

    __slots__ = ("affinity", "anti", "columns", "existing", "version")

    def __init__(self, columns: Any, existing: Tables, affinity: Tables, anti: Tables) -> None:
        self.columns = columns
        self.version = columns.version
        self.existing = existing
        self.affinity = affinity
        self.anti = anti

    def valid_for(self, columns: Any) -> bool:
        return columns is self.columns and columns.version == self.version

    @staticmethod
    def any(tables: Tables) -> bool:
        return any(t.any() for _c, _v, t in tables.values())

    @staticmethod
    def pairs(tables: Tables) -> TopologyCounts:
        out: TopologyCounts = {}
        for tk, (_codes, values, table) in tables.items():
            ks = table.nonzero()[0].tolist()
            out.update(zip([(tk, values[k]) for k in ks], table[ks].tolist()))
        return out


_LAZY = frozenset(("existing_anti_affinity_counts", "affinity_counts", "anti_affinity_counts"))


class PreFilterState(StateData):
    """preFilterState: computed at PreFilter, used at Filter, updated by AddPod/RemovePod.

    Built from the pod index, it holds ``tables`` (:class:`CountTables`) and makes the three
    count dicts on first read."""

    __slots__ = (
        "affinity_counts",
        "affinity_keys",
        "anti_affinity_counts",
        "anti_affinity_keys",
        "existing_anti_affinity_counts",
        "namespace_labels",
        "pod",
        "req_affinity",
        "req_anti_affinity",
        "self_match",
        "tables",
    )

    if TYPE_CHECKING:
        tables: CountTables | None

    @classmethod
    def from_tables(
        cls,
        pod: Pod,
        req_affinity: tuple[AffinityTerm, ...],
        req_anti_affinity: tuple[AffinityTerm, ...],
        namespace_labels: Mapping[str, str],
        tables: CountTables,
    ) -> PreFilterState:
        s = cls.__new__(cls)
        s._init_common(pod, req_affinity, req_anti_affinity, namespace_labels)
        s.tables = tables
        return s

    def __getattr__(self, name: str) -> Any:
        # only called for a slot not set yet: the count dicts of a state built from tables
        if name not in _LAZY:
            raise AttributeError(name)
        self._materialize()
        return object.__getattribute__(self, name)

    def _materialize(self) -> None:
        t = object.__getattribute__(self, "tables")
        self.existing_anti_affinity_counts = CountTables.pairs(t.existing)
        self.affinity_counts = CountTables.pairs(t.affinity)
        self.anti_affinity_counts = CountTables.pairs(t.anti)

    def _init_common(
        self, pod: Pod, req_affinity: tuple[AffinityTerm, ...], req_anti_affinity: tuple[AffinityTerm, ...], namespace_labels: Mapping[str, str]
    ) -> None:
        self.pod = pod
        self.req_affinity = req_affinity
        self.req_anti_affinity = req_anti_affinity
        self.namespace_labels = namespace_labels
        self.affinity_keys = tuple(t.topology_key for t in req_affinity)
        self.anti_affinity_keys = tuple(t.topology_key for t in req_anti_affinity)
        self.self_match = match_all_terms(req_affinity, pod, {})

    def _has_dicts(self) -> bool:
        try:
            object.__getattribute__(self, "affinity_counts")
        except AttributeError:
            return False
        return True

    def has_existing(self) -> bool:
        """Some existing pod's required anti-affinity matches the pod somewhere."""
        t = self.tables
        if t is not None and not self._has_dicts():
            return CountTables.any(t.existing)
        return bool(self.existing_anti_affinity_counts)

    def __init__(
        self,
        pod: Pod,
        req_affinity: tuple[AffinityTerm, ...],
        req_anti_affinity: tuple[AffinityTerm, ...],
        namespace_labels: Mapping[str, str],
        existing_anti_affinity_counts: TopologyCounts,
        affinity_counts: TopologyCounts,
        anti_affinity_counts: TopologyCounts,
    ) -> None:
        #: the incoming pod and its required terms (namespaceSelector merged into namespaces),
        #: a copy of its namespace labels, the terms' topology keys, and whether the pod matches
        #: all its own affinity terms (the "first pod of a series" case)
        self._init_common(pod, req_affinity, req_anti_affinity, namespace_labels)
        #: pairs -> number of existing pods whose required anti-affinity terms match the pod
        self.existing_anti_affinity_counts = existing_anti_affinity_counts
        #: pairs -> number of existing pods that match the pod's affinity terms
        self.affinity_counts = affinity_counts
        #: pairs -> number of existing pods that match the pod's anti-affinity terms
        self.anti_affinity_counts = anti_affinity_counts
        self.tables = None

    def clone(self) -> PreFilterState:
        c = PreFilterState.__new__(PreFilterState)
        c.pod = self.pod
        c.req_affinity = self.req_affinity
        c.req_anti_affinity = self.req_anti_affinity
        c.namespace_labels = self.namespace_labels
        c.tables = self.tables  # read-only
        if self.tables is None or self._has_dicts():
            c.existing_anti_affinity_counts = dict(self.existing_anti_affinity_counts)
            c.affinity_counts = dict(self.affinity_counts)
            c.anti_affinity_counts = dict(self.anti_affinity_counts)
        c.affinity_keys = self.affinity_keys
        c.anti_affinity_keys = self.anti_affinity_keys
        c.self_match = self.self_match
        return c

    def update_with_pod(self, other: Pod, node: Node | None, multiplier: int) -> None:
        """updateWithPod: account for ``other`` added to (1) or removed from (-1) ``node``."""
        if node is None:
            return
        if self.tables is not None:
            if not self._has_dicts():
                self._materialize()
            self.tables = None  # the counts change: the tables no longer hold them
        terms = pod_terms(other)
        _update_with_anti_affinity_terms(
            self.existing_anti_affinity_counts, terms.req_anti_affinity, self.pod, self.namespace_labels, node, multiplier
        )
        _update_with_affinity_terms(self.affinity_counts, self.req_affinity, other, node, multiplier)
        # The incoming pod's terms have the namespaceSelector merged into the namespaces, and so
        # here we don't look up the updated pod's namespace labels.
        _update_with_anti_affinity_terms(self.anti_affinity_counts, self.req_anti_affinity, other, {}, node, multiplier)

    def __repr__(self) -> str:
        return (
            f"PreFilterState(existing_anti={self.existing_anti_affinity_counts}, "
            f"affinity={self.affinity_counts}, anti={self.anti_affinity_counts})"
        )


def existing_anti_affinity_counts(pod: Pod, ns_labels: Mapping[str, str], nodes: Sequence[NodeInfo]) -> TopologyCounts:
    """getExistingAntiAffinityCounts: for each existing pod with required anti-affinity, the
    topology pairs of its terms that match the incoming pod."""
    result: TopologyCounts = {}
    for ni in nodes:
        node = ni.node
        if node is None:
            continue
        labels = node.labels
        for existing in ni.pods_with_required_anti_affinity:
            for t in pod_terms(existing).req_anti_affinity:
                tk = t.topology_key
                if tk in labels and t.matches(pod, ns_labels):
                    pair = (tk, labels[tk])
                    result[pair] = result.get(pair, 0) + 1
    return result


def incoming_affinity_anti_affinity_counts(
    req_affinity: Sequence[AffinityTerm], req_anti_affinity: Sequence[AffinityTerm], nodes: Sequence[NodeInfo]
) -> tuple[TopologyCounts, TopologyCounts]:
    """getIncomingAffinityAntiAffinityCounts: existing pods that match the incoming pod's
    required affinity (all terms) and anti-affinity (each term)."""
    affinity: TopologyCounts = {}
    anti: TopologyCounts = {}
    if not req_affinity and not req_anti_affinity:
        return affinity, anti
    no_labels: Mapping[str, str] = {}
    for ni in nodes:
        node = ni.node
        if node is None:
            continue
        labels = node.labels
        for existing in ni.pods:
            if req_affinity and match_all_terms(req_affinity, existing, no_labels):
                for t in req_affinity:
                    tk = t.topology_key
                    if tk in labels:
                        pair = (tk, labels[tk])
                        affinity[pair] = affinity.get(pair, 0) + 1
            for t in req_anti_affinity:
                tk = t.topology_key
                if tk in labels and t.matches(existing, no_labels):
                    pair = (tk, labels[tk])
                    anti[pair] = anti.get(pair, 0) + 1
    return affinity, anti


def satisfy_existing_pods_anti_affinity(s: PreFilterState, labels: Mapping[str, str]) -> bool:
    """Scheduling the pod onto this node would not break any existing pod's anti-affinity."""
    counts = s.existing_anti_affinity_counts
    if counts:
        if len(counts) < len(labels):
            for (k, v), n in counts.items():
                if n > 0 and labels.get(k, _MISSING) == v:
                    return False
        else:
            for k, v in labels.items():
                if counts.get((k, v), 0) > 0:
                    return False
    return True


def satisfy_pod_anti_affinity(s: PreFilterState, labels: Mapping[str, str]) -> bool:
    """The node satisfies the incoming pod's anti-affinity rules."""
    counts = s.anti_affinity_counts
    if counts:
        for tk in s.anti_affinity_keys:
            v = labels.get(tk, _MISSING)
            if v is not _MISSING and counts.get((tk, v), 0) > 0:  # type: ignore[arg-type]
                return False
    return True


def satisfy_pod_affinity(s: PreFilterState, labels: Mapping[str, str]) -> bool:
    """The node satisfies the incoming pod's affinity rules."""
    pods_exist = True
    counts = s.affinity_counts
    for tk in s.affinity_keys:
        v = labels.get(tk, _MISSING)
        if v is _MISSING:
            # All topology labels must exist on the node.
            return False
        if counts.get((tk, v), 0) <= 0:  # type: ignore[arg-type]
            pods_exist = False
    if not pods_exist:
        # This pod may be the first pod in a series that have affinity to themselves. In order
        # to not leave such pods in pending state forever, we check that if no other pod
        # in the cluster matches the namespace and selector of this pod, the pod matches
        # its own terms, and the node has all the requested topologies, then we allow the pod
        # to pass the affinity check.
        return not counts and s.self_match
    return True
