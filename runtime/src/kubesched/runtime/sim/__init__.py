"""The simulator for real workloads: replay over virtual time, measure, compare, sweep.

* ``workload`` — time annotations and controllers in a cluster file;
* ``replay`` — drives the simulated cluster and the scheduler over virtual time;
* ``measure`` — what a run measured (the Measurements dict, docs/simulator.md).
"""

from __future__ import annotations

from typing import Any

__all__ = ["run_experiment"]


def run_experiment(
    workload: str,
    config: str | None = None,
    *,
    seed: int | None = None,
    label: str | None = None,
    registry: Any = None,
    progress: Any = None,
) -> dict[str, Any]:
    """Run one workload under one configuration and seed on the simulated cluster; return its
    Measurements (docs/simulator.md). ``label`` names the run (default: the config file's
    stem, or "default")."""
    from ..cli.simulate_cmd import simulate

    return simulate(workload, config, seed=seed, registry=registry, progress=progress, label=label)["metrics"]
