"""Cluster backends: the embedded simulated cluster and the real Kubernetes one."""

from .base import Cluster

__all__ = ["Cluster"]
