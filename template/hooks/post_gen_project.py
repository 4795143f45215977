"""Drop tool caches that a developer's checkout of the template may hold: they must not be baked."""

import shutil
from pathlib import Path

CACHES = {"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox"}

for path in sorted(Path.cwd().rglob("*"), reverse=True):
    if path.is_dir() and path.name in CACHES:
        shutil.rmtree(path, ignore_errors=True)
