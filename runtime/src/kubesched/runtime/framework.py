"""One Framework per profile: runs every extension point with kube-scheduler's semantics.

pluggy is the registry and validator here: each plugin instance is registered with a
``PluginManager`` that checks its hook implementations against the specs. The per-node hot path
does not go through pluggy: when the profile is built, the bound method of each enabled plugin is
collected once per extension point, in configured order, and called directly.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pluggy

from kubesched.sdk import (
    EXTENSION_POINT_HOOKS,
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    ArgsError,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    NodeInfo,
    NodeScore,
    Pod,
    PostFilterResult,
    PreFilterResult,
    QueuedPodInfo,
    Status,
    build_args,
    hookspecs,
)

from .config import ConfigError, Profile, expand_plugins
from .registry import BrokenPluginError, Registry
from .timefmt import go_duration

__all__ = [
    "MAX_PERMIT_TIMEOUT",
    "Framework",
    "FrameworkServices",
    "NodePluginScores",
    "PluginScore",
    "WaitingPodImpl",
    "go_duration",
]

log = logging.getLogger("kubesched.framework")

#: Permit Wait timeouts are capped at 15 minutes, as in kube-scheduler.
MAX_PERMIT_TIMEOUT = 15 * 60.0

_SPEC_ARGS: dict[str, tuple[str, ...]] = {}


def _spec_args(hook: str) -> tuple[str, ...]:
    if hook not in _SPEC_ARGS:
        fn = getattr(hookspecs, hook)
        code = fn.__code__
        _SPEC_ARGS[hook] = tuple(code.co_varnames[: code.co_argcount])
    return _SPEC_ARGS[hook]


@dataclass
class PluginScore:
    name: str
    raw: int = 0
    normalized: int = 0
    weighted: int = 0


@dataclass
class NodePluginScores:
    name: str
    scores: list[PluginScore] = field(default_factory=list)
    total_score: int = 0


class WaitingPodImpl:
    """A pod held at Permit: the plugins still to allow it and a timer per plugin."""

    def __init__(
        self,
        pod: Pod,
        plugin_timeouts: Mapping[str, float],
        now: float,
        on_done: Callable[[WaitingPodImpl, Status], None],
    ) -> None:
        self._pod = pod
        self._lock = threading.Lock()
        self._pending: dict[str, float] = {p: t for p, t in plugin_timeouts.items()}
        self.deadlines: dict[str, float] = {p: now + t for p, t in plugin_timeouts.items()}
        self._on_done = on_done
        self.done = False
        self.status: Status | None = None

    @property
    def pod(self) -> Pod:
        return self._pod

    def pending_plugins(self) -> list[str]:
        with self._lock:
            return list(self._pending)

    def allow(self, plugin: str) -> None:
        with self._lock:
            if self.done:
                return
            self._pending.pop(plugin, None)
            if self._pending:
                return
            self.done = True
            self.status = Status()
        self._on_done(self, self.status)

    def reject(self, plugin: str, message: str) -> None:
        with self._lock:
            if self.done:
                return
            self.done = True
            self.status = Status(Code.UNSCHEDULABLE, message, plugin=plugin)
        self._on_done(self, self.status)

    def timeout(self, plugin: str) -> None:
        with self._lock:
            wait = self._pending.get(plugin)
        if wait is None:
            return
        self.reject(plugin, f"rejected due to timeout after waiting {go_duration(wait)} at plugin {plugin}")


@dataclass
class FrameworkServices:
    """What the scheduler gives every framework (and, through the Handle, every plugin)."""

    snapshot: Callable[[], Any]
    objects: Any
    clock: Any
    event_recorder: Any
    bind_pod: Callable[[Pod, str], None]
    nominated_pods_for_node: Callable[[str], list[Pod]] = field(default=lambda _n: [])  # type: ignore[assignment]
    #: cheap check used to skip the nominated-pods pass of Filter entirely
    has_nominated_pods: Callable[[], bool] = field(default=lambda: True)  # type: ignore[assignment]
    waiting_pods: dict[str, WaitingPodImpl] = field(default_factory=dict)
    #: called with (waiting pod, final status) when a waiting pod is allowed or rejected
    on_permit_done: Callable[[WaitingPodImpl, Status], None] = lambda _w, _s: None
    #: registers a permit timeout: (deadline, callback)
    add_timer: Callable[[float, Callable[[], None]], None] = lambda _d, _c: None
    tracer: Any = None
    metrics: Any = None


class FrameworkHandle:
    """The Handle plugins get (see ``kubesched.sdk.Handle``)."""

    def __init__(self, framework: Framework, services: FrameworkServices) -> None:
        self._fw = framework
        self._s = services

    @property
    def profile_name(self) -> str:
        return self._fw.profile_name

    @property
    def clock(self) -> Any:
        return self._s.clock

    @property
    def event_recorder(self) -> Any:
        return self._s.event_recorder

    @property
    def objects(self) -> Any:
        return self._s.objects

    def snapshot(self) -> Any:
        return self._s.snapshot()

    def bind_pod(self, pod: Pod, node_name: str) -> None:
        self._s.bind_pod(pod, node_name)

    def get_waiting_pod(self, uid: str) -> WaitingPodImpl | None:
        return self._s.waiting_pods.get(uid)

    def iterate_over_waiting_pods(self) -> list[WaitingPodImpl]:
        return list(self._s.waiting_pods.values())

    def reject_waiting_pod(self, uid: str) -> bool:
        wp = self._s.waiting_pods.get(uid)
        if wp is None:
            return False
        wp.reject("", "removed")
        return True

    def nominated_pods_for_node(self, node_name: str) -> list[Pod]:
        return self._s.nominated_pods_for_node(node_name)

    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return self._fw.run_filter_plugins(state, pod, node_info)

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return self._fw.run_filter_plugins_with_nominated_pods(state, pod, node_info)

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status:
        return self._fw.run_pre_filter_extension_add_pod(state, pod_to_schedule, pod_to_add, node_info)

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> Status:
        return self._fw.run_pre_filter_extension_remove_pod(state, pod_to_schedule, pod_to_remove, node_info)

    def run_pre_score_plugins(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        return self._fw.run_pre_score_plugins(state, pod, nodes)

    def run_score_plugins(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> tuple[list[NodeScore], Status]:
        scores, st = self._fw.run_score_plugins(state, pod, nodes)
        return [NodeScore(s.name, s.total_score) for s in scores], st


def _adapt(fn: Callable[..., Any], impl_args: Sequence[str], hook: str) -> Callable[..., Any]:
    """A callable taking the spec's arguments positionally; the implementation may declare fewer."""
    spec = _spec_args(hook)
    if tuple(impl_args) == spec:
        return fn
    idx = [spec.index(a) for a in impl_args]
    if not idx:
        return lambda *a: fn()
    if len(idx) == 1:
        i0 = idx[0]
        return lambda *a: fn(a[i0])
    return lambda *a: fn(*[a[i] for i in idx])


def _filter_verdict(name: str, st: Status) -> Status:
    """A Filter plugin's non-success status as the framework reports it: rejections keep their
    code and reasons, anything else becomes an Error naming the plugin."""
    if not st.is_rejected():
        st = Status(Code.ERROR, f'running "{name}" filter plugin: {st.message}', error=st.error)
    st.plugin = name
    return st


def _err(point: str, plugin: str, e: BaseException) -> Status:
    return Status(Code.ERROR, f'running {point} plugin "{plugin}": {type(e).__name__}: {e}', plugin=plugin, error=e)


Entry = tuple[str, Callable[..., Any]]


class Framework:
    """The plugins of one profile, wired to extension points."""

    def __init__(self, profile_name: str, percentage_of_nodes_to_score: int | None = None) -> None:
        self.profile_name = profile_name
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.plugins: dict[str, Any] = {}
        self.points: dict[str, list[str]] = {}  # camelCase point -> plugin names, ordered
        self.score_weights: dict[str, int] = {}
        self.pm = pluggy.PluginManager("kubesched")
        self.pm.add_hookspecs(hookspecs)
        self.handle: FrameworkHandle | None = None
        self.services: FrameworkServices | None = None
        # collected callables, per hook
        self.pre_enqueue: list[Entry] = []
        self.queue_sort: list[Entry] = []
        self.pre_filter: list[Entry] = []
        self.pre_filter_add: list[Entry] = []
        self.pre_filter_remove: list[Entry] = []
        self.filter: list[Entry] = []
        self.post_filter: list[Entry] = []
        self.pre_score: list[Entry] = []
        self.score: list[Entry] = []
        self.normalize: dict[str, Callable[..., Any]] = {}
        self.reserve: list[Entry] = []
        self.unreserve: list[Entry] = []
        self.permit: list[Entry] = []
        self.pre_bind: list[Entry] = []
        self.bind: list[Entry] = []
        self.post_bind: list[Entry] = []
        self.events: dict[str, list[ClusterEventWithHint] | None] = {}
        self._timed: dict[str, list[Entry]] = {}
        self._last_totals: list[int] = []
        # SignPod and result reuse (see sign / reuse_table)
        self.signers: dict[str, Callable[..., Any]] = {}
        #: reuse Filter results and raw Scores between pods with equal signatures
        self.reuse_results = True
        self._reuse: dict[str, dict[Any, tuple[int, dict[Any, Any]]]] = {"filter": {}, "score": {}}
        self._signed_pod: Pod | None = None
        self._signed: dict[str, Any] = {}
        #: batch forms (filter_batch / score_batch) of plugins that also have the per-node form
        self.filter_batch: dict[str, Callable[..., Any]] = {}
        self.score_batch: dict[str, Callable[..., Any]] = {}
        #: use the batch forms (off while tracing: a trace shows every per-node call)
        self.use_batch = True

    # construction ---------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        profile: Profile,
        registry: Registry,
        services: FrameworkServices,
        *,
        source: str | None = None,
    ) -> Framework:
        fw = cls(profile.scheduler_name, profile.percentage_of_nodes_to_score)
        fw.services = services
        fw.handle = FrameworkHandle(fw, services)
        prefix = f"profiles[{profile.index}]"

        def implements(name: str) -> list[str]:
            spec = registry.get(name)  # raises with did-you-mean
            if spec.broken:
                raise ConfigError(source, f"{prefix}.plugins", spec.describe_error())
            return registry.implements(name)

        try:
            expanded = expand_plugins(profile, implements)
        except ConfigError:
            raise
        except LookupError as e:
            raise ConfigError(source, f"{prefix}.plugins", str(e)) from None
        used = []
        for refs in expanded.values():
            for r in refs:
                if r.name not in used:
                    used.append(r.name)
        cfg_index = {name: i for i, name in enumerate(profile.plugin_config)}
        for name in used:
            spec = registry.get(name)
            if spec.broken:
                raise ConfigError(source, f"{prefix}.plugins", spec.describe_error())
            raw_args = profile.plugin_config.get(name)
            field = f"{prefix}.pluginConfig[{cfg_index[name]}].args" if name in cfg_index else f"{prefix}.pluginConfig[{name}].args"
            kind = profile.plugin_config_kinds.get(name) if hasattr(profile, "plugin_config_kinds") else None
            if kind and spec.args_kind and kind != spec.args_kind:
                raise ConfigError(source, f"{field}.kind", f'plugin "{name}" takes args of kind {spec.args_kind}, got {kind}')
            try:
                args = build_args(spec.args_cls, raw_args, field=field) if spec.args_cls is not None else raw_args
            except ArgsError as e:
                raise ConfigError(source, e.field, e.message) from None
            try:
                instance = spec.build(args, fw.handle)
            except (ConfigError, BrokenPluginError):
                raise
            except Exception as e:
                raise ConfigError(
                    source, field, f'initializing plugin "{name}" ({spec.distribution}): {type(e).__name__}: {e}'
                ) from None
            fw.plugins[name] = instance
            try:
                fw.pm.register(instance, name=name)
            except pluggy.PluginValidationError as e:
                raise ConfigError(source, f"{prefix}.plugins", f'plugin "{name}" ({spec.distribution}): {e}') from None
        try:
            fw.pm.check_pending()
        except pluggy.PluginValidationError as e:
            raise ConfigError(source, f"{prefix}.plugins", str(e)) from None

        for point, refs in expanded.items():
            fw.points[point] = [r.name for r in refs]
            if point == "score":
                for r in refs:
                    fw.score_weights[r.name] = r.weight or 1
        if len(fw.points.get("queueSort", [])) != 1:
            raise ConfigError(source, f"{prefix}.plugins.queueSort", f"exactly one queue sort plugin is required, got {len(fw.points.get('queueSort', []))}")
        if not fw.points.get("bind"):
            raise ConfigError(source, f"{prefix}.plugins.bind", "at least one bind plugin is needed")
        fw._collect(services.tracer)
        if services.metrics is not None:
            fw._instrument(services.metrics)
        return fw

    # metrics --------------------------------------------------------------------------------------
    _ENTRY_POINTS = {
        "pre_filter": "PreFilter",
        "filter": "Filter",
        "pre_score": "PreScore",
        "score": "Score",
        "reserve": "Reserve",
        "permit": "Permit",
        "pre_bind": "PreBind",
        "bind": "Bind",
    }

    def _instrument(self, metrics: Any) -> None:
        """Extension point durations on every cycle; per-plugin durations only in cycles whose
        ``state.record_plugin_metrics`` is set (sampled, as kube-scheduler does)."""
        self._timed = {}
        for attr, point in self._ENTRY_POINTS.items():
            timed = []
            for name, fn in getattr(self, attr):
                timed.append((name, _timed_call(fn, metrics, name, point)))
            self._timed[attr] = timed
        for attr, point, pick in (
            ("run_pre_filter", "PreFilter", lambda out: out[1]),
            ("run_post_filter", "PostFilter", lambda out: out[1]),
            ("run_pre_score_plugins", "PreScore", lambda out: out),
            ("run_score_plugins", "Score", lambda out: out[1]),
            ("score_totals", "Score", lambda out: out[1]),
            ("run_reserve", "Reserve", lambda out: out),
            ("run_permit", "Permit", lambda out: out),
            ("run_pre_bind", "PreBind", lambda out: out),
            ("run_bind", "Bind", lambda out: out),
        ):
            setattr(self, attr, _timed_point(getattr(self, attr), metrics, point, self.profile_name, pick))

    def _entries_for(self, state: CycleState, attr: str) -> list[Entry]:
        if state.record_plugin_metrics and self._timed:
            return self._timed[attr]
        entries: list[Entry] = getattr(self, attr)
        return entries

    def _impls(self, hook: str) -> dict[str, Any]:
        caller = getattr(self.pm.hook, hook, None)
        if caller is None:
            return {}
        return {impl.plugin_name: impl for impl in caller.get_hookimpls()}

    def _entries(self, point: str, hook: str, tracer: Any, reverse: bool = False) -> list[Entry]:
        impls = self._impls(hook)
        out: list[Entry] = []
        names = self.points.get(point, [])
        for name in names:
            impl = impls.get(name)
            if impl is None:
                continue
            fn = _adapt(impl.function, impl.argnames, hook)
            if tracer is not None:
                fn = tracer.wrap(self.profile_name, point, hook, name, fn)
            out.append((name, fn))
        if reverse:
            out.reverse()
        return out

    def _collect(self, tracer: Any) -> None:
        self.pre_enqueue = self._entries("preEnqueue", "pre_enqueue", tracer)
        self.queue_sort = self._entries("queueSort", "queue_sort_less", None)
        self.pre_filter = self._entries("preFilter", "pre_filter", tracer)
        self.pre_filter_add = self._entries("preFilter", "pre_filter_add_pod", tracer)
        self.pre_filter_remove = self._entries("preFilter", "pre_filter_remove_pod", tracer)
        self.filter = self._entries("filter", "filter", tracer)
        self.post_filter = self._entries("postFilter", "post_filter", tracer)
        self.pre_score = self._entries("preScore", "pre_score", tracer)
        self.score = self._entries("score", "score", tracer)
        self.normalize = dict(self._entries("score", "normalize_score", tracer))
        self.reserve = self._entries("reserve", "reserve", tracer)
        self.unreserve = self._entries("reserve", "unreserve", tracer, reverse=True)
        self.permit = self._entries("permit", "permit", tracer)
        self.pre_bind = self._entries("preBind", "pre_bind", tracer)
        self.bind = self._entries("bind", "bind", tracer)
        self.post_bind = self._entries("postBind", "post_bind", tracer)
        sign_impls = self._impls("sign_pod")
        for name in dict.fromkeys(self.points.get("filter", []) + self.points.get("score", [])):
            impl = sign_impls.get(name)
            if impl is not None:
                self.signers[name] = _adapt(impl.function, impl.argnames, "sign_pod")
        filter_names = {name for name, _ in self.filter}
        self.filter_batch = {n: fn for n, fn in self._entries("filter", "filter_batch", None) if n in filter_names}
        score_names = {name for name, _ in self.score}
        self.score_batch = {n: fn for n, fn in self._entries("score", "score_batch", None) if n in score_names}
        if tracer is not None:
            self.reuse_results = False  # a trace shows every plugin call
            self.use_batch = False
        # EnqueueExtensions of every plugin used in the profile (except QueueSort/Bind only)
        ev_impls = self._impls("events_to_register")
        for name in self.plugins:
            impl = ev_impls.get(name)
            if impl is None:
                self.events[name] = None  # not implemented: every event requeues
                continue
            raw = impl.function() or []
            lst: list[ClusterEventWithHint] = []
            for e in raw:
                if isinstance(e, ClusterEventWithHint):
                    lst.append(e)
                elif isinstance(e, ClusterEvent):
                    lst.append(ClusterEventWithHint(e))
                else:
                    raise TypeError(f'plugin "{name}": events_to_register returned {e!r}')
            self.events[name] = lst

    # result reuse ---------------------------------------------------------------------------
    REUSE_TABLES = 8

    def sign(self, names: Sequence[str], pod: Pod) -> tuple[Any, ...] | Status | None:
        """The pod's signature for the plugins ``names`` (SignPod), or None when one of them
        does not sign it (no sign_pod hook, or it returned None). An exception is an Error."""
        signers = self.signers
        if self._signed_pod is not pod:  # Filter and Score of one cycle ask for the same pod
            self._signed_pod = pod
            self._signed = {}
        memo = self._signed
        out = []
        for name in names:
            frag = memo.get(name, _UNSIGNED)
            if frag is _UNSIGNED:
                fn = signers.get(name)
                if fn is None:
                    return None
                try:
                    frag = fn(pod)
                    hash(frag)
                except TypeError as e:
                    if "unhashable" not in str(e):
                        return Status(Code.ERROR, f'running SignPod plugin "{name}": {type(e).__name__}: {e}', plugin=name, error=e)
                    return Status(Code.ERROR, f'running SignPod plugin "{name}": sign_pod returned an unhashable {type(frag).__name__} (see kubesched.sdk.freeze)', plugin=name)
                except Exception as e:
                    return Status(Code.ERROR, f'running SignPod plugin "{name}": {type(e).__name__}: {e}', plugin=name, error=e)
                memo[name] = frag
            if frag is None:
                return None
            out.append((name, frag))
        return tuple(out)

    def reuse_table(self, kind: str, signature: tuple[Any, ...], epoch: int) -> dict[Any, Any]:
        """NodeInfo -> (its generation, result) for pods with this signature; emptied
        when ``epoch`` (the snapshot's node set and images) changes. The last
        ``REUSE_TABLES`` signatures per kind are kept."""
        tables = self._reuse[kind]
        t = tables.pop(signature, None)
        if t is None or t[0] != epoch:
            t = (epoch, {})
            if len(tables) >= self.REUSE_TABLES:
                del tables[next(iter(tables))]
        tables[signature] = t
        return t[1]

    def clear_reuse(self) -> None:
        for tables in self._reuse.values():
            tables.clear()

    # queue ----------------------------------------------------------------------------------
    def queue_sort_func(self) -> Callable[[QueuedPodInfo, QueuedPodInfo], bool]:
        return self.queue_sort[0][1]

    def run_pre_enqueue(self, pod: Pod) -> Status:
        for name, fn in self.pre_enqueue:
            try:
                st = fn(pod)
            except Exception as e:
                return _err("PreEnqueue", name, e)
            if st is not None and not st.is_success():
                st.plugin = name
                if not st.is_rejected():
                    return Status(Code.ERROR, f'running PreEnqueue plugin "{name}": {st.message}', plugin=name)
                return st
        return _SUCCESS

    # scheduling cycle ---------------------------------------------------------------------
    def run_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status, set[str]]:
        """Returns (result, status, plugins that narrowed the nodes)."""
        result: PreFilterResult | None = None
        plugins_with_nodes: set[str] = set()
        return_status = _SUCCESS
        skip = state.skip_filter_plugins
        skip.clear()
        for name, fn in self._entries_for(state, "pre_filter"):
            try:
                out = fn(state, pod, nodes)
            except Exception as e:
                return None, _err("PreFilter", name, e), set()
            r, s = split_result(out, PreFilterResult)
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
                if s.code is Code.ERROR and s.error is not None:
                    return None, Status(Code.ERROR, f'running PreFilter plugin "{name}": {s.message}', plugin=name, error=s.error), set()
                return None, Status(Code.ERROR, f'running PreFilter plugin "{name}": {s.message}', plugin=name), set()
            if r is not None and not r.all_nodes():
                plugins_with_nodes.add(name)
            result = (result or PreFilterResult()).merge(r)
            if result is not None and not result.all_nodes() and not result.node_names:
                names = sorted(plugins_with_nodes)
                if len(names) == 1:
                    msg = f"node(s) didn't satisfy plugin {names[0]}"
                else:
                    msg = f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously"
                return result, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg), plugins_with_nodes
        return result, return_status, plugins_with_nodes

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status:
        skip = state.skip_filter_plugins
        for name, fn in self.pre_filter_add:
            if name in skip:
                continue
            try:
                st = fn(state, pod_to_schedule, pod_to_add, node_info)
            except Exception as e:
                st = _err("AddPod on PreFilter", name, e)
            if st is not None and not st.is_success():
                return Status(Code.ERROR, f'running AddPod on PreFilter plugin "{name}": {st.message}', plugin=name)
        return _SUCCESS

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> Status:
        skip = state.skip_filter_plugins
        for name, fn in self.pre_filter_remove:
            if name in skip:
                continue
            try:
                st = fn(state, pod_to_schedule, pod_to_remove, node_info)
            except Exception as e:
                st = _err("RemovePod on PreFilter", name, e)
            if st is not None and not st.is_success():
                return Status(Code.ERROR, f'running RemovePod on PreFilter plugin "{name}": {st.message}', plugin=name)
        return _SUCCESS

    def active_filters(self, state: CycleState) -> list[Entry]:
        """The Filter entries to run this cycle (those not skipped by their PreFilter)."""
        entries = self._timed["filter"] if state.record_plugin_metrics and self._timed else self.filter
        skip = state.skip_filter_plugins
        return [e for e in entries if e[0] not in skip] if skip else entries

    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo, entries: list[Entry] | None = None) -> Status:
        """Filter plugins in order; the first that does not succeed decides for this node."""
        for name, fn in (entries if entries is not None else self.active_filters(state)):
            try:
                st = fn(state, pod, node_info)
            except Exception as e:
                st = _err("Filter", name, e)
                return st
            if st is not None and st.code is not Code.SUCCESS:
                return _filter_verdict(name, st)
        return _SUCCESS

    def batch_filters(self, state: CycleState, entries: list[Entry]) -> bool:
        """Whether this cycle's Filter runs node chunks through :meth:`run_filter_plugins_batch`
        (some active plugin has filter_batch; not in cycles that time each plugin call)."""
        if not self.use_batch or not self.filter_batch or state.record_plugin_metrics:
            return False
        fb = self.filter_batch
        return any(name in fb for name, _ in entries)

    def run_filter_plugins_batch(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], entries: list[Entry], use_batch: bool = True
    ) -> list[Status] | Status:
        """:meth:`run_filter_plugins` for each node of ``nodes``: one status per node. Plugins
        run in order, each on the nodes that passed the ones before it, through filter_batch
        when they have it (and ``use_batch``). A failing filter_batch call is an Error for the
        cycle (returned alone)."""
        batch = self.filter_batch if use_batch else {}
        if not batch or not any(name in batch for name, _ in entries):
            # node by node, every plugin on a node before the next node (as kube-scheduler);
            # an Error stops the cycle at that node
            run = self.run_filter_plugins
            out = []
            for ni in nodes:
                st = run(state, pod, ni, entries)
                if st.code is Code.ERROR:
                    return st
                out.append(st)
            return out
        results: list[Status] = [_SUCCESS] * len(nodes)
        alive = list(range(len(nodes)))
        success = Code.SUCCESS
        for name, fn in entries:
            if not alive:
                break
            sub = [nodes[i] for i in alive]
            bfn = batch.get(name)
            outs = None
            if bfn is not None:
                try:
                    outs = list(bfn(state, pod, sub))
                    if len(outs) != len(sub):
                        raise ValueError(f"{len(outs)} results for {len(sub)} nodes")
                except Exception as e:
                    # The chunk may reach past the nodes kube-scheduler would look at: let the
                    # per-node form decide node by node (an error counts only where the
                    # ordered walk gets to it).
                    log.warning('filter_batch of plugin "%s" failed (%s: %s); using its filter for these nodes', name, type(e).__name__, e)
                    outs = None
            if outs is None:
                outs = []
                for ni in sub:
                    try:
                        outs.append(fn(state, pod, ni))
                    except Exception as e:
                        outs.append(_Raised(_err("Filter", name, e)))
            nxt = []
            for i, st in zip(alive, outs):
                if st is None or st.code is success:
                    nxt.append(i)
                    continue
                # as run_filter_plugins: an exception's status as it is
                results[i] = st.status if type(st) is _Raised else _filter_verdict(name, st)
            alive = nxt
        return results

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod, node_info: NodeInfo, entries: list[Entry] | None = None) -> Status:
        services = self.services
        nominated = services.nominated_pods_for_node(node_info.name) if services is not None else []
        if not nominated:
            return self.run_filter_plugins(state, pod, node_info)
        # first pass: with equal-or-higher priority nominated pods added
        ni_out = node_info.clone()
        state_out = state.clone()
        added = False
        for np in nominated:
            if np.priority >= pod.priority and np.uid != pod.uid:
                ni_out.add_pod(np)
                st = self.run_pre_filter_extension_add_pod(state_out, pod, np, ni_out)
                if not st.is_success():
                    return st
                added = True
        if not added:
            return self.run_filter_plugins(state, pod, node_info)
        status = self.run_filter_plugins(state_out, pod, ni_out)
        if not status.is_success():
            return status
        return self.run_filter_plugins(state, pod, node_info)

    def run_post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        result: PostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""
        for name, fn in self.post_filter:
            try:
                out = fn(state, pod, filtered_node_status)
            except Exception as e:
                return None, _err("PostFilter", name, e)
            r, s = split_result(out, PostFilterResult)
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
                return _err("PreScore", name, e)
            if st is None or st.code is Code.SUCCESS:
                continue
            if st.code is Code.SKIP:
                skip.add(name)
                continue
            return Status(Code.ERROR, f'running PreScore plugin "{name}": {st.message}', plugin=name, error=st.error)
        return _SUCCESS

    def active_scores(self, state: CycleState) -> list[Entry]:
        """The Score entries to run this cycle (those not skipped by their PreScore)."""
        skip = state.skip_score_plugins
        score = self._entries_for(state, "score")
        return [(n, fn) for n, fn in score if n not in skip] if skip else score

    def _raw_scores(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], plugins: list[Entry]) -> list[list[int]] | Status:
        """Raw scores per plugin (in ``plugins`` order), one per node."""
        cols: list[list[int]] = []
        batch = self.score_batch if self.use_batch and not state.record_plugin_metrics else {}
        for name, fn in plugins:
            bfn = batch.get(name)
            if bfn is not None:
                try:
                    out = bfn(state, pod, nodes)
                    if isinstance(out, Status):
                        return _score_err(name, out)
                    got = list(out)
                except Exception as e:
                    return _score_err(name, e)
                if len(got) != len(nodes) or any(type(v) is not int for v in got):
                    bad = f"{len(got)} results for {len(nodes)} nodes" if len(got) != len(nodes) else f"{next(v for v in got if type(v) is not int)!r}, not an int"
                    return Status(Code.ERROR, f'running Score plugins: plugin "{name}" failed with: score_batch returned {bad}', plugin=name)
                cols.append(got)
                continue
            raw: list[int] = []
            append = raw.append
            for ni in nodes:
                try:
                    out = fn(state, pod, ni)
                except Exception as e:
                    return _score_err(name, e)
                if type(out) is int:
                    append(out)
                    continue
                sc, st = _score_out(out)
                if not st.is_success():
                    return _score_err(name, st)
                append(sc)
            cols.append(raw)
        return cols

    def _reused_rows(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], plugins: list[Entry], reuse: dict[Any, Any]
    ) -> tuple[list[tuple[int, ...]], list[int | None]] | Status:
        """Per node: the raw scores of ``plugins`` and the weighted sum of those without
        NormalizeScore (None if one is out of range), from ``reuse`` (see :meth:`reuse_table`)
        while the node's NodeInfo is unchanged, else computed and stored there."""
        weights = self.score_weights
        fixed = [(j, weights.get(name, 1)) for j, (name, _) in enumerate(plugins) if name not in self.normalize]
        get = reuse.get
        misses = [ni for ni in nodes if (hit := get(ni)) is None or hit[0] != ni.generation]
        if misses:
            cols = self._raw_scores(state, pod, misses, plugins)
            if isinstance(cols, Status):
                return cols
            for k, ni in enumerate(misses):
                row = tuple(c[k] for c in cols)
                partial: int | None = 0
                for j, w in fixed:
                    v = row[j]
                    if v < MIN_NODE_SCORE or v > MAX_NODE_SCORE:
                        partial = None  # the full path reports it
                        break
                    partial += v * w  # type: ignore[operator]
                reuse[ni] = (ni.generation, row, partial)
        rows: list[tuple[int, ...]] = []
        partials: list[int | None] = []
        for ni in nodes:
            hit = reuse[ni]
            rows.append(hit[1])
            partials.append(hit[2])
        return rows, partials

    def _final_scores(self, name: str, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], raw: list[int]) -> list[int] | Status:
        """NormalizeScore (when the plugin has it) and the range check of one plugin's scores."""
        norm = self.normalize.get(name)
        if norm is not None:
            lst = [NodeScore(ni.name, v) for ni, v in zip(nodes, raw)]
            try:
                st = norm(state, pod, lst)
            except Exception as e:
                return Status(Code.ERROR, f'running Normalize on Score plugins: plugin "{name}" failed with: {type(e).__name__}: {e}', plugin=name, error=e)
            if st is not None and not st.is_success():
                return Status(Code.ERROR, f'running Normalize on Score plugins: plugin "{name}" failed with: {st.message}', plugin=name)
            vals = [x.score for x in lst]
        else:
            vals = raw
        if vals and (min(vals) < MIN_NODE_SCORE or max(vals) > MAX_NODE_SCORE):
            bad = next(v for v in vals if v < MIN_NODE_SCORE or v > MAX_NODE_SCORE)
            return Status(
                Code.ERROR,
                f'applying score defaultWeights on Score plugins: plugin "{name}" returns an invalid score {bad}, '
                f"it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
                plugin=name,
            )
        return vals

    def run_score_plugins(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        details: bool = False,
        totals_only: bool = False,
        reuse: dict[Any, Any] | None = None,
    ) -> tuple[list[NodePluginScores], Status]:
        """Score, NormalizeScore, range check and weights. ``details`` keeps each plugin's raw,
        normalized and weighted score per node (explain); otherwise only totals are built.
        ``reuse``: a :meth:`reuse_table` for the pod's score signature."""
        plugins = self.active_scores(state)
        n = len(nodes)
        weights = self.score_weights
        if reuse is None:
            cols = self._raw_scores(state, pod, nodes, plugins)
            if isinstance(cols, Status):
                return [], cols
        else:
            got = self._reused_rows(state, pod, nodes, plugins, reuse)
            if isinstance(got, Status):
                return [], got
            rows, partials = got
            if totals_only and None not in partials:
                # the plugins without NormalizeScore are summed already, per node
                totals: list[int] = partials  # type: ignore[assignment]
                memo = reuse.get(_NORMALIZED)
                if memo is None:
                    memo = reuse[_NORMALIZED] = {}
                for j, (name, _fn) in enumerate(plugins):
                    if name not in self.normalize:
                        continue
                    # a signing plugin's NormalizeScore depends on the raw values only (the
                    # sign_pod contract): the same column gives the same normalized scores
                    key = (name, tuple([r[j] for r in rows]))
                    vals = memo.get(key)
                    if vals is None:
                        vals = self._final_scores(name, state, pod, nodes, list(key[1]))
                        if isinstance(vals, Status):
                            return [], vals
                        if len(memo) >= 64:
                            memo.clear()
                        memo[key] = vals
                    w = weights.get(name, 1)
                    totals = [t + v * w for t, v in zip(totals, vals)]
                self._last_totals = totals
                return [], _SUCCESS
            cols = [list(c) for c in zip(*rows)] if rows else [[] for _ in plugins]
        totals = [0] * n
        per_plugin: list[tuple[str, list[int], list[int], int]] = []
        for (name, _fn), raw in zip(plugins, cols):
            vals = self._final_scores(name, state, pod, nodes, raw)
            if isinstance(vals, Status):
                return [], vals
            w = weights.get(name, 1)
            if w == 1:
                totals = [t + v for t, v in zip(totals, vals)]
            else:
                totals = [t + v * w for t, v in zip(totals, vals)]
            if details:
                per_plugin.append((name, raw, vals, w))
        if totals_only:
            self._last_totals = totals
            return [], _SUCCESS
        out_scores = [NodePluginScores(ni.name, [], totals[i]) for i, ni in enumerate(nodes)]
        if details:
            for name, raw, vals, w in per_plugin:
                for i in range(n):
                    out_scores[i].scores.append(PluginScore(name, raw[i], vals[i], vals[i] * w))
        return out_scores, _SUCCESS

    def score_totals(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], reuse: dict[Any, Any] | None = None
    ) -> tuple[list[int], Status]:
        """The weighted total score per node (in ``nodes`` order), without per-plugin details."""
        _, st = self.run_score_plugins(state, pod, nodes, totals_only=True, reuse=reuse)
        return (self._last_totals if st.is_success() else []), st

    def run_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        for name, fn in self._entries_for(state, "reserve"):
            try:
                st = fn(state, pod, node_name)
            except Exception as e:
                return _err("Reserve", name, e)
            if st is not None and not st.is_success():
                if st.is_rejected():
                    st.plugin = name
                    return st
                return Status(Code.ERROR, f'running Reserve plugin "{name}": {st.message}', plugin=name, error=st.error)
        return _SUCCESS

    def run_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Unreserve of every Reserve plugin, in reverse order; failures are logged, not raised."""
        for name, fn in self.unreserve:
            try:
                fn(state, pod, node_name)
            except Exception:
                log.exception('Unreserve of plugin "%s" failed for pod %s on node %s', name, pod.key, node_name)

    def run_permit(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        waits: dict[str, float] = {}
        for name, fn in self._entries_for(state, "permit"):
            try:
                out = fn(state, pod, node_name)
            except Exception as e:
                return _err("Permit", name, e)
            timeout = 0.0
            if isinstance(out, tuple):
                st, timeout = out[0], float(out[1] or 0)
            else:
                st = out
            if st is None or st.code is Code.SUCCESS:
                continue
            if st.is_rejected():
                st.plugin = name
                return st
            if st.code is Code.WAIT:
                waits[name] = min(timeout, MAX_PERMIT_TIMEOUT)
                continue
            return Status(Code.ERROR, f'running Permit plugin "{name}": {st.message}', plugin=name, error=st.error)
        if waits:
            s = self.services
            assert s is not None
            wp = WaitingPodImpl(pod, waits, s.clock.now(), s.on_permit_done)
            s.waiting_pods[pod.uid] = wp
            for plugin, deadline in wp.deadlines.items():
                s.add_timer(deadline, functools.partial(wp.timeout, plugin))
            return Status(Code.WAIT, f'one or more plugins asked to wait and no plugin rejected pod "{pod.name}"')
        return _SUCCESS

    # binding cycle ----------------------------------------------------------------------------
    def run_pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        for name, fn in self._entries_for(state, "pre_bind"):
            try:
                st = fn(state, pod, node_name)
            except Exception as e:
                return _err("PreBind", name, e)
            if st is not None and not st.is_success():
                if st.is_rejected():
                    st.plugin = name
                    return st
                return Status(Code.ERROR, f'running PreBind plugin "{name}": {st.message}', plugin=name, error=st.error)
        return _SUCCESS

    def run_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        if not self.bind:
            return Status(Code.SKIP)
        st: Status = Status(Code.SKIP)
        for name, fn in self._entries_for(state, "bind"):
            try:
                out = fn(state, pod, node_name)
            except Exception as e:
                return _err("Bind", name, e)
            st = _SUCCESS if out is None else out
            if st.code is Code.SKIP:
                continue
            if not st.is_success():
                if st.is_rejected() or st.is_bind_conflict():  # a conflict stays one (never bound twice)
                    st.plugin = name
                    return st
                return Status(Code.ERROR, f'running Bind plugin "{name}": {st.message}', plugin=name, error=st.error)
            return st
        return st

    def run_post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """PostBind is informational: a failure is logged with the plugin's name, nothing else."""
        for name, fn in self.post_bind:
            try:
                fn(state, pod, node_name)
            except Exception:
                log.exception('PostBind plugin "%s" failed for pod %s on node %s', name, pod.key, node_name)

    # info ---------------------------------------------------------------------------------------
    def has_filter_plugins(self) -> bool:
        return bool(self.filter)

    def has_score_plugins(self) -> bool:
        return bool(self.score)

    def has_post_filter_plugins(self) -> bool:
        return bool(self.post_filter)

    def list_plugins(self) -> dict[str, list[str]]:
        return {p: list(n) for p, n in self.points.items() if n}


_SUCCESS = Status()


def _status_label(out: Any) -> str:
    if out is None:
        return "Success"
    if isinstance(out, Status):
        return out.code.label
    if isinstance(out, tuple) and out and isinstance(out[0], Status):
        return out[0].code.label
    if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], Status):
        return out[1].code.label
    return "Success"


def _timed_call(fn: Callable[..., Any], metrics: Any, plugin: str, point: str) -> Callable[..., Any]:
    perf = time.perf_counter

    def timed(*args: Any) -> Any:
        t0 = perf()
        try:
            out = fn(*args)
        except Exception:
            metrics.plugin(plugin, point, "Error", perf() - t0)
            raise
        metrics.plugin(plugin, point, _status_label(out), perf() - t0)
        return out

    return timed


def _timed_point(fn: Callable[..., Any], metrics: Any, point: str, profile: str, pick: Callable[[Any], Any]) -> Callable[..., Any]:
    perf = time.perf_counter

    def timed(*args: Any, **kwargs: Any) -> Any:
        t0 = perf()
        out = fn(*args, **kwargs)
        st = pick(out)
        metrics.extension_point(point, st.code.label if isinstance(st, Status) else "Success", profile, perf() - t0)
        return out

    return timed


def split_result(out: Any, result_type: type) -> tuple[Any, Status]:
    """A PreFilter/PostFilter return value (None, a Status, a result, or a (result, Status)
    pair) as (result or None, Status); TypeError for anything else."""
    if out is None:
        return None, _SUCCESS
    if isinstance(out, Status):
        return None, out
    if isinstance(out, result_type):
        return out, _SUCCESS
    if isinstance(out, tuple) and len(out) == 2:
        r, s = out
        return r, (s if s is not None else _SUCCESS)
    raise TypeError(f"unexpected return value {out!r}")


_UNSIGNED = object()


class _Raised:
    """A per-node Filter call that raised (its status is not wrapped again)."""

    __slots__ = ("code", "status")

    def __init__(self, status: Status) -> None:
        self.status = status
        self.code = status.code

#: key of the memo of normalized score columns inside a score reuse table (node names are str)
_NORMALIZED = ("normalized",)


def _score_err(name: str, e: BaseException | Status) -> Status:
    if isinstance(e, Status):
        return Status(Code.ERROR, f'running Score plugins: plugin "{name}" failed with: {e.message}', plugin=name)
    return Status(Code.ERROR, f'running Score plugins: plugin "{name}" failed with: {type(e).__name__}: {e}', plugin=name, error=e)


def _score_out(out: Any) -> tuple[int, Status]:
    if isinstance(out, Status):
        return 0, out
    if isinstance(out, tuple) and len(out) == 2:
        sc, st = out
        return int(sc), (st if st is not None else _SUCCESS)
    if isinstance(out, bool):
        raise TypeError("score must be an int")
    return int(out), _SUCCESS


__all__ += ["EXTENSION_POINT_HOOKS", "FrameworkHandle", "split_result"]
