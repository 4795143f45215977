"""Make the shared helper module importable under pytest's importlib import mode."""

import pathlib
import sys

_here = str(pathlib.Path(__file__).resolve().parent)
if _here not in sys.path:
    sys.path.insert(0, _here)
