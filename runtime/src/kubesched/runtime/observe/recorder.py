"""``--record-results``: what each plugin returned at each extension point, written on the pod
as kube-scheduler-simulator's annotations (``ResultRecorder``), and ``MultiTracer``, which chains
it with ``--trace``."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from kubesched.sdk import Pod, PreFilterResult

from ..framework.contract import split_result
from .explain import verdict

__all__ = ["ANNOTATION_PREFIX", "MultiTracer", "ResultRecorder"]

ANNOTATION_PREFIX = "kube-scheduler-simulator.sigs.k8s.io/"


class ResultRecorder:
    """A tracer that keeps, per pod, what each plugin returned at each extension point, and
    turns it into kube-scheduler-simulator's annotations."""

    def __init__(self, write: Callable[[Pod, dict[str, str]], None]) -> None:
        self._write = write
        self._lock = threading.Lock()
        self._data: dict[str, dict[str, Any]] = {}
        self.weights: dict[str, dict[str, int]] = {}

    def _rec(self, pod: Pod) -> dict[str, Any]:
        d = self._data.get(pod.uid)
        if d is None:
            d = {k: {} for k in ("prefilter-result-status", "filter-result", "postfilter-result", "prescore-result", "score-result", "finalscore-result", "reserve-result", "permit-result", "permit-result-timeout", "prebind-result", "bind-result")}
            d["prefilter-result"] = {}
            self._data[pod.uid] = d
        return d

    def wrap(self, profile: str, point: str, hook: str, plugin: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        rec = self

        def recorded(*args: Any) -> Any:
            out = fn(*args)
            pod = next((a for a in args if isinstance(a, Pod)), None)
            if pod is None:
                return out
            with rec._lock:
                d = rec._rec(pod)
                if hook == "pre_filter":
                    r, st = split_result(out, PreFilterResult)
                    d["prefilter-result-status"][plugin] = "success" if st.is_success() else ("skip" if st.is_skip() else st.message)
                    if r is not None and not r.all_nodes():
                        d["prefilter-result"][plugin] = sorted(r.node_names or ())
                elif hook == "filter":
                    ni = args[2]
                    d["filter-result"].setdefault(ni.name, {})[plugin] = verdict(out)
                elif hook == "post_filter":
                    r, st = (out if isinstance(out, tuple) else (None, out))
                    nominated = getattr(r, "nominated_node_name", "") if r is not None else ""
                    if nominated:
                        d["postfilter-result"].setdefault(nominated, {})[plugin] = "preemption victims removed"
                elif hook == "pre_score":
                    d["prescore-result"][plugin] = "success" if out is None or out.is_success() else ("skip" if out.is_skip() else out.message)
                elif hook == "score":
                    ni = args[2]
                    sc = out[0] if isinstance(out, tuple) else out
                    d["score-result"].setdefault(ni.name, {})[plugin] = str(int(sc))
                elif hook == "normalize_score":
                    w = rec.weights.get(profile, {}).get(plugin, 1)
                    for s in args[2]:
                        d["finalscore-result"].setdefault(s.name, {})[plugin] = str(s.score * w)
                elif hook in ("reserve", "pre_bind", "bind"):
                    key = {"reserve": "reserve-result", "pre_bind": "prebind-result", "bind": "bind-result"}[hook]
                    d[key][plugin] = "success" if out is None or out.is_success() else ("skip" if out.is_skip() else out.message)
                elif hook == "permit":
                    st, timeout = (out if isinstance(out, tuple) else (out, 0))
                    d["permit-result"][plugin] = "success" if st is None or st.is_success() else ("wait" if st.is_wait() else st.message)
                    if timeout:
                        d["permit-result-timeout"][plugin] = f"{timeout}s"
            return out

        return recorded

    def finish_cycle(self, pod: Pod, selected: str | None, weights: dict[str, int]) -> None:
        """After a scheduling cycle: fill final scores of plugins without NormalizeScore, write."""
        with self._lock:
            d = self._data.get(pod.uid)
            if d is None:
                return
            for node, per in d["score-result"].items():
                fin = d["finalscore-result"].setdefault(node, {})
                for plugin, sc in per.items():
                    if plugin not in fin:
                        fin[plugin] = str(int(sc) * weights.get(plugin, 1))
            ann = {ANNOTATION_PREFIX + k: json.dumps(v, sort_keys=True, separators=(",", ":")) for k, v in d.items()}
            if selected:
                ann[ANNOTATION_PREFIX + "selected-node"] = selected
        self._write(pod, ann)

    def finish_binding(self, pod: Pod) -> None:
        with self._lock:
            d = self._data.pop(pod.uid, None)
        if d is None:
            return
        ann = {ANNOTATION_PREFIX + k: json.dumps(d[k], sort_keys=True, separators=(",", ":")) for k in ("permit-result", "permit-result-timeout", "prebind-result", "bind-result", "reserve-result")}
        self._write(pod, ann)

    def forget(self, pod: Pod) -> None:
        with self._lock:
            self._data.pop(pod.uid, None)


class MultiTracer:
    """Chains tracers (``--trace`` and ``--record-results`` together)."""

    def __init__(self, *tracers: Any) -> None:
        self.tracers = [t for t in tracers if t is not None]

    def wrap(self, profile: str, point: str, hook: str, plugin: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        for t in self.tracers:
            fn = t.wrap(profile, point, hook, plugin, fn)
        return fn
