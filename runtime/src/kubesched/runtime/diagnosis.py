"""What one cycle's Filter found per node (kube-scheduler's framework.Diagnosis) and the
FitError it becomes when no node fits; the column rejections stay arrays until a mapping is
read."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from kubesched.sdk import Code, Pod, Status

__all__ = ["Diagnosis", "FitError", "object_array"]


def object_array(items: Sequence[Any]) -> Any:
    """A numpy object array of ``items`` (np.array would unpack sequences inside them)."""
    out = np.empty(len(items), object)
    for i, x in enumerate(items):
        out[i] = x
    return out


class Diagnosis:
    """What Filter said about the nodes of a cycle: each rejected node's status, the plugins
    that rejected some node (the queue requeues the pod on their events), the messages.

    The column form of Filter leaves its rejections as arrays (:meth:`rejected_columns`);
    ``node_to_status`` builds the mapping when something reads it."""

    __slots__ = (
        "_columns",
        "_node_to_status",
        "_reasons",
        "absent_status",
        "pending_plugins",
        "post_filter_msg",
        "pre_filter_msg",
        "unschedulable_plugins",
    )

    def __init__(
        self,
        node_to_status: dict[str, Status] | None = None,
        absent_status: Status | None = None,
        unschedulable_plugins: set[str] | None = None,
        pending_plugins: set[str] | None = None,
        pre_filter_msg: str = "",
        post_filter_msg: str = "",
    ) -> None:
        self._node_to_status: dict[str, Status] = node_to_status if node_to_status is not None else {}
        #: the status of nodes not in node_to_status (rejected before Filter)
        self.absent_status = absent_status
        self.unschedulable_plugins: set[str] = unschedulable_plugins if unschedulable_plugins is not None else set()
        self.pending_plugins: set[str] = pending_plugins if pending_plugins is not None else set()
        self.pre_filter_msg = pre_filter_msg
        self.post_filter_msg = post_filter_msg
        #: rejections of the column form not yet in _node_to_status: (names, rows, codes, table)
        self._columns: tuple[Sequence[str], Any, Any, Sequence[Status]] | None = None
        #: reason_counts' last result, with the (size, columns folded) it was computed for
        self._reasons: tuple[tuple[int, bool], dict[str, int]] | None = None

    def __repr__(self) -> str:
        return f"Diagnosis(node_to_status={self.node_to_status!r}, absent_status={self.absent_status!r}, unschedulable_plugins={self.unschedulable_plugins!r}, pending_plugins={self.pending_plugins!r}, pre_filter_msg={self.pre_filter_msg!r}, post_filter_msg={self.post_filter_msg!r})"

    @property
    def node_to_status(self) -> dict[str, Status]:
        """Node name -> the status of the Filter plugin that rejected it."""
        if self._columns is not None:
            names, rows, codes, table = self._columns
            self._columns = None
            d = self._node_to_status
            before = (len(d), False)
            keys = names[rows].tolist() if isinstance(names, np.ndarray) else [names[r] for r in rows.tolist()]
            d.update(zip(keys, object_array(table)[codes].tolist()))
            if self._reasons is not None and self._reasons[0] == before:
                self._reasons = ((len(d), True), self._reasons[1])  # the same statuses, moved
        return self._node_to_status

    def rejected_count(self) -> int:
        """``len(node_to_status)`` without building it."""
        cols = self._columns
        return len(self._node_to_status) + (0 if cols is None else len(cols[1]))

    def rejected_columns(self, names: Sequence[str], rows: Any, codes: Any, table: Sequence[Status]) -> None:
        """The column form's rejections: node ``names[rows[k]]`` has status ``table[codes[k]]``
        (the plugins named by those statuses join unschedulable/pending_plugins now)."""
        if self._columns is not None:
            self.node_to_status  # noqa: B018 - fold the earlier ones in first
        self._columns = (names, rows, codes, table)
        for c in np.bincount(codes).nonzero()[0].tolist():  # each code once (they index table)
            self.add_plugin_status(table[c])
        if self._node_to_status:
            # a node may be in both (the nominated node's own pass): fold now, so that counts
            # see it once, as the mapping does
            self.node_to_status  # noqa: B018

    def reason_counts(self) -> dict[str, int]:
        """How many nodes gave each reason (the FitError's histogram, absent nodes excluded)."""
        key = (len(self._node_to_status), self._columns is None)
        if self._reasons is not None and self._reasons[0] == key:
            return self._reasons[1]
        reasons: dict[str, int] = {}
        self._reasons = (key, reasons)
        cols = self._columns
        for st in self._node_to_status.values():
            for r in st.reasons:
                reasons[r] = reasons.get(r, 0) + 1
        if cols is not None:
            _names, _rows, codes, table = cols
            values, counts = np.unique(codes, return_counts=True)
            for c, k in zip(values.tolist(), counts.tolist()):
                for r in table[c].reasons:
                    reasons[r] = reasons.get(r, 0) + k
        return reasons

    def add_plugin_status(self, st: Status) -> None:
        if not st.plugin:
            return
        if st.is_rejected():
            self.unschedulable_plugins.add(st.plugin)
        if st.code is Code.PENDING:
            self.pending_plugins.add(st.plugin)

    # The scheduler's cycle and ``kubesched explain`` both compose the diagnosis (and so the
    # FailedScheduling message) through these three.
    def rejected_at_pre_filter(self, st: Status) -> None:
        """PreFilter rejected the pod: every node gets its status, the message is PreFilter's."""
        self.absent_status = st
        self.pre_filter_msg = st.message
        self.add_plugin_status(st)

    def narrowed_by_pre_filter(self, plugins_with_nodes: set[str]) -> None:
        """PreFilter narrowed the nodes: the others are UnschedulableAndUnresolvable ("node(s)
        didn't satisfy plugin(s) [..]" of the sorted plugins that narrowed them)."""
        self.absent_status = Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(plugins_with_nodes))}]",
        )

    def post_filter_statuses(self, node_names: Sequence[str]) -> dict[str, Status]:
        """The status of every node, as PostFilter gets it (absent nodes: the absent status)."""
        statuses = dict(self.node_to_status)
        if self.absent_status is not None:
            for name in node_names:
                statuses.setdefault(name, self.absent_status)
        return statuses

    def ran_post_filter(self, st: Status) -> None:
        """The PostFilter status's message ends the FitError's message, whatever its code
        (schedule_one.go: ``fitError.Diagnosis.PostFilterMsg = status.Message()``)."""
        self.post_filter_msg = st.message


class FitError(Exception):
    """No node fits: the message is kube-scheduler's ``0/N nodes are available: ...``."""

    def __init__(self, pod: Pod, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis
        super().__init__(self.message())

    def message(self) -> str:
        d = self.diagnosis
        msg = f"0/{self.num_all_nodes} nodes are available:"
        if d.pre_filter_msg:
            msg += f" {d.pre_filter_msg}."
        else:
            reasons = dict(d.reason_counts())
            absent = self.num_all_nodes - d.rejected_count()
            if absent > 0 and d.absent_status is not None:
                for r in d.absent_status.reasons:
                    reasons[r] = reasons.get(r, 0) + absent
            hist = sorted(f"{v} {k}" for k, v in reasons.items())
            if hist:
                msg += f" {', '.join(hist)}."
        if d.post_filter_msg:
            msg += f" {d.post_filter_msg}"
        return msg
