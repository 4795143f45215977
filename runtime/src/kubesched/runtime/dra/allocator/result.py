"""The v1 AllocationResult of one claim, as the end of Go's ``Allocate`` builds it
(allocator_incubating.go v0.36.3): device results, config (class configs, then the claim's),
and the node selector (``createNodeSelector``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .requests import RequestData
from .search import DeviceResult
from .types import AllocatorError, Features

__all__ = ["build_result"]


def _device_result(r: DeviceResult, features: Features) -> dict[str, Any]:
    out: dict[str, Any] = {"request": r.request_name(), "driver": r.id[0], "pool": r.id[1], "device": r.id[2]}
    if r.admin_access:
        out["adminAccess"] = True
    if r.request_view.tolerations:
        out["tolerations"] = [dict(t) for t in r.request_view.tolerations]
    if features.device_binding_and_status:
        if r.device.binding_conditions:
            out["bindingConditions"] = list(r.device.binding_conditions)
        if r.device.binding_failure_conditions:
            out["bindingFailureConditions"] = list(r.device.binding_failure_conditions)
    if r.share_id is not None:
        out["shareID"] = r.share_id
    if r.consumed:
        out["consumedCapacity"] = {k: str(q) for k, q in r.consumed.items()}
    return out


def _configs(claim: Mapping[str, Any], claim_index: int, request_data: Mapping[tuple[int, int, int], RequestData]) -> list[dict[str, Any]]:
    devices = (claim.get("spec") or {}).get("devices") or {}
    requests = devices.get("requests") or []
    out: list[dict[str, Any]] = []
    by_class: dict[str, tuple[int, int]] = {}
    for ri in range(len(requests)):
        data = request_data[(claim_index, ri, 0)]
        if data.parent is not None:
            data = request_data[(claim_index, ri, data.selected_sub_request)]
        cls = data.class_
        if cls is None:
            continue
        name = (cls.get("metadata") or {}).get("name", "")
        if name in by_class:
            start, end = by_class[name]
            for i in range(start, end):
                out[i]["requests"].append(data.request_name())
            continue
        start = len(out)
        for cfg in (cls.get("spec") or {}).get("config") or ():
            out.append({"source": "FromClass", "requests": [data.request_name()], **_device_configuration(cfg)})
        by_class[name] = (start, len(out))
    for cfg in devices.get("config") or ():
        names = cfg.get("requests") or []
        entry = {"source": "FromClaim", **({"requests": list(names)} if names else {}), **_device_configuration(cfg)}
        if not names:
            out.append(entry)
            continue
        for ri, request in enumerate(requests):
            if request.get("name") in names:
                out.append(dict(entry))
                continue
            data = request_data[(claim_index, ri, 0)]
            if data.parent is None:
                continue
            sub = (request.get("firstAvailable") or [])[data.selected_sub_request]
            if f"{request.get('name')}/{sub.get('name')}" in names:
                out.append(dict(entry))
    return out


def _device_configuration(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """The DeviceConfiguration part of a class or claim config (``opaque``, ...)."""
    return {k: v for k, v in cfg.items() if k != "requests"}


def _node_selector(results: Sequence[DeviceResult], node_name: str, claim_name: str) -> dict[str, Any] | None:
    fields: list[Mapping[str, Any]] = []
    exprs: list[Mapping[str, Any]] = []
    for r in results:
        slc = r.slice
        if slc.per_device:
            name, selector = r.device.node_name, r.device.node_selector
        else:
            name, selector = slc.node_name, slc.node_selector
        if name is not None or r.device.binds_to_node:
            return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}
        if selector is None:
            continue
        terms = selector.get("nodeSelectorTerms") or []
        if len(terms) == 1:
            _add_new(terms[0].get("matchFields") or (), fields)
            _add_new(terms[0].get("matchExpressions") or (), exprs)
        elif len(terms) > 1:
            raise AllocatorError(f"create NodeSelector for claim {claim_name}: unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
    if not fields and not exprs:
        return None
    term: dict[str, Any] = {}
    if exprs:
        term["matchExpressions"] = exprs
    if fields:
        term["matchFields"] = fields
    return {"nodeSelectorTerms": [term]}


def _add_new(new: Sequence[Mapping[str, Any]], have: list[Mapping[str, Any]]) -> None:
    for req in new:
        values = set(req.get("values") or ())
        if not any(h.get("key") == req.get("key") and h.get("operator") == req.get("operator") and set(h.get("values") or ()) == values for h in have):
            have.append(req)


def build_result(
    claim: Mapping[str, Any], claim_index: int, results: Sequence[DeviceResult], request_data: Mapping[tuple[int, int, int], RequestData], node_name: str, features: Features
) -> dict[str, Any]:
    devices: dict[str, Any] = {"results": [_device_result(r, features) for r in results]}
    config = _configs(claim, claim_index, request_data)
    if config:
        devices["config"] = config
    out: dict[str, Any] = {"devices": devices}
    selector = _node_selector(results, node_name, (claim.get("metadata") or {}).get("name", ""))
    if selector is not None:
        out["nodeSelector"] = selector
    return out
