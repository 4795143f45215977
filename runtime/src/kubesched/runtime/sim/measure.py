"""What a simulated run measures, over virtual time and at the end: the Measurements dict
(docs/simulator.md, "Measurements").

:class:`Recorder` listens to the simulated cluster's object store (every ADDED / MODIFIED /
DELETED of a Node or a Pod) and keeps running totals, so each change costs a few additions:
allocatable and requested per resource, pending and running pods, nodes, each pod's wait from
arrival to bind. :class:`MeasuringResults` (the scheduler's observer of outcomes) counts the
scheduling attempts and the failed ones by reason.
"""

from __future__ import annotations

import bisect
import csv
import io
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from kubesched.sdk import InvalidObjectError, Node, Pod

from ..diagnosis import FitError
from ..scheduler.results import Results
from ..timefmt import rfc3339

__all__ = ["HEATMAP_BUCKETS", "MeasuringResults", "Recorder", "allocation_at_arrived", "series_csv", "summary_row"]

#: at most this many time buckets in the per-node heat map
HEATMAP_BUCKETS = 100

_CPU, _MEMORY = "cpu", "memory"
_IGNORED = frozenset(("pods", "ephemeral-storage"))


def _amounts(r: Any) -> dict[str, float]:
    """A Resource's amounts by resource name, cpu in cores and memory in bytes (pods and
    ephemeral storage left out)."""
    out: dict[str, float] = {}
    if r.milli_cpu:
        out[_CPU] = r.milli_cpu / 1000
    if r.memory:
        out[_MEMORY] = float(r.memory)
    for k, v in r.scalar.items():
        if v and k not in _IGNORED:
            out[k] = float(v)
    return out


class MeasuringResults(Results):
    """The scheduler's observer (every result kept, as in any finite run), also counting the
    scheduling attempts and each failed attempt's reasons (the FitError's histogram reasons,
    its PreFilter message, or the status message of an error)."""

    def __init__(self) -> None:
        super().__init__(None)
        self.failures: dict[str, int] = {}
        self._fit: dict[str, list[str]] = {}

    @property
    def attempts(self) -> int:
        """Scheduling attempts of every pod seen (each result keeps its pod's count)."""
        return sum(r.attempts for r in self.pods.values())

    def fit_failure(self, uid: str, fe: FitError) -> None:
        super().fit_failure(uid, fe)
        d = fe.diagnosis
        if d.pre_filter_msg:
            self._fit[uid] = [d.pre_filter_msg]
            return
        reasons = list(dict(d.reason_counts()))
        if fe.num_all_nodes > d.rejected_count() and d.absent_status is not None:
            reasons += [r for r in d.absent_status.reasons if r not in reasons]
        self._fit[uid] = reasons

    def failed(self, pod: Pod, rejected: bool, message: str) -> None:
        super().failed(pod, rejected, message)
        reasons = self._fit.pop(pod.uid, None)
        if reasons is None:
            reasons = [message.split(": ", 1)[0] if not rejected else message]
        failures = self.failures
        for r in reasons or ["(no reason given)"]:
            failures[r] = failures.get(r, 0) + 1


class Recorder:
    """Running totals of one simulated run, sampled at every virtual time something changed.

    ``clock``: the scheduler's (virtual) clock; ``start``: its time at the start of the run;
    ``profiles``: the scheduler names whose pods count as pending while unbound; ``pod_view``:
    the scheduler's Pod view of a uid, if it has one (``Cache.pod``: its requests are computed
    already)."""

    def __init__(self, clock: Any, start: float, profiles: Iterable[str], pod_view: Callable[[str], Pod | None] | None = None) -> None:
        self.clock = clock
        self._pod_view = pod_view
        self.start = start
        self.profiles = frozenset(profiles)
        self.allocatable: dict[str, float] = {}
        self.requested: dict[str, float] = {}
        self.nodes = 0
        self.pending = 0
        self.running = 0
        self.arrived = 0
        self.scheduled = 0
        self.deleted = 0
        self.completed = 0
        self.waits: list[float] = []
        #: uids of pods the replay is completing (their deletion counts as completed)
        self.completing: set[str] = set()
        #: uid -> (arrival, counted as pending)
        self._arrival: dict[str, float] = {}
        #: uid -> (node, amounts) of bound pods
        self._bound: dict[str, tuple[str, dict[str, float]]] = {}
        #: uid of each pending pod that arrived, in order (the arrived-request series)
        self._arrivals: list[str] = []
        #: uid -> the object of an arrived pod until it is bound
        self._unbound: dict[str, Mapping[str, Any]] = {}
        #: uid -> amounts of every pod that was bound (departed ones too)
        self._asked: dict[str, dict[str, float]] = {}
        self._node_alloc: dict[str, dict[str, float]] = {}
        #: node name -> order of first appearance (heat map rows)
        self._node_index: dict[str, int] = {}
        #: (t, node, resource, delta requested or None for "allocatable set") for the heat map
        self._node_log: list[tuple[float, str, dict[str, float] | None, dict[str, float] | None]] = []
        self._samples: list[tuple[float, int, int, int, dict[str, float], dict[str, float], int]] = []
        #: the virtual time of the last event, whose sample is taken when an event of a later
        #: time comes or the samples are read (:meth:`_flush`): one sample per time, not per event
        self._open: float | None = None
        #: the clock's last reading and ``_now()`` of it
        self._raw = float("nan")
        self._t = 0.0

    # the store's listener ------------------------------------------------------------------
    def on_event(self, etype: str, kind: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> None:
        if kind != "Pod" and kind != "Node":
            return
        now = self._now()
        if self._open is not None and self._open != now:
            self._flush()  # the totals as the last event of that time left them
        if kind == "Pod":
            self._pod(etype, old, new, now)
        else:
            self._node(etype, old, new, now)
        self._open = now

    def _now(self) -> float:
        raw = self.clock.now()
        if raw != self._raw:  # the clock moved: round once per time, not once per event
            self._raw = raw
            self._t = round(raw - self.start, 6)  # microseconds: no float noise of the epoch
        return self._t

    def _node(self, etype: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None, now: float) -> None:
        obj = new if new is not None else old
        assert obj is not None
        name = str((obj.get("metadata") or {}).get("name"))
        prev = self._node_alloc.pop(name, None)
        if prev is not None:
            self.nodes -= 1
            for k, v in prev.items():
                self.allocatable[k] -= v
        if etype == "DELETED":
            self._node_log.append((now, name, None, None))
            return
        assert new is not None
        try:
            alloc = _amounts(Node(new).allocatable)
        except InvalidObjectError:
            alloc = {}
        self._node_alloc[name] = alloc
        self._node_index.setdefault(name, len(self._node_index))
        self.nodes += 1
        for k, v in alloc.items():
            self.allocatable[k] = self.allocatable.get(k, 0.0) + v
        self._node_log.append((now, name, alloc, None))

    def _pod(self, etype: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None, now: float) -> None:
        obj = new if new is not None else old
        assert obj is not None
        md = obj.get("metadata") or {}
        uid = str(md.get("uid"))
        if etype == "ADDED":
            spec = obj.get("spec") or {}
            node = spec.get("nodeName")
            if node:
                self._bind(uid, obj, str(node), now)
            elif (spec.get("schedulerName") or "default-scheduler") in self.profiles:
                self.arrived += 1
                self.pending += 1
                self._arrival[uid] = now
                self._arrivals.append(uid)
                self._unbound[uid] = obj
            return
        if etype == "MODIFIED":
            if uid in self._bound:
                return
            node = (obj.get("spec") or {}).get("nodeName")
            if not node:
                return
            arrival = self._arrival.pop(uid, None)
            if arrival is not None:
                self.pending -= 1
                self.scheduled += 1
                self.waits.append(now - arrival)
            self._bind(uid, obj, str(node), now)
            return
        # DELETED
        bound = self._bound.pop(uid, None)
        if bound is not None:
            node, amounts = bound
            self.running -= 1
            req = self.requested
            for k, v in amounts.items():
                req[k] -= v
            self._node_log.append((now, node, None, {k: -v for k, v in amounts.items()}))
        elif self._arrival.pop(uid, None) is not None:
            self.pending -= 1
        if uid in self.completing:
            self.completing.discard(uid)
            self.completed += 1
        else:
            self.deleted += 1

    def _bind(self, uid: str, obj: Mapping[str, Any], node: str, now: float) -> None:
        try:
            # a pod on a node the cluster does not have takes nothing (NodeNotFound)
            view = self._pod_view(uid) if self._pod_view is not None else None
            amounts = _amounts((view if view is not None else Pod(obj)).node_requests) if node in self._node_alloc else {}
        except InvalidObjectError:
            amounts = {}
        self._bound[uid] = (node, amounts)
        self._asked[uid] = amounts
        self._unbound.pop(uid, None)
        self.running += 1
        req = self.requested
        for k, v in amounts.items():
            req[k] = req.get(k, 0.0) + v
        self._node_log.append((now, node, None, amounts))

    def _current(self, t: float) -> tuple[float, int, int, int, dict[str, float], dict[str, float], int]:
        """The sample of the running totals at virtual time ``t`` (the last item: how many
        pending pods had arrived)."""
        return (t, self.nodes, self.pending, self.running, dict(self.allocatable), dict(self.requested), self.arrived)

    def _flush(self) -> None:
        """Take the sample of the last event's time (it replaces one of the same time)."""
        t = self._open
        if t is None:
            return
        self._open = None
        sample = self._current(t)
        samples = self._samples
        if samples and samples[-1][0] == t:
            samples[-1] = sample
        else:
            samples.append(sample)

    def finish(self, end: float) -> None:
        """The run ended at ``end`` virtual seconds since the start: the last sample holds
        until then."""
        self._flush()
        if not self._samples or self._samples[-1][0] < end:
            self._samples.append(self._current(end))  # the totals are those of the last sample

    # the result ----------------------------------------------------------------------------
    def resources(self) -> list[str]:
        """cpu, memory, then every other resource some node had, sorted."""
        self._flush()
        seen: set[str] = set()
        for s in self._samples:
            seen.update(s[4])
        rest = sorted(seen - {_CPU, _MEMORY})
        return [_CPU, _MEMORY, *rest]

    def measurements(self, results: MeasuringResults, *, preemptions: int, elapsed: float, interrupted: bool = False, **info: Any) -> dict[str, Any]:
        """The Measurements dict (docs/simulator.md); ``info``: label, workload, config, seed."""
        res = self.resources()  # flushes the last sample
        samples = self._samples or [self._current(0.0)]
        t = [s[0] for s in samples]
        series: dict[str, Any] = {
            "t": t,
            "nodes": [s[1] for s in samples],
            "pending": [s[2] for s in samples],
            "running": [s[3] for s in samples],
            "allocatable": {r: [s[4].get(r, 0.0) for s in samples] for r in res},
            "requested": {r: [max(0.0, s[5].get(r, 0.0)) for s in samples] for r in res},
            "arrived": self._arrived_series(res, samples),
        }
        end = t[-1]
        ratio = {r: [_ratio(q, a) for q, a in zip(series["requested"][r], series["allocatable"][r], strict=True)] for r in res}
        allocation = {
            "final": {r: ratio[r][-1] for r in res},
            "peak": {r: max(ratio[r]) for r in res},
            "mean": {r: _time_mean(t, ratio[r], end) for r in res},
        }
        return {
            "version": 1,
            "label": info.get("label"),
            "workload": info.get("workload"),
            "config": info.get("config"),
            "seed": info.get("seed"),
            "interrupted": interrupted,
            "elapsed": round(elapsed, 3),
            "start": rfc3339(self.start),
            "end": end,
            "resources": res,
            "units": {r: ("cores" if r == _CPU else "bytes" if r == _MEMORY else "") for r in res},
            "series": series,
            "totals": {
                "arrived": self.arrived,
                "scheduled": self.scheduled,
                "completed": self.completed,
                "deleted": self.deleted,
                "pending_at_end": self.pending,
                "attempts": results.attempts,
                "preemptions": preemptions,
                "failures": dict(sorted(results.failures.items(), key=lambda kv: (-kv[1], kv[0]))),
            },
            "wait": _wait_stats(self.waits),
            "allocation": allocation,
            "heatmap": self._heatmap(res, end),
        }

    def _arrived_series(self, res: Sequence[str], samples: Sequence[tuple[Any, ...]]) -> dict[str, list[float]]:
        """Per resource, the requests of every pod that had arrived by each sample (pending pods
        counted at their arrival; a departure does not subtract): the workload offered so far.
        A bound pod's amounts are those the Recorder took at its bind; the others' are read here."""
        cum: list[dict[str, float]] = [{}]
        total: dict[str, float] = {}
        asked, unbound = self._asked, self._unbound
        for uid in self._arrivals:
            amounts = asked.get(uid)
            if amounts is None:
                try:
                    amounts = _amounts(Pod(unbound[uid]).node_requests)
                except InvalidObjectError:
                    amounts = {}
            for k, v in amounts.items():
                total[k] = total.get(k, 0.0) + v
            cum.append(dict(total))
        return {r: [cum[s[6]].get(r, 0.0) for s in samples] for r in res}

    def _heatmap(self, res: Sequence[str], end: float) -> dict[str, Any]:
        """Each node's allocation per resource at the end of each of (at most)
        :data:`HEATMAP_BUCKETS` equal spans of [0, end]; None where the node did not exist."""
        import numpy as np

        names = list(self._node_index)
        n, nres = len(names), len(res)
        buckets = HEATMAP_BUCKETS if end > 0 else 1
        width = end / buckets if end > 0 else 0.0
        col = {r: k for k, r in enumerate(res)}
        alloc = np.zeros((n, nres))
        present = np.zeros(n, dtype=bool)
        req = np.zeros((n, nres))
        out = np.full((nres, n, buckets), np.nan)
        log = self._node_log
        times = [e[0] for e in log]
        idx = self._node_index
        pos = 0
        for b in range(buckets):
            stop = bisect.bisect_right(times, (b + 1) * width) if b < buckets - 1 else len(log)
            for k in range(pos, stop):
                _, node, a, delta = log[k]
                i = idx.get(node, -1)
                if i < 0:
                    continue
                if delta is not None:
                    for key, v in delta.items():
                        c = col.get(key)
                        if c is not None:
                            req[i, c] += v
                elif a is not None:
                    present[i] = True
                    alloc[i] = [a.get(r, 0.0) for r in res]
                else:
                    present[i] = False
            pos = stop
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(alloc > 0, req / np.where(alloc > 0, alloc, 1.0), 0.0)
            ratio[~present] = np.nan
            out[:, :, b] = np.round(np.maximum(ratio, 0.0), 4).T
        grid = {r: [[None if x != x else x for x in row] for row in out[k].tolist()] for k, r in enumerate(res)}
        return {"nodes": names, "t": [b * width for b in range(buckets)], "allocation": grid}


def _ratio(req: float, alloc: float) -> float:
    return req / alloc if alloc > 0 else 0.0


def _time_mean(t: Sequence[float], v: Sequence[float], end: float) -> float:
    """The time-weighted mean of a step function over [t[0], end] (the last value at end)."""
    if end <= t[0]:
        return v[-1]
    total = 0.0
    for i in range(len(t) - 1):
        total += v[i] * (t[i + 1] - t[i])
    return total / (end - t[0])


def _wait_stats(waits: Sequence[float]) -> dict[str, Any]:
    if not waits:
        return {"count": 0, "mean": 0.0, "p50": 0.0, "p90": 0.0, "p99": 0.0, "max": 0.0}
    w = sorted(waits)

    def pct(p: float) -> float:
        # nearest rank
        return w[max(0, math.ceil(p / 100 * len(w)) - 1)]

    return {"count": len(w), "mean": sum(w) / len(w), "p50": pct(50), "p90": pct(90), "p99": pct(99), "max": w[-1]}


def summary_row(m: Mapping[str, Any]) -> dict[str, Any]:
    """One table row of a Measurements dict (the sweep, compare and their CSV)."""
    tot, wait, alloc = m["totals"], m["wait"], m["allocation"]
    row: dict[str, Any] = {
        "label": m.get("label"),
        "workload": m.get("workload"),
        "config": m.get("config"),
        "seed": m.get("seed"),
        "elapsed": m.get("elapsed"),
        "arrived": tot["arrived"],
        "scheduled": tot["scheduled"],
        "pending_at_end": tot["pending_at_end"],
        "attempts": tot["attempts"],
        "preemptions": tot["preemptions"],
        "wait_mean": wait["mean"],
        "wait_p99": wait["p99"],
    }
    for kind in ("mean", "peak", "final"):
        for r in m["resources"]:
            row[f"alloc_{kind}_{r}"] = alloc[kind][r]
    return row


def allocation_at_arrived(m: Mapping[str, Any], resource: str, percents: Iterable[int] | None = None) -> dict[int, float | None]:
    """The allocation of ``resource`` (requested / allocatable) against the workload that had
    arrived, read as the paper's simulator does (GitHub hkust-adsl/kubernetes-scheduler-simulator,
    experiments/analysis/merge_alloc_discrete_0920.py): each sample's arrived share is
    ``round(100 * arrived / allocatable)`` %; the allocation at X % is the mean allocation of the
    samples at X %, else of those within X +- 1 %, else None. ``percents``: the X to read (default:
    every one from 0 to the highest arrived)."""
    s = m["series"]
    arrived = s["arrived"].get(resource)
    if arrived is None:
        return dict.fromkeys(percents or (), None)
    at: dict[int, list[float]] = {}
    for q, a, alloc in zip(arrived, s["requested"][resource], s["allocatable"][resource], strict=True):
        if alloc > 0:
            at.setdefault(round(100 * q / alloc), []).append(a / alloc)
    wanted = list(range(max(at, default=-1) + 1)) if percents is None else list(percents)
    out: dict[int, float | None] = {}
    for x in wanted:
        vals = at.get(x) or [v for k in (x - 1, x, x + 1) for v in at.get(k, ())]
        out[x] = sum(vals) / len(vals) if vals else None
    return out


def series_csv(m: Mapping[str, Any]) -> str:
    """The series as CSV: ``t, nodes, pending, running``, then per resource ``requested_R,
    allocatable_R, allocation_R``."""
    s = m["series"]
    res = m["resources"]
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["t", "nodes", "pending", "running", *[f"{k}_{r}" for r in res for k in ("requested", "allocatable", "allocation")]])
    for i, t in enumerate(s["t"]):
        row: list[Any] = [_num(t), s["nodes"][i], s["pending"][i], s["running"][i]]
        for r in res:
            q, a = s["requested"][r][i], s["allocatable"][r][i]
            row += [_num(q), _num(a), _num(round(_ratio(q, a), 6))]
        w.writerow(row)
    return out.getvalue()


def _num(v: float) -> str | int | float:
    return int(v) if float(v).is_integer() else v
