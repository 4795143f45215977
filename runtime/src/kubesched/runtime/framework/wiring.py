"""Building a framework from a Profile and the Registry (kube-scheduler's ``NewFramework``).

Each plugin is built once with its args and the profile's Handle, then registered with a pluggy
``PluginManager``, which validates its hook implementations against the specs. The bound method
of each enabled plugin is then collected once per hook of the SDK's extension-point table
(:mod:`kubesched.sdk.points`), in configured order, for the runners to call directly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pluggy

from kubesched.sdk import ArgsError, ClusterEvent, ClusterEventWithHint, build_args, hookspecs
from kubesched.sdk.points import EXTENSION_POINTS, hook_info, hook_params

from ..config import ConfigError, Profile, expand_plugins
from ..registry import BrokenPluginError, Registry
from .handle import FrameworkHandle, FrameworkServices
from .instrument import InstrumentedFramework, timed_columns, timed_entries
from .interface import Entry
from .runners import FrameworkImpl

__all__ = ["build_framework"]

#: hooks called without the tracer: QueueSort runs inside the queue's heap, and the batch forms
#: are off while tracing (a trace shows every per-node call)
_UNTRACED = frozenset({"queue_sort_less", "filter_batch", "score_batch", "filter_columns", "score_columns", "normalize_score_columns"})
#: hooks run in reverse configured order (kube-scheduler's Unreserve)
_REVERSED = frozenset({"unreserve"})

def _adapt(fn: Callable[..., Any], impl_args: Sequence[str], hook: str) -> Callable[..., Any]:
    """A callable taking the spec's arguments positionally; the implementation may declare fewer."""
    spec = hook_params(hook)
    if tuple(impl_args) == spec:
        return fn
    idx = [spec.index(a) for a in impl_args]
    if not idx:
        return lambda *a: fn()
    if len(idx) == 1:
        i0 = idx[0]
        return lambda *a: fn(a[i0])
    # each hook call goes through this: spelled out for the usual sizes (no list per call)
    if len(idx) == 2:
        i0, i1 = idx
        return lambda *a: fn(a[i0], a[i1])
    if len(idx) == 3:
        i0, i1, i2 = idx
        return lambda *a: fn(a[i0], a[i1], a[i2])
    return lambda *a: fn(*[a[i] for i in idx])


def build_framework(
    profile: Profile,
    registry: Registry,
    services: FrameworkServices,
    *,
    source: str | None = None,
) -> FrameworkImpl:
    """The framework of ``profile``: its plugins built, validated and collected per hook.
    Configuration mistakes (unknown or broken plugins, bad args, a failing ``__init__``) are
    :class:`~kubesched.runtime.config.ConfigError` naming the field; on any exception, the plugins
    built so far are closed (reverse order, their exceptions logged) before it propagates."""
    metrics = services.metrics
    fw: FrameworkImpl
    if metrics is not None:
        fw = InstrumentedFramework(profile.scheduler_name, profile.percentage_of_nodes_to_score, metrics)
    else:
        fw = FrameworkImpl(profile.scheduler_name, profile.percentage_of_nodes_to_score)
    fw.services = services
    fw.handle = FrameworkHandle(fw, services)
    try:
        _wire(fw, profile, registry, services, source)
    except BaseException:
        fw.close()  # the plugins built so far, in reverse order (exceptions logged)
        raise
    return fw


def _wire(fw: FrameworkImpl, profile: Profile, registry: Registry, services: FrameworkServices, source: str | None) -> None:
    """Builds the plugins of ``profile`` into ``fw`` and collects their hooks."""
    metrics = services.metrics
    prefix = f"profiles[{profile.index}]"
    pm = pluggy.PluginManager("kubesched")
    pm.add_hookspecs(hookspecs)

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
    used: list[str] = []
    for refs in expanded.values():
        for r in refs:
            if r.name not in used:
                used.append(r.name)
    # pluginsNeeded: every plugin multiPoint enables is built (its args checked, its events
    # registered), even one the file then disables at each of its extension points
    for r in profile.plugins.multi_point.enabled:
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
            # at its pluginConfig entry when the file has one, else where the plugin is named
            where = field if name in cfg_index else f"{prefix}.plugins"
            raise ConfigError(
                source, where, f'initializing plugin "{name}" ({spec.distribution}): {type(e).__name__}: {e}'
            ) from None
        fw.plugins[name] = instance
        try:
            pm.register(instance, name=name)
        except pluggy.PluginValidationError as e:
            raise ConfigError(source, f"{prefix}.plugins", f'plugin "{name}" ({spec.distribution}): {e}') from None
    try:
        pm.check_pending()
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
    _collect(fw, pm, services.tracer)
    fw.events = _events(fw, pm, source, f"{prefix}.plugins")
    if metrics is not None:
        fw._timed = timed_entries(fw.entries, metrics)
        fw._timed_columns = timed_columns(fw.filter_columns, fw.score_columns, metrics)


def _impls(pm: pluggy.PluginManager, hook: str) -> dict[str, Any]:
    caller = getattr(pm.hook, hook, None)
    if caller is None:
        return {}
    return {impl.plugin_name: impl for impl in caller.get_hookimpls()}


def _entries(pm: pluggy.PluginManager, fw: FrameworkImpl, names: Sequence[str], point: str, hook: str, tracer: Any) -> list[Entry]:
    impls = _impls(pm, hook)
    out: list[Entry] = []
    for name in names:
        impl = impls.get(name)
        if impl is None:
            continue
        fn = _adapt(impl.function, impl.argnames, hook)
        if tracer is not None:
            fn = tracer.wrap(fw.profile_name, point, hook, name, fn)
        out.append((name, fn))
    if hook in _REVERSED:
        out.reverse()
    return out


def _collect(fw: FrameworkImpl, pm: pluggy.PluginManager, tracer: Any) -> None:
    """Every hook of the SDK's table, for the plugins enabled at its extension point."""
    for point in EXTENSION_POINTS:
        names = fw.points.get(point.name, [])
        for hook in point.hooks:
            fw.entries[hook.name] = _entries(pm, fw, names, point.name, hook.name, None if hook.name in _UNTRACED else tracer)
    fw.normalize = dict(fw.entries["normalize_score"])
    # the batch forms only beside the per-node form (the reference)
    filter_names = {name for name, _ in fw.entries["filter"]}
    fw.filter_batch = {n: fn for n, fn in fw.entries["filter_batch"] if n in filter_names}
    score_names = {name for name, _ in fw.entries["score"]}
    fw.score_batch = {n: fn for n, fn in fw.entries["score_batch"] if n in score_names}
    fw.filter_columns = {n: fn for n, fn in fw.entries["filter_columns"] if n in filter_names}
    fw.score_columns = {n: fn for n, fn in fw.entries["score_columns"] if n in score_names}
    fw.normalize_columns = {n: fn for n, fn in fw.entries["normalize_score_columns"] if n in fw.normalize}
    sign_impls = _impls(pm, "sign_pod")
    for name in dict.fromkeys(fw.points.get("filter", []) + fw.points.get("score", [])):
        impl = sign_impls.get(name)
        if impl is not None:
            fw.signers[name] = _adapt(impl.function, impl.argnames, "sign_pod")
    if tracer is not None:
        fw.reuse_results = False  # a trace shows every plugin call
        fw.use_batch = False
        fw.use_columns = False


def _events(fw: FrameworkImpl, pm: pluggy.PluginManager, source: str | None, field: str) -> dict[str, list[ClusterEventWithHint] | None]:
    """EnqueueExtensions of every plugin used in the profile (None: every event requeues)."""
    out: dict[str, list[ClusterEventWithHint] | None] = {}
    ev_impls = _impls(pm, "events_to_register")
    for name in fw.plugins:
        impl = ev_impls.get(name)
        if impl is None:
            out[name] = None
            continue
        lst: list[ClusterEventWithHint] = []
        for e in impl.function() or []:
            if isinstance(e, ClusterEventWithHint):
                lst.append(e)
            elif isinstance(e, ClusterEvent):
                lst.append(ClusterEventWithHint(e))
            else:
                raise ConfigError(
                    source,
                    field,
                    f'plugin "{name}" hook events_to_register returned an item {e!r}; '
                    f"expected {hook_info('events_to_register').returns}",
                )
        out[name] = lst
    return out
