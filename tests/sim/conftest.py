from __future__ import annotations

import pathlib
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from kubesched.runtime.cli import simulate


@pytest.fixture
def run_sim(tmp_path: pathlib.Path) -> Callable[..., dict[str, Any]]:
    """run_sim(objects, config=None) -> {pod name: result dict} (and the report under "_report")."""

    def run(objects: list[dict[str, Any]], config: str | None = None, seed: int = 1) -> dict[str, Any]:
        cluster = tmp_path / "cluster.yaml"
        cluster.write_text(yaml.safe_dump_all(objects))
        cfg = None
        if config is not None:
            cfg = tmp_path / "config.yaml"
            cfg.write_text(config)
        report = simulate(str(cluster), str(cfg) if cfg else None, seed=seed)
        out: dict[str, Any] = {p["name"]: p for p in report["pods"]}
        out["_report"] = report
        return out

    return run
