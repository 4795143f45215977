"""kubesched.runtime — discovery, configuration, queue, cycles and clusters."""

__version__ = "0.1.0"
