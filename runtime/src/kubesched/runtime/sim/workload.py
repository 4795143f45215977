"""Workload files: the cluster YAML users already have, plus time (annotations).

See docs/simulator.md. Times are offsets from the start of the run: a Go duration (``90s``,
``1h30m``) or a bare number of seconds.
"""

from __future__ import annotations

__all__ = ["ARRIVE_AT", "CORDON_AT", "DELETE_AT", "DRAIN_AT", "RUN_FOR", "TIME_ANNOTATIONS"]

#: when the object (Pod, Node, Deployment, ReplicaSet, StatefulSet, Job) is created
ARRIVE_AT = "sim.kubesched.io/arrive-at"
#: when it is deleted (a Node: removed, and its pods with it)
DELETE_AT = "sim.kubesched.io/delete-at"
#: how long a pod runs once bound; then it completes
RUN_FOR = "sim.kubesched.io/run-for"
#: when a Node becomes unschedulable
CORDON_AT = "sim.kubesched.io/cordon-at"
#: when a Node is cordoned and its pods evicted
DRAIN_AT = "sim.kubesched.io/drain-at"

TIME_ANNOTATIONS = (ARRIVE_AT, DELETE_AT, RUN_FOR, CORDON_AT, DRAIN_AT)
