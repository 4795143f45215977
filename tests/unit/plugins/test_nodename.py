"""NodeName, transcribed from kube-scheduler's
pkg/scheduler/framework/plugins/nodename/node_name_test.go (v1.36.3)."""

from __future__ import annotations

import pytest

from kubesched.runtime.plugins.nodename import ERR_REASON, NodeName, fits
from kubesched.sdk import ActionType, Code, CycleState, EventResource, Node, NodeInfo, Pod, Status
from kubesched.testing import build_plugin, make_node, make_pod


@pytest.mark.parametrize(
    ("pod", "node", "want"),
    [
        pytest.param({}, {}, None, id="TestNodeName/no host specified"),
        pytest.param(make_pod().node("foo").obj(), make_node().name("foo").obj(), None, id="TestNodeName/host matches"),
        pytest.param(
            make_pod().node("bar").obj(),
            make_node().name("foo").obj(),
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON),
            id="TestNodeName/host doesn't match",
        ),
    ],
)
def test_filter(pod, node, want):
    p = build_plugin(NodeName)
    ni = NodeInfo(Node(node))
    got = p.filter(CycleState(), Pod(pod), ni)
    if want is None:
        assert got is None
        assert fits(Pod(pod), ni)
    else:
        assert got == want and got.code is want.code
        assert not fits(Pod(pod), ni)


def test_events_to_register():
    (ev,) = build_plugin(NodeName).events_to_register()
    assert (ev.event.resource, ev.event.action, ev.hint) == (EventResource.NODE.value, ActionType.ADD, None)
