"""SchedulingGates, transcribed from kube-scheduler's
pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates_test.go (v1.36.3)."""

from __future__ import annotations

import pytest

from kubesched.runtime.plugins.schedulinggates import SchedulingGates
from kubesched.sdk import ActionType, Code, EventResource, QueueingHint, Status
from kubesched.testing import build_plugin, make_pod


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(make_pod().name("p").pod(), None, id="TestPreEnqueue/pod does not carry scheduling gates"),
        pytest.param(
            make_pod().name("p").scheduling_gates(["foo", "bar"]).pod(),
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for scheduling gates: [foo bar]"),
            id="TestPreEnqueue/pod carries scheduling gates",
        ),
    ],
)
def test_pre_enqueue(pod, want):
    p = build_plugin(SchedulingGates)
    got = p.pre_enqueue(pod)
    if want is None:
        assert got is None
    else:
        assert got == want
        assert got.code is want.code


@pytest.mark.parametrize(
    ("pod", "old_obj", "new_obj", "expected"),
    [
        pytest.param({}, "not-a-pod", None, QueueingHint.QUEUE, id="Test_isSchedulableAfterPodChange/backoff-wrong-old-object"),
        pytest.param({}, None, "not-a-pod", QueueingHint.QUEUE, id="Test_isSchedulableAfterPodChange/backoff-wrong-new-object"),
        pytest.param(
            make_pod().name("p").scheduling_gates(["foo", "bar"]).uid("uid0").obj(),
            make_pod().name("p1").scheduling_gates(["foo", "bar"]).uid("uid1").obj(),
            make_pod().name("p1").scheduling_gates(["foo"]).uid("uid1").obj(),
            QueueingHint.SKIP,
            id="Test_isSchedulableAfterPodChange/skip-queue-on-other-pod-updated",
        ),
        pytest.param(
            make_pod().name("p").scheduling_gates(["foo"]).obj(),
            make_pod().name("p").scheduling_gates(["foo"]).obj(),
            make_pod().name("p").scheduling_gates([]).obj(),
            QueueingHint.QUEUE,
            id="Test_isSchedulableAfterPodChange/queue-on-the-unsched-pod-updated",
        ),
    ],
)
def test_is_schedulable_after_update_pod_scheduling_gates_eliminated(pod, old_obj, new_obj, expected):
    p = build_plugin(SchedulingGates)
    assert p.is_schedulable_after_update_pod_scheduling_gates_eliminated(pod, old_obj, new_obj) is expected


def test_events_to_register():
    p = build_plugin(SchedulingGates)
    (ev,) = p.events_to_register()
    assert ev.event.resource == EventResource.POD.value
    assert ev.event.action == ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED
    assert ev.hint == p.is_schedulable_after_update_pod_scheduling_gates_eliminated
