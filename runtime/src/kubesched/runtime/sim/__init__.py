"""The simulator for real workloads: replay over virtual time, measure, compare, sweep.

* ``workload`` — time annotations and controllers in a cluster file;
* ``replay`` — drives the simulated cluster and the scheduler over virtual time;
* ``measure`` — what a run measured (the Measurements dict, docs/simulator.md).
"""
