"""Puts this directory on the path so the DRA tests share their builders (``dra_builders``,
``cel_support``)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
