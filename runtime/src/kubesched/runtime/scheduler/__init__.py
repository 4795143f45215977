"""The scheduler, one job per module (kube-scheduler's ``schedule_one.go`` / ``eventhandlers.go``):

* ``loop`` — :class:`Scheduler`: the inbox of typed messages, timers, step / run / shutdown;
* ``messages`` — the messages other threads post into the loop's inbox;
* ``handlers`` — cluster events into the cache and the queue;
* ``cycles`` — the scheduling and binding cycles and the one failure handler;
* ``results`` — what became of each pod (bounded under ``kubesched run``);
* ``clock``, ``workers`` — clocks and where binding cycles run.
"""

from .clock import RealClock, SimClock
from .handlers import node_update_events, pod_update_events
from .loop import Scheduler
from .results import RUN_MAX_RESULTS, PodResult, Results
from .workers import InlineExecutor, WorkerPool

__all__ = [
    "RUN_MAX_RESULTS",
    "InlineExecutor",
    "PodResult",
    "RealClock",
    "Results",
    "Scheduler",
    "SimClock",
    "WorkerPool",
    "node_update_events",
    "pod_update_events",
]
