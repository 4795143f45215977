"""Label selectors and node selectors with Kubernetes' matching rules."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from ._text import cut, quote
from .readonly import EMPTY_LIST

__all__ = [
    "EVERYTHING",
    "NOTHING",
    "InvalidObjectError",
    "LabelSelector",
    "NodeSelector",
    "NodeSelectorTerm",
    "Requirement",
]


def _shown(v: Any) -> str:
    """A user's scalar quoted and cut for a message (``"None"`` when missing, as before)."""
    return quote(v) if isinstance(v, (str, int, float)) else quote(str(v) if v is None or isinstance(v, bool) else type(v).__name__)


def _objects(v: Any, field: str) -> list[Any]:
    """A list of objects (empty when missing); InvalidObjectError when it is not a list, or
    naming the first element that is not an object (the views' reading of such a field too)."""
    if v is None:
        return EMPTY_LIST
    if not isinstance(v, list):
        raise InvalidObjectError(field, "must be a list of objects")
    for i, e in enumerate(v):
        if not isinstance(e, Mapping):
            raise InvalidObjectError(f"{field}[{i}]", "must be an object")
    return v


def _terms(raw: Any, field: str) -> list[Any]:
    """A node selector's ``nodeSelectorTerms``."""
    if not isinstance(raw, Mapping):
        raise InvalidObjectError(field, "must be an object")
    return _objects(raw.get("nodeSelectorTerms"), f"{field}.nodeSelectorTerms")


class InvalidObjectError(ValueError):
    """An API object whose content cannot be understood; ``field`` is the path inside it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message


#: What assigning an attribute of a parsed selector raises (``TypeError``): the selectors of a
#: Pod view are shared by every cycle that reads that pod.
SELECTOR_READ_ONLY_MESSAGE = "selectors are read-only; parse a new one"

_set = object.__setattr__


def _read_only(*_args: Any, **_kwargs: Any) -> NoReturn:
    raise TypeError(SELECTOR_READ_ONLY_MESSAGE)


class _Immutable:
    __slots__ = ()

    if not TYPE_CHECKING:
        __setattr__ = _read_only
        __delattr__ = _read_only

    def __copy__(self) -> Any:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        slots: tuple[str, ...] = type(self).__slots__
        return (_rebuild, (type(self), {k: getattr(self, k) for k in slots}))


def _rebuild(cls: type[_Immutable], state: dict[str, Any]) -> _Immutable:
    obj = cls.__new__(cls)
    for k, v in state.items():
        _set(obj, k, v)
    return obj


_LABEL_OPS = {"In", "NotIn", "Exists", "DoesNotExist"}
_NODE_OPS = _LABEL_OPS | {"Gt", "Lt"}


class Requirement(_Immutable):
    """One ``key operator values`` requirement (labels.Requirement)."""

    __slots__ = ("int_value", "key", "op", "values")

    def __init__(self, key: str, op: str, values: Sequence[str] = (), *, node: bool = False, field: str = "") -> None:
        ops = _NODE_OPS if node else _LABEL_OPS
        if not isinstance(op, str) or op not in ops:
            raise InvalidObjectError(f"{field}.operator", f'{quote(op) if isinstance(op, str) else "a non-string"} is not a valid {"node selector" if node else "label selector"} operator')
        if not isinstance(key, str) or not key:
            raise InvalidObjectError(f"{field}.key", "key must be a non-empty string")
        if values and not isinstance(values, (list, tuple, frozenset, set)):
            raise InvalidObjectError(f"{field}.values", "must be a list of strings")
        if any(isinstance(v, (Mapping, list, tuple)) for v in values or ()):
            raise InvalidObjectError(f"{field}.values", "must be a list of strings")
        vals = [str(v) for v in (values or [])]
        int_value = 0
        if op in ("In", "NotIn") and not vals:
            raise InvalidObjectError(f"{field}.values", "for 'in', 'notin' operators, values set can't be empty")
        if op in ("Exists", "DoesNotExist") and vals:
            raise InvalidObjectError(f"{field}.values", "values set must be empty for exists and does not exist")
        if op in ("Gt", "Lt"):
            if len(vals) != 1:
                raise InvalidObjectError(f"{field}.values", "for 'Gt', 'Lt' operators, exactly one value is required")
            try:
                int_value = int(vals[0])
            except ValueError:
                raise InvalidObjectError(f"{field}.values[0]", f"for 'Gt', 'Lt' operators, the value must be an integer: {vals[0]!r}") from None
        _set(self, "int_value", int_value)
        _set(self, "key", key)
        _set(self, "op", op)
        _set(self, "values", frozenset(vals))

    if TYPE_CHECKING:
        int_value: int
        key: str
        op: str
        values: frozenset[str]

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.op
        if op == "In":
            return labels.get(self.key) in self.values if self.key in labels else False
        if op == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        if self.key not in labels:
            return False
        try:
            v = int(labels[self.key])
        except (TypeError, ValueError, OverflowError):
            return False
        return v > self.int_value if op == "Gt" else v < self.int_value

    def __repr__(self) -> str:
        return f"Requirement({self.key!r}, {self.op!r}, {sorted(self.values)!r})"


class LabelSelector(_Immutable):
    """A metav1.LabelSelector: ``matchLabels`` and ``matchExpressions``, all ANDed.

    ``LabelSelector.parse(None)`` matches nothing and ``LabelSelector.parse({})`` matches
    everything, as ``metav1.LabelSelectorAsSelector`` does.
    """

    __slots__ = ("_nothing", "requirements")

    def __init__(self, requirements: Sequence[Requirement] = (), *, nothing: bool = False) -> None:
        _set(self, "requirements", tuple(requirements))
        _set(self, "_nothing", nothing)

    if TYPE_CHECKING:
        requirements: tuple[Requirement, ...]
        _nothing: bool

    @classmethod
    def parse(cls, raw: Mapping[str, Any] | None, field: str = "labelSelector") -> LabelSelector:
        if raw is None:
            return NOTHING
        if not isinstance(raw, Mapping):
            raise InvalidObjectError(field, "must be an object")
        reqs: list[Requirement] = []
        ml = raw.get("matchLabels") or {}
        if not isinstance(ml, Mapping):
            raise InvalidObjectError(f"{field}.matchLabels", "must be a map of strings")
        for k, v in sorted(ml.items(), key=lambda kv: str(kv[0])):
            reqs.append(Requirement(k, "In", [v], field=f"{field}.matchLabels[{cut(k)}]"))
        for i, e in enumerate(_objects(raw.get("matchExpressions"), f"{field}.matchExpressions")):
            f = f"{field}.matchExpressions[{i}]"
            reqs.append(Requirement(e.get("key", ""), e.get("operator", ""), e.get("values") or [], field=f))
        return cls(reqs)

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self._nothing:
            return False
        lbl = labels or {}
        for r in self.requirements:
            if not r.matches(lbl):
                return False
        return True

    def is_empty(self) -> bool:
        """True when it matches everything."""
        return not self._nothing and not self.requirements

    def is_nothing(self) -> bool:
        return self._nothing

    def __repr__(self) -> str:
        return "LabelSelector(nothing)" if self._nothing else f"LabelSelector({list(self.requirements)!r})"


NOTHING = LabelSelector(nothing=True)
EVERYTHING = LabelSelector()


class NodeSelectorTerm(_Immutable):
    """One term of a NodeSelector: ``matchExpressions`` on labels and ``matchFields`` on fields
    (only ``metadata.name``), ANDed. A term with neither matches no node."""

    __slots__ = ("fields", "labels")

    def __init__(self, labels: Sequence[Requirement], fields: Sequence[Requirement]) -> None:
        _set(self, "labels", tuple(labels))
        _set(self, "fields", tuple(fields))

    if TYPE_CHECKING:
        labels: tuple[Requirement, ...]
        fields: tuple[Requirement, ...]

    @classmethod
    def parse(cls, raw: Mapping[str, Any], field: str) -> NodeSelectorTerm:
        if not isinstance(raw, Mapping):
            raise InvalidObjectError(field, "must be an object")
        lbl = [
            Requirement(e.get("key", ""), e.get("operator", ""), e.get("values") or [], node=True, field=f"{field}.matchExpressions[{i}]")
            for i, e in enumerate(_objects(raw.get("matchExpressions"), f"{field}.matchExpressions"))
        ]
        flds = []
        for i, e in enumerate(_objects(raw.get("matchFields"), f"{field}.matchFields")):
            f = f"{field}.matchFields[{i}]"
            if e.get("key") != "metadata.name":
                raise InvalidObjectError(f"{f}.key", f"{_shown(e.get('key'))} is not a valid field selector key (only metadata.name)")
            if e.get("operator") not in ("In", "NotIn"):
                raise InvalidObjectError(f"{f}.operator", f"{_shown(e.get('operator'))} is not a valid field selector operator")
            r = Requirement("metadata.name", e["operator"], e.get("values") or [], node=True, field=f)
            if len(r.values) != 1:
                raise InvalidObjectError(f"{f}.values", "must be only one value when `operator` is 'In' or 'NotIn' for node field selector")
            flds.append(r)
        return cls(lbl, flds)

    def matches(self, node_labels: Mapping[str, str], node_name: str) -> bool:
        if not self.labels and not self.fields:
            return False
        for r in self.labels:
            if not r.matches(node_labels):
                return False
        if self.fields:
            fl = {"metadata.name": node_name}
            for r in self.fields:
                if not r.matches(fl):
                    return False
        return True


class NodeSelector(_Immutable):
    """A v1.NodeSelector: its terms are ORed."""

    __slots__ = ("errors", "terms")

    def __init__(self, terms: Sequence[NodeSelectorTerm], errors: Sequence[InvalidObjectError] = ()) -> None:
        _set(self, "terms", tuple(terms))
        #: the errors of the terms that could not be parsed (:meth:`parse_lazy`)
        _set(self, "errors", tuple(errors))

    if TYPE_CHECKING:
        terms: tuple[NodeSelectorTerm, ...]
        errors: tuple[InvalidObjectError, ...]

    @classmethod
    def parse(cls, raw: Mapping[str, Any], field: str = "nodeSelector") -> NodeSelector:
        terms = _terms(raw, field)
        return cls([NodeSelectorTerm.parse(t, f"{field}.nodeSelectorTerms[{i}]") for i, t in enumerate(terms)])

    @classmethod
    def parse_lazy(cls, raw: Mapping[str, Any], field: str = "nodeSelector") -> NodeSelector:
        """Like kube-scheduler's LazyErrorNodeSelector: a term that cannot be parsed matches no
        node (its error is kept in ``errors``) and the other terms still apply."""
        out: list[NodeSelectorTerm] = []
        errors: list[InvalidObjectError] = []
        for i, t in enumerate(_terms(raw, field)):
            try:
                out.append(NodeSelectorTerm.parse(t, f"{field}.nodeSelectorTerms[{i}]"))
            except InvalidObjectError as e:
                errors.append(e)
                out.append(NodeSelectorTerm((), ()))  # matches nothing
        return cls(out, errors)

    def matches(self, node_labels: Mapping[str, str], node_name: str) -> bool:
        for t in self.terms:
            if t.matches(node_labels, node_name):
                return True
        return False
