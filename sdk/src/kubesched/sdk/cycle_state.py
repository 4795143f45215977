"""CycleState: data shared by the plugins of one scheduling cycle."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any, TypeVar

__all__ = ["CycleState", "StateData", "StateError"]

T = TypeVar("T")


class StateError(KeyError):
    """A cycle-state value is missing or of the wrong type (see :meth:`CycleState.read_as`)."""

    def __str__(self) -> str:  # KeyError quotes its argument; this is a sentence
        return str(self.args[0]) if self.args else ""


class StateData:
    """Optional base for values stored in CycleState: override :meth:`clone` when the default
    (a shallow copy) is not enough. Preemption clones the state to try removing pods."""

    def clone(self) -> StateData:
        return copy.copy(self)


class CycleState:
    """A per-cycle key/value store. Plugins write in PreFilter/PreScore and read in Filter/Score.

    Keys are conventionally ``"PreFilter" + plugin name``. One CycleState exists per pod per
    cycle; the framework clones it when it needs to evaluate "what if" (preemption).
    """

    __slots__ = (
        "_data",
        "get",
        "pods_to_activate",
        "record_plugin_metrics",
        "skip_filter_plugins",
        "skip_pre_bind_plugins",
        "skip_score_plugins",
    )

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        #: ``state.get(key, default=None)``: the value, or ``default`` when absent
        self.get = self._data.get
        #: Plugins whose PreFilter returned Skip: their Filter is not run this cycle.
        self.skip_filter_plugins: set[str] = set()
        #: Plugins whose PreScore returned Skip: their Score is not run this cycle.
        self.skip_score_plugins: set[str] = set()
        #: Plugins whose PreBindPreFlight returned Skip: their PreBind is not run this cycle.
        self.skip_pre_bind_plugins: set[str] = set()
        self.record_plugin_metrics = False
        #: Pods (uid -> Pod) a plugin wants moved to the active queue when this cycle succeeds
        #: (kube-scheduler's "kubernetes.io/pods-to-activate"), e.g. the siblings of a gang.
        self.pods_to_activate: dict[str, Any] = {}

    def read(self, key: str) -> Any:
        """The value stored under ``key``; raises ``KeyError`` when absent."""
        try:
            return self._data[key]
        except KeyError:
            raise KeyError(f"{key!r} not found in cycle state") from None

    def read_as(self, key: str, cls: type[T]) -> T:
        """The value under ``key``, which must be a ``cls``: one typed accessor per plugin
        instead of the same read-check-error block in every hook (kube-scheduler's
        ``getPreFilterState``). Raises :class:`StateError` (a ``KeyError``) naming the key, and
        the type found when it is not a ``cls``: a hook that lets it propagate becomes an Error
        for the pod with that message::

            def _state(self, state: CycleState) -> _PreFilterState:
                return state.read_as("PreFilterMyPlugin", _PreFilterState)
        """
        try:
            value = self._data[key]
        except KeyError:
            raise StateError(f"reading {key!r} from cycle state: not found") from None
        if not isinstance(value, cls):
            raise StateError(f"reading {key!r} from cycle state: got {type(value).__name__}, expected {cls.__name__}")
        return value

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def clone(self) -> CycleState:
        """A copy whose values are cloned (``value.clone()`` when it has one, else copied)."""
        c = _new_state(CycleState)
        data: dict[str, Any] = {}
        for k, v in self._data.items():
            cl = getattr(v, "clone", None)
            data[k] = cl() if callable(cl) else copy.copy(v)
        c._data = data
        c.get = data.get
        c.skip_filter_plugins = set(self.skip_filter_plugins)
        c.skip_score_plugins = set(self.skip_score_plugins)
        c.skip_pre_bind_plugins = set(self.skip_pre_bind_plugins)
        c.record_plugin_metrics = self.record_plugin_metrics
        c.pods_to_activate = self.pods_to_activate
        return c


_new_state = object.__new__
