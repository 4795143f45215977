"""The args of every ``pluginConfig`` entry, validated with the file as kube-scheduler does.

kube-scheduler decodes the args of its in-tree plugins strictly with the file, then
``validatePluginConfig`` (``pkg/scheduler/apis/config/validation/validation.go``) runs the args
validator of every entry whose plugin has one, whether or not an extension point enables the
plugin (``NewFramework`` builds only the enabled plugins, so a disabled plugin's args are checked
nowhere else). Its validators map keys NodeResourcesFit's as ``"NodeResourcesFitArgs"``, which no
entry is named: NodeResourcesFit's args are only decoded with the file and validated when the
plugin is built, so a disabled NodeResourcesFit with a bad ``scoringStrategy.type`` passes; kubesched
does the same. A name kube-scheduler has no args type for (an out-of-tree plugin) is left to
the plugin, which receives its args when it is enabled.

The args types are the runtime's own plugins' ``Args`` (named by its ``kubesched.plugins`` entry
points), decoded and validated by :func:`kubesched.sdk.build_args`, as when the plugin is built.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Collection, Mapping
from functools import cache
from typing import Any

from kubesched.sdk import ArgsError, build_args

from ._validate import ArgsCheck

#: the plugins whose args ``validatePluginConfig`` decodes but does not validate
DECODED_ONLY = frozenset({"NodeResourcesFit"})

_DISTRIBUTION = "kubesched"
_GROUP = "kubesched.plugins"


@cache
def _args_class(name: str) -> type[Any] | None:
    """The ``Args`` of the runtime's own plugin ``name`` (None when it has none)."""
    try:
        entry_points = importlib.metadata.distribution(_DISTRIBUTION).entry_points
    except importlib.metadata.PackageNotFoundError:  # not installed: the plugin validates its args
        return None
    for ep in entry_points:
        if ep.group == _GROUP and ep.name == name:
            args_cls = getattr(ep.load(), "Args", None)
            return args_cls if isinstance(args_cls, type) else None
    return None


_DECODED_ONLY_CLASSES: dict[type[Any], type[Any]] = {}


def _decoded_only(args_cls: type[Any]) -> type[Any]:
    """``args_cls`` without its ``validate()``: build_args decodes (unknown fields, types) only."""
    cls = _DECODED_ONLY_CLASSES.get(args_cls)
    if cls is None:
        attrs = {"validate": None, "__module__": args_cls.__module__}
        cls = _DECODED_ONLY_CLASSES[args_cls] = type(args_cls.__name__, (args_cls,), attrs)
    return cls


def args_check(in_tree: Collection[str]) -> ArgsCheck:
    """The check of one entry's args, for a file whose in-tree plugins with args are ``in_tree``."""

    def check(name: str, args: Mapping[str, Any], field: str) -> tuple[str, str] | None:
        if name not in in_tree:
            return None
        args_cls = _args_class(name)
        if args_cls is None:
            return None
        if name in DECODED_ONLY:
            args_cls = _decoded_only(args_cls)
        try:
            build_args(args_cls, args, field=field)
        except ArgsError as e:
            return e.field, e.message
        return None

    return check
