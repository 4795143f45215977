"""StickyNode's hooks called directly with the kit's handle (and fake object clients)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from kubesched.sdk import (
    ActionType,
    ArgsError,
    Code,
    CycleState,
    ObjectConflict,
    PreFilterResult,
    QueueingHint,
    Status,
    build_args,
)
from kubesched.testing import TestHandle, build_plugin, make_handle, make_node, make_pod
from kubesched_sticky_node import PATCH_ATTEMPTS, StickyNode, StickyNodeArgs, per_pod_prefix

KEY = "sticky-node.kubesched.io/web-0"


def sts(annotations: dict[str, str] | None = None) -> dict[str, Any]:
    md: dict[str, Any] = {"name": "web", "namespace": "default"}
    if annotations:
        md["annotations"] = annotations
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": md}


POD = make_pod().name("web-0").uid("p0").owner_reference("web", "StatefulSet").pod()
NODES = [make_node().name(n).ready().obj() for n in ("a", "b")]


def plugin(handle: Any, **args: Any) -> StickyNode:
    p = build_plugin(StickyNode, args, handle)
    p.retry_delay = 0
    return p  # type: ignore[no-any-return]


def split(out: Any) -> tuple[PreFilterResult | None, Status]:
    if isinstance(out, tuple):
        return out[0], out[1] or Status()
    if isinstance(out, PreFilterResult):
        return out, Status()
    return None, out or Status()


# --- PreFilter / Filter -------------------------------------------------------------------------------


def test_pre_filter_narrows_to_the_sticky_node_and_filter_keeps_only_it() -> None:
    handle = make_handle(NODES, objects=[sts({KEY: "b"})])
    p = plugin(handle)
    state = CycleState()
    result, status = split(p.pre_filter(state, POD, handle.snapshot().list()))
    assert status.is_success()
    assert result == PreFilterResult({"b"})
    assert p.filter(state, handle.snapshot().get("b")) is None
    rejected = p.filter(state, handle.snapshot().get("a"))
    assert rejected is not None
    assert rejected.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert rejected.reasons == ["node(s) were not the pod's sticky node b"]


def test_pre_filter_skips_without_memory() -> None:
    handle = make_handle(NODES, objects=[sts()])
    _, status = split(plugin(handle).pre_filter(CycleState(), POD, handle.snapshot().list()))
    assert status.is_skip()
    _, status = split(
        plugin(make_handle(NODES)).pre_filter(CycleState(), make_pod().name("x").pod(), [])
    )
    assert status.is_skip()


@pytest.mark.parametrize(
    ("node", "reason"),
    [
        (None, "sticky node b is gone"),
        (make_node().name("b").unschedulable().obj(), "sticky node b is unschedulable (cordoned)"),
        (
            {
                **make_node().name("b").obj(),
                "status": {"conditions": [{"type": "Ready", "status": "Unknown"}]},
            },
            "sticky node b is unschedulable (not ready)",
        ),
    ],
)
def test_pre_filter_policy(node: dict[str, Any] | None, reason: str) -> None:
    handle = make_handle([NODES[0], *([node] if node else [])], objects=[sts({KEY: "b"})])
    _, strict = split(plugin(handle).pre_filter(CycleState(), POD, handle.snapshot().list()))
    assert strict.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert strict.reasons == [reason]
    _, preferred = split(
        plugin(handle, policy="preferred").pre_filter(CycleState(), POD, handle.snapshot().list())
    )
    assert preferred.is_skip()


# --- PostBind -----------------------------------------------------------------------------------------


class ConflictingObjects:
    """Delegates to the kit's object store; the first ``conflicts`` patches find the object
    changed by someone else since the plugin read it (a real 409 from the store's rv check)."""

    def __init__(self, store: Any, conflicts: int) -> None:
        self.store = store
        self.conflicts = conflicts
        self.gets: list[str] = []
        self.patches: list[tuple[Mapping[str, Any], str | None]] = []

    def get(
        self, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> dict[str, Any]:
        obj = self.store.get(api_version, kind, name, namespace)
        self.gets.append(obj["metadata"]["resourceVersion"])
        return obj  # type: ignore[no-any-return]

    def list(self, *a: Any, **kw: Any) -> list[dict[str, Any]]:
        return self.store.list(*a, **kw)  # type: ignore[no-any-return]

    def delete(self, *a: Any, **kw: Any) -> None:
        self.store.delete(*a, **kw)

    def patch(
        self,
        api_version: str,
        kind: str,
        name: str,
        patch: Mapping[str, Any],
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
    ) -> dict[str, Any]:
        self.patches.append((patch, resource_version))
        if len(self.patches) <= self.conflicts:
            # the StatefulSet controller writes in between
            n = len(self.patches)
            self.store.patch(
                api_version,
                kind,
                name,
                {"metadata": {"annotations": {f"other/{n}": "x"}}},
                namespace,
            )
        return self.store.patch(
            api_version, kind, name, patch, namespace, resource_version=resource_version
        )  # type: ignore[no-any-return]


class SwappedObjects:
    """The kit's handle with another ObjectClient."""

    def __init__(self, inner: TestHandle, objects: Any) -> None:
        self._inner = inner
        self.objects = objects

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def handle_with(
    conflicts: int, annotations: dict[str, str] | None = None, cls: type = ConflictingObjects
) -> Any:
    handle = make_handle(NODES, objects=[sts(annotations)])
    return SwappedObjects(handle, cls(handle.objects, conflicts))


def test_post_bind_writes_with_optimistic_concurrency_and_retries_on_conflict() -> None:
    handle = handle_with(1)
    fake: ConflictingObjects = handle.objects
    plugin(handle).post_bind(POD, "b")
    assert len(fake.patches) == 2
    assert fake.patches[0] == ({"metadata": {"annotations": {KEY: "b"}}}, fake.gets[0])
    assert fake.patches[1][1] == fake.gets[1] != fake.gets[0]  # a fresh get before the retry
    ann = fake.store.get("apps/v1", "StatefulSet", "web", "default")["metadata"]["annotations"]
    assert ann == {"other/1": "x", KEY: "b"}  # a merge patch: the other writer's change survives
    assert handle.event_recorder.events == []


def test_post_bind_gives_up_after_bounded_attempts_with_a_warning() -> None:
    handle = handle_with(100)
    fake: ConflictingObjects = handle.objects
    plugin(handle).post_bind(POD, "b")
    assert len(fake.patches) == PATCH_ATTEMPTS == 5
    assert (
        KEY
        not in fake.store.get("apps/v1", "StatefulSet", "web", "default")["metadata"]["annotations"]
    )
    (ev,) = handle.event_recorder.events
    assert (ev.event_type, ev.reason) == ("Warning", "StickyNodeNotRecorded")
    assert "StatefulSet default/web" in ev.note


def test_post_bind_is_a_no_op_when_already_remembered_or_owner_gone() -> None:
    handle = handle_with(0, {KEY: "b"})
    fake: ConflictingObjects = handle.objects
    p = plugin(handle)
    p.post_bind(POD, "b")
    p.post_bind(
        make_pod().name("x-0").owner_reference("x", "StatefulSet").pod(), "b"
    )  # no such owner
    assert fake.patches == []


def test_post_bind_never_raises_on_conflicts() -> None:
    class Raising(ConflictingObjects):
        def patch(self, *a: Any, **kw: Any) -> dict[str, Any]:
            raise ObjectConflict("409")

    handle = handle_with(0, cls=Raising)
    plugin(handle).post_bind(POD, "a")  # must not raise: PostBind is informational
    assert len(handle.event_recorder.events) == 1


# --- events and hints ----------------------------------------------------------------------------------


def test_events_to_register_and_hints() -> None:
    handle = make_handle(NODES, objects=[sts({KEY: "b"})])
    p = plugin(handle)
    events = {str(e.event.resource): e for e in p.events_to_register()}
    assert set(events) == {"Node", "StatefulSet", "VirtualMachine"}
    assert events["Node"].event.action & ActionType.ADD
    assert events["Node"].event.action & ActionType.UPDATE_NODE_TAINT
    assert events["StatefulSet"].event.action & ActionType.UPDATE_OTHER
    node_hint = events["Node"].hint
    owner_hint = events["StatefulSet"].hint
    assert node_hint is not None and owner_hint is not None
    b = make_node().name("b").node()
    assert node_hint(POD, None, b) is QueueingHint.QUEUE
    assert node_hint(POD, None, make_node().name("c").node()) is QueueingHint.SKIP
    assert node_hint(POD, None, make_node().name("b").unschedulable().node()) is QueueingHint.SKIP
    assert node_hint(POD, b, None) is QueueingHint.SKIP
    assert owner_hint(POD, sts({KEY: "b"}), sts()) is QueueingHint.QUEUE
    assert owner_hint(POD, sts({KEY: "b"}), sts({KEY: "b", "x": "y"})) is QueueingHint.SKIP


# --- args ---------------------------------------------------------------------------------------------


def test_args_defaults() -> None:
    args = build_args(StickyNodeArgs, None)
    assert (args.policy, args.annotation) == ("strict", "kubesched.io/sticky-node")
    assert per_pod_prefix(args.annotation) == "sticky-node.kubesched.io"
    assert (
        build_args(StickyNodeArgs, {"policy": "preferred", "annotation": "example.com/Home"}).policy
        == "preferred"
    )


@pytest.mark.parametrize(
    ("raw", "field", "text"),
    [
        ({"policy": "sometimes"}, "args.policy", "Unsupported value"),
        ({"policy": 1}, "args.policy", "Unsupported value"),
        ({"annotation": "sticky"}, "args.annotation", "<prefix>/<name>"),
        ({"annotation": "Bad_Prefix/x"}, "args.annotation", "DNS subdomain"),
        ({"annotation": "example.com/"}, "args.annotation", "1-63"),
        ({"annotation": "example.com/-x"}, "args.annotation", "1-63"),
        ({"annotation": "example.com/" + "x" * 64}, "args.annotation", "1-63"),
        ({"annotation": 3}, "args.annotation", "expected string"),
        ({"polcy": "strict"}, "args.polcy", "unknown field"),
    ],
)
def test_args_validation(raw: dict[str, Any], field: str, text: str) -> None:
    with pytest.raises(ArgsError) as e:
        build_args(StickyNodeArgs, raw)
    assert e.value.field == field
    assert text in e.value.message


def test_args_validate_directly() -> None:
    with pytest.raises(ValueError, match="policy"):
        StickyNodeArgs(policy="sometimes").validate()  # type: ignore[arg-type]
