"""Observability: tracing of extension points, metrics, health endpoints, explain."""
