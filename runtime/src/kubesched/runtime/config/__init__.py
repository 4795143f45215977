"""KubeSchedulerConfiguration: read, default, merge and validate it as kube-scheduler does.

Reference release: **kube-scheduler 1.36.3** (kubernetes/kubernetes ``v1.36.3``) for
``kubescheduler.config.k8s.io/v1``, with 1.36.3's default feature gates. The deprecated versions
are read as the last release that served them read them: ``v1beta3`` as 1.28, ``v1beta2`` as 1.27.

Ported from kubernetes/kubernetes:

* ``staging/src/k8s.io/kube-scheduler/config/{v1,v1beta3,v1beta2}/types.go`` — the fields each
  version accepts (strict decoding: unknown fields and wrong value types are errors);
* ``pkg/scheduler/apis/config/{v1,v1beta3,v1beta2}/defaults.go`` —
  ``SetDefaults_KubeSchedulerConfiguration`` (one ``default-scheduler`` profile when there is
  none; the scheduler name is defaulted only when there is a single profile; parallelism 16,
  backoff 1s/10s, leases leader election 15s/10s/2s, QPS 50 / burst 100);
* ``pkg/scheduler/apis/config/{v1,v1beta3,v1beta2}/default_plugins.go`` — default plugins and
  ``mergePlugins``/``mergePluginSet`` (see :mod:`.defaults`);
* ``pkg/scheduler/apis/config/validation/validation.go`` and component-base's config validation;
* ``pkg/scheduler/framework/runtime/framework.go`` — ``NewFramework``'s ``updatePluginList``,
  ``expandMultiPointPlugins`` and ``getScoreWeights`` (see :func:`expand_plugins`).

Plugin args (``validation_pluginargs.go``, ``SetDefaults_*Args``) are defaulted and validated by
each plugin's ``Args`` type: with the file for every ``pluginConfig`` entry of an in-tree plugin,
as ``validatePluginConfig`` does, and when the plugin is built. Not ported: extenders (rejected
with an error naming ``extenders``).
"""

from __future__ import annotations

from kubesched.sdk._describe import suggest

from ._types import (
    EXTENSION_POINTS,
    SUPPORTED_API_VERSIONS,
    ClientConnection,
    ConfigError,
    LeaderElection,
    PluginRef,
    Plugins,
    PluginSet,
    Profile,
    SchedulerConfiguration,
)
from .defaults import default_plugins
from .expand import expand_plugins
from .loader import load_config, load_config_data

__all__ = [
    "EXTENSION_POINTS",
    "SUPPORTED_API_VERSIONS",
    "ClientConnection",
    "ConfigError",
    "LeaderElection",
    "PluginRef",
    "PluginSet",
    "Plugins",
    "Profile",
    "SchedulerConfiguration",
    "default_plugins",
    "expand_plugins",
    "load_config",
    "load_config_data",
    "suggest",
]
