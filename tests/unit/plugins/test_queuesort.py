"""PrioritySort, transcribed from kube-scheduler's queuesort/priority_sort_test.go (TestLess)."""

from __future__ import annotations

import pytest

from kubesched.runtime.plugins.queuesort import PrioritySort
from kubesched.sdk import Pod, QueuedPodInfo
from kubesched.testing import make_pod

LOW, HIGH = 10, 100
T1 = 1_700_000_000.0
T2 = T1 + 1.0


def qpi(priority: int, timestamp: float = 0.0) -> QueuedPodInfo:
    return QueuedPodInfo(Pod(make_pod().name("p").priority(priority).obj()), timestamp)


@pytest.mark.parametrize(
    ("p1", "p2", "expected"),
    [
        pytest.param(qpi(LOW), qpi(HIGH), False, id="TestLess/p1.priority less than p2.priority"),
        pytest.param(qpi(HIGH), qpi(LOW), True, id="TestLess/p1.priority greater than p2.priority"),
        pytest.param(qpi(HIGH, T1), qpi(HIGH, T2), True, id="TestLess/equal priority. p1 is added to schedulingQ earlier than p2"),
        pytest.param(qpi(HIGH, T2), qpi(HIGH, T1), False, id="TestLess/equal priority. p2 is added to schedulingQ earlier than p1"),
    ],
)
def test_less(p1: QueuedPodInfo, p2: QueuedPodInfo, expected: bool) -> None:
    assert PrioritySort().queue_sort_less(p1, p2) is expected
