"""Shorthands shared by the config tests (importable because pytest puts this directory on sys.path)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from kubesched.runtime.config import PluginRef, Plugins, PluginSet

DATA = Path(__file__).parent / "data"

Item = str | tuple[str, int]


def refs(items: Iterable[Item]) -> list[PluginRef]:
    out = []
    for item in items:
        if isinstance(item, tuple):
            out.append(PluginRef(item[0], item[1]))
        else:
            out.append(PluginRef(item))
    return out


def ps(enabled: Iterable[Item] = (), disabled: Iterable[str] = ()) -> PluginSet:
    return PluginSet(refs(enabled), refs(disabled))


def plugins(**points: PluginSet) -> Plugins:
    """``plugins(filter=ps([...]), multi_point=ps([...]))`` (snake_case point names)."""
    result = Plugins()
    for point, plugin_set in points.items():
        result.set(point, plugin_set)
    return result


def names(items: Iterable[PluginRef]) -> list[str]:
    return [p.name for p in items]


def named_weights(items: Iterable[PluginRef]) -> list[tuple[str, int]]:
    return [(p.name, p.weight) for p in items]


def expanded(**points: Iterable[Item]) -> dict[str, list[tuple[str, int]]]:
    """Expected ``expand_plugins`` output: every point, camelCase keys, (name, weight)."""
    from kubesched.runtime.config import EXTENSION_POINTS

    given: Mapping[str, Iterable[Item]] = points
    out: dict[str, list[tuple[str, int]]] = {}
    for point in EXTENSION_POINTS:
        out[point] = [
            item if isinstance(item, tuple) else (item, 0) for item in given.get(point, ())
        ]
    return out


def as_pairs(result: Mapping[str, list[PluginRef]]) -> dict[str, list[tuple[str, int]]]:
    return {point: named_weights(items) for point, items in result.items()}
