"""``--trace``: one record per hook call, with the pod and the node it was about."""

from __future__ import annotations

from typing import Any

from kubesched.runtime.observe.trace import Tracer
from kubesched.sdk import CycleState, Node, NodeInfo, Pod, hookimpl
from kubesched.testing import make_node, make_pod, run_profile


class Gate:
    @hookimpl
    def filter(self) -> None:
        return None

    @hookimpl
    def reserve(self) -> None:
        return None

    @hookimpl
    def unreserve(self) -> None:
        return None

    @hookimpl
    def permit(self) -> None:
        return None

    @hookimpl
    def post_bind(self) -> None:
        return None


def test_records_name_the_node_of_node_and_node_name_hooks() -> None:
    r = run_profile({"Gate": Gate}, nodes=[make_node().name("n1").obj()], pods=[make_pod().name("p").obj()],
                    points={"filter": ["Gate"], "reserve": ["Gate"], "permit": ["Gate"], "postBind": ["Gate"]})
    got: list[Any] = [(rec.point, rec.plugin, rec.pod, rec.node) for rec in r.tracer.records]
    assert got == [
        ("Filter", "Gate", "default/p", "n1"),
        ("Reserve", "Gate", "default/p", "n1"),
        ("Permit", "Gate", "default/p", "n1"),
        ("Bind", "DefaultBinder", "default/p", "n1"),
        ("PostBind", "Gate", "default/p", "n1"),
    ]


def test_where_finds_the_label_pod_and_node_of_a_call() -> None:
    pod = Pod(make_pod().name("p").obj())
    other = Pod(make_pod().name("q").obj())
    ni = NodeInfo(Node(make_node().name("n1").obj()))
    state = CycleState()
    assert Tracer.where("filter", (state, pod, ni)) == ("Filter", "default/p", "n1")
    assert Tracer.where("pre_filter_add_pod", (state, pod, other, ni)) == ("PreFilterAddPod", "default/p", "n1")
    assert Tracer.where("unreserve", (state, pod, "n2")) == ("Unreserve", "default/p", "n2")
    assert Tracer.where("normalize_score", (state, pod, [])) == ("NormalizeScore", "default/p", "-")
    assert Tracer.where("pre_enqueue", (pod,)) == ("PreEnqueue", "default/p", "-")
    assert Tracer.where("events_to_register", ()) == ("EnqueueExtensions", "-", "-")
