"""The sweep on a real local Dask distributed cluster: a scheduler and two worker processes of
one thread each (``distributed.LocalCluster``), never a mock. Every row comes back, equal to
the in-process run's (same seed: same Measurements but the wall-clock ``elapsed`` and where it
ran), and the experiments ran in more than one worker process."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import distributed
import pytest
from click.testing import CliRunner

from kubesched.runtime.cli import main
from kubesched.runtime.sim.sweep import experiment_grid, run_experiments

WORKLOAD = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n3}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: small-1}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "1", memory: 1Gi}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: small-2, annotations: {sim.kubesched.io/arrive-at: 5s}}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "1", memory: 1Gi}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: small-3, annotations: {sim.kubesched.io/arrive-at: 10s}}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "2", memory: 1Gi}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: big, annotations: {sim.kubesched.io/arrive-at: 20s}}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "4", memory: 1Gi}}}]}
"""


def fit_config(strategy: str) -> str:
    return f"""\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: {strategy}
        resources: [{{name: cpu, weight: 1}}, {{name: memory, weight: 1}}]
"""


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """A real local cluster: a scheduler and two worker processes (one thread each)."""
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as c:
        yield c


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "w.yaml").write_text(WORKLOAD)
    (tmp_path / "least.yaml").write_text(fit_config("LeastAllocated"))
    (tmp_path / "most.yaml").write_text(fit_config("MostAllocated"))
    (tmp_path / "noplugin.yaml").write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- schedulerName: default-scheduler\n  plugins:\n    score:\n      enabled: [{name: NoSuchPlugin}]\n"
    )
    monkeypatch.chdir(tmp_path)  # relative paths: the workers resolve them against this directory
    return tmp_path


def _same_run(m: dict[str, Any]) -> dict[str, Any]:
    """A result without what differs between two runs of the same experiment."""
    return {k: v for k, v in m.items() if k not in ("elapsed", "worker")}


def test_sweep_on_a_local_dask_cluster_equals_the_in_process_run(cluster: Any, files: Path) -> None:
    exps = experiment_grid(["w.yaml"], ["least.yaml", "most.yaml", None], [1, 2, 3])
    remote = run_experiments(exps, address=cluster.scheduler_address)
    here = run_experiments(exps, jobs=1)
    assert len(remote) == len(exps) == 9
    assert remote.cancelled == []
    assert [(m["label"], m["seed"]) for m in remote] == [(e.label, e.seed) for e in exps]
    assert [_same_run(m) for m in remote] == [_same_run(m) for m in here]
    assert all("error" not in m for m in remote)
    # the placements differ: MostAllocated leaves a whole node for the big pod
    assert [m["totals"]["pending_at_end"] for m in remote if m["seed"] == 1] == [1, 0, 1]
    workers = {m["worker"].split(" ")[0] for m in remote}
    assert workers <= set(cluster.scheduler_info["workers"]) or workers <= {w.worker_address for w in cluster.workers.values()}
    assert len(workers) == 2, workers
    pids = {m["worker"].rsplit(":", 1)[1].rstrip(")") for m in remote}
    assert len(pids) == 2, pids


def test_a_plugin_the_workers_lack_is_that_experiments_error(cluster: Any, files: Path) -> None:
    exps = experiment_grid(["w.yaml"], ["noplugin.yaml", "most.yaml"], [1])
    res = run_experiments(exps, address=cluster.scheduler_address)
    assert res[0]["error"].startswith('noplugin.yaml: profiles[0].plugins.score.enabled[0].name: unknown plugin "NoSuchPlugin"; installed plugins: '), res[0]["error"]
    assert res[0]["worker"].startswith("tcp://")
    assert res[1]["totals"]["scheduled"] == 4


def test_sweep_command_with_address(cluster: Any, files: Path) -> None:
    r = CliRunner().invoke(main, ["sweep", "--workload", "w.yaml", "--config", "least.yaml", "--config", "most.yaml", "--seeds", "1-2", "--address", cluster.scheduler_address, "-o", "json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)
    assert [(row["label"], row["seed"], row["scheduled"], row["pending_at_end"]) for row in rows] == [
        ("least", 1, 3, 1),
        ("least", 2, 3, 1),
        ("most", 1, 4, 0),
        ("most", 2, 4, 0),
    ]
    assert r.stderr == ""


def test_plugin_discovery_where_distributed_is_imported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Dask worker has imported distributed, whose dask pulls in the importlib_metadata
    backport: its finder then serves ``importlib.metadata.distributions()``, whose metadata
    raises KeyError for a missing field. A distribution without Name or Version is still
    listed as ``<unknown>`` (the registry reads the fields with ``.get``)."""
    import importlib_metadata  # what dask imports

    from kubesched.runtime.registry import Registry

    assert importlib_metadata.__name__ == "importlib_metadata"
    info = tmp_path / "noname-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\n")
    (info / "entry_points.txt").write_text("[kubesched.plugins]\nNoName = kubesched_noname_missing:X\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert Registry.discover(allow=None).get("NoName").describe_error() == (
        'plugin "NoName" from distribution <unknown> failed to load: '
        "ModuleNotFoundError: No module named 'kubesched_noname_missing'"
    )
