"""Check the answers before anything is generated; exit 1 with a message when they cannot work."""

import re
import sys

PLUGIN_NAME = {{ cookiecutter.plugin_name | tojson }}
PLUGIN_CLASS = {{ cookiecutter.__plugin_class | tojson }}
SLUG = {{ cookiecutter.__plugin_slug | tojson }}
DISTRIBUTION = {{ cookiecutter.__distribution_name | tojson }}
MODULE = {{ cookiecutter.__module_name | tojson }}
# Rendered as Python booleans; anything else means a value that was not a yes/no answer.
POINTS = {
    "pre_filter_and_filter": "{{ cookiecutter.pre_filter_and_filter }}",
    "score": "{{ cookiecutter.score }}",
    "reserve_and_permit": "{{ cookiecutter.reserve_and_permit }}",
    "post_bind": "{{ cookiecutter.post_bind }}",
}

# kubesched's own plugins (kube-scheduler's names): an entry point of the same name would make
# both unusable ('plugin name "X" is registered by two distributions').
BUILTIN = {
    "AzureDiskLimits", "DefaultBinder", "DefaultPreemption", "DynamicResources", "EBSLimits",
    "GCEPDLimits", "ImageLocality", "InterPodAffinity", "NodeAffinity", "NodeDeclaredFeatures",
    "NodeName", "NodePorts",
    "NodeResourcesBalancedAllocation", "NodeResourcesFit", "NodeUnschedulable", "NodeVolumeLimits",
    "PodTopologySpread", "PrioritySort", "SchedulingGates", "TaintToleration", "VolumeBinding",
    "VolumeRestrictions", "VolumeZone",
}


def default_plugin_names() -> set[str]:
    """BUILTIN, plus the runtime's own entry points when kubesched is installed here."""
    names = set(BUILTIN)
    try:
        from importlib.metadata import entry_points

        for ep in entry_points(group="kubesched.plugins"):
            if ep.dist is not None and ep.dist.metadata["Name"] == "kubesched":
                names.add(ep.name)
    except Exception:  # only a better check; never a reason to fail
        pass
    return names


def check() -> list[str]:
    errors = []
    if not re.fullmatch(r"[A-Z][A-Za-z0-9]*", PLUGIN_CLASS):
        errors.append(
            f"plugin_name {PLUGIN_NAME!r}: give words of ASCII letters and digits starting with a "
            f"letter (e.g. 'Node Name Score'); it becomes the config name {PLUGIN_CLASS!r}"
        )
    if SLUG == "kubesched" or SLUG.startswith("kubesched-"):
        errors.append(
            f"plugin_name {PLUGIN_NAME!r}: leave out the 'kubesched' prefix; the distribution "
            f"is named kubesched-<name> for you"
        )
    if not re.fullmatch(r"kubesched(-[a-z0-9]+)+", DISTRIBUTION) or not MODULE.isidentifier():
        errors.append(f"plugin_name {PLUGIN_NAME!r}: gives no usable distribution name ({DISTRIBUTION!r})")
    if PLUGIN_CLASS in default_plugin_names():
        errors.append(
            f"plugin_name {PLUGIN_NAME!r}: {PLUGIN_CLASS} is the name of a default plugin; choose another"
        )
    for key, value in POINTS.items():
        if value not in ("True", "False"):
            errors.append(f"{key}: answer yes or no, not {value!r}")
    if not any(v == "True" for v in POINTS.values()):
        errors.append(
            "choose at least one extension point: " + ", ".join(f"{k}=yes" for k in POINTS)
        )
    return errors


if __name__ == "__main__":
    problems = check()
    for p in problems:
        print(f"ERROR: {p}", file=sys.stderr)
    sys.exit(1 if problems else 0)
