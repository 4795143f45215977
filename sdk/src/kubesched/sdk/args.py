"""Typed, validated plugin arguments.

A plugin declares its arguments as a dataclass and names it in the class attribute ``Args``::

    @dataclass
    class PriorityLabelArgs:
        label: str = "priority"
        def validate(self) -> None:
            if not self.label:
                raise ValueError("label: must not be empty")

    class PriorityLabel:
        Args = PriorityLabelArgs
        def __init__(self, args: PriorityLabelArgs, handle: Handle) -> None: ...

The runtime builds ``Args`` from the profile's ``pluginConfig`` entry (camelCase keys such as
``hardPodAffinityWeight`` map to snake_case fields), applies the dataclass defaults, checks
types, calls ``validate()`` and reports any problem with the field path.
"""

from __future__ import annotations

import dataclasses
import enum
import re
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, Union, get_args, get_origin

__all__ = ["ArgsError", "args_class_problem", "args_schema", "build_args", "camel", "snake"]


class ArgsError(ValueError):
    """Invalid plugin arguments; ``field`` is the path inside ``args``."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message


def snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def camel(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(w[:1].upper() + w[1:] for w in rest)


def _type_name(tp: Any) -> str:
    if isinstance(tp, type):
        return {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}.get(tp.__name__, tp.__name__)
    return str(tp).replace("typing.", "")


def _convert(tp: Any, value: Any, field: str, hints_ns: dict[str, Any]) -> Any:
    origin = get_origin(tp)
    if tp is Any:
        return value
    if origin in (Union, types.UnionType):
        options = get_args(tp)
        if value is None and type(None) in options:
            return None
        errors = []
        for opt in options:
            if opt is type(None):
                continue
            try:
                return _convert(opt, value, field, hints_ns)
            except ArgsError as e:
                errors.append(e)
        raise errors[0] if errors else ArgsError(field, "invalid value")
    if origin is Literal:
        allowed = get_args(tp)
        if value not in allowed:
            raise ArgsError(field, f"Unsupported value: {value!r}: supported values: {', '.join(repr(a) for a in allowed)}")
        return value
    if origin in (list, tuple, typing.Sequence) or tp in (list, tuple):
        if not isinstance(value, list):
            raise ArgsError(field, f"Invalid type: expected a list, got {type(value).__name__}")
        (item_tp,) = get_args(tp)[:1] or (Any,)
        out = [_convert(item_tp, v, f"{field}[{i}]", hints_ns) for i, v in enumerate(value)]
        return tuple(out) if origin is tuple else out
    if origin in (dict, typing.Mapping) or tp is dict:
        if not isinstance(value, Mapping):
            raise ArgsError(field, f"Invalid type: expected an object, got {type(value).__name__}")
        kt, vt = get_args(tp) or (Any, Any)
        return {_convert(kt, k, field, hints_ns): _convert(vt, v, f"{field}.{k}", hints_ns) for k, v in value.items()}
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return build_args(tp, value, field=field)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            return tp(value)
        except ValueError:
            choices = ", ".join(repr(m.value) for m in tp)
            raise ArgsError(field, f"Unsupported value: {value!r}: supported values: {choices}") from None
    if tp is bool:
        if not isinstance(value, bool):
            raise ArgsError(field, f"Invalid type: expected boolean, got {type(value).__name__}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ArgsError(field, f"Invalid type: expected integer, got {type(value).__name__}")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ArgsError(field, f"Invalid type: expected number, got {type(value).__name__}")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ArgsError(field, f"Invalid type: expected string, got {type(value).__name__}")
        return value
    if isinstance(tp, type):
        if not isinstance(value, tp):
            raise ArgsError(field, f"Invalid type: expected {_type_name(tp)}, got {type(value).__name__}")
        return value
    return value


def args_class_problem(args_cls: Any) -> str | None:
    """Why ``args_cls`` cannot be a plugin's ``Args`` (it must be a dataclass), or None."""
    if args_cls is None or (isinstance(args_cls, type) and dataclasses.is_dataclass(args_cls)):
        return None
    if isinstance(args_cls, type):
        got = f"class {args_cls.__name__}"
    elif dataclasses.is_dataclass(args_cls):
        got = f"an instance of {type(args_cls).__name__} (name the class, not an instance)"
    else:
        got = f"{type(args_cls).__name__} {args_cls!r}"
    return f"Args must be a dataclass, got {got}"


def build_args(args_cls: type[Any], raw: Mapping[str, Any] | None, *, field: str = "args") -> Any:
    """Build ``args_cls`` (a dataclass) from ``raw`` (camelCase or snake_case keys).

    Unknown keys, wrong types and ``validate()`` failures raise :class:`ArgsError` whose
    ``field`` is the path (``args.scoringStrategy.type``); an ``args_cls`` that is not a
    dataclass raises ``TypeError`` saying so.
    """
    problem = args_class_problem(args_cls)
    if problem:
        raise TypeError(problem)
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ArgsError(field, f"Invalid type: expected an object, got {type(raw).__name__}")
    hints = typing.get_type_hints(args_cls)
    fields = {f.name: f for f in dataclasses.fields(args_cls) if f.init}
    kwargs: dict[str, Any] = {}
    for key, value in raw.items():
        if key in ("apiVersion", "kind"):
            continue
        name = key if key in fields else snake(str(key))
        if name not in fields:
            known = ", ".join(camel(n) for n in fields)
            raise ArgsError(f"{field}.{key}", f'unknown field "{key}" (known fields: {known})')
        kwargs[name] = _convert(hints.get(name, Any), value, f"{field}.{key}", {})
    try:
        obj = args_cls(**kwargs)
    except TypeError as e:
        raise ArgsError(field, str(e)) from None
    validate = getattr(obj, "validate", None)
    if callable(validate):
        try:
            validate()
        except ArgsError as e:
            raise ArgsError(f"{field}.{e.field}" if e.field else field, e.message) from None
        except ValueError as e:
            msg = str(e)
            m = re.match(r"^([A-Za-z0-9_.\[\]]+): (.*)$", msg)
            if m:
                raise ArgsError(f"{field}.{m.group(1)}", m.group(2)) from None
            raise ArgsError(field, msg) from None
    return obj


def args_schema(args_cls: type[Any] | None) -> dict[str, Any]:
    """A small description of the arguments: camelCase name -> {type, default}."""
    if args_cls is None or not dataclasses.is_dataclass(args_cls):
        return {}
    hints = typing.get_type_hints(args_cls)
    out: dict[str, Any] = {}
    for f in dataclasses.fields(args_cls):
        entry: dict[str, Any] = {"type": _type_name(hints.get(f.name, Any))}
        if f.default is not dataclasses.MISSING:
            d = f.default
            entry["default"] = d.value if isinstance(d, enum.Enum) else d
        elif f.default_factory is not dataclasses.MISSING:
            d = f.default_factory()
            entry["default"] = dataclasses.asdict(d) if dataclasses.is_dataclass(d) and not isinstance(d, type) else d
        out[camel(f.name)] = entry
    return out
