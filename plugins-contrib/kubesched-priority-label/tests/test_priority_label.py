"""PriorityLabel through a real framework cycle on the simulated cluster (kubesched.testing)."""

from __future__ import annotations

import pytest

from kubesched.testing import make_node, make_pod, run_profile


def _nodes() -> list[dict]:
    return [
        make_node().name("low").capacity(cpu="4", memory="8Gi", pods="3").label("priority", "1").obj(),
        make_node().name("high").capacity(cpu="4", memory="8Gi", pods="3").label("priority", "9").obj(),
        make_node().name("mid").capacity(cpu="4", memory="8Gi", pods="3").label("priority", "5").obj(),
        make_node().name("bad").capacity(cpu="4", memory="8Gi").label("priority", "high").obj(),
        make_node().name("plain").capacity(cpu="4", memory="8Gi").obj(),
    ]


@pytest.mark.parametrize("reuse", [False, True])
def test_fills_the_highest_labelled_nodes_first(reuse: bool) -> None:
    pods = [make_pod().name(f"p{i}").obj() for i in range(10)]
    res = run_profile(["PriorityLabel", "NodeResourcesFit"], pods=pods, nodes=_nodes(), reuse_results=reuse)
    # 3 pods fit per labelled node ("pods: 3"): high, then mid, then low; the tenth fits nowhere
    assert [res.node(f"p{i}") for i in range(9)] == ["high"] * 3 + ["mid"] * 3 + ["low"] * 3
    assert res.status("p9") == "Unschedulable"
    assert res.message("p9").startswith(
        "0/5 nodes are available: 1 node(s) didn't have label priority, "
        "1 node(s) had a non-integer priority label, 3 Too many pods."
    )


def test_signs_every_pod_alike() -> None:
    from kubesched_priority_label import PriorityLabel, PriorityLabelArgs

    assert PriorityLabel(PriorityLabelArgs()).sign_pod() == ()
