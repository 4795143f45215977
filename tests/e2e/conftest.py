"""Fixtures for e2e tests on a real control plane (etcd + kube-apiserver built from Go modules).

- ``control_plane`` (session): a started :class:`controlplane.ControlPlane`; the binaries are
  built on first use (``tests/e2e/controlplane/build``, about 10 minutes on 2 cores the first
  time, then cached). Skipped only when ``go`` is not on PATH *and* no prebuilt binaries exist;
  where Go exists a failed build is an error, never a skip.
- ``kube_client`` (session): a ``kubernetes.client.ApiClient`` for the admin kubeconfig.
- ``core_v1`` (session): a ``kubernetes.client.CoreV1Api`` on ``kube_client``.

Every test collected under ``tests/e2e`` gets the ``e2e`` marker (``-m "not e2e"`` deselects).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

E2E_DIR = Path(__file__).resolve().parent
for _p in (E2E_DIR, E2E_DIR / "controlplane"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from controlplane import AssetsUnavailable, ControlPlane, ensure_assets  # noqa: E402


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if E2E_DIR in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.e2e)


def _build_assets(config: pytest.Config) -> Path:
    """ensure_assets(), with the build's progress shown live (not captured)."""
    capman = config.pluginmanager.getplugin("capturemanager")
    reporter = config.pluginmanager.getplugin("terminalreporter")
    cm = capman.global_and_fixture_disabled() if capman is not None else None
    if cm is None:
        return ensure_assets()
    with cm:
        if reporter is not None:
            reporter.write_line(
                "e2e: ensuring control plane binaries (tests/e2e/controlplane/build; "
                "the first build takes ~10 min)"
            )
        return ensure_assets()


@pytest.fixture(scope="session")
def control_plane(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ControlPlane]:
    try:
        assets = _build_assets(request.config)
    except AssetsUnavailable as e:
        pytest.skip(f"e2e control plane unavailable: {e}")
    cp = ControlPlane(assets, tmp_path_factory.mktemp("controlplane"))
    cp.start()
    try:
        yield cp
    finally:
        cp.stop()


@pytest.fixture(scope="session")
def kube_client(control_plane: ControlPlane) -> Iterator[Any]:
    from kubernetes import config as kube_config

    client = kube_config.new_client_from_config(config_file=str(control_plane.kubeconfig))
    try:
        yield client
    finally:
        client.close()


@pytest.fixture(scope="session")
def core_v1(kube_client: Any) -> Any:
    from kubernetes import client

    return client.CoreV1Api(kube_client)
