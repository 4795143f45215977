"""NodeAffinity: the pod's ``nodeSelector`` and required node affinity (plus the scheduler-enforced
``addedAffinity``) filter nodes; preferred node affinity terms score them.

Ported from kube-scheduler ``pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go`` and the
node selector it uses, ``k8s.io/component-helpers/scheduling/corev1/nodeaffinity`` (with
``k8s.io/apimachinery`` ``labels.NewRequirement`` / ``Requirement.Matches`` and the label key and
value validation), at Kubernetes v1.36.3 (Go modules ``k8s.io/kubernetes@v1.36.3``,
``k8s.io/component-helpers@v0.36.3``, ``k8s.io/apimachinery@v0.36.3``): SchedulerQueueingHints is
GA (locked on), so Node/Add|UpdateNodeLabel is registered with a hint; v1.36 changed no behaviour
of this plugin. The label key and value messages come from ``kubesched.sdk.validation``, in
apimachinery v0.36.3's wording ("a valid label key ...", "no more than N bytes").
Args validation is ``ValidateNodeAffinityArgs`` from ``pkg/scheduler/apis/config/validation``;
NodeAffinityArgs has no defaults. ``sign_pod`` signs what v1.36's SignPod signs
(``NodeAffinitySigner`` and ``spec.nodeSelector``), in the pod's order (Go sorts the terms).

The selector is parsed here rather than with ``kubesched.sdk.NodeSelector`` because Go parses it
*lazily*: a term with a parse error (an invalid label key or value, a bad operator, a ``matchFields``
requirement with more than one value) matches no node, while the other terms still apply, and
label keys and values are validated as Kubernetes does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.sdk import (
    MAX_NODE_SCORE,
    ActionType,
    ArgsError,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Node,
    NodeColumns,
    NodeInfo,
    NodeScore,
    Pod,
    PreFilterResult,
    QueueingHint,
    StateData,
    Status,
    default_normalize_columns,
    freeze,
    hookimpl,
)
from kubesched.sdk.validation import label_value_errors as _is_valid_label_value
from kubesched.sdk.validation import qualified_name_errors as _is_qualified_name

from .helper import SKIP, as_views, default_normalize_score

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "ERR_REASON_CONFLICT",
    "ERR_REASON_ENFORCED",
    "ERR_REASON_POD",
    "NodeAffinity",
    "NodeAffinityArgs",
]

NAME = "NodeAffinity"
#: CycleState key of the data PreScore computes for Score.
PRE_SCORE_STATE_KEY = "PreScore" + NAME
#: CycleState key of the data PreFilter computes for Filter.
PRE_FILTER_STATE_KEY = "PreFilter" + NAME

#: The pod's node affinity/selector does not match.
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
#: The added (scheduler-enforced) node affinity does not match.
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
#: The pod's required terms name conflicting nodes (``metadata.name`` matchFields).
ERR_REASON_CONFLICT = "pod affinity terms conflict"

_OBJECT_NAME_FIELD = "metadata.name"


# --- Go-style validation errors (k8s.io/apimachinery/pkg/util/validation/field) -----------------

#: A field error: (field path, body such as ``Invalid value: "x": detail``).
_FieldError = tuple[str, str]


def _bad_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return repr(value)


def _invalid(path: str, value: Any, detail: str) -> _FieldError:
    body = f"Invalid value: {_bad_value(value)}"
    return path, f"{body}: {detail}" if detail else body


def _not_supported(path: str, value: Any, supported: Sequence[str]) -> _FieldError:
    quoted = ", ".join(json.dumps(s) for s in supported)
    return path, f"Unsupported value: {_bad_value(value)}: supported values: {quoted}"


def _aggregate(errors: Sequence[_FieldError]) -> str:
    """utilerrors.Flatten(NewAggregate(errs)).Error(): duplicates dropped, ``[a, b]`` for several."""
    msgs: list[str] = []
    for path, body in errors:
        m = f"{path}: {body}"
        if m not in msgs:
            msgs.append(m)
    return msgs[0] if len(msgs) == 1 else "[" + ", ".join(msgs) + "]"


_INT64_RE = re.compile(r"[+-]?[0-9]+")


def _parse_int64(s: str) -> int | None:
    """strconv.ParseInt(s, 10, 64); None when it fails."""
    if not _INT64_RE.fullmatch(s):
        return None
    n = int(s)
    return n if -(1 << 63) <= n < (1 << 63) else None


# --- the node selector (component-helpers nodeaffinity) ------------------------------------------

_IN, _NOT_IN, _EXISTS, _DOES_NOT_EXIST, _GT, _LT = range(6)
_SELECTOR_OPS = {"In": _IN, "NotIn": _NOT_IN, "Exists": _EXISTS, "DoesNotExist": _DOES_NOT_EXIST, "Gt": _GT, "Lt": _LT}
_FIELD_OPS = ("In", "NotIn")


class _Requirement:
    """A parsed label requirement (labels.Requirement)."""

    __slots__ = ("key", "number", "op", "values")

    def __init__(self, key: str, op: int, values: frozenset[str], number: int) -> None:
        self.key = key
        self.op = op
        self.values = values
        self.number = number  # the Gt/Lt operand

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.op
        if op == _IN:
            return self.key in labels and labels[self.key] in self.values
        if op == _NOT_IN:
            return self.key not in labels or labels[self.key] not in self.values
        if op == _EXISTS:
            return self.key in labels
        if op == _DOES_NOT_EXIST:
            return self.key not in labels
        if self.key not in labels:
            return False
        v = _parse_int64(str(labels[self.key]))
        if v is None:
            return False
        return v > self.number if op == _GT else v < self.number


def _as_list(raw: Any, path: str, errors: list[_FieldError]) -> list[Any]:
    if raw is None:
        return []
    if isinstance(raw, (list, tuple)):
        return list(raw)
    errors.append((path, f"Invalid type: expected a list, got {type(raw).__name__}"))
    return []


def _as_mapping(raw: Any, path: str, errors: list[_FieldError]) -> Mapping[str, Any] | None:
    if isinstance(raw, Mapping):
        return raw
    errors.append((path, f"Invalid type: expected an object, got {type(raw).__name__}"))
    return None


def _requirement_values(expr: Mapping[str, Any], path: str, errors: list[_FieldError]) -> tuple[Any, list[str]]:
    raw = expr.get("values")
    vals = _as_list(raw, path + ".values", errors)
    out: list[str] = []
    for i, v in enumerate(vals):
        if isinstance(v, str):
            out.append(v)
        else:
            errors.append((f"{path}.values[{i}]", f"Invalid type: expected string, got {type(v).__name__}"))
    return raw, out


def _parse_match_expressions(exprs: list[Any], path: str, errors: list[_FieldError]) -> tuple[_Requirement, ...]:
    """nodeSelectorRequirementsAsSelector with labels.NewRequirement's validation."""
    reqs: list[_Requirement] = []
    for i, raw_expr in enumerate(exprs):
        p = f"{path}[{i}]"
        expr = _as_mapping(raw_expr, p, errors)
        if expr is None:
            continue
        op_name = expr.get("operator")
        op = _SELECTOR_OPS.get(op_name) if isinstance(op_name, str) else None
        if op is None:
            errors.append(_not_supported(p + ".operator", op_name, list(_SELECTOR_OPS)))
            continue
        key = expr.get("key")
        if not isinstance(key, str):
            key = "" if key is None else str(key)
        errs: list[_FieldError] = []
        kerrs = _is_qualified_name(key)
        if kerrs:
            errs.append(_invalid(p + ".key", key, "; ".join(kerrs)))
        vpath = p + ".values"
        raw_vals, vals = _requirement_values(expr, p, errs)
        number = 0
        if op in (_IN, _NOT_IN):
            if not vals:
                errs.append(_invalid(vpath, raw_vals, "for 'in', 'notin' operators, values set can't be empty"))
        elif op in (_EXISTS, _DOES_NOT_EXIST):
            if vals:
                errs.append(_invalid(vpath, raw_vals, "values set must be empty for exists and does not exist"))
        else:
            if len(vals) != 1:
                errs.append(_invalid(vpath, raw_vals, "for 'Gt', 'Lt' operators, exactly one value is required"))
            for j, v in enumerate(vals):
                n = _parse_int64(v)
                if n is None:
                    errs.append(_invalid(f"{vpath}[{j}]", v, "for 'Gt', 'Lt' operators, the value must be an integer"))
                else:
                    number = n
        for j, v in enumerate(vals):
            verrs = _is_valid_label_value(v)
            if verrs:
                errs.append(_invalid(f"{vpath}[{j}][{key}]", v, "; ".join(verrs)))
        if errs:
            errors.extend(errs)  # duplicates are dropped when the errors are aggregated
            continue
        reqs.append(_Requirement(key, op, frozenset(vals), number))
    return tuple(reqs)


def _parse_match_fields(exprs: list[Any], path: str, errors: list[_FieldError]) -> tuple[tuple[str, bool, str], ...]:
    """nodeSelectorRequirementsAsFieldSelector: (key, equal, value) terms, ANDed."""
    sels: list[tuple[str, bool, str]] = []
    for i, raw_expr in enumerate(exprs):
        p = f"{path}[{i}]"
        expr = _as_mapping(raw_expr, p, errors)
        if expr is None:
            continue
        op = expr.get("operator")
        if op not in _FIELD_OPS:
            errors.append(_not_supported(p + ".operator", op, _FIELD_OPS))
            continue
        raw_vals, vals = _requirement_values(expr, p, errors)
        if len(vals) != 1:
            errors.append(_invalid(p + ".values", raw_vals, "must have one element"))
            continue
        key = expr.get("key")
        sels.append(("" if key is None else str(key), op == "In", vals[0]))
    return tuple(sels)


class _Term:
    """A parsed NodeSelectorTerm: label requirements and field terms, ANDed; or parse errors."""

    __slots__ = ("errors", "fields", "labels")

    def __init__(self, raw: Mapping[str, Any], path: str) -> None:
        errors: list[_FieldError] = []
        exprs = _as_list(raw.get("matchExpressions"), path + ".matchExpressions", errors)
        fields = _as_list(raw.get("matchFields"), path + ".matchFields", errors)
        self.labels = _parse_match_expressions(exprs, path + ".matchExpressions", errors) if exprs else None
        self.fields = _parse_match_fields(fields, path + ".matchFields", errors) if fields else None
        self.errors = errors

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        """Never called on a term with errors."""
        if self.labels is not None:
            for r in self.labels:
                if not r.matches(labels):
                    return False
        # The fields are checked only when the node has a name (extractNodeFields).
        if self.fields is not None and node_name:
            for key, equal, value in self.fields:
                actual = node_name if key == _OBJECT_NAME_FIELD else ""
                if (actual == value) != equal:
                    return False
        return True


def _is_empty_term(raw: Mapping[str, Any]) -> bool:
    return not raw.get("matchExpressions") and not raw.get("matchFields")


class _NodeSelector:
    """A v1.NodeSelector (terms ORed) that only reports parse errors when no term matches
    (LazyErrorNodeSelector). Empty terms are dropped: they match no node."""

    __slots__ = ("terms",)

    def __init__(self, raw: Any, path: str = "") -> None:
        errors: list[_FieldError] = []
        tpath = f"{path}.nodeSelectorTerms" if path else "nodeSelectorTerms"
        m = _as_mapping(raw, path or "nodeSelector", errors)
        terms: list[_Term] = []
        for i, raw_term in enumerate(_as_list(m.get("nodeSelectorTerms") if m else None, tpath, errors)):
            term = _as_mapping(raw_term, f"{tpath}[{i}]", errors)
            if term is None or _is_empty_term(term):
                continue
            terms.append(_Term(term, f"{tpath}[{i}]"))
        if errors:  # a malformed list of terms: keep the errors on a term that matches nothing
            bad = _Term({}, tpath)
            bad.errors.extend(errors)
            terms.append(bad)
        self.terms = tuple(terms)

    def parse_errors(self) -> list[_FieldError]:
        return [e for t in self.terms for e in t.errors]

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        for t in self.terms:
            if not t.errors and t.matches(labels, node_name):
                return True
        return False

    def match_err(self, labels: Mapping[str, str], node_name: str) -> tuple[bool, str | None]:
        """Match, with the parse errors when no term matched."""
        errors: list[_FieldError] = []
        for t in self.terms:
            if t.errors:
                errors.extend(t.errors)
            elif t.matches(labels, node_name):
                return True, None
        return False, _aggregate(errors) if errors else None


class _PreferredSchedulingTerms:
    """[]v1.PreferredSchedulingTerm: a node scores the sum of the weights of the terms it matches.
    Terms with weight 0 or no requirements are ignored."""

    __slots__ = ("errors", "terms")

    def __init__(self, raw_terms: Any, path: str = "") -> None:
        errors: list[_FieldError] = []
        terms: list[tuple[_Term, int]] = []
        for i, raw in enumerate(_as_list(raw_terms, path or "preferredDuringSchedulingIgnoredDuringExecution", errors)):
            p = f"{path}[{i}]"
            term = _as_mapping(raw, p, errors)
            if term is None:
                continue
            weight = term.get("weight") or 0
            if not isinstance(weight, int) or isinstance(weight, bool):
                errors.append((p + ".weight", f"Invalid type: expected integer, got {type(weight).__name__}"))
                continue
            pref = term.get("preference") or {}
            pref = _as_mapping(pref, p + ".preference", errors)
            if pref is None or weight == 0 or _is_empty_term(pref):
                continue
            parsed = _Term(pref, p)
            if parsed.errors:
                errors.extend(parsed.errors)
            else:
                terms.append((parsed, weight))
        self.terms = tuple(terms)
        self.errors = errors

    def score(self, node: Node) -> int:
        labels = node.labels
        name = node.name
        total = 0
        for term, weight in self.terms:
            if term.matches(labels, name):
                total += weight
        return total


class _RequiredNodeAffinity:
    """The pod's nodeSelector and required node affinity (nodeaffinity.GetRequiredNodeAffinity)."""

    __slots__ = ("affinity", "node_selector")

    def __init__(self, pod: Pod) -> None:
        # labels.SelectorFromSet: every key must be present with the value.
        self.node_selector = tuple(pod.node_selector.items())
        req = (pod.affinity.get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
        self.affinity = _NodeSelector(req) if req is not None else None

    def matches(self, node: Node) -> bool:
        """Match, ignoring parse errors (as Filter does, for backwards compatibility)."""
        labels = node.labels
        for k, v in self.node_selector:
            if k not in labels or labels[k] != v:
                return False
        if self.affinity is not None:
            return self.affinity.matches(labels, node.name)
        return True

    def match_err(self, node: Node) -> tuple[bool, str | None]:
        labels = node.labels
        for k, v in self.node_selector:
            if k not in labels or labels[k] != v:
                return False, None
        if self.affinity is not None:
            return self.affinity.match_err(labels, node.name)
        return True, None


def _pod_preferred_node_affinity(pod: Pod) -> _PreferredSchedulingTerms | None:
    raw = (pod.affinity.get("nodeAffinity") or {}).get("preferredDuringSchedulingIgnoredDuringExecution")
    return _PreferredSchedulingTerms(raw) if raw is not None else None


# --- args --------------------------------------------------------------------------------------


_NODE_AFFINITY_FIELDS = ("requiredDuringSchedulingIgnoredDuringExecution", "preferredDuringSchedulingIgnoredDuringExecution")


def _added_selectors(
    added: Mapping[str, Any] | None,
) -> tuple[_NodeSelector | None, _PreferredSchedulingTerms | None, list[_FieldError]]:
    if added is None:
        return None, None, []
    errors: list[_FieldError] = []
    for key in added:
        if key not in _NODE_AFFINITY_FIELDS:  # strict decoding of v1.NodeAffinity
            errors.append((f"addedAffinity.{key}", f'unknown field "{key}"'))
    selector = None
    pref = None
    req = added.get("requiredDuringSchedulingIgnoredDuringExecution")
    if req is not None:
        selector = _NodeSelector(req, "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution")
        errors.extend(selector.parse_errors())
    # requiredDuringSchedulingRequiredDuringExecution is not in the API yet (as in Go).
    terms = added.get("preferredDuringSchedulingIgnoredDuringExecution")
    if terms:
        pref = _PreferredSchedulingTerms(terms, "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution")
        errors.extend(pref.errors)
    return selector, pref, errors


@dataclass
class NodeAffinityArgs:
    """NodeAffinityArgs (kubescheduler.config.k8s.io/v1). No defaults."""

    #: A v1.NodeAffinity applied to all pods in addition to their own node affinity: nodes must
    #: match both, and its preferred terms are added to every pod's.
    added_affinity: dict[str, Any] | None = None

    def validate(self) -> None:
        """ValidateNodeAffinityArgs: the added affinity must parse."""
        *_, errors = _added_selectors(self.added_affinity)
        if len(errors) == 1:
            raise ArgsError(*errors[0])
        if errors:
            raise ArgsError("", _aggregate(errors))


# --- the selectors over columns ----------------------------------------------------------------
# Each requirement is evaluated once per distinct value of its label (a lookup table indexed by
# the label's codes, the last entry for nodes without the label), then gathered for every node.

_INT32 = 1 << 31


class _ColumnEval:
    """Evaluates parsed selectors on a NodeColumns, for all nodes (``rows=None``) or for the
    given rows. Keeps each label's value -> code index while the columns keep its values list."""

    __slots__ = ("_indexes",)

    def __init__(self) -> None:
        self._indexes: dict[str, tuple[list[str], dict[str, int]]] = {}

    def _label(self, columns: NodeColumns, key: str) -> tuple[NDArray[np.int32], list[str], dict[str, int]]:
        codes, values = columns.label(key)
        got = self._indexes.get(key)
        if got is None or got[0] is not values:
            got = self._indexes[key] = (values, {v: i for i, v in enumerate(values)})
        return codes, values, got[1]

    def requirement(self, r: _Requirement, columns: NodeColumns, rows: Any) -> NDArray[np.bool_]:
        codes, values, index = self._label(columns, r.key)
        m = len(values)
        op = r.op
        if op == _IN or op == _NOT_IN:
            lut = np.zeros(m + 1, bool)
            for v in r.values:
                c = index.get(v)
                if c is not None:
                    lut[c] = True
            if op == _NOT_IN:
                lut = ~lut  # absent: NotIn matches
        elif op == _EXISTS:
            lut = np.ones(m + 1, bool)
            lut[m] = False
        elif op == _DOES_NOT_EXIST:
            lut = np.zeros(m + 1, bool)
            lut[m] = True
        else:  # Gt / Lt: parse each distinct value once
            lut = np.fromiter((r.matches({r.key: v}) for v in values), bool, m)
            lut = np.append(lut, False)
        return lut[codes if rows is None else codes[rows]]

    def term(self, term: _Term, columns: NodeColumns, rows: Any) -> NDArray[np.bool_]:
        size = columns.n if rows is None else len(rows)
        mask = np.ones(size, bool)
        if term.labels is not None:
            for r in term.labels:
                mask &= self.requirement(r, columns, rows)
        if term.fields is not None:
            n = columns.n
            fm = np.ones(n, bool)
            for key, equal, value in term.fields:
                if key == _OBJECT_NAME_FIELD:
                    eq = np.zeros(n, bool)
                    i = columns.index.get(value)
                    if i is not None:
                        eq[i] = True
                    fm &= eq if equal else ~eq
                elif ("" == value) != equal:
                    fm[:] = False
            # the fields are checked only when the node has a name
            i = columns.index.get("")
            if i is not None:
                fm[i] = True
            mask &= fm if rows is None else fm[rows]
        return mask

    def selector(self, sel: _NodeSelector, columns: NodeColumns, rows: Any) -> NDArray[np.bool_]:
        size = columns.n if rows is None else len(rows)
        mask = np.zeros(size, bool)
        for t in sel.terms:
            if not t.errors:
                mask |= self.term(t, columns, rows)
        return mask

    def required(self, req: _RequiredNodeAffinity, columns: NodeColumns) -> NDArray[np.bool_] | None:
        """Where ``req.matches`` holds (None: every node)."""
        mask = None
        for k, v in req.node_selector:
            codes, _values, index = self._label(columns, k)
            c = index.get(v)
            m = codes == c if c is not None else np.zeros(columns.n, bool)
            mask = m if mask is None else mask & m
        if req.affinity is not None:
            m = self.selector(req.affinity, columns, None)
            mask = m if mask is None else mask & m
        return mask

    def preferred(self, pref: _PreferredSchedulingTerms, columns: NodeColumns, rows: Any, total: NDArray[np.int64]) -> bool:
        """Add ``pref.score`` of each row to ``total``; False when a weight is out of int32."""
        for term, weight in pref.terms:
            if not -_INT32 <= weight < _INT32:
                return False
            total += np.where(self.term(term, columns, rows), np.int64(weight), np.int64(0))
        return True


# --- the plugin --------------------------------------------------------------------------------


class _PreFilterState(StateData):
    __slots__ = ("required",)

    def __init__(self, required: _RequiredNodeAffinity) -> None:
        self.required = required

    def clone(self) -> _PreFilterState:
        return self  # not affected by pod additions or deletions


class _PreScoreState(StateData):
    __slots__ = ("preferred",)

    def __init__(self, preferred: _PreferredSchedulingTerms | None) -> None:
        self.preferred = preferred

    def clone(self) -> _PreScoreState:
        return self  # never mutated


class NodeAffinity:
    """PreFilter, Filter, PreScore, Score and NormalizeScore on node affinity and nodeSelector."""

    name = NAME
    Args = NodeAffinityArgs
    args_kind = "NodeAffinityArgs"

    def __init__(self, args: NodeAffinityArgs | None = None, handle: Any = None) -> None:
        self.handle = handle
        args = args if args is not None else NodeAffinityArgs()
        selector, pref, errors = _added_selectors(args.added_affinity)
        if errors:
            raise ArgsError("", _aggregate(errors))
        self.added_node_selector = selector
        # Set whenever the added preferred terms are a non-empty list (even if all have weight 0).
        self.added_pref_sched_terms = pref
        self._columns = _ColumnEval()

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        # With queueing hints there is no preCheck, so UpdateNodeTaint is not needed.
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE.value, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                self.is_schedulable_after_node_change,
            )
        ]

    def is_schedulable_after_node_change(self, pod: Any, old_obj: Any, new_obj: Any) -> QueueingHint:
        try:
            original, modified = as_views(Node, old_obj, new_obj)
        except TypeError:
            return QueueingHint.QUEUE  # Go: (Queue, err)
        if modified is None:
            return QueueingHint.QUEUE
        if self.added_node_selector is not None and not self.added_node_selector.matches(
            modified.labels, modified.name
        ):
            # The node doesn't match the scheduler-enforced affinity: this event can't help.
            return QueueingHint.SKIP
        required = _RequiredNodeAffinity(pod if isinstance(pod, Pod) else Pod(pod))
        matched, err = required.match_err(modified)
        if err is not None:
            return QueueingHint.QUEUE
        if not matched:
            return QueueingHint.SKIP
        if original is None:
            # A new node that matches the pod's affinity.
            return QueueingHint.QUEUE
        # An update: only unmatched -> matched changes can help.
        was_matched, err = required.match_err(original)
        if err is not None:
            return QueueingHint.QUEUE
        return QueueingHint.SKIP if was_matched else QueueingHint.QUEUE

    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Any:
        node_affinity = pod.affinity.get("nodeAffinity") or {}
        required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        if required is None and self.added_node_selector is None and pod.spec.get("nodeSelector") is None:
            # The Filter has nothing to do with this pod.
            return SKIP
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(_RequiredNodeAffinity(pod)))
        if required is None:
            return None
        terms = required.get("nodeSelectorTerms") if isinstance(required, Mapping) else None
        if not terms or not isinstance(terms, list):
            return None
        # Affinity to specific nodes (metadata.name matchFields with In) narrows the nodes.
        node_names: set[str] | None = None
        for t in terms:
            term_node_names: set[str] | None = None
            fields = t.get("matchFields") if isinstance(t, Mapping) else None
            for r in fields if isinstance(fields, list) else ():
                if isinstance(r, Mapping) and r.get("key") == _OBJECT_NAME_FIELD and r.get("operator") == "In":
                    # The requirements are ANDed: intersect.
                    s = {v for v in r.get("values") or () if isinstance(v, str)}
                    term_node_names = s if term_node_names is None else term_node_names & s
            if term_node_names is None:
                # A term without a node name affinity makes every node eligible (terms are ORed).
                return None
            node_names = term_node_names if node_names is None else node_names | term_node_names
        if node_names is not None and not node_names:
            # Every term has conflicting node name affinity: no node can match.
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
        if node_names:
            return PreFilterResult(node_names), None
        return None

    @hookimpl
    def sign_pod(self, pod: Pod) -> Hashable:
        # the plugin's args (addedAffinity) are the same for every pod of the profile
        return freeze((pod.spec.get("nodeSelector"), pod.affinity.get("nodeAffinity")))

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if self.added_node_selector is not None and not self.added_node_selector.matches(node.labels, node.name):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_ENFORCED)
        s = state.get(PRE_FILTER_STATE_KEY)
        # Without PreFilter (disabled), compute the required affinity here.
        required = s.required if isinstance(s, _PreFilterState) else _RequiredNodeAffinity(pod)
        # Parse errors are ignored for backwards compatibility.
        if not required.matches(node):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD)
        return None

    @hookimpl
    def filter_columns(self, state: CycleState, pod: Pod, columns: NodeColumns) -> tuple[Any, list[Status | None]]:
        ev = self._columns
        codes = np.zeros(columns.n, np.int8)
        s = state.get(PRE_FILTER_STATE_KEY)
        required = s.required if isinstance(s, _PreFilterState) else _RequiredNodeAffinity(pod)
        ok = ev.required(required, columns)
        if ok is not None:
            codes[~ok] = 2
        if self.added_node_selector is not None:
            # checked first: its reason wins
            codes[~ev.selector(self.added_node_selector, columns, None)] = 1
        return codes, [
            None,
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_ENFORCED),
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD),
        ]

    @hookimpl
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        preferred = _pod_preferred_node_affinity(pod)
        if preferred is not None and preferred.errors:
            return Status(Code.ERROR, _aggregate(preferred.errors))
        if preferred is None and self.added_pref_sched_terms is None:
            # The Score has nothing to do with this pod.
            return SKIP
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(preferred))
        return None

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Any:
        node = node_info.node
        count = 0
        if self.added_pref_sched_terms is not None:
            count += self.added_pref_sched_terms.score(node)
        s = state.get(PRE_SCORE_STATE_KEY)
        if isinstance(s, _PreScoreState):
            preferred = s.preferred
        else:
            # Without PreScore (disabled), compute the preferred affinity here.
            preferred = _pod_preferred_node_affinity(pod)
            if preferred is not None and preferred.errors:
                return 0, Status(Code.ERROR, _aggregate(preferred.errors))
        if preferred is not None:
            count += preferred.score(node)
        return count

    @hookimpl
    def score_columns(self, state: CycleState, columns: NodeColumns, rows: Any) -> Any:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, _PreScoreState):
            return None  # without PreScore: the per-node form parses (and reports) the terms
        ev = self._columns
        total = np.zeros(len(rows), np.int64)
        for pref in (self.added_pref_sched_terms, s.preferred):
            if pref is not None and not ev.preferred(pref, columns, rows, total):
                return None
        return total

    @hookimpl
    def normalize_score_columns(self, scores: Any) -> Any:
        return default_normalize_columns(MAX_NODE_SCORE, False, scores)

    @hookimpl
    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        return default_normalize_score(MAX_NODE_SCORE, False, scores)


