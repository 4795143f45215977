"""PriorityLabel: nodes must carry a label whose integer value ranks them.

* Filter: the node must have the label (arg ``label``, default ``priority``); a value that is not
  an integer rejects the node with a reason that says so.
* Score: the label's integer value.
* NormalizeScore: scaled to 0..100 over the feasible nodes (lowest -> 0, highest -> 100).
"""

from __future__ import annotations

from dataclasses import dataclass

from kubesched.sdk import (
    MAX_NODE_SCORE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    EventResource,
    NodeInfo,
    NodeScore,
    Pod,
    Status,
    hookimpl,
)

__all__ = ["PriorityLabel", "PriorityLabelArgs"]


@dataclass
class PriorityLabelArgs:
    #: the node label that holds the priority
    label: str = "priority"

    def validate(self) -> None:
        if not self.label.strip():
            raise ValueError("label: must not be empty")


class PriorityLabel:
    """Schedule only on labelled nodes, preferring the highest label value."""

    name = "PriorityLabel"
    Args = PriorityLabelArgs
    args_kind = "PriorityLabelArgs"

    def __init__(self, args: PriorityLabelArgs) -> None:
        self.label = args.label

    def _value(self, node_info: NodeInfo) -> int | None:
        node = node_info.node
        raw = node.labels.get(self.label) if node is not None else None
        if raw is None:
            return None
        return int(raw)

    @hookimpl
    def sign_pod(self) -> tuple[()]:
        # Filter and Score read only the node: every pod signs alike, so the framework may
        # reuse a node's results for the next pod while the node is unchanged.
        return ()

    @hookimpl
    def filter(self, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        raw = node.labels.get(self.label) if node is not None else None
        if raw is None:
            return Status.unresolvable(f"node(s) didn't have label {self.label}")
        try:
            int(raw)
        except ValueError:
            return Status.unresolvable(f"node(s) had a non-integer {self.label} label")
        return None

    @hookimpl
    def score(self, node_info: NodeInfo) -> int:
        return self._value(node_info) or 0

    @hookimpl
    def normalize_score(self, scores: list[NodeScore]) -> Status | None:
        if not scores:
            return None
        lo = min(s.score for s in scores)
        hi = max(s.score for s in scores)
        for s in scores:
            s.score = MAX_NODE_SCORE if hi == lo else (s.score - lo) * MAX_NODE_SCORE // (hi - lo)
        return None

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE.value, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
            )
        ]


# keep CycleState importable for plugin authors reading this as an example
_ = CycleState
