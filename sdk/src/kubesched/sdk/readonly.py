"""Read-only JSON: the containers that ``Pod``, ``Node`` and ``NodeInfo`` views are made of.

:func:`read_only` copies an API object (dicts, lists, scalars) once, when a view is built,
into :class:`ReadOnlyDict` and :class:`ReadOnlyList`. They are ``dict`` and ``list``
subclasses, so ``isinstance(x, dict)``, equality with plain dicts and lists, ``json.dumps``,
``yaml.safe_dump``, ``copy`` and ``pickle`` work as before; every method that would change
them raises ``TypeError`` with :data:`READ_ONLY_MESSAGE`. A part that is already read-only is
shared, not copied, so views built from other views cost only their new parts.

``dict(x)``, ``{**x}``, ``list(x)``, ``copy.copy(x)`` and ``copy.deepcopy(x)`` give ordinary,
mutable copies: a plugin that wants to build a patch starts from one of them and writes it
through ``handle.objects.patch(...)``.

The guard covers the ordinary API. Calling a base class's method on a container
(``dict.__setitem__(x, k, v)``, ``x.__init__(...)``) goes around it, as it would around any
Python object; blocking ``__init__`` too would make every container's construction a Python
call (about 4x slower), on the path every watch event takes.
"""

from __future__ import annotations

import copy
import datetime as _dt
from collections.abc import Mapping
from typing import Any, NoReturn, TypeVar

__all__ = ["READ_ONLY_MESSAGE", "ReadOnlyDict", "ReadOnlyList", "read_only", "read_only_error"]

#: What every write to a view's mapping or list raises (``TypeError``).
READ_ONLY_MESSAGE = "Pod, Node and NodeInfo views are read-only; write through handle.objects.patch(...)"

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")


def read_only_error(*_args: Any, **_kwargs: Any) -> NoReturn:
    raise TypeError(READ_ONLY_MESSAGE)


def _thaw(value: Any, memo: dict[int, Any] | None = None) -> Any:
    """A plain, mutable deep copy."""
    t = type(value)
    if t is ReadOnlyDict or t is dict:
        return {k: v if type(v) in _SCALARS else _thaw(v, memo) for k, v in value.items()}
    if t is ReadOnlyList or t is list:
        return [v if type(v) in _SCALARS else _thaw(v, memo) for v in value]
    if t in _SCALARS:  # immutable: deepcopy gives it back too
        return value
    return copy.deepcopy(value, memo)


class ReadOnlyDict(dict[K, V]):
    """A ``dict`` whose mutators raise ``TypeError`` (:data:`READ_ONLY_MESSAGE`)."""

    __slots__ = ()

    __setitem__ = read_only_error
    __delitem__ = read_only_error
    __ior__ = read_only_error  # type: ignore[assignment]
    clear = read_only_error
    pop = read_only_error
    popitem = read_only_error
    setdefault = read_only_error
    update = read_only_error

    def __copy__(self) -> dict[K, V]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[K, V]:
        out: dict[K, V] = _thaw(self, memo)
        return out

    def __reduce__(self) -> tuple[Any, ...]:
        return (ReadOnlyDict, (dict(self),))

    def __repr__(self) -> str:
        return dict.__repr__(self)


class ReadOnlyList(list[T]):
    """A ``list`` whose mutators raise ``TypeError`` (:data:`READ_ONLY_MESSAGE`)."""

    __slots__ = ()

    __setitem__ = read_only_error
    __delitem__ = read_only_error
    __iadd__ = read_only_error  # type: ignore[assignment]
    __imul__ = read_only_error  # type: ignore[assignment]
    append = read_only_error
    clear = read_only_error
    extend = read_only_error
    insert = read_only_error
    pop = read_only_error
    remove = read_only_error
    reverse = read_only_error
    sort = read_only_error

    def __copy__(self) -> list[T]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[T]:
        out: list[T] = _thaw(self, memo)
        return out

    def __reduce__(self) -> tuple[Any, ...]:
        return (ReadOnlyList, (list(self),))

    def __repr__(self) -> str:
        return list.__repr__(self)


#: the shared empty containers the views return for missing fields
EMPTY_DICT: ReadOnlyDict[Any, Any] = ReadOnlyDict()
EMPTY_LIST: ReadOnlyList[Any] = ReadOnlyList()

_SCALARS = frozenset({str, int, float, bool, type(None), _dt.datetime, _dt.date, bytes})


#: what :func:`read_only` keeps as it is
_KEEP = _SCALARS | {ReadOnlyDict, ReadOnlyList}
_dict_set = dict.__setitem__
_list_set = list.__setitem__


def read_only(value: Any) -> Any:
    """``value`` with every dict and list in it turned read-only (a copy; read-only parts,
    scalars and other immutable values are shared)."""
    t = type(value)
    if t is dict:
        # one copy in C, then the values that are not kept as they are replaced in it
        out: ReadOnlyDict[Any, Any] = ReadOnlyDict(value)
        for k, v in value.items():
            if type(v) not in _KEEP:
                _dict_set(out, k, read_only(v))
        return out
    if t in _KEEP:
        return value
    if t is list:
        lst: ReadOnlyList[Any] = ReadOnlyList(value)
        for i, v in enumerate(value):
            if type(v) not in _KEEP:
                _list_set(lst, i, read_only(v))
        return lst
    if isinstance(value, Mapping):
        return ReadOnlyDict({k: read_only(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return ReadOnlyList([read_only(v) for v in value])
    if isinstance(value, (set, frozenset)):
        return frozenset(value)
    return value


def _register_yaml() -> None:
    try:
        from yaml.representer import Representer, SafeRepresenter
    except ImportError:  # PyYAML is optional for the SDK
        return
    for rep in (SafeRepresenter, Representer):
        rep.add_representer(ReadOnlyDict, rep.represent_dict)
        rep.add_representer(ReadOnlyList, rep.represent_list)


_register_yaml()
