"""DynamicResources: kube-scheduler's default profile (v1.36) includes dynamic resource
allocation (DRA). kubesched does not allocate ResourceClaims yet: pods without
``spec.resourceClaims`` are unaffected (PreFilter returns Skip, as kube-scheduler's plugin does
for them); a pod that uses claims is rejected with a clear, unresolvable reason instead of being
placed on a node whose devices nobody allocated.

PostFilter (``dynamicresources.go`` PostFilter, v1.36.3) runs before DefaultPreemption (the
default profile inserts DynamicResources before it): it deallocates a claim the pod could not use
so that no running pod is evicted for it. kubesched never allocates a claim nor gets past
PreFilter for a pod with claims, so the plugin's cycle state never holds a claim, and PostFilter
answers as kube-scheduler does for a claim-less state: Unschedulable ``no new claims to
deallocate`` (the FailedScheduling message then reads ``..., no new claims to deallocate,
preemption: ...``). As in Go, PreFilter records its (empty) state before anything else, and a
PostFilter that finds no state, because an earlier PreFilter plugin ended the cycle as
UnschedulableAndUnresolvable before this one ran, is an Error ``not found``
(``getStateData``/``CycleState.Read``'s ``ErrNotFound``), which stops the PostFilter plugins
after it (no preemption), as kube-scheduler's RunPostFilterPlugins does.

Score and NormalizeScore (v1.36, weight 2 in the default profile): for a pod without claims, the
only pods kubesched places, Go's Score is 0 on every node (``state.claims.empty()``), and
NormalizeScore (``helper.DefaultNormalizeScore``) keeps the zeros; kube-scheduler logs the column
of zeros and so does kubesched (``score_batch`` makes it one list per chunk of nodes, not a call
per node). SignPod as Go's: a pod with claims is not signable, any other pod signs with nothing.
PreBind and PreBindPreFlight (v1.36.3) as Go's for a state without claims: PreBindPreFlight
returns Skip (so PreBind is not called and, on its account, the pod is not nominated), or an
Error ``not found`` without the state; PreBind has nothing to do.
PreEnqueue, Reserve and the claim events matter only for pods with claims (issue #17).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.sdk import (
    ActionType,
    ArgsError,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    NodeColumns,
    NodeInfo,
    NodeScore,
    Pod,
    StateData,
    Status,
    hookimpl,
)

from ..config._duration import parse_go_duration
from ..timefmt import go_duration

__all__ = ["DynamicResources", "DynamicResourcesArgs"]

NAME = "DynamicResources"
#: stateKey = Name in dynamicresources.go
STATE_KEY = NAME

#: PostFilter's answer when the cycle state holds no claim (dynamicresources.go PostFilter).
NO_NEW_CLAIMS_MSG = "no new claims to deallocate"
#: fwk.ErrNotFound's text: PostFilter without the state PreFilter writes.
STATE_NOT_FOUND_MSG = "not found"


@dataclass
class DynamicResourcesArgs:
    """DynamicResourcesArgs (kubescheduler.config.k8s.io/v1, v1.36.3 types_pluginargs.go): Go
    durations. Defaults (v1/defaults.go SetDefaults_DynamicResourcesArgs, with
    DRASchedulerFilterTimeout, DRADeviceBindingConditions and DRAResourceClaimDeviceStatus on,
    as in 1.36): filterTimeout 10s, bindingTimeout 10m. kubesched allocates no claim (issue #17),
    so the values are validated as kube-scheduler validates them and otherwise unused."""

    filter_timeout: str = "10s"
    binding_timeout: str = "10m0s"

    def validate(self) -> None:
        """ValidateDynamicResourcesArgs (field.ErrorList.ToAggregate())."""
        errs: list[tuple[str, str]] = []
        for field_name, text, check in (
            ("filterTimeout", self.filter_timeout, lambda s: s < 0),
            ("bindingTimeout", self.binding_timeout, lambda s: s < 1),
        ):
            if not isinstance(text, str):
                raise ArgsError(field_name, f"Invalid value: {text!r}: expected a duration string such as \"10s\"")
            try:
                seconds = parse_go_duration(text)
            except ValueError as e:
                raise ArgsError(field_name, f"Invalid value: {_go_quote(text)}: {e}") from None
            if check(seconds):
                detail = "must be zero or positive" if field_name == "filterTimeout" else "must be at least 1 second"
                errs.append((field_name, f"Invalid value: {_go_quote(go_duration(seconds))}: {detail}"))
        if len(errs) == 1:
            raise ArgsError(*errs[0])
        if errs:
            raise ArgsError("", "[" + ", ".join(f"{f}: {m}" for f, m in errs) + "]")


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class _StateData(StateData):
    """The plugin's cycle state. kubesched stores no claim in it (Go's ``claims`` stays empty for
    every pod it lets through, and for every pod whose PreFilter stopped before listing them)."""

    __slots__ = ()

    def clone(self) -> _StateData:
        return self  # nothing in it changes


_EMPTY_STATE = _StateData()


class DynamicResources:
    name = NAME
    Args = DynamicResourcesArgs
    args_kind = "DynamicResourcesArgs"

    def __init__(self, args: DynamicResourcesArgs | None = None) -> None:
        self.args = args if args is not None else DynamicResourcesArgs()

    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        # "We just initialize an empty state to record that observation for the other functions."
        state.write(STATE_KEY, _EMPTY_STATE)
        if not pod.spec.get("resourceClaims"):
            return Status.skip()
        return Status.unresolvable("kubesched does not support dynamic resource allocation (pod uses resourceClaims)")

    @hookimpl
    def filter(self) -> None:
        return None

    @hookimpl
    def filter_columns(self, pod: Pod, columns: NodeColumns) -> tuple[Any, list[Status | None]] | None:
        # only pods without claims get this far (PreFilter rejects the others)
        if pod.spec.get("resourceClaims"):
            return None
        return np.zeros(columns.n, np.int8), [None]

    @hookimpl
    def post_filter(self, state: CycleState) -> tuple[Any, Status]:
        if STATE_KEY not in state:
            return None, Status(Code.ERROR, STATE_NOT_FOUND_MSG)
        return None, Status.unschedulable(NO_NEW_CLAIMS_MSG)

    @hookimpl
    def sign_pod(self, pod: Pod) -> tuple[()] | None:
        # dynamicresources.go SignPod: "pods with dra resource claims are not signable"
        return None if pod.spec.get("resourceClaims") else ()

    @hookimpl
    def score_batch(self, nodes: Sequence[NodeInfo]) -> list[int]:
        return [0] * len(nodes)

    @hookimpl
    def score(self) -> int:
        return 0  # no claims in the state: Go's Score returns 0 before reading any node

    @hookimpl
    def normalize_score(self, scores: list[NodeScore]) -> None:
        return None  # DefaultNormalizeScore of zeros: zeros

    @hookimpl
    def score_columns(self, pod: Pod, rows: Any) -> Any:
        if pod.spec.get("resourceClaims"):
            return None
        return np.zeros(len(rows), np.int64)

    @hookimpl
    def normalize_score_columns(self, scores: Any) -> Any:
        return np.array(scores, np.int64)  # as normalize_score: unchanged

    @hookimpl
    def pre_bind_pre_flight(self, state: CycleState) -> Status:
        # "It just checks state.claims to determine whether there are any claims"
        if STATE_KEY not in state:
            return Status(Code.ERROR, STATE_NOT_FOUND_MSG)
        return Status.skip()

    @hookimpl
    def pre_bind(self, state: CycleState) -> Status | None:
        if STATE_KEY not in state:
            return Status(Code.ERROR, STATE_NOT_FOUND_MSG)
        return None  # no claims to bind

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent("Pod", ActionType.UPDATE_OTHER))]
