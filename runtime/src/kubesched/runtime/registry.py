"""Plugin discovery through the ``kubesched.plugins`` entry-point group.

The entry point's name is the plugin's name in configuration files. Each entry point is loaded
in its own try/except: a broken distribution is recorded with its name and error and fails
startup only if a profile uses it. The runtime's own default plugins come in the same way.

A plugin class that breaks the SDK's contract is broken too, with a message naming the plugin,
its distribution, the hook and what was expected: a method marked ``@hookimpl`` whose name is
not a hook, a hook declaring an argument its spec does not have, an ``Args`` that is not a
dataclass. Entry points in a group that starts with ``kubesched`` but is not
``kubesched.plugins`` (a misspelt group) are reported too: they are never loaded.

``KUBESCHED_LOAD_PLUGINS`` (comma-separated distribution or plugin names) is an allow-list for
third-party plugins: when it is set, only those are loaded; set and empty, none are. Names are
compared as pip compares distribution names (PEP 503: case-insensitive, runs of ``-``, ``_`` and
``.`` alike), so ``kubesched_priority_label`` and ``prioritylabel`` both match. Which entry points
load is decided from the installed metadata alone (entry-point name and distribution) before any
module is imported: an unlisted distribution is never imported. An entry that matches no
installed plugin distribution or plugin name is warned about, with what is installed.

The runtime's own plugins (distribution ``kubesched``) are always loaded, and their names cannot
be taken over: a third-party entry point named like one (``NodeResourcesFit``) is not loaded,
with a warning naming its distribution; the built-in plugin is used.

Warnings of discovery are logged once (logger ``kubesched.registry``) and kept in
``Registry.warnings()``; entry points left out are in ``Registry.skipped``.
"""

from __future__ import annotations

import inspect
import logging
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

from kubesched.sdk import HOOKS, PRIMARY_HOOKS, args_schema
from kubesched.sdk._describe import suggest as _suggest
from kubesched.sdk._text import printable, quote
from kubesched.sdk.args import args_class_problem
from kubesched.sdk.points import hook_params

__all__ = [
    "ENTRY_POINT_GROUP",
    "BrokenPluginError",
    "MisplacedEntryPoint",
    "PluginSpec",
    "Registry",
    "SkippedEntryPoint",
    "UnknownPluginError",
    "implemented_points",
]

ENTRY_POINT_GROUP = "kubesched.plugins"
RUNTIME_DISTRIBUTION = "kubesched"
ALLOW_ENV = "KUBESCHED_LOAD_PLUGINS"
_IMPL_ATTR = "kubesched_impl"

log = logging.getLogger("kubesched.registry")


class UnknownPluginError(LookupError):
    pass


class BrokenPluginError(RuntimeError):
    pass


def _hook_names(obj: Any) -> dict[str, str]:
    """hook name -> attribute name, for attributes marked with ``@hookimpl``."""
    out: dict[str, str] = {}
    for attr in dir(obj):
        if attr.startswith("__"):
            continue
        try:
            v = getattr(obj, attr)
        except Exception:
            continue
        opts = getattr(v, _IMPL_ATTR, None)
        if isinstance(opts, Mapping):
            out[str(opts.get("specname") or attr)] = attr
    return out


def implemented_points(obj: Any) -> list[str]:
    """Extension points (camelCase) a plugin class or instance implements, in config order."""
    hooks = _hook_names(obj)
    return [p for p, hs in PRIMARY_HOOKS.items() if any(h in hooks for h in hs)]


def unmarked_hooks(obj: Any) -> list[str]:
    """Methods named like a hook but not marked with ``@hookimpl`` (a common mistake)."""
    marked = set(_hook_names(obj).values())
    return sorted(n for n in HOOKS if n not in marked and callable(getattr(obj, n, None)))


def _impl_params(cls: type, attr: str) -> tuple[str, ...]:
    """The arguments pluggy passes to method ``attr`` of plugin class ``cls``: the required
    positional ones, without ``self`` (pluggy's ``argnames``)."""
    fn = getattr(cls, attr)
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return ()
    if not isinstance(inspect.getattr_static(cls, attr, None), staticmethod) and not inspect.ismethod(fn):
        params = params[1:]  # self
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return tuple(p.name for p in params if p.kind in kinds and p.default is inspect.Parameter.empty)


def _quoted(names: Iterable[str]) -> str:
    return ", ".join(f'"{n}"' for n in names)


def contract_problems(obj: Any) -> list[str]:
    """What plugin class ``obj`` gets wrong about the SDK's contract, one sentence each."""
    from .config import suggest

    problems: list[str] = []
    for hook, attr in sorted(_hook_names(obj).items(), key=lambda kv: kv[1]):
        if hook not in HOOKS:
            what = f'method "{attr}"' if hook == attr else f'method "{attr}" (specname "{hook}")'
            hint = suggest(hook, HOOKS)
            problems.append(
                f"{what} is marked @hookimpl but is not a hook; "
                + (f'did you mean "{hint}"?' if hint else f"the hooks are: {', '.join(HOOKS)}")
            )
            continue
        expected = hook_params(hook)
        unknown = [a for a in _impl_params(obj, attr) if a not in expected]
        if unknown:
            noun = "argument" if len(unknown) == 1 else "arguments"
            problems.append(
                f"hook {hook} has {noun} {_quoted(unknown)}, which the spec does not have; "
                f"expected {hook}({', '.join(expected)})"
            )
    return problems


@dataclass(frozen=True)
class MisplacedEntryPoint:
    """An entry point in a group that starts with ``kubesched`` but is not the plugin group."""

    name: str
    group: str
    distribution: str
    version: str
    value: str

    def hint(self) -> str:
        return printable(
            f'distribution "{self.distribution}" registers it in entry-point group "{self.group}"'
            f' — the group is "{ENTRY_POINT_GROUP}"'
        )

    def warning(self) -> str:
        return printable(
            f'distribution "{self.distribution}" {self.version} registers "{self.name}" in entry-point group '
            f'"{self.group}", which kubesched does not read — the group is "{ENTRY_POINT_GROUP}"'
        )


def normalize_name(name: str) -> str:
    """A distribution or plugin name as pip compares distribution names (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _entry_points() -> list[metadata.EntryPoint]:
    """Every entry point of every installed distribution (the first of each name on the path,
    as ``importlib.metadata.entry_points`` counts them). Metadata only: nothing is imported."""
    out: list[metadata.EntryPoint] = []
    seen: set[str] = set()
    for dist in metadata.distributions():
        meta: Any = dist.metadata  # .get: the importlib_metadata backport's [] raises KeyError
        key = normalize_name(meta.get("Name") or "")
        if key not in seen:
            seen.add(key)
            out.extend(dist.entry_points)
    return out


def _dist_of(ep: Any) -> tuple[str, str]:
    """(name, version) of the distribution of ``ep``; a METADATA without them says so."""
    dist = ep.dist
    if dist is None:
        return "<unknown>", ""
    return str(dist.metadata.get("Name") or "<unknown>"), str(dist.metadata.get("Version") or "")


#: why an entry point was not loaded: not in the allow-list, or named like a built-in plugin
SKIP_UNLISTED = "unlisted"
SKIP_BUILTIN = "builtin"


@dataclass(frozen=True)
class SkippedEntryPoint:
    """A plugin entry point that discovery left out (never imported), and why."""

    name: str
    distribution: str
    version: str
    value: str
    reason: str  # SKIP_UNLISTED or SKIP_BUILTIN

    def describe(self) -> str:
        name, origin = printable(self.name), printable(f"{self.distribution} {self.version}".strip())
        if self.reason == SKIP_BUILTIN:
            return f'plugin "{name}" ({origin}): not loaded, "{name}" is the name of a built-in plugin'
        return f'plugin "{name}" ({origin}): not loaded, not listed in {ALLOW_ENV}'

    def warning(self) -> str:
        name = printable(self.name)
        return (
            f'distribution "{printable(self.distribution)}" {printable(self.version)} registers plugin "{name}",'
            f" the name of a built-in plugin: it is not loaded, the built-in {name} is used"
        )


def _unmatched_entries(entries: Iterable[str], found: Iterable[tuple[str, str, bool]]) -> list[str]:
    """One warning per allow-list entry that matches no plugin distribution or plugin name.
    ``found``: (plugin name, distribution, built-in) of every entry point in the group."""
    known: set[str] = set()
    third: dict[str, list[str]] = {}
    for name, dist, builtin in found:
        known.update((normalize_name(name), normalize_name(dist)))
        if not builtin:
            third.setdefault(dist, []).append(name)
    pool = {normalize_name(x): x for dist, names in third.items() for x in (dist, *names)}
    installed = (
        "installed third-party plugins: "
        + ", ".join(f"{printable(d)} ({', '.join(printable(n) for n in sorted(ns))})" for d, ns in sorted(third.items()))
        if third
        else "no third-party plugins are installed"
    )
    out: list[str] = []
    seen: set[str] = set()
    for entry in entries:
        key = normalize_name(entry)
        if key in known or key in seen:
            continue
        seen.add(key)
        close = _suggest(key, pool)
        hint = f' did you mean "{printable(pool[close])}"?' if close else ""
        out.append(f"{ALLOW_ENV} entry {quote(entry)} matches no installed plugin distribution or plugin name;{hint} {installed}")
    return out


@dataclass
class PluginSpec:
    """One discovered plugin."""

    name: str
    distribution: str
    version: str
    value: str  # the entry point's value, e.g. "pkg.module:Class"
    factory: Callable[..., Any] | None = None
    error: str | None = None
    extension_points: list[str] = field(default_factory=list)
    args_cls: Any = None
    args_kind: str = ""
    warnings: list[str] = field(default_factory=list)

    @property
    def broken(self) -> bool:
        return self.error is not None

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "extension_points": list(self.extension_points),
            "args_kind": self.args_kind,
            "args": args_schema(self.args_cls),
            "entry_point": self.value,
            "broken": self.broken,
        }
        if self.error:
            d["error"] = self.error
        if self.warnings:
            d["warnings"] = list(self.warnings)
        return d

    def build(self, args: Any, handle: Any) -> Any:
        """Instantiate the plugin with whichever of ``args`` and ``handle`` its factory takes."""
        if self.factory is None:
            raise BrokenPluginError(self.describe_error())
        try:
            params = inspect.signature(self.factory).parameters
        except (TypeError, ValueError):
            params = {}  # type: ignore[assignment]
        kwargs: dict[str, Any] = {}
        accepts_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
        if "args" in params or accepts_kw:
            kwargs["args"] = args
        if "handle" in params or accepts_kw:
            kwargs["handle"] = handle
        return self.factory(**kwargs)

    def describe_error(self) -> str:
        """One line for a person: the plugin, its distribution and the error (control characters escaped)."""
        origin = f"{self.distribution} {self.version}" if self.version else self.distribution
        if self.factory is None:
            return printable(f'plugin "{self.name}" from distribution {origin} failed to load: {self.error}')
        return printable(f'plugin "{self.name}" ({origin}): {self.error}')


class Registry:
    """The plugins available to this process, by config name."""

    def __init__(
        self,
        specs: Iterable[PluginSpec] = (),
        misplaced: Iterable[MisplacedEntryPoint] = (),
        skipped: Iterable[SkippedEntryPoint] = (),
        allow_warnings: Iterable[str] = (),
    ) -> None:
        self._specs: dict[str, PluginSpec] = {}
        for s in specs:
            self._specs[s.name] = s
        #: entry points in misspelt groups (``kubesched.plugin``, ``kubesched-plugins``, ...)
        self.misplaced: list[MisplacedEntryPoint] = list(misplaced)
        #: plugin entry points not loaded: unlisted in the allow-list, or named like a built-in
        self.skipped: list[SkippedEntryPoint] = list(skipped)
        #: allow-list entries that match nothing installed, one sentence each
        self.allow_warnings: list[str] = list(allow_warnings)

    # discovery ----------------------------------------------------------------------------
    @classmethod
    def discover(cls, group: str = ENTRY_POINT_GROUP, allow: str | None = None) -> Registry:
        """The plugins of the installed distributions. ``allow`` (default: ``$KUBESCHED_LOAD_PLUGINS``)
        is the allow-list; which entry points load is decided from their metadata before any import."""
        if allow is None:
            allow = os.environ.get(ALLOW_ENV)
        entries = None if allow is None else [a.strip() for a in allow.split(",") if a.strip()]
        reg = cls()
        every = _entry_points()
        for ep in every:
            g = ep.group
            if g.lower().startswith("kubesched") and g not in (group, ENTRY_POINT_GROUP):
                reg.misplaced.append(MisplacedEntryPoint(ep.name, g, *_dist_of(ep), ep.value))
        found = [(ep, *_dist_of(ep)) for ep in every if ep.group == group]
        runtime = normalize_name(RUNTIME_DISTRIBUTION)
        own = {ep.name for ep, dname, _ in found if normalize_name(dname) == runtime}
        wanted = None
        if entries is not None:
            wanted = {normalize_name(a) for a in entries}
            reg.allow_warnings = _unmatched_entries(
                entries, [(ep.name, dname, normalize_name(dname) == runtime) for ep, dname, _ in found]
            )
        chosen: list[tuple[metadata.EntryPoint, str, str]] = []
        for ep, dname, version in found:
            if normalize_name(dname) != runtime:
                reason = None
                if wanted is not None and normalize_name(dname) not in wanted and normalize_name(ep.name) not in wanted:
                    reason = SKIP_UNLISTED
                elif ep.name in own:
                    reason = SKIP_BUILTIN
                if reason is not None:
                    reg.skipped.append(SkippedEntryPoint(ep.name, dname, version, ep.value, reason))
                    continue
            chosen.append((ep, dname, version))
        # only now is anything imported: the chosen entry points, one at a time
        seen_dists: dict[str, str] = {}
        for ep, dname, version in chosen:
            if ep.name in reg._specs and seen_dists.get(ep.name) != dname:
                other = reg._specs[ep.name]
                other.error = (
                    f'plugin name "{ep.name}" is registered by two distributions: '
                    f"{other.distribution} and {dname}"
                )
                other.factory = None
                continue
            seen_dists[ep.name] = dname
            spec = PluginSpec(ep.name, dname, version, ep.value)
            reg._load(spec, ep.load)
            reg._specs[spec.name] = spec
        for w in reg.discovery_warnings():
            log.warning("%s", w)
        return reg

    def _load(self, spec: PluginSpec, loader: Callable[[], Any]) -> None:
        try:
            obj = loader()
        except BaseException as e:  # one broken distribution must not stop the others
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            spec.error = f"{type(e).__name__}: {e}"
            return
        self._fill(spec, obj)

    @staticmethod
    def _fill(spec: PluginSpec, obj: Any) -> None:
        if not callable(obj):
            spec.error = f"entry point {spec.value} is not a class or factory"
            return
        spec.factory = obj
        spec.extension_points = implemented_points(obj)
        spec.args_cls = getattr(obj, "Args", None)
        spec.args_kind = str(getattr(obj, "args_kind", "") or (f"{spec.name}Args" if spec.args_cls else ""))
        problems = contract_problems(obj) if inspect.isclass(obj) else []
        args_problem = args_class_problem(spec.args_cls)
        if args_problem:
            problems.append(args_problem)
            spec.args_cls = None
        if problems:
            spec.error = "; ".join(problems)
        if inspect.isclass(obj):
            bad = unmarked_hooks(obj)
            if bad:
                spec.warnings.append(
                    "methods named like hooks but not marked with @hookimpl (they will not be called): "
                    + ", ".join(bad)
                )
            hooks = _hook_names(obj)
            for batch, single in (("filter_batch", "filter"), ("score_batch", "score")):
                if batch in hooks and single not in hooks:
                    spec.warnings.append(f"{batch} is used only beside {single} (the reference form); implement {single} too")

    def register(self, name: str, factory: Any, *, distribution: str = "<in-process>", version: str = "") -> PluginSpec:
        """Add a plugin in-process (tests, the testing kit); replaces one of the same name."""
        spec = PluginSpec(name, distribution, version, getattr(factory, "__qualname__", repr(factory)))
        self._fill(spec, factory)
        self._specs[name] = spec
        return spec

    def copy(self) -> Registry:
        return Registry(self._specs.values(), self.misplaced, self.skipped, self.allow_warnings)

    def discovery_warnings(self) -> list[str]:
        """What discovery logs: allow-list entries that match nothing, third-party entry points
        named like a built-in plugin."""
        return self.allow_warnings + [s.warning() for s in self.skipped if s.reason == SKIP_BUILTIN]

    def warnings(self) -> list[str]:
        """Problems of the installation that are not one plugin's: misspelt entry-point groups,
        allow-list entries that match nothing, built-in plugin names registered by a third party."""
        return [m.warning() for m in self.misplaced] + self.discovery_warnings()

    def unknown_plugin_hints(self) -> dict[str, str]:
        """For names that are not plugins but sit in a misspelt entry-point group: why."""
        return {m.name: m.hint() for m in self.misplaced if m.name not in self._specs}

    # queries ------------------------------------------------------------------------------
    def names(self) -> list[str]:
        return sorted(self._specs)

    def specs(self) -> list[PluginSpec]:
        return [self._specs[n] for n in self.names()]

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def get(self, name: str) -> PluginSpec:
        try:
            return self._specs[name]
        except KeyError:
            from .config import suggest

            misplaced = self.unknown_plugin_hints().get(name)
            if misplaced:
                raise UnknownPluginError(f"unknown plugin {quote(name)}; {misplaced}") from None
            hint = suggest(name, self._specs)
            msg = f"unknown plugin {quote(name)}"
            if hint:
                msg += f'; did you mean "{printable(hint)}"?'
            msg += f" installed plugins: {printable(', '.join(self.names()))}"
            raise UnknownPluginError(msg) from None

    def implements(self, name: str) -> list[str]:
        spec = self._specs.get(name)
        return list(spec.extension_points) if spec else []
