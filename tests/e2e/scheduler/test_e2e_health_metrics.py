"""``/healthz``, ``/readyz`` (503 until the informer caches synced) and ``/metrics`` with
kube-scheduler's metric names."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_sched import (
    GROUP_LABEL,
    HoldingProxy,
    Kubesched,
    make_group_nodes,
    make_pods,
    scheduler_config,
    wait_bound,
    wait_event,
)
from helpers import wait_for
from prometheus_client.parser import text_string_to_metric_families


@pytest.fixture
def held_apiserver(control_plane: Any, tmp_path: Path) -> Iterator[tuple[HoldingProxy, Path]]:
    """A kubeconfig whose server is a proxy that refuses connections until released."""
    proxy = HoldingProxy("127.0.0.1", control_plane.apiserver_port)
    text = Path(control_plane.kubeconfig).read_text()
    text, n = re.subn(
        r"server: https://127\.0\.0\.1:\d+", f"server: https://127.0.0.1:{proxy.port}", text
    )
    assert n == 1
    kubeconfig = tmp_path / "kubeconfig-via-proxy"
    kubeconfig.write_text(text)
    kubeconfig.chmod(0o600)
    try:
        yield proxy, kubeconfig
    finally:
        proxy.close()


def test_readyz_waits_for_caches_and_metrics_count(
    core_v1: Any,
    events_v1: Any,
    namespace: str,
    test_id: str,
    held_apiserver: tuple[HoldingProxy, Path],
    run_kubesched: Callable[..., Kubesched],
) -> None:
    proxy, kubeconfig = held_apiserver
    group = f"metrics-{test_id}"
    name = f"kubesched-{test_id}"
    make_group_nodes(core_v1, group, 2)
    ks = run_kubesched(
        scheduler_config([{"schedulerName": name}]), kubeconfig=kubeconfig, wait_ready=False
    )

    # The API server is unreachable: the process is alive and serving, but not ready.
    wait_for(lambda: ks.status_of("/healthz") == 200, timeout=60, message="/healthz")
    wait_for(lambda: proxy.refused >= 2, timeout=30, message="the informers to try the API server")
    assert ks.get("/readyz") == (503, "caches not synced")
    assert ks.status_of("/livez") == 200
    assert ks.alive()

    proxy.release()
    wait_for(ks.ready, timeout=60, message="/readyz 200 once the caches synced")
    assert ks.get("/readyz") == (200, "ok")

    sel = {GROUP_LABEL: group}
    pods = make_pods(
        core_v1, [f"m-{i}" for i in range(4)], namespace, scheduler_name=name, node_selector=sel
    )
    wait_bound(core_v1, namespace, pods)
    make_pods(
        core_v1,
        ["stuck"],
        namespace,
        scheduler_name=name,
        node_selector={GROUP_LABEL: f"{group}-nowhere"},
    )
    wait_event(events_v1, namespace, "stuck", "FailedScheduling")

    # One scrape, taken once the unschedulable pod has settled in the unschedulable queue.
    def settled_scrape() -> str | None:
        status, text = ks.get("/metrics")
        assert status == 200
        return text if 'scheduler_pending_pods{queue="unschedulable"} 1.0' in text else None

    text = wait_for(settled_scrape, timeout=30, message="scheduler_pending_pods{unschedulable} 1")
    samples = {
        (s.name, frozenset(s.labels.items())): s.value
        for fam in text_string_to_metric_families(text)
        for s in fam.samples
    }

    def sample(metric: str, **labels: str) -> float | None:
        return samples.get((metric, frozenset(labels.items())))

    assert f'scheduler_schedule_attempts_total{{profile="{name}",result="scheduled"}} 4.0' in text
    assert sample("scheduler_schedule_attempts_total", profile=name, result="scheduled") == 4
    assert (
        sample("scheduler_schedule_attempts_total", profile=name, result="unschedulable") or 0
    ) >= 1
    assert sample("scheduler_pending_pods", queue="unschedulable") == 1
    assert sample("scheduler_pending_pods", queue="active") == 0
    assert "# TYPE scheduler_schedule_attempts_total counter" in text
