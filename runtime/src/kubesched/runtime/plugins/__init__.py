"""kube-scheduler's default plugins, ported. Each is registered through the same
``kubesched.plugins`` entry-point group as third-party plugins (see runtime/pyproject.toml)."""
