"""A pod's (anti-)affinity terms as kube-scheduler's ``PodInfo`` holds them.

kube-scheduler parses the four term lists of a pod once (``framework.NewPodInfo``, in
``pkg/scheduler/framework/types.go``): each category fails as a whole on the first invalid
label selector, and the errors are aggregated into one message
(``requiredAffinityTerms: values[0][service]: Invalid value: ...``). The SDK's ``Pod`` view
parses the terms too, but it neither validates label keys/values as ``labels.NewRequirement``
does nor applies ``matchLabelKeys``/``mismatchLabelKeys``; this module does both:

* label keys and values are validated with apimachinery's messages (``IsQualifiedName``,
  ``IsValidLabelValue``), so an invalid selector fails PreFilter/PreScore as in kube-scheduler;
* ``matchLabelKeys``/``mismatchLabelKeys`` (KEP-3633, GA in v1.33) are merged into the label
  selector as the API server does when the pod is created
  (``applyMatchLabelKeysAndMismatchLabelKeys`` in ``pkg/registry/core/pod/strategy.go``):
  kubesched's simulated cluster has no API server to do it. On a real cluster the merge was
  already done, and doing it again only repeats the same requirements.

The parsed terms are cached on the pod view (pods are immutable views; a changed pod is a new
view), so existing pods are parsed once, not once per cycle.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.sdk import AffinityTerm, InvalidObjectError, LabelSelector, Pod
from kubesched.sdk.validation import label_value_errors as _is_valid_label_value
from kubesched.sdk.validation import qualified_name_errors as _is_qualified_name

__all__ = [
    "PodTerms",
    "match_all_terms",
    "pod_terms",
    "validate_label_selector",
]

_CACHE_KEY = "_kubesched_interpodaffinity_terms"

# k8s.io/apimachinery/pkg/util/validation -------------------------------------------------------


def _go_quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _go_strings(vals: Sequence[str]) -> str:
    return "[]string{" + ", ".join(_go_quote(v) for v in vals) + "}"


def _aggregate(errs: Sequence[str]) -> str:
    """utilerrors.NewAggregate(errs).Error(): one message, or ``[a, b]``."""
    uniq = list(dict.fromkeys(errs))
    return uniq[0] if len(uniq) == 1 else "[" + ", ".join(uniq) + "]"


def _new_requirement_errors(key: str, op: str, vals: Sequence[str]) -> list[str]:
    """The errors of labels.NewRequirement(key, op, vals)."""
    errs: list[str] = []
    kerrs = _is_qualified_name(key)
    if kerrs:
        errs.append(f"key: Invalid value: {_go_quote(key)}: {'; '.join(kerrs)}")
    if op in ("in", "notin"):
        if not vals:
            errs.append(f"values: Invalid value: {_go_strings(vals)}: for 'in', 'notin' operators, values set can't be empty")
    elif op == "=":
        if len(vals) != 1:
            errs.append(f"values: Invalid value: {_go_strings(vals)}: exact-match compatibility requires one single value")
    elif op in ("exists", "!"):
        if vals:
            errs.append(f"values: Invalid value: {_go_strings(vals)}: values set must be empty for exists and does not exist")
    for i, v in enumerate(vals):
        verrs = _is_valid_label_value(v)
        if verrs:
            errs.append(f"values[{i}][{key}]: Invalid value: {_go_quote(v)}: {'; '.join(verrs)}")
    return errs


_OPS = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}


def validate_label_selector(raw: Mapping[str, Any] | None) -> str | None:
    """The error of metav1.LabelSelectorAsSelector(raw), or None when it is valid."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        return "label selector must be an object"
    match_labels = raw.get("matchLabels") or {}
    exprs = raw.get("matchExpressions") or []
    # matchLabels first (Go ranges over a map; sorted here, for a stable message), then the
    # expressions in order; the first failing requirement is the error.
    for k, v in sorted(match_labels.items()):
        errs = _new_requirement_errors(str(k), "=", [str(v)])
        if errs:
            return _aggregate(errs)
    for e in exprs:
        if not isinstance(e, Mapping):
            return "label selector requirement must be an object"
        op = _OPS.get(str(e.get("operator", "")))
        if op is None:
            return f"{_go_quote(str(e.get('operator', '')))} is not a valid label selector operator"
        vals = [str(v) for v in e.get("values") or []]
        errs = _new_requirement_errors(str(e.get("key", "")), op, vals)
        if errs:
            return _aggregate(errs)
    return None


def _merged_selector(raw_term: Mapping[str, Any], pod_labels: Mapping[str, str]) -> Any:
    """The term's labelSelector with matchLabelKeys/mismatchLabelKeys applied, as the API server
    does at pod creation (nothing is merged into a nil selector, which matches no pod)."""
    sel = raw_term.get("labelSelector")
    mlk = raw_term.get("matchLabelKeys") or ()
    mmlk = raw_term.get("mismatchLabelKeys") or ()
    if (not mlk and not mmlk) or sel is None or not isinstance(sel, Mapping):
        return sel
    exprs = list(sel.get("matchExpressions") or [])
    for key in mlk:
        if key in pod_labels:
            exprs.append({"key": key, "operator": "In", "values": [pod_labels[key]]})
    for key in mmlk:
        if key in pod_labels:
            exprs.append({"key": key, "operator": "NotIn", "values": [pod_labels[key]]})
    return {**sel, "matchExpressions": exprs}


def _parse_terms(pod: Pod, raw_terms: Sequence[Any], weighted: bool, field: str) -> tuple[tuple[AffinityTerm, ...], str | None]:
    """framework.GetAffinityTerms / getWeightedAffinityTerms: all the terms, or the first error."""
    out: list[AffinityTerm] = []
    for i, raw in enumerate(raw_terms):
        if not isinstance(raw, Mapping):
            return (), f"{field}[{i}]: must be an object"
        weight = 0
        if weighted:
            try:
                weight = int(raw.get("weight") or 0)
            except (TypeError, ValueError):
                return (), f"{field}[{i}].weight: must be an integer"
            raw = raw.get("podAffinityTerm") or {}
            if not isinstance(raw, Mapping):
                return (), f"{field}[{i}].podAffinityTerm: must be an object"
        sel_raw = _merged_selector(raw, pod.labels)
        nss_raw = raw.get("namespaceSelector")
        err = validate_label_selector(sel_raw) or validate_label_selector(nss_raw)
        if err:
            return (), err
        try:
            selector = LabelSelector.parse(sel_raw)
            ns_selector = LabelSelector.parse(nss_raw)
        except InvalidObjectError as e:
            return (), str(e)
        ns = raw.get("namespaces") or []
        if not ns and nss_raw is None:
            namespaces = frozenset([pod.namespace])
        else:
            namespaces = frozenset(str(n) for n in ns)
        out.append(
            AffinityTerm(
                namespaces=namespaces,
                selector=selector,
                topology_key=str(raw.get("topologyKey") or ""),
                namespace_selector=ns_selector,
                weight=weight,
            )
        )
    return tuple(out), None


class PodTerms:
    """The four term lists of a pod; a category that failed to parse is empty and its error
    is in :attr:`error` (the aggregate, as NewPodInfo returns it)."""

    __slots__ = (
        "error",
        "pref_affinity",
        "pref_anti_affinity",
        "req_affinity",
        "req_anti_affinity",
        "required_error",
    )

    def __init__(self, pod: Pod) -> None:
        aff = pod.affinity
        pa = aff.get("podAffinity") or {}
        paa = aff.get("podAntiAffinity") or {}
        errs: list[str] = []
        req = "requiredDuringSchedulingIgnoredDuringExecution"
        pref = "preferredDuringSchedulingIgnoredDuringExecution"
        self.req_affinity, e1 = _parse_terms(pod, pa.get(req) or (), False, f"podAffinity.{req}")
        if e1:
            errs.append(f"requiredAffinityTerms: {e1}")
        self.req_anti_affinity, e2 = _parse_terms(pod, paa.get(req) or (), False, f"podAntiAffinity.{req}")
        if e2:
            errs.append(f"requiredAntiAffinityTerms: {e2}")
        self.pref_affinity, e3 = _parse_terms(pod, pa.get(pref) or (), True, f"podAffinity.{pref}")
        if e3:
            errs.append(f"preferredAffinityTerms: {e3}")
        self.pref_anti_affinity, e4 = _parse_terms(pod, paa.get(pref) or (), True, f"podAntiAffinity.{pref}")
        if e4:
            errs.append(f"preferredAntiAffinityTerms: {e4}")
        self.error: str | None = _aggregate(errs) if errs else None
        #: the required affinity or anti-affinity terms failed to parse
        self.required_error = bool(e1 or e2)


def pod_terms(pod: Pod) -> PodTerms:
    """The pod's parsed terms, cached on the view."""
    d = pod.__dict__
    t = d.get(_CACHE_KEY)
    if t is None:
        t = PodTerms(pod)
        d[_CACHE_KEY] = t
    return t


def match_all_terms(terms: Sequence[AffinityTerm], pod: Pod, ns_labels: Mapping[str, str]) -> bool:
    """podMatchesAllAffinityTerms: True iff there are terms and the pod matches every one."""
    if not terms:
        return False
    for t in terms:
        if not t.matches(pod, ns_labels):
            return False
    return True
