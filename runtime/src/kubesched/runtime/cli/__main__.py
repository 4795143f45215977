"""``python -m kubesched.runtime.cli``."""

from . import main

main()
