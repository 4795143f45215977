"""Fixtures for kubesched-on-a-real-control-plane tests.

Uses the session ``control_plane``, ``kube_client`` and ``core_v1`` fixtures of
``tests/e2e/conftest.py``.

- ``run_kubesched(config, *, identity=None, wait_ready=True, kubeconfig=None, name=...)``:
  starts ``kubesched run`` (the console script's entry point, with this interpreter) with
  ``config`` (a dict or YAML text) written to ``tmp_path``, on a free port, waits for ``/readyz``
  200 and returns a :class:`e2e_sched.Kubesched` (``.proc``, ``.address``, ``.log_path``,
  ``.metric()``, ``.terminate()``, ``.kill()``). At teardown every process still running gets
  SIGTERM and must exit with its ``expected_exit`` (0 unless the test changed it or killed it).
- ``namespace``: a fresh namespace per test (deleted namespaces stay Terminating: no namespace
  controller runs, so they are never reused).
- ``test_id``: a short unique id for scheduler names, node groups, lease names.
- ``events_v1``: an ``EventsV1Api``.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

# The helpers next to this file are imported by name (as tests/e2e/conftest.py makes `helpers`
# and `controlplane` importable): works with --import-mode=importlib as with prepend.
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from e2e_sched import Kubesched, start_kubesched  # noqa: E402
from helpers import make_namespace  # noqa: E402
from kubernetes import client  # noqa: E402


@pytest.fixture(scope="session")
def events_v1(kube_client: Any) -> client.EventsV1Api:
    return client.EventsV1Api(kube_client)


@pytest.fixture
def test_id() -> str:
    return uuid.uuid4().hex[:8]


@pytest.fixture
def namespace(core_v1: Any) -> str:
    return make_namespace(core_v1, "ks-e2e")


@pytest.fixture
def run_kubesched(control_plane: Any, tmp_path: Path) -> Iterator[Callable[..., Kubesched]]:
    started: list[Kubesched] = []

    def start(
        config: Mapping[str, Any] | str,
        *,
        identity: str | None = None,
        wait_ready: bool = True,
        kubeconfig: str | Path | None = None,
        name: str | None = None,
        ready_timeout: float = 60.0,
        verbosity: int = 4,
    ) -> Kubesched:
        ks = start_kubesched(
            config,
            tmp_path,
            kubeconfig or control_plane.kubeconfig,
            identity=identity,
            verbosity=verbosity,
            name=name or f"kubesched-{len(started)}",
        )
        started.append(ks)
        if wait_ready:
            ks.wait_ready(ready_timeout)
        return ks

    yield start

    problems = []
    for ks in started:
        try:
            if ks.alive():
                code = ks.terminate()
                if ks.expected_exit is not None and code != ks.expected_exit:
                    problems.append(
                        f"{ks.log_path.name}: exit code {code} after SIGTERM, expected "
                        f"{ks.expected_exit}:\n{ks.log_tail()}"
                    )
        finally:
            ks.close()
    assert not problems, "\n\n".join(problems)
