"""``FrameworkImpl``: runs every extension point with kube-scheduler's semantics
(``framework/runtime/framework.go``).

The per-node hot path does not go through pluggy: :mod:`.wiring` collects the bound method of
each enabled plugin once per hook, in configured order, and the runners call them directly.
Score is in :mod:`.score`, signatures, reuse tables and batch forms in :mod:`.reuse`.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kubesched.sdk import (
    ClusterEventWithHint,
    Code,
    CycleState,
    NodeInfo,
    ObjectConflict,
    ObjectNotFound,
    Pod,
    PostFilterResult,
    PreFilterResult,
    QueuedPodInfo,
    Status,
)
from kubesched.sdk.points import HOOKS

from ..nominator import filter_adds
from .columns import ColumnRunners
from .contract import (
    SUCCESS,
    contract_error,
    filter_verdict,
    permit_out,
    plugin_error,
    split_result,
)
from .handle import FrameworkHandle, FrameworkServices
from .interface import Entry
from .reuse import ReuseAndBatch
from .score import ScoreRunners
from .waiting import WaitingPodImpl

if TYPE_CHECKING:
    from ..config import Profile
    from ..registry import Registry

__all__ = ["FrameworkImpl", "no_common_nodes"]

log = logging.getLogger("kubesched.framework")


def _status_error(point: str, name: str, st: Status) -> Status:
    """A plugin's Error (or other non-rejecting) status, as the point reports it."""
    return Status(Code.ERROR, f'running {point} plugin "{name}": {st.message}', plugin=name, error=st.error)


def no_common_nodes(plugins: set[str]) -> Status:
    """RunPreFilterPlugins' status when the PreFilterResults of ``plugins`` leave no node."""
    names = sorted(plugins)
    if len(names) == 1:
        msg = f"node(s) didn't satisfy plugin {names[0]}"
    else:
        msg = f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously"
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg)


class FrameworkImpl(ScoreRunners, ReuseAndBatch, ColumnRunners):
    """The plugins of one profile, wired to extension points (built by
    :func:`~kubesched.runtime.framework.wiring.build_framework`)."""

    def __init__(self, profile_name: str, percentage_of_nodes_to_score: int | None = None) -> None:
        self.profile_name = profile_name
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.plugins: dict[str, Any] = {}
        self.points: dict[str, list[str]] = {}  # camelCase point -> plugin names, ordered
        self.score_weights: dict[str, int] = {}
        self.handle: FrameworkHandle | None = None
        self.services: FrameworkServices | None = None
        #: collected callables per hook of the SDK table, in configured order (unreserve reversed)
        self.entries: dict[str, list[Entry]] = {h: [] for h, info in HOOKS.items() if info.point}
        self.normalize: dict[str, Callable[..., Any]] = {}
        self.events: dict[str, list[ClusterEventWithHint] | None] = {}
        #: the entries of the hooks timed per plugin, wrapped once (see :mod:`.instrument`)
        self._timed: dict[str, list[Entry]] = {}
        self._last_totals: list[int] = []
        # SignPod and result reuse (see sign / reuse_table)
        self.signers: dict[str, Callable[..., Any]] = {}
        #: reuse Filter results and raw Scores between pods with equal signatures
        self.reuse_results = True
        #: "nominated": the Filter runs with nominated pods added (Scheduling._nominated_verdicts)
        self._reuse: dict[str, dict[Any, tuple[int, dict[Any, Any]]]] = {"filter": {}, "score": {}, "nominated": {}}
        self._signed_pod: Pod | None = None
        self._signed: dict[str, Any] = {}
        #: batch forms (filter_batch / score_batch) of plugins that also have the per-node form
        self.filter_batch: dict[str, Callable[..., Any]] = {}
        self.score_batch: dict[str, Callable[..., Any]] = {}
        #: use the batch forms (off while tracing: a trace shows every per-node call)
        self.use_batch = True
        #: column forms (filter_columns / score_columns / normalize_score_columns) beside the
        #: per-node forms, and whether cycles use them (off while tracing)
        self.filter_columns: dict[str, Callable[..., Any]] = {}
        self.score_columns: dict[str, Callable[..., Any]] = {}
        self.normalize_columns: dict[str, Callable[..., Any]] = {}
        self.use_columns = True
        self._timed_columns: dict[str, dict[str, Callable[..., Any]]] = {}
        self._closed = False

    @classmethod
    def build(
        cls, profile: Profile, registry: Registry, services: FrameworkServices, *, source: str | None = None
    ) -> FrameworkImpl:
        """The framework of ``profile`` (:func:`~kubesched.runtime.framework.wiring.build_framework`).
        Callers use ``Framework.build``; this makes FrameworkImpl have every member of the
        :class:`~kubesched.runtime.framework.interface.Framework` Protocol (mypy checks it)."""
        from .wiring import build_framework

        return build_framework(profile, registry, services, source=source)

    # the collected hooks explain and the tests read ---------------------------------------------
    @property
    def pre_filter(self) -> list[Entry]:
        return self.entries["pre_filter"]

    @property
    def filter(self) -> list[Entry]:
        return self.entries["filter"]

    @property
    def pre_score(self) -> list[Entry]:
        return self.entries["pre_score"]

    @property
    def score(self) -> list[Entry]:
        return self.entries["score"]

    def _entries_for(self, state: CycleState, hook: str) -> list[Entry]:
        if state.record_plugin_metrics and self._timed:
            return self._timed[hook]
        return self.entries[hook]

    # queue ----------------------------------------------------------------------------------
    def queue_sort_func(self) -> Callable[[QueuedPodInfo, QueuedPodInfo], bool]:
        return self.entries["queue_sort_less"][0][1]

    def run_pre_enqueue(self, pod: Pod, only: str = "") -> Status:
        """The PreEnqueue plugins in order, up to the first that does not pass; with ``only``,
        that plugin alone (the one gating a pod, which Go's runPreEnqueuePlugins runs first)."""
        for name, fn in self.entries["pre_enqueue"]:
            if only and name != only:
                continue
            try:
                st = fn(pod)
            except Exception as e:
                return plugin_error("PreEnqueue", name, e)
            if st is None:
                continue
            if not isinstance(st, Status):
                return contract_error(name, "pre_enqueue", st)
            if not st.is_success():
                st.plugin = name
                if not st.is_rejected():
                    return Status(Code.ERROR, f'running PreEnqueue plugin "{name}": {st.message}', plugin=name)
                return st
        return SUCCESS

    # scheduling cycle ---------------------------------------------------------------------
    def run_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status, set[str]]:
        """Returns (result, status, plugins that narrowed the nodes)."""
        result: PreFilterResult | None = None
        plugins_with_nodes: set[str] = set()
        return_status = SUCCESS
        skip = state.skip_filter_plugins
        skip.clear()
        for name, fn in self._entries_for(state, "pre_filter"):
            try:
                out = fn(state, pod, nodes)
            except Exception as e:
                return None, plugin_error("PreFilter", name, e), set()
            if out is None:  # the usual answers first: nothing to narrow, nothing to say
                if result is None:
                    result = PreFilterResult()
                continue
            if out.__class__ is Status:
                r, s = None, out
            else:
                try:
                    r, s = split_result(out, PreFilterResult)
                except TypeError:
                    return None, contract_error(name, "pre_filter", out), set()
            if s.code is Code.SKIP:
                skip.add(name)
                continue
            if s.code is not Code.SUCCESS:
                s.plugin = name
                if s.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    return None, s, set()
                if s.code is Code.UNSCHEDULABLE:
                    return_status = s
                    continue
                return None, _status_error("PreFilter", name, s), set()
            if r is not None and not r.all_nodes():
                plugins_with_nodes.add(name)
            result = (result or PreFilterResult()).merge(r)
            if result is not None and not result.all_nodes() and not result.node_names:
                return result, no_common_nodes(plugins_with_nodes), plugins_with_nodes
        return result, return_status, plugins_with_nodes

    #: per extension hook (and "filter"): (the entries, their number, the skipped names, the
    #: entries not skipped), for the last skip set seen; the dry run of preemption asks with
    #: one state (or its copies) for every node and step
    _active_cache: dict[str, tuple[list[Entry], int, frozenset[str], list[Entry]]] | None = None

    def _active(self, hook: str, entries: list[Entry], skip: set[str]) -> list[Entry]:
        """``entries`` without those of plugins in ``skip``, kept while ``skip`` is equal."""
        cache = self._active_cache
        if cache is None:
            cache = self._active_cache = {}
        c = cache.get(hook)
        if c is not None and c[0] is entries and c[1] == len(entries) and c[2] == skip:
            return c[3]
        active = [e for e in entries if e[0] not in skip]
        cache[hook] = (entries, len(entries), frozenset(skip), active)
        return active

    def _run_pre_filter_extension(self, hook: str, label: str, state: CycleState, pod: Pod, other: Pod, node_info: NodeInfo) -> Status:
        entries = self.entries[hook]
        if not entries:
            return SUCCESS
        skip = state.skip_filter_plugins
        for name, fn in self._active(hook, entries, skip) if skip else entries:
            try:
                st = fn(state, pod, other, node_info)
            except Exception as e:
                st = plugin_error(f"{label} on PreFilter", name, e)
            if st is not None:
                if not isinstance(st, Status):
                    return contract_error(name, hook, st)
                if not st.is_success():
                    return Status(Code.ERROR, f'running {label} on PreFilter plugin "{name}": {st.message}', plugin=name)
        return SUCCESS

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status:
        return self._run_pre_filter_extension("pre_filter_add_pod", "AddPod", state, pod_to_schedule, pod_to_add, node_info)

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> Status:
        return self._run_pre_filter_extension("pre_filter_remove_pod", "RemovePod", state, pod_to_schedule, pod_to_remove, node_info)

    def active_filters(self, state: CycleState) -> list[Entry]:
        """The Filter entries to run this cycle (those not skipped by their PreFilter); the
        list is shared while the skipped plugins stay the same (callers do not change it)."""
        entries = self._timed["filter"] if state.record_plugin_metrics and self._timed else self.entries["filter"]
        skip = state.skip_filter_plugins
        return self._active("filter", entries, skip) if skip else entries

    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo, entries: list[Entry] | None = None) -> Status:
        """Filter plugins in order; the first that does not succeed decides for this node."""
        success = Code.SUCCESS
        for name, fn in (entries if entries is not None else self.active_filters(state)):
            try:
                st = fn(state, pod, node_info)
            except Exception as e:
                return plugin_error("Filter", name, e)
            if st is None:
                continue
            try:
                if st.code is success:
                    continue
            except AttributeError:  # not a Status: filter_verdict says so
                pass
            return filter_verdict(name, st)
        return SUCCESS

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod, node_info: NodeInfo, entries: list[Entry] | None = None) -> Status:
        """RunFilterPluginsWithNominatedPods; ``entries``: ``active_filters(state)`` when the
        caller has it."""
        status = self.run_filter_with_nominated_pods_added(state, pod, node_info)
        return status if status is not None else self.run_filter_plugins(state, pod, node_info, entries)

    def run_filter_with_nominated_pods_added(self, state: CycleState, pod: Pod, node_info: NodeInfo, added: Sequence[Pod] | None = None) -> Status | None:
        """The first run of RunFilterPluginsWithNominatedPods: Filter on copies of the node and
        the state with the pods nominated there of equal or higher priority (not ``pod``) added,
        each through the AddPod extensions. Its status when it does not succeed (that decides
        the node); None when no such pod is nominated there or it succeeds (the run without
        them decides). ``added``: :func:`~..nominator.filter_adds` of the node when the caller
        has it."""
        if added is None:
            services = self.services
            added = filter_adds(services.nominated_pods_for_node(node_info.name), pod) if services is not None else ()
        if not added:
            return None
        ni_out = node_info.clone()
        state_out = state.clone()
        for np in added:
            ni_out.add_pod(np)
            st = self.run_pre_filter_extension_add_pod(state_out, pod, np, ni_out)
            if not st.is_success():
                return st
        status = self.run_filter_plugins(state_out, pod, ni_out)
        return None if status.is_success() else status

    def run_post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        result: PostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""
        for name, fn in self.entries["post_filter"]:
            try:
                out = fn(state, pod, filtered_node_status)
            except Exception as e:
                return None, plugin_error("PostFilter", name, e)
            try:
                r, s = split_result(out, PostFilterResult)
            except TypeError:
                return None, contract_error(name, "post_filter", out)
            if s.is_success():
                return r, s
            if s.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                s.plugin = name
                return r, s
            if not s.is_rejected():
                return None, Status(Code.ERROR, s.message, plugin=name, error=s.error)
            if r is not None and r.mode != "noop":
                result = r
            reasons.extend(s.reasons)
            if not rejector:
                rejector = name
        return result, Status(Code.UNSCHEDULABLE, *reasons, plugin=rejector)

    def run_pre_score_plugins(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        skip = state.skip_score_plugins
        skip.clear()
        for name, fn in self._entries_for(state, "pre_score"):
            try:
                st = fn(state, pod, nodes)
            except Exception as e:
                return plugin_error("PreScore", name, e)
            if st is None:
                continue
            if not isinstance(st, Status):
                return contract_error(name, "pre_score", st)
            if st.code is Code.SUCCESS:
                continue
            if st.code is Code.SKIP:
                skip.add(name)
                continue
            return _status_error("PreScore", name, st)
        return SUCCESS

    def _run_status_point(
        self, state: CycleState, hook: str, label: str, pod: Pod, node_name: str, entries: list[Entry] | None = None
    ) -> Status:
        """Reserve and PreBind: plugins in order, the first that does not succeed decides."""
        for name, fn in entries if entries is not None else self._entries_for(state, hook):
            try:
                st = fn(state, pod, node_name)
            except Exception as e:
                return plugin_error(label, name, e)
            if st is None:
                continue
            if not isinstance(st, Status):
                return contract_error(name, hook, st)
            if not st.is_success():
                if st.is_rejected():
                    st.plugin = name
                    return st
                return _status_error(label, name, st)
        return SUCCESS

    def run_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return self._run_status_point(state, "reserve", "Reserve", pod, node_name)

    def run_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Unreserve of every Reserve plugin, in reverse order; failures are logged, not raised."""
        for name, fn in self.entries["unreserve"]:
            try:
                fn(state, pod, node_name)
            except Exception:
                log.exception('Unreserve of plugin "%s" failed for pod %s on node %s', name, pod.key, node_name)

    def run_permit(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Permit plugins in order: a rejection or an Error decides; Waits (each with a timeout
        above 0, capped at 15 minutes) hold the pod as a waiting pod."""
        waits: dict[str, float] = {}
        for name, fn in self._entries_for(state, "permit"):
            try:
                out = fn(state, pod, node_name)
            except Exception as e:
                return plugin_error("Permit", name, e)
            if out is None:
                continue
            got = permit_out(name, out)
            if isinstance(got, Status):
                return got
            st, timeout = got
            if st.code is Code.SUCCESS:
                continue
            if st.is_rejected():
                st.plugin = name
                return st
            if st.code is Code.WAIT:
                waits[name] = timeout
                continue
            return _status_error("Permit", name, st)
        if waits:
            s = self.services
            assert s is not None
            wp = WaitingPodImpl(pod, waits, s.clock.now(), s.on_permit_done)
            s.waiting_pods[pod.uid] = wp
            for plugin, deadline in wp.deadlines.items():
                s.add_timer(deadline, functools.partial(wp.timeout, plugin))
            return Status(Code.WAIT, f'one or more plugins asked to wait and no plugin rejected pod "{pod.name}"')
        return SUCCESS

    def will_wait_on_permit(self, pod: Pod) -> bool:
        """Is the pod held at Permit (kube-scheduler's ``WillWaitOnPermit``)?"""
        s = self.services
        return s is not None and pod.uid in s.waiting_pods

    # binding cycle ----------------------------------------------------------------------------
    def run_pre_bind_pre_flights(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """PreBindPreFlight of every PreBind plugin, in order (``RunPreBindPreFlights``):
        Success when any PreBind plugin will work for the pod (a plugin without the hook will),
        Skip when all skip, the first Error otherwise (any code but Success, Skip and Error is
        one). The plugins that skip are recorded in ``state.skip_pre_bind_plugins``: their
        PreBind is not run."""
        skip = state.skip_pre_bind_plugins
        skip.clear()
        flights = self._entries_for(state, "pre_bind_pre_flight")
        status = SUCCESS if len(flights) < len(self.entries["pre_bind"]) else Status(Code.SKIP)
        for name, fn in flights:
            try:
                st = fn(state, pod, node_name)
            except Exception as e:
                return Status(Code.ERROR, f'running PreBindPreFlight "{name}": {type(e).__name__}: {e}', plugin=name, error=e)
            if st is None:
                status = SUCCESS
                continue
            if not isinstance(st, Status):
                return contract_error(name, "pre_bind_pre_flight", st)
            code = st.code
            if code is Code.SKIP:
                skip.add(name)
            elif code is Code.SUCCESS:
                status = SUCCESS
            elif code is Code.ERROR:
                return Status(Code.ERROR, f'running PreBindPreFlight "{name}": {st.message}', plugin=name, error=st.error)
            else:
                return Status(
                    Code.ERROR,
                    f'PreBindPreFlight {name} returned "{code.label}", which is unsupported. '
                    "It is supposed to return Success, Skip, or Error status",
                    plugin=name,
                )
        return status

    def run_pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """PreBind plugins in order, but those whose PreBindPreFlight skipped this cycle."""
        entries = self._entries_for(state, "pre_bind")
        skip = state.skip_pre_bind_plugins
        if skip:
            entries = [e for e in entries if e[0] not in skip]
        return self._run_status_point(state, "pre_bind", "PreBind", pod, node_name, entries)

    def run_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        st: Status = Status(Code.SKIP)
        for name, fn in self._entries_for(state, "bind"):
            try:
                out = fn(state, pod, node_name)
            except (ObjectConflict, ObjectNotFound) as e:
                # escaped from handle.bind_pod: the pod is already bound or gone (never bound twice)
                conflict = Status.bind_conflict(plugin_error("Bind", name, e).message, error=e)
                conflict.plugin = name
                return conflict
            except Exception as e:
                return plugin_error("Bind", name, e)
            if out is not None and not isinstance(out, Status):
                return contract_error(name, "bind", out)
            st = SUCCESS if out is None else out
            if st.code is Code.SKIP:
                continue
            if not st.is_success():
                if st.is_rejected() or st.is_bind_conflict():  # a conflict stays one (never bound twice)
                    st.plugin = name
                    return st
                return _status_error("Bind", name, st)
            return st
        return st

    def run_post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """PostBind is informational: a failure is logged with the plugin's name, nothing else."""
        for name, fn in self.entries["post_bind"]:
            try:
                fn(state, pod, node_name)
            except Exception:
                log.exception('PostBind plugin "%s" failed for pod %s on node %s', name, pod.key, node_name)

    # info and lifecycle -------------------------------------------------------------------------
    def has_filter_plugins(self) -> bool:
        return bool(self.entries["filter"])

    def has_score_plugins(self) -> bool:
        return bool(self.entries["score"])

    def has_post_filter_plugins(self) -> bool:
        return bool(self.entries["post_filter"])

    def close(self) -> None:
        """Each plugin's ``close()`` (the SDK's Plugin protocol), once, in reverse order of
        construction; an exception is logged with the plugin's name and the next one runs."""
        if self._closed:
            return
        self._closed = True
        for name, plugin in reversed(list(self.plugins.items())):
            close = getattr(plugin, "close", None)
            if not callable(close):
                continue
            try:
                close()
            except Exception:
                log.exception('close() of plugin "%s" (profile %s) failed', name, self.profile_name)
