"""Status, its codes, and the small result types the extension points return."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

__all__ = [
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "BindConflict",
    "Code",
    "NodeScore",
    "PostFilterResult",
    "PreFilterResult",
    "Status",
    "as_status",
]

#: Scores reported by Score (after NormalizeScore) must lie in ``MIN_NODE_SCORE..MAX_NODE_SCORE``.
MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0


class Code(IntEnum):
    """The outcome of a plugin call; the values are kube-scheduler's."""

    #: The plugin ran and found nothing wrong. ``None`` returned from a hook means the same.
    SUCCESS = 0
    #: An internal or unexpected failure: the pod is retried with backoff and an event is sent.
    ERROR = 1
    #: The pod does not fit now; another pod's change (preemption, deletion) may make it fit.
    UNSCHEDULABLE = 2
    #: The pod does not fit and preemption cannot help (e.g. a node selector mismatch).
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    #: Permit only: the pod waits until allowed, rejected or timed out.
    WAIT = 4
    #: PreFilter/PreScore: this plugin has nothing to do for the pod, so its Filter/Score is
    #: skipped. Bind: this binder does not handle the pod; the next one is asked.
    SKIP = 5
    #: The pod waits for something outside the scheduler (e.g. a claim being allocated).
    PENDING = 6

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}


class Status:
    """The result of running a plugin: a :class:`Code`, reasons shown to users, the plugin's name.

    Build one with the class methods (``Status.unschedulable("node(s) had no label")``) or the
    constructor. ``reasons`` are the strings kube-scheduler puts in ``FailedScheduling`` events.
    """

    __slots__ = ("code", "error", "plugin", "reasons")

    def __init__(
        self,
        code: Code = Code.SUCCESS,
        *reasons: str,
        plugin: str = "",
        error: BaseException | None = None,
    ) -> None:
        # Code(code) is an enum call (~1 us): skipped when ``code`` is already a Code
        self.code = code if code.__class__ is Code else Code(code)
        self.reasons: list[str] = [r for r in reasons if r] if reasons else []
        self.plugin = plugin
        self.error = error

    # constructors -----------------------------------------------------------------------
    @classmethod
    def success(cls) -> Status:
        return cls(Code.SUCCESS)

    @classmethod
    def unschedulable(cls, *reasons: str) -> Status:
        return cls(Code.UNSCHEDULABLE, *reasons)

    @classmethod
    def unresolvable(cls, *reasons: str) -> Status:
        """``UnschedulableAndUnresolvable``: preemption would not help."""
        return cls(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)

    @classmethod
    def failed(cls, reason: str, error: BaseException | None = None) -> Status:
        """``Error``: something went wrong that is not the pod's fault."""
        return cls(Code.ERROR, reason, error=error)

    @classmethod
    def from_exception(cls, exc: BaseException) -> Status:
        return cls(Code.ERROR, str(exc) or type(exc).__name__, error=exc)

    @classmethod
    def bind_conflict(cls, reason: str, error: BaseException | None = None) -> BindConflict:
        """Bind only: the pod is already bound (by this scheduler earlier, or by someone else)
        or is gone. The scheduler undoes its reservation and does not retry the pod: it is
        never bound twice. DefaultBinder returns this for the API's 409 Conflict and 404."""
        return BindConflict(reason, error=error)

    @classmethod
    def skip(cls, *reasons: str) -> Status:
        return cls(Code.SKIP, *reasons)

    @classmethod
    def wait(cls, *reasons: str) -> Status:
        return cls(Code.WAIT, *reasons)

    @classmethod
    def pending(cls, *reasons: str) -> Status:
        return cls(Code.PENDING, *reasons)

    # predicates ---------------------------------------------------------------------------
    def is_success(self) -> bool:
        return self.code is Code.SUCCESS

    def is_skip(self) -> bool:
        return self.code is Code.SKIP

    def is_wait(self) -> bool:
        return self.code is Code.WAIT

    def is_bind_conflict(self) -> bool:
        """True for :meth:`bind_conflict`'s status."""
        return False

    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending (kube-scheduler's IsRejected)."""
        return self.code in (
            Code.UNSCHEDULABLE,
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            Code.PENDING,
        )

    # presentation -------------------------------------------------------------------------
    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        self.plugin = plugin
        return self

    def __eq__(self, other: object) -> bool:
        if other is None:
            return self.code is Code.SUCCESS
        if not isinstance(other, Status):
            return NotImplemented
        return self.code == other.code and self.reasons == other.reasons

    def __hash__(self) -> int:
        return hash((self.code, tuple(self.reasons)))

    def __bool__(self) -> bool:  # a Status is always an object; use is_success()
        return True

    def __repr__(self) -> str:
        parts = [f"Code.{self.code.name}"]
        parts += [repr(r) for r in self.reasons]
        if self.plugin:
            parts.append(f"plugin={self.plugin!r}")
        return f"Status({', '.join(parts)})"

    def __str__(self) -> str:
        return f"{self.code.label}: {self.message}" if self.reasons else self.code.label


class BindConflict(Status):
    """An Error from Bind that says the pod is already bound or gone (see
    :meth:`Status.bind_conflict`)."""

    __slots__ = ()

    def __init__(self, reason: str, *, plugin: str = "", error: BaseException | None = None) -> None:
        super().__init__(Code.ERROR, reason, plugin=plugin, error=error)

    def is_bind_conflict(self) -> bool:
        return True


def as_status(value: Status | None) -> Status:
    """``None`` means success."""
    return Status() if value is None else value


@dataclass
class PreFilterResult:
    """Returned by PreFilter to narrow the nodes Filter runs on.

    ``node_names`` is the set of node names to evaluate; ``None`` means all nodes. Results of
    several PreFilter plugins are intersected.
    """

    node_names: set[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.all_nodes():
            return PreFilterResult(None if self.node_names is None else set(self.node_names))
        if self.all_nodes():
            return PreFilterResult(set(other.node_names or ()))
        return PreFilterResult(set(self.node_names or ()) & set(other.node_names or ()))


@dataclass
class PostFilterResult:
    """Returned by PostFilter (e.g. preemption): the node the pod is nominated to, if any."""

    nominated_node_name: str = ""
    #: ``"override"`` sets the nomination, ``"clear"`` removes it, ``"noop"`` leaves it.
    mode: str = "override"


@dataclass(slots=True)
class NodeScore:
    """A node's score from one Score plugin; NormalizeScore rewrites ``score`` in place."""

    name: str
    score: int = 0

