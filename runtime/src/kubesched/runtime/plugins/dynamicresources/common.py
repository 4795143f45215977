"""Small pieces every module of the plugin uses: its name and state key, Go's ``statusUnschedulable`` and
``statusError``, and the accessors of a claim's allocation, UID and name."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.sdk import Code, Status

__all__ = ["NAME", "STATE_KEY", "allocation_of", "error", "name_of", "uid_of", "unschedulable"]

NAME = "DynamicResources"
#: stateKey = Name in dynamicresources.go
STATE_KEY = NAME


def unschedulable(reason: str) -> Status:
    """statusUnschedulable: UnschedulableAndUnresolvable."""
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason)


def error(err: BaseException | str) -> Status:
    """statusError: fwk.AsStatus(err)."""
    return Status(Code.ERROR, str(err), error=err if isinstance(err, BaseException) else None)


def allocation_of(claim: Mapping[str, Any]) -> Any:
    return (claim.get("status") or {}).get("allocation")


def uid_of(obj: Mapping[str, Any]) -> str:
    return (obj.get("metadata") or {}).get("uid") or ""


def name_of(obj: Mapping[str, Any]) -> str:
    return (obj.get("metadata") or {}).get("name") or ""
