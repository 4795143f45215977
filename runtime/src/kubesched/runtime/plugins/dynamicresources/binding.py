"""PreBind's work (kube-scheduler v1.36.3 ``dynamicresources.go`` bindClaim and the binding
conditions): write the allocation Reserve made and the pod's reservation into the claim, then
wait until the devices' binding conditions are met.

The writes go through ``handle.objects``: the delete-protection finalizer as a merge patch of
``metadata.finalizers`` with the claim's resourceVersion (Go: a normal Update), then the status
(allocation, ``reservedFor``, ``allocationTimestamp``) as a merge patch of the ``status``
subresource with the resourceVersion (Go: UpdateStatus). A conflict reads the claim again and
retries, at most 5 times (``retry.DefaultRetry``)."""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kubesched.sdk import ObjectConflict, ObjectNotFound
from kubesched.sdk.objects.pod import parse_time

from ...scheduler.clock import SimClock
from ...timefmt import rfc3339
from .common import uid_of as _uid
from .extended import (
    NodeExtendedClaim,
    create_extended_resource_claim_in_api,
    is_special_claim_name,
    patch_pod_extended_resource_claim_status,
)
from .resourceclaim import API_VERSION, FINALIZER, kobj

if TYPE_CHECKING:
    from kubesched.sdk import Pod

    from .claims import DraState
    from .plugin import DynamicResources

__all__ = [
    "BindError",
    "bind_claim",
    "has_binding_conditions",
    "is_claim_ready_for_binding",
    "remove_reservation",
    "wait_for_binding_conditions",
]

log = logging.getLogger(__name__)

#: retry.DefaultRetry's Steps
RETRY_STEPS = 5
#: PreBind polls the binding conditions this often (Go: 5 s)
POLL_INTERVAL = 5.0

ERR_DEVICE_BINDING_TIMEOUT = "device binding timeout"
ERR_DEVICE_BINDING_FAILED = "device binding failed"


class BindError(Exception):
    """A PreBind failure; ``str()`` is Go's error text."""


def _go_q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def bind_claim(pl: DynamicResources, s: DraState, index: int, pod: Pod, node_name: str) -> Mapping[str, Any]:
    """bindClaim: the claim with the allocation (if Reserve made one) and the pod's reservation
    stored; raises :class:`BindError`."""
    claim = s.claims.get(index)
    binding = s.claims.get_binding(index, pod.name, pod.uid)
    allocation = s.informations_for_claim[index].allocation
    is_extended = False
    if claim is s.claims.extended_resource_claim():
        # extended resource requests satisfied by a device plugin: nothing to bind
        if allocation is None and ((claim.get("spec") or {}).get("devices") or {}).get("requests") is None:
            return claim
        is_extended = True
    # the UID the in-flight allocation was signalled under (the special claim's temporary one)
    uid = (claim.get("metadata") or {}).get("uid") or ""
    node_allocation = s.node_allocations.get(node_name)
    stored = False
    try:
        if is_extended and is_special_claim_name((claim.get("metadata") or {}).get("name") or ""):
            # DRAExtendedResource: the special claim gets its API object now
            node_claim = None
            if node_allocation is not None and node_allocation.extended_resource_claim is not None:
                node_claim = NodeExtendedClaim(
                    dict(node_allocation.extended_resource_claim),
                    list(node_allocation.container_resource_request_mappings),
                )
            try:
                claim = create_extended_resource_claim_in_api(pl.manager.objects, node_name, node_claim)
            except Exception as e:
                raise BindError(str(e)) from None
            # tracked from now on: Unreserve deletes it again
            s.claims.update_extended_resource_claim(claim)
        claim = _store(pl, claim, allocation, binding)
        stored = True
    finally:
        if allocation is not None:
            # the store (or the informer cache the write went into) now has the allocation:
            # it no longer needs to be in flight (Go keeps a shared extended claim's entry
            # until its own wait for the assume cache; kubesched's writes are there at once)
            pl.manager.maybe_remove_claim_pending_allocation(uid, stored and not is_extended)
    if is_extended:
        mappings = node_allocation.container_resource_request_mappings if node_allocation is not None else []
        try:
            patch_pod_extended_resource_claim_status(
                pl.manager.objects, pod, (claim.get("metadata") or {}).get("name") or "", mappings
            )
        except Exception as e:
            raise BindError(str(e)) from None
    return claim


def _store(pl: DynamicResources, claim: Mapping[str, Any], allocation: Mapping[str, Any] | None, binding: dict[str, Any]) -> Mapping[str, Any]:
    objects = pl.manager.objects
    meta = claim.get("metadata") or {}
    name = meta.get("name") or ""
    namespace = meta.get("namespace") or ""
    ref = kobj(claim)
    cur: Mapping[str, Any] = claim
    last: Exception | None = None
    for attempt in range(RETRY_STEPS):
        if attempt:
            try:
                cur = objects.get(API_VERSION, "ResourceClaim", name, namespace)
            except Exception as e:
                raise BindError(f"get updated claim {ref} after conflict: {_not_found_text(e, name)}") from None
        cmeta = cur.get("metadata") or {}
        if cmeta.get("deletionTimestamp"):
            raise BindError(f"claim {ref} got deleted in the meantime")
        rv = cmeta.get("resourceVersion")
        status = dict(cur.get("status") or {})
        if allocation is not None:
            if status.get("allocation") is not None:
                raise BindError(f"claim {ref} got allocated elsewhere in the meantime")
            finalizers = list(cmeta.get("finalizers") or ())
            if FINALIZER not in finalizers:
                try:
                    cur = objects.patch(
                        API_VERSION, "ResourceClaim", name, {"metadata": {"finalizers": [*finalizers, FINALIZER]}},
                        namespace, resource_version=rv,
                    )
                except ObjectConflict as e:
                    last = BindError(f"add finalizer to claim {ref}: {e}")
                    continue
                except Exception as e:
                    raise BindError(f"add finalizer to claim {ref}: {e}") from None
                rv = (cur.get("metadata") or {}).get("resourceVersion")
            status["allocation"] = copy.deepcopy(dict(allocation))
        patch_status: dict[str, Any] = {"reservedFor": [*(status.get("reservedFor") or ()), binding]}
        if allocation is not None:
            patch_status["allocation"] = status["allocation"]
        if pl.features.binding_conditions:
            current = status.get("allocation")
            if current is None:
                raise BindError(f"claim {ref} got deallocated elsewhere in the meantime")
            if current.get("allocationTimestamp") is None:
                stamp = rfc3339(pl.now())
                if allocation is not None:
                    patch_status["allocation"]["allocationTimestamp"] = stamp
                else:
                    patch_status["allocation"] = {"allocationTimestamp": stamp}
        try:
            return objects.patch(
                API_VERSION, "ResourceClaim", name, {"status": patch_status}, namespace,
                resource_version=rv, subresource="status",
            )
        except ObjectConflict as e:
            last = BindError(_status_error(ref, allocation, e))
            continue
        except Exception as e:
            raise BindError(_status_error(ref, allocation, e)) from None
    assert last is not None
    raise last


def _status_error(ref: str, allocation: Any, e: Exception) -> str:
    if allocation is not None:
        return f"add allocation and reservation to claim {ref}: {e}"
    return f"add reservation to claim {ref}: {e}"


def _not_found_text(e: Exception, name: str) -> str:
    if isinstance(e, ObjectNotFound):
        return f'resourceclaims.resource.k8s.io "{name}" not found'
    return str(e)


# --- binding conditions ------------------------------------------------------------------------


def _device_status(claim: Mapping[str, Any], result: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for d in (claim.get("status") or {}).get("devices") or ():
        if d.get("device") == result.get("device") and d.get("driver") == result.get("driver") and d.get("pool") == result.get("pool"):
            return d
    return None


def _condition(device_status: Mapping[str, Any], ctype: str) -> Mapping[str, Any] | None:
    for c in device_status.get("conditions") or ():
        if c.get("type") == ctype:
            return c
    return None


def is_claim_ready_for_binding(claim: Mapping[str, Any]) -> bool:
    """isClaimReadyForBinding: every binding condition true and no failure condition true
    (also when there are none). Raises :class:`BindError` when a failure condition is true."""
    allocation = (claim.get("status") or {}).get("allocation")
    if allocation is None:
        return False
    for result in (allocation.get("devices") or {}).get("results") or ():
        if not result.get("bindingConditions"):
            continue
        ds = _device_status(claim, result)
        if ds is None:
            return False
        for cond in result.get("bindingFailureConditions") or ():
            failed = _condition(ds, cond)
            if failed is not None and failed.get("status") == "True":
                raise BindError(
                    f"{ERR_DEVICE_BINDING_FAILED}: claim={(claim.get('metadata') or {}).get('name')}, "
                    f"reason={failed.get('reason') or ''}, message={_go_q(str(failed.get('message') or ''))}"
                )
        for cond in result.get("bindingConditions") or ():
            c = _condition(ds, cond)
            if c is None or c.get("status") != "True":
                return False
    return True


def is_claim_timeout(pl: DynamicResources, claim: Mapping[str, Any]) -> bool:
    """isClaimTimeout: allocated at allocationTimestamp, with binding conditions, and more than
    bindingTimeout ago."""
    if not pl.features.binding_conditions:
        return False
    allocation = (claim.get("status") or {}).get("allocation")
    if allocation is None or allocation.get("allocationTimestamp") is None:
        return False
    at = parse_time(allocation["allocationTimestamp"], "status.allocation.allocationTimestamp")
    if at is None:
        return False
    for result in (allocation.get("devices") or {}).get("results") or ():
        if result.get("bindingConditions") is None:
            continue
        if at + pl.binding_timeout < pl.now():
            return True
    return False


def has_binding_conditions(s: DraState) -> bool:
    for _, claim in s.claims.all():
        allocation = (claim.get("status") or {}).get("allocation")
        if allocation is None:
            continue
        for device in (allocation.get("devices") or {}).get("results") or ():
            if device.get("bindingConditions"):
                return True
    return False


def _pod_ready_for_binding(pl: DynamicResources, s: DraState) -> bool:
    """isPodReadyForBinding: reads each claim again (the driver sets the conditions)."""
    for index, claim in s.claims.all():
        meta = claim.get("metadata") or {}
        try:
            claim = pl.manager.get_claim(meta.get("namespace") or "", meta.get("name") or "")
        except Exception as e:
            raise BindError(str(e)) from None
        s.claims.set(index, claim)
        if not is_claim_ready_for_binding(claim):
            if is_claim_timeout(pl, claim):
                raise BindError(f"{ERR_DEVICE_BINDING_TIMEOUT}: claim={(claim.get('metadata') or {}).get('name')}")
            return False
    return True


def wait_for_binding_conditions(pl: DynamicResources, s: DraState, pod: Pod, node_name: str) -> None:
    """PreBind's wait: a ``BindingConditionsPending`` event, then poll every 5 s (the first time
    at once) until the conditions are met or bindingTimeout passed (real time, as Go's
    ``wait.PollUntilContextTimeout``); on the simulated cluster (its virtual clock) the timeout
    at once when the conditions are not met. Raises :class:`BindError`."""
    pl.handle.event_recorder.event(
        pod.raw, "Normal", "BindingConditionsPending", "Scheduling",
        f"waiting for binding conditions for device on node {node_name}",
    )
    simulated = pl.handle is not None and isinstance(pl.handle.clock, SimClock)
    deadline = time.monotonic() + pl.binding_timeout
    while True:
        if _pod_ready_for_binding(pl, s):
            return
        if simulated:
            # The simulated cluster binds inline and has no driver: nothing can meet the
            # conditions while this binding cycle waits, so the wait would only burn
            # bindingTimeout of wall time. It ends as it would: the timeout.
            raise BindError(f"{ERR_DEVICE_BINDING_TIMEOUT}: context deadline exceeded")
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise BindError(f"{ERR_DEVICE_BINDING_TIMEOUT}: context deadline exceeded")
        time.sleep(min(POLL_INTERVAL, remaining))
        if time.monotonic() >= deadline:
            raise BindError(f"{ERR_DEVICE_BINDING_TIMEOUT}: context deadline exceeded")


# --- Unreserve -----------------------------------------------------------------------------------


def remove_reservation(pl: DynamicResources, claim: Mapping[str, Any], pod_uid: str) -> None:
    """Drop the pod from ``status.reservedFor`` (Go: a strategic-merge ``$patch: delete``
    by UID with the claim's UID as precondition; here a merge patch of the whole list with
    the resourceVersion, read again on a conflict). Errors are logged: the next attempt
    gets here again."""
    meta = claim.get("metadata") or {}
    cur: Mapping[str, Any] = claim
    for attempt in range(5):
        try:
            if attempt:
                cur = pl.manager.objects.get(API_VERSION, "ResourceClaim", meta.get("name") or "", meta.get("namespace"))
            if _uid(cur) != _uid(claim):
                return
            reserved = (cur.get("status") or {}).get("reservedFor") or []
            keep = [r for r in reserved if r.get("uid") != pod_uid]
            if len(keep) == len(reserved):
                return
            pl.manager.objects.patch(
                API_VERSION, "ResourceClaim", meta.get("name") or "", {"status": {"reservedFor": keep}},
                meta.get("namespace"), resource_version=(cur.get("metadata") or {}).get("resourceVersion"),
                subresource="status",
            )
            return
        except ObjectConflict:
            continue
        except Exception as e:
            log.error("unreserve: resourceclaim %s: %s", kobj(claim), e)
            return
    log.error("unreserve: resourceclaim %s: too many conflicts", kobj(claim))
