"""Explain a scheduling decision, and record results as kube-scheduler-simulator annotations.

``explain`` is a read-only dry run of one pod against the current state: unlike a scheduling
cycle, it runs *every* Filter plugin on *every* node (so a node rejected by two plugins shows
both reasons), then PreScore/Score/NormalizeScore on the feasible nodes, and reports each
plugin's raw, normalized and weighted score, the ranking and the node that would be chosen.
A plugin that raises (or returns an Error status) makes the pod an ``Error``, with the message
``kubesched simulate`` gives, as it stops a scheduling cycle: explain stops after that point.

``ResultRecorder`` (``kubesched run --record-results``) records what the running scheduler did
for each pod and writes it to the pod's annotations with kube-scheduler-simulator's keys, so
that tool's UI and scripts can read them.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.sdk import Code, CycleState, NodeInfo, Pod, PreFilterResult, Status
from kubesched.sdk._text import printable

from ..framework.contract import contract_error, plugin_error, split_result
from ..framework.runners import no_common_nodes
from ..nominator import filter_adds

__all__ = ["Explanation", "explain_pod", "render_explanation", "verdict"]

log = logging.getLogger("kubesched.explain")

PASSED = "passed"


@dataclass
class Explanation:
    pod: str
    profile: str
    nodes: list[str] = field(default_factory=list)
    prefilter: dict[str, str] = field(default_factory=dict)
    prefilter_nodes: list[str] | None = None
    #: PostFilter's outcome when no node fits: its status's message, or the node it nominated
    postfilter: str = ""
    #: node -> plugin -> "passed" | reason
    filter: dict[str, dict[str, str]] = field(default_factory=dict)
    #: node -> which device request DynamicResources could not satisfy there, and why (the
    #: allocator's words, beside its Filter reason)
    devices: dict[str, str] = field(default_factory=dict)
    feasible: list[str] = field(default_factory=list)
    prescore: dict[str, str] = field(default_factory=dict)
    #: node -> plugin -> (raw, normalized, weighted)
    scores: dict[str, dict[str, tuple[int, int, int]]] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=dict)
    ranking: list[tuple[str, int]] = field(default_factory=list)
    selected: str | None = None
    message: str = ""
    error: str = ""
    #: the status of a pod that was not dry-run, as ``kubesched simulate`` reports it (Gated,
    #: Ignored, NodeNotFound, or Error for a pod the cluster refuses), with ``message``; in
    #: context, simulate's status of the pod (and ``message`` simulate's message, when it has one)
    outcome: str = ""
    #: "in-context" (the pod's last scheduling cycle in the simulation of the file), "alone"
    #: (the other pods of the file first, then this one) or "live" (a live cluster)
    mode: str = ""
    #: in context: how many scheduling cycles the pod had (the explained one is the last)
    attempts: int | None = None
    #: in context: the virtual time (seconds since the start of the run) of the explained cycle
    time: float | None = None
    #: in context: the node simulate reports for the pod (Scheduled, Deleted, Running...)
    node: str | None = None
    #: what explain did as the scheduling cycle does, in words (e.g. the nominated node checked first)
    notes: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        """What ``kubesched simulate`` would report: Scheduled, Unschedulable or Error, or the
        ``outcome`` of a pod that was not dry-run."""
        if self.outcome:
            return self.outcome
        return "Error" if self.error else ("Scheduled" if self.selected else "Unschedulable")

    def as_dict(self) -> dict[str, Any]:
        return {
            "pod": self.pod,
            "profile": self.profile,
            "status": self.status,
            "prefilter": self.prefilter,
            "prefilterNodes": self.prefilter_nodes,
            "postfilter": self.postfilter,
            "filter": self.filter,
            "devices": self.devices,
            "feasible": self.feasible,
            "prescore": self.prescore,
            "scores": {n: {p: {"raw": r, "normalized": m, "weighted": w} for p, (r, m, w) in ps.items()} for n, ps in self.scores.items()},
            "totals": self.totals,
            "ranking": [{"node": n, "score": s} for n, s in self.ranking],
            "selected": self.selected,
            "message": self.message,
            "error": self.error,
            "mode": self.mode,
            "attempts": self.attempts,
            "time": self.time,
            "node": self.node,
            "notes": self.notes,
        }

    @property
    def cycle_status(self) -> str:
        """What the explained cycle decided: Scheduled (a node selected), Unschedulable or Error."""
        return "Error" if self.error else ("Scheduled" if self.selected else "Unschedulable")


#: PreFilter codes after which the cycle goes on; any other is an Error
_PREFILTER_GO_ON = frozenset({Code.SUCCESS, Code.SKIP, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE})


def verdict(st: Any) -> str:
    if st is None or (isinstance(st, Status) and st.code is Code.SUCCESS):
        return PASSED
    if isinstance(st, Status):
        return st.message or st.code.label
    return str(st)


def _stopped(ex: Explanation, plugin: str, st: Status) -> Explanation:
    """The cycle stopped at ``plugin``'s PreFilter with the Error ``st``."""
    ex.prefilter[plugin] = f"error: {st.message}"
    ex.error = ex.message = st.message
    _log_error(ex.pod, st)
    return ex


def _log_error(pod: str, st: Status) -> None:
    """At -v 4 (``--debug``), the traceback of the exception behind an Error, as the scheduler
    logs it for a failed cycle."""
    err = st.error
    if err is not None and log.isEnabledFor(logging.DEBUG):
        log.debug('explain: pod="%s" failed with an error: %s', pod, st.message, exc_info=(type(err), err, err.__traceback__))


class _DryRun:
    """Reads go to the wrapped client; writes (and events) are dropped: explain runs PostFilter
    to word its message as the scheduler does, and never preempts anything. The explained pod
    reads as explain sees it (it may not be in the cluster)."""

    def __init__(self, inner: Any, pod: Pod | None = None) -> None:
        self._inner = inner
        self._pod = pod

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Any:
        p = self._pod
        if p is not None and kind == "Pod" and name == p.name and namespace == p.namespace:
            return p.raw
        return self._inner.get(api_version, kind, name, namespace)

    def patch(self, *_a: Any, **_k: Any) -> None:
        return None

    def delete(self, *_a: Any, **_k: Any) -> None:
        return None

    def create(self, *_a: Any, **_k: Any) -> None:
        return None

    def event(self, *_a: Any, **_k: Any) -> None:
        return None


def _post_filter(framework: Any, state: CycleState, pod: Pod, diag: Any, node_names: list[str]) -> str:
    """PostFilter as the scheduler runs it after a FitError (same statuses, same message into
    the diagnosis), with the plugins' writes and events dropped and no waiting pod touched."""
    services = framework.services
    saved = (services.objects, services.event_recorder, services.waiting_pods)
    services.objects, services.event_recorder, services.waiting_pods = _DryRun(saved[0], pod), _DryRun(saved[1]), {}
    try:
        r, st = framework.run_post_filter(state, pod, diag.post_filter_statuses(node_names))
    finally:
        services.objects, services.event_recorder, services.waiting_pods = saved
    diag.ran_post_filter(st)
    nominated = getattr(r, "nominated_node_name", "") if r is not None else ""
    if st.is_success() and nominated:
        return f"would nominate node {nominated}"
    return st.message or st.code.label


def _with_nominated(framework: Any, state: CycleState, pod: Pod, ni: NodeInfo) -> tuple[NodeInfo, CycleState, Status] | None:
    """RunFilterPluginsWithNominatedPods' first pass for one node: the node and the cycle state
    with the pods nominated to it of equal or higher priority added (and AddPod's status), or
    None when there are none."""
    higher = filter_adds(framework.services.nominated_pods_for_node(ni.name), pod)
    if not higher:
        return None
    ni_out = ni.clone()
    state_out = state.clone()
    for np in higher:
        ni_out.add_pod(np)
        st = framework.run_pre_filter_extension_add_pod(state_out, pod, np, ni_out)
        if not st.is_success():
            return ni_out, state_out, st
    return ni_out, state_out, Status()


def _cycle_candidates(framework: Any, cycle: Any, pod: Pod, nodes: Sequence[NodeInfo], ex: Explanation) -> list[NodeInfo]:
    """The feasible nodes the scheduling cycle of ``cycle`` (the scheduler's Scheduling) goes on
    with, in its order: the pod's nominated node alone when it passes, else the nodes (those
    PreFilter kept) from the rotating start index, cut after percentageOfNodesToScore's count."""
    from ..scheduling import num_feasible_nodes_to_find

    by_name = {ni.name: ni for ni in nodes}
    nominated = pod.nominated_node_name
    if nominated and nominated in by_name and nominated in ex.feasible:
        ex.notes.append(f"the pod's nominated node {nominated} passes every Filter: the scheduling cycle takes it, without scoring")
        return [by_name[nominated]]
    order = [by_name[n] for n in ex.prefilter_nodes if n in by_name] if ex.prefilter_nodes is not None else list(nodes)
    n = len(order)
    start = cycle.next_start_node_index % n if n else 0
    pct = framework.percentage_of_nodes_to_score
    if pct is None:
        pct = cycle.global_percentage
    to_find = num_feasible_nodes_to_find(pct, n)
    feasible = set(ex.feasible)
    cands = [ni for ni in order[start:] + order[:start] if ni.name in feasible][:to_find]
    if len(cands) < len(feasible):
        ex.notes.append(f"the scheduling cycle stops after {to_find} feasible node(s) (percentageOfNodesToScore) and scores those")
    return cands


#: the plugin whose Filter reason explain completes with the device request that did not fit
_DRA = "DynamicResources"


def _device_unfit_reason(framework: Any) -> Callable[[CycleState, str], str | None] | None:
    """DynamicResources' ``device_unfit_reason(state, node)`` when the profile filters with it."""
    if not any(name == _DRA for name, _fn in framework.filter):
        return None
    from ..plugins.dynamicresources import device_unfit_reason

    return device_unfit_reason


def explain_pod(framework: Any, snapshot: Any, pod: Pod, *, select: Callable[[list[Any]], str] | None = None, cycle: Any = None) -> Explanation:
    """Dry-run ``pod`` through ``framework`` on ``snapshot`` and explain every decision.

    ``cycle``: the scheduler's Scheduling, to explain the cycle it is about to run (in
    context): Filter counts the pods nominated to each node as the cycle does, and the node is
    chosen as the cycle chooses it (the nominated node first; the feasible nodes it scores, in
    its order; no scores for a single one; a tie broken by the draw its RNG would make, from a
    copy of its state: the RNG itself is not used). ``select`` is then ignored."""
    from ..diagnosis import Diagnosis, FitError

    ex = Explanation(pod=pod.key, profile=framework.profile_name)
    nodes: Sequence[NodeInfo] = snapshot.list()
    ex.nodes = [ni.name for ni in nodes]
    state = CycleState()
    try:
        pod.validate()
    except Exception as e:
        ex.error = f"invalid pod spec: {e}"
        return ex
    # PreFilter, plugin by plugin, with the framework's semantics (run_pre_filter): an
    # UnschedulableAndUnresolvable, or an empty intersection of the plugins' nodes, stops it
    # there; the last Unschedulable is the outcome otherwise
    result: PreFilterResult | None = None
    rejected: Status | None = None
    narrowing: set[str] = set()
    stopped = False
    for name, fn in framework.pre_filter:
        if stopped:
            ex.prefilter[name] = "not run"
            continue
        # an Error stops the cycle here, with the framework's message (exception, contract, status)
        try:
            out = fn(state, pod, nodes)
        except Exception as e:
            return _stopped(ex, name, plugin_error("PreFilter", name, e))
        try:
            r, st = split_result(out, PreFilterResult)
        except TypeError:
            return _stopped(ex, name, contract_error(name, "pre_filter", out))
        if st.code not in _PREFILTER_GO_ON:
            return _stopped(ex, name, Status(Code.ERROR, f'running PreFilter plugin "{name}": {st.message}', plugin=name))
        if st.code is Code.SKIP:
            state.skip_filter_plugins.add(name)
            ex.prefilter[name] = "skip"
            continue
        if not st.is_success():
            ex.prefilter[name] = st.message or st.code.label
            rejected = st.with_plugin(name)
            stopped = st.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            continue
        ex.prefilter[name] = "success" if r is None or r.all_nodes() else f"success (nodes: {', '.join(sorted(r.node_names or ()))})"
        if r is not None and not r.all_nodes():
            narrowing.add(name)
        result = (result or PreFilterResult()).merge(r)
        if result is not None and not result.all_nodes() and not result.node_names:
            rejected = no_common_nodes(narrowing)
            stopped = True
    diag = Diagnosis()
    if rejected is not None:
        diag.rejected_at_pre_filter(rejected)
    elif result is not None and not result.all_nodes():
        ex.prefilter_nodes = sorted(result.node_names or ())
        diag.narrowed_by_pre_filter(narrowing)
    # Filter: every plugin on every node; the scheduler's diagnosis keeps the first rejection
    # of the nodes it filters (those PreFilter kept)
    with_nominated = cycle is not None and framework.services is not None and framework.services.has_nominated_pods()
    unfit = _device_unfit_reason(framework)
    for ni in nodes:
        verdicts: dict[str, str] = {}
        if rejected is not None:
            verdicts["PreFilter"] = rejected.message
        elif ex.prefilter_nodes is not None and ni.name not in ex.prefilter_nodes:
            verdicts["PreFilter"] = diag.absent_status.message if diag.absent_status is not None else ""
        first_fail: Status | None = None
        extra = _with_nominated(framework, state, pod, ni) if with_nominated and "PreFilter" not in verdicts else None
        for name, fn in framework.filter:
            if name in state.skip_filter_plugins:
                verdicts[name] = "skipped"
                continue
            if rejected is not None:
                continue
            # the framework's runner, for this one plugin: its status (and message) exactly;
            # in context, first with the nominated pods added, as the cycle filters
            st = extra[2] if extra is not None else Status()
            if st.is_success() and extra is not None:
                st = framework.run_filter_plugins(extra[1], pod, extra[0], [(name, fn)])
            if st.is_success():
                st = framework.run_filter_plugins(state, pod, ni, [(name, fn)])
            verdicts[name] = verdict(st)
            if unfit is not None and name == _DRA and not st.is_success():
                why = unfit(extra[1] if extra is not None else state, ni.name)
                if why:
                    ex.devices[ni.name] = why
            if st.code is Code.ERROR and not ex.error:
                ex.error = st.message
                _log_error(ex.pod, st)
            if not st.is_success() and first_fail is None:
                first_fail = st.with_plugin(name)
        ex.filter[ni.name] = verdicts
        if "PreFilter" in verdicts:
            continue
        if first_fail is None:
            ex.feasible.append(ni.name)
        else:
            diag.node_to_status[ni.name] = first_fail
            diag.add_plugin_status(first_fail)
    if ex.error:  # a Filter Error stops the cycle
        ex.message = ex.error
        ex.feasible = []
        return ex
    if not ex.feasible:
        fe = FitError(pod, len(nodes), diag)
        if framework.has_post_filter_plugins():
            ex.postfilter = _post_filter(framework, state, pod, diag, ex.nodes)
        ex.message = fe.message()
        return ex
    feasible = [ni for ni in nodes if ni.name in ex.feasible]
    if cycle is not None:
        feasible = _cycle_candidates(framework, cycle, pod, nodes, ex)
        if len(feasible) == 1:  # the cycle takes a single feasible node without scoring
            ex.selected = feasible[0].name
            if ex.selected != pod.nominated_node_name:
                ex.notes.append(f"one node to choose from ({ex.selected}): the scheduling cycle runs no PreScore or Score")
            return ex
    # PreScore, Score, NormalizeScore, weights: the framework's own runners (same contract,
    # same messages as a scheduling cycle), with every plugin's raw/normalized/weighted score
    st = framework.run_pre_score_plugins(state, pod, feasible)
    stopped = False
    for name, _fn in framework.pre_score:
        if stopped:
            ex.prescore[name] = "not run"  # after the plugin whose Error stopped the cycle
        elif not st.is_success() and name == st.plugin:
            ex.prescore[name] = f"error: {st.message or st.code.label}"
            stopped = True
        else:
            ex.prescore[name] = "skip" if name in state.skip_score_plugins else "success"
    if not st.is_success():
        ex.error = ex.message = st.message
        _log_error(ex.pod, st)
        return ex
    scores, st = framework.run_score_plugins(state, pod, feasible, details=True)
    if not st.is_success():  # a Score Error fails the cycle: no node is selected
        ex.error = ex.message = st.message
        _log_error(ex.pod, st)
        return ex
    for nps in scores:
        ex.scores[nps.name] = {ps.name: (ps.raw, ps.normalized, ps.weighted) for ps in nps.scores}
        ex.totals[nps.name] = nps.total_score
    order = [ni.name for ni in feasible]
    ex.ranking = sorted(ex.totals.items(), key=lambda kv: (-kv[1], order.index(kv[0])))
    if cycle is not None:
        # selectHost's one draw among the best, in the cycle's order, from a copy of its RNG
        top = max(ex.totals.values())
        best = [n for n in order if ex.totals[n] == top]
        if len(best) == 1:
            ex.selected = best[0]
        else:
            rng = random.Random()
            rng.setstate(cycle.rng.getstate())
            ex.selected = best[rng.randrange(len(best))]
            ex.notes.append(f"a tie between {', '.join(best)}: broken by the draw the scheduling cycle makes (--seed)")
    elif select is not None:
        from ..framework import NodePluginScores

        ex.selected = select([NodePluginScores(n, [], t) for n, t in ex.totals.items()])
    else:
        ex.selected = ex.ranking[0][0]
    return ex


def render_explanation(ex: Explanation, console: Any = None) -> None:
    """``kubesched explain``'s human-readable output: the verdicts, the scores and the outcome.
    Names, reasons and messages come from the input and plugins: control characters are
    escaped (``-o json`` has them as they are, JSON-escaped)."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    def text(s: object) -> str:
        return escape(printable(s))

    console = console or Console(width=max(140, Console().width))
    console.print(f"[bold]{text(ex.pod)}[/] (profile {text(ex.profile or '-')})")
    ran = bool(ex.nodes)  # a cycle was explained (else only simulate's status is known)
    if ex.outcome and not ran:
        style = "red" if ex.outcome in ("Error", "NodeNotFound") else "yellow"
        if ex.message or not ex.node:
            console.print(f"[{style}]{ex.outcome}[/]: {text(ex.message)}")
        else:  # Running: placed by the file, no scheduling cycle
            console.print(f"[{style}]{ex.outcome}[/] on node {text(ex.node)}: no scheduling cycle (spec.nodeName is set in the file)")
        return
    if ex.mode == "in-context" and ex.attempts is not None:
        console.print(text(f"in context: attempt {ex.attempts} (the pod's last scheduling cycle), at {_virtual(ex.time)} of virtual time; simulate reports {outcome_words(ex)}"))
    for note in ex.notes:
        console.print("note: " + text(note))
    if ex.error and not ex.prefilter and not ex.filter:
        console.print(f"[red]Error[/]: {text(ex.error)}")
        return
    if ex.prefilter:
        console.print("PreFilter: " + text(", ".join(f"{k}={v}" for k, v in ex.prefilter.items())))
    skipped = sorted({p for v in ex.filter.values() for p, r in v.items() if r == "skipped"})
    t = Table(title="Filter: every plugin on every node")
    t.add_column("node")
    t.add_column("result")
    t.add_column("rejected by (plugin: reason)", overflow="fold")
    t.add_column("passed")
    for node, verdicts in ex.filter.items():
        bad = [(p, r) for p, r in verdicts.items() if r not in ("passed", "skipped")]
        passed = [p for p, r in verdicts.items() if r == "passed"]
        why = ex.devices.get(node)
        t.add_row(
            text(node),
            "[green]feasible[/]" if not bad else "[yellow]rejected[/]",
            "\n".join(text(f"{p}: {r}" + (f" ({why})" if why and p == _DRA else "")) for p, r in bad),
            str(len(passed)),
        )
    if ex.filter:
        console.print(t)
    if skipped:
        console.print("skipped for this pod (PreFilter returned Skip): " + text(", ".join(skipped)))
    if ex.scores:
        splugins: list[str] = []
        for per in ex.scores.values():
            for p in per:
                if p not in splugins:
                    splugins.append(p)
        st = Table(title="Score: raw / normalized / weighted")
        st.add_column("node")
        for p in splugins:
            st.add_column(text(p))
        st.add_column("total")
        for node, total in ex.ranking:
            per = ex.scores[node]
            st.add_row(text(node), *[("{}/{}/{}".format(*per[p]) if p in per else "-") for p in splugins], str(total))
        console.print(st)
    if ex.postfilter:
        console.print("PostFilter: " + text(ex.postfilter))
    if ex.error:
        console.print(f"[red]Error[/]: {text(ex.error)}")
    elif ex.selected:
        console.print(f"selected node: [bold green]{text(ex.selected)}[/]")
    else:
        console.print(f"[yellow]unschedulable[/]: {text(ex.message)}")
    if ex.outcome and ex.outcome != ex.cycle_status:
        # what became of the pod after the cycle (a preemption victim, a failed binding)
        console.print(text(f"after this cycle: {outcome_words(ex)}"))


def outcome_words(ex: Explanation) -> str:
    """simulate's status of an explained pod, in words: "Scheduled on node n1",
    "Unschedulable", "Deleted on node n1: deleted during the run, ...", "Error: ...", or
    "Unschedulable: ..." for a pod whose cycle chose a node and was rejected after it."""
    words = ex.status
    if ex.node:
        words += f" on node {ex.node}"
    # an Unschedulable cycle's message is the table's last line; a pod rejected after its
    # cycle chose a node (at Permit, say) has the message of that rejection
    if ex.message and ex.status != "Scheduled" and not (ex.status == "Unschedulable" and ex.cycle_status == "Unschedulable"):
        words += f": {ex.message}"
    return words


def _virtual(t: float | None) -> str:
    from ..timefmt import go_duration

    return go_duration(t or 0.0)
