"""``--trace`` / ``KUBESCHED_TRACE=1``: every extension-point call, in order.

One line per call: profile, extension point, plugin, pod, node, result and time. The framework
wraps the collected bound methods only when tracing is on, so the hot path pays nothing otherwise.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, TextIO

from kubesched.sdk import NodeInfo, Pod, PostFilterResult, PreFilterResult, Status
from kubesched.sdk.points import HOOKS, hook_params

__all__ = ["TraceRecord", "Tracer", "node_name_at"]

#: hook -> the label traces print (from the SDK's one table)
_POINT_LABEL = {name: h.label for name, h in HOOKS.items()}


@cache
def node_name_at(hook: str) -> int | None:
    """The position of the ``node_name`` argument in ``hook``'s spec (Reserve ... PostBind)."""
    if hook not in HOOKS:
        return None
    names = hook_params(hook)
    return names.index("node_name") if "node_name" in names else None


class TraceRecord(tuple):  # (point, plugin, pod, node, result)
    __slots__ = ()

    @property
    def point(self) -> str:
        return self[0]

    @property
    def plugin(self) -> str:
        return self[1]

    @property
    def pod(self) -> str:
        return self[2]

    @property
    def node(self) -> str:
        return self[3]

    @property
    def result(self) -> str:
        return self[4]


def _describe(out: Any) -> str:
    if out is None:
        return "Success"
    if isinstance(out, Status):
        return str(out)
    if isinstance(out, PreFilterResult):
        return "Success" if out.all_nodes() else f"Success (nodes: {', '.join(sorted(out.node_names or ()))})"
    if isinstance(out, PostFilterResult):
        return f"Success (nominated: {out.nominated_node_name})"
    if isinstance(out, tuple) and len(out) == 2:
        a, b = out
        if isinstance(a, Status):
            return f"{a} (timeout {b}s)" if b else str(a)
        if isinstance(b, Status) and not b.is_success():
            return str(b)
        return _describe(a) if a is not None else _describe(b)
    if isinstance(out, int):
        return f"score {out}"
    return repr(out)


class Tracer:
    def __init__(self, stream: TextIO | object | None = sys.stderr, *, keep: bool = False) -> None:
        """``stream=None`` prints nothing; ``keep=True`` keeps every record in ``records``."""
        self.stream: TextIO | None = stream  # type: ignore[assignment]
        self.keep = keep
        self.records: list[TraceRecord] = []
        self._lock = threading.Lock()

    @staticmethod
    def where(hook: str, args: Sequence[Any]) -> tuple[str, str, str]:
        """Where a call of ``hook`` with (the spec's) ``args`` is: the hook's label, the key of
        the pod (its first Pod argument) and the node (its NodeInfo argument or its
        ``node_name``); ``"-"`` for none."""
        pod = next((a.key for a in args if isinstance(a, Pod)), "-")
        node = next((a.name for a in args if isinstance(a, NodeInfo)), "-")
        node_at = node_name_at(hook)
        if node_at is not None and len(args) > node_at and isinstance(args[node_at], str):
            node = args[node_at]
        return _POINT_LABEL.get(hook, hook), pod, node

    def wrap(self, profile: str, point: str, hook: str, plugin: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        where = self.where

        def traced(*args: Any) -> Any:
            label, pod, node = where(hook, args)
            t0 = time.perf_counter()
            try:
                out = fn(*args)
            except Exception as e:
                self.emit(label, plugin, pod, node, f"raised {type(e).__name__}: {e}", time.perf_counter() - t0)
                raise
            result = _describe(out)
            if hook == "normalize_score" and len(args) >= 3:
                result = "Success " + ", ".join(f"{s.name}={s.score}" for s in args[2])
            self.emit(label, plugin, pod, node, result, time.perf_counter() - t0)
            return out

        traced.__wrapped__ = fn  # type: ignore[attr-defined]
        return traced

    def emit(self, point: str, plugin: str, pod: str, node: str, result: str, seconds: float) -> None:
        rec = TraceRecord((point, plugin, pod, node, result))
        with self._lock:
            if self.keep:
                self.records.append(rec)
            if self.stream is not None:
                self.stream.write(
                    f"trace {point:<18} {plugin:<30} pod={pod} node={node} -> {result} ({seconds * 1e6:.0f}µs)\n"
                )
