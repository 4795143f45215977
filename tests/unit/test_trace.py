"""``--trace``: one record per hook call, with the pod and the node it was about."""

from __future__ import annotations

from typing import Any

from kubesched.sdk import hookimpl
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
