"""The per-extension-point plugin lists of a profile, as kube-scheduler's framework builds them.

Port of ``NewFramework`` in ``pkg/scheduler/framework/runtime/framework.go`` (release 1.36.3;
the same since 1.34 but for the alpha placement extension points, which kubesched does not have):
``updatePluginList`` for each extension point, then ``expandMultiPointPlugins``, the queue-sort
and bind checks, and ``getScoreWeights``. Which extension points a plugin implements is asked
of the caller (``implements``), since that is a property of the plugin's code.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from ._schema import go_repr
from ._types import EXTENSION_POINTS, ConfigError, PluginRef, Profile, camel_point

# Order of frameworkImpl.getExtensionPoints: errors surface in this order, as in Go.
_FRAMEWORK_ORDER: tuple[str, ...] = (
    "preFilter",
    "filter",
    "postFilter",
    "reserve",
    "preScore",
    "score",
    "preBind",
    "bind",
    "postBind",
    "permit",
    "preEnqueue",
    "queueSort",
)
# Go interface names, as the framework's errors print them.
_GO_TYPE: dict[str, str] = {
    point: point[0].upper() + point[1:] + "Plugin" for point in EXTENSION_POINTS
}
# The SDK hook that makes a plugin a QueueSort plugin is called queue_sort_less.
_ALIASES = {"queue_sort_less": "queueSort", "queueSortLess": "queueSort"}

MAX_NODE_SCORE = 100  # framework.MaxNodeScore
MAX_TOTAL_SCORE = 2**63 - 1  # framework.MaxTotalScore (math.MaxInt64)


def _normalize(points: Collection[str]) -> frozenset[str]:
    out = set()
    for point in points:
        point = _ALIASES.get(point, point)
        try:
            camel = camel_point(point)
        except KeyError:
            continue  # e.g. normalizeScore, unreserve: not configurable extension points
        out.add(camel)
    return frozenset(out)


def expand_plugins(
    profile: Profile, implements: Callable[[str], Collection[str]]
) -> dict[str, list[PluginRef]]:
    """The ordered enabled plugins of each extension point (camelCase keys, all of them).

    ``implements(name)`` returns the extension points (camelCase or snake_case) the plugin
    ``name`` implements, and raises :class:`LookupError` (e.g. KeyError) when no such plugin
    is installed. Score entries carry their weight (0 becomes 1, as in kube-scheduler; a
    ``score`` weight wins over a ``multiPoint`` one); other entries have weight 0.
    Raises :class:`ConfigError` where kube-scheduler's ``NewFramework`` fails.
    """
    base = f"profiles[{profile.index}]"
    cache: dict[str, frozenset[str] | None] = {}

    def points_of(name: str) -> frozenset[str] | None:
        if name not in cache:
            try:
                cache[name] = _normalize(implements(name))
            except LookupError:
                cache[name] = None
        return cache[name]

    def fail(ref: PluginRef, default_path: str, message: str) -> ConfigError:
        if ref.default:
            message += " (a default plugin of this configuration's apiVersion)"
        return ConfigError(profile.source, ref.path or default_path, message)

    # updatePluginList, for each extension point.
    lists: dict[str, list[PluginRef]] = {point: [] for point in EXTENSION_POINTS}
    for point in _FRAMEWORK_ORDER:
        go_type = _GO_TYPE[point]
        seen: set[str] = set()
        for i, ref in enumerate(profile.plugins.get(point).enabled):
            path = f"{base}.plugins.{point}.enabled[{i}]"
            points = points_of(ref.name)
            if points is None:
                raise fail(ref, path, f'{go_type} {go_repr(ref.name)} does not exist')
            if point not in points:
                raise fail(ref, path, f'plugin {go_repr(ref.name)} does not extend {go_type} plugin')
            if ref.name in seen:
                raise fail(ref, path, f'plugin {go_repr(ref.name)} already registered as "{go_type}"')
            seen.add(ref.name)
            lists[point].append(ref)

    multi_point = profile.plugins.multi_point.enabled
    if multi_point:
        _expand_multi_point(profile, base, lists, points_of, fail)

    scheduler_name = profile.scheduler_name
    if len(lists["queueSort"]) != 1:
        raise ConfigError(
            profile.source,
            f"{base}.plugins.queueSort",
            "only one queue sort plugin required for profile with scheduler name "
            f'{go_repr(scheduler_name)}, but got {len(lists["queueSort"])}',
        )
    if not lists["bind"]:
        raise ConfigError(
            profile.source,
            f"{base}.plugins.bind",
            f"at least one bind plugin is needed for profile with scheduler name {go_repr(scheduler_name)}",
        )

    # getScoreWeights: individual score weights take precedence over multiPoint ones.
    weights: dict[str, int] = {}
    total = 0
    for ref in (*profile.plugins.score.enabled, *multi_point):
        points = points_of(ref.name)
        if points is None or "score" not in points or ref.name in weights:
            continue
        weight = ref.weight or 1  # a weight of zero is not permitted
        # in Go's int64 arithmetic: after a negative weight, MaxTotalScore-totalPriority wraps
        # around, and the next plugin "could overflow" (kube-scheduler v1.36.3 says so)
        if weight * MAX_NODE_SCORE > _int64(MAX_TOTAL_SCORE - total):
            raise ConfigError(
                profile.source,
                ref.path or f"{base}.plugins.score",
                "score plugins: total score of Score plugins could overflow",
            )
        weights[ref.name] = weight
        total = _int64(total + weight * MAX_NODE_SCORE)

    result: dict[str, list[PluginRef]] = {}
    for point in EXTENSION_POINTS:
        result[point] = [
            PluginRef(
                ref.name,
                weights[ref.name] if point == "score" else 0,
                path=ref.path,
                default=ref.default,
            )
            for ref in lists[point]
        ]
    return result


def _expand_multi_point(
    profile: Profile,
    base: str,
    lists: dict[str, list[PluginRef]],
    points_of: Callable[[str], frozenset[str] | None],
    fail: Callable[[PluginRef, str, str], ConfigError],
) -> None:
    """``expandMultiPointPlugins``."""
    for point in _FRAMEWORK_ORDER:
        go_type = _GO_TYPE[point]
        plugin_set = profile.plugins.get(point)
        # plugins already registered via this extension point, to check double registration
        enabled_names = [ref.name for ref in lists[point]]
        disabled = {ref.name for ref in plugin_set.disabled}
        if "*" in disabled:
            continue  # all plugins are disabled for this extension point

        multi_point_enabled: list[PluginRef] = []
        multi_point_names: set[str] = set()
        overrides: set[str] = set()
        for k, ref in enumerate(profile.plugins.multi_point.enabled):
            path = f"{base}.plugins.multiPoint.enabled[{k}]"
            points = points_of(ref.name)
            if points is None:
                raise fail(ref, path, f'{go_type} {go_repr(ref.name)} does not exist')
            if point not in points:
                continue
            # a plugin enabled via MultiPoint can still be disabled for specific points
            if ref.name in disabled:
                continue
            # enabled at the specific point too: the user overrides the MultiPoint setting
            if ref.name in enabled_names:
                overrides.add(ref.name)
                continue
            if ref.name in multi_point_names:
                raise fail(ref, path, f'plugin {go_repr(ref.name)} already registered as "{go_type}"')
            multi_point_names.add(ref.name)
            multi_point_enabled.append(ref)

        # Expected order: overrides (in their specific-point order), then MultiPoint plugins,
        # then the other plugins of the specific extension point.
        current = lists[point]
        lists[point] = (
            [ref for ref in current if ref.name in overrides]
            + multi_point_enabled
            + [ref for ref in current if ref.name not in overrides]
        )


def _int64(value: int) -> int:
    """``value`` wrapped as Go's int64 arithmetic wraps it."""
    return (value + 2**63) % 2**64 - 2**63
