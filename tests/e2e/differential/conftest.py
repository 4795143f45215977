"""The differential test's own control plane: kube-scheduler sees every node of its API server,
so the scenarios run where no other test leaves nodes behind."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from controlplane import AssetsUnavailable, ControlPlane, ensure_assets  # noqa: E402


@pytest.fixture(scope="module")
def diff_control_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    try:
        assets = ensure_assets(quiet=True)
    except AssetsUnavailable as e:
        pytest.skip(f"e2e control plane unavailable: {e}")
    cp = ControlPlane(assets, tmp_path_factory.mktemp("diff-controlplane"), start_timeout=180)
    cp.start()
    try:
        yield cp
    finally:
        cp.stop()


@pytest.fixture(scope="module")
def differential(diff_control_plane: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from harness import Differential

    d = Differential(diff_control_plane, tmp_path_factory.mktemp("differential"))
    try:
        yield d
    finally:
        d.close()
