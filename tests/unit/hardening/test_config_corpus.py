"""Bad KubeSchedulerConfiguration files: each gives one line naming the file and the field path.

The YAML bounds follow kube-scheduler's go-yaml (go.yaml.in/yaml/v2 decode.go's alias budget,
its tag resolution); nesting is bounded at ``MAX_DEPTH`` levels before Python's recursion can be.
The alias bomb and the deep nesting run ``kubesched config validate`` in a subprocess with a
timeout, so a hang, a MemoryError or a crash fails the test instead of the suite.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kubesched.runtime.config import ConfigError, load_config, load_config_data
from kubesched.runtime.config._yaml import MAX_DEPTH

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
TAGS_HELP = (
    "kubesched reads YAML 1.1's core tags only (!!str, !!int, !!float, !!bool, !!null, !!binary, "
    "!!timestamp, !!map, !!seq, ...)"
)

#: profiles that enable only the queue sort and the binder: every other plugin is disabled
ONLY_SORT_AND_BIND = """\
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      disabled:
      - name: "*"
      enabled:
      - name: PrioritySort
      - name: DefaultBinder
  pluginConfig:
"""


def write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "cfg.yaml"
    path.write_text(HEADER + textwrap.dedent(body))
    return path


def error_of(path: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert "\n" not in message
    prefix = f"{path}: "
    assert message.startswith(prefix)
    return message[len(prefix):]


def alias_bomb() -> str:
    """The billion laughs: 9 levels of 9 aliases each (9^9 strings once expanded)."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    previous = "a"
    for name in "bcdefghi":
        lines.append(f"{name}: &{name} [" + ",".join([f"*{previous}"] * 9) + "]")
        previous = name
    return "\n".join(lines) + "\n"


def run_validate(path: Path, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kubesched.runtime.cli", "config", "validate", str(path)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


# ---------------------------------------------------------------- bounds (subprocess)


def test_alias_bomb_is_refused_at_once(tmp_path: Path) -> None:
    path = write(tmp_path, alias_bomb())
    result = run_validate(path)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert result.stderr == (
        f"kubesched: error: {path}: d[1][3][8][4]: invalid YAML: document contains excessive "
        "aliasing (4159 of the first 4201 values come from aliases)\n"
    )


def test_deep_nesting_is_refused_before_python_recursion(tmp_path: Path) -> None:
    path = write(tmp_path, "profiles: " + "[" * 490 + "]" * 490 + "\n")
    result = run_validate(path)
    assert result.returncode == 2, result.stderr
    assert result.stderr == (
        f"kubesched: error: {path}: profiles[0][0][0][0][0]... (100 levels)"
        f": nested deeper than {MAX_DEPTH} levels (line 3)\n"
    )


def test_deep_block_mapping_in_args_is_refused(tmp_path: Path) -> None:
    keys = "".join("  " * (i + 3) + f"k{i}:\n" for i in range(MAX_DEPTH + 50))
    path = write(tmp_path, "profiles:\n- pluginConfig:\n  - name: X\n    args:\n" + keys)
    result = run_validate(path)
    assert result.returncode == 2, result.stderr
    expected_path = "profiles[0].pluginConfig[0].args.k0... (100 levels)"
    assert result.stderr == (
        f"kubesched: error: {path}: {expected_path}: nested deeper than {MAX_DEPTH} levels "
        f"(line {MAX_DEPTH + 2})\n"
    )


# ---------------------------------------------------------------- bounds (in process)


def test_aliases_that_nest_deeper_than_the_bound_are_refused(tmp_path: Path) -> None:
    # each level is shallow as written; the aliases stack 90 levels per link once expanded
    lines = ["x0: &x0 " + "[" * 90 + "]" * 90]
    for i in range(1, 4):
        lines.append(f"x{i}: &x{i} " + "[" * 90 + f"*x{i - 1}" + "]" * 90)
    path = write(tmp_path, "\n".join(lines) + "\n")
    assert error_of(path) == "x1[0][0][0][0][0]... (100 levels)" + (
        f": nested deeper than {MAX_DEPTH} levels (line 3)"
    )


def test_a_few_aliases_are_fine(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        leaderElection: &le
          leaderElect: false
        profiles:
        - schedulerName: a
          pluginConfig: &pc
          - name: InterPodAffinity
            args: {hardPodAffinityWeight: 3}
        - schedulerName: b
          pluginConfig: *pc
        """)
    cfg = load_config(path)
    assert [p.plugin_config["InterPodAffinity"] for p in cfg.profiles] == [
        {"hardPodAffinityWeight": 3}
    ] * 2


def test_in_memory_data_that_contains_itself_is_too_deep() -> None:
    data: dict[str, object] = {"apiVersion": "kubescheduler.config.k8s.io/v1"}
    data["kind"] = data
    with pytest.raises(ConfigError) as info:
        load_config_data(data, source="mem")
    assert str(info.value) == "mem: kind.kind.kind.kind.kind.kind... (100 levels)" + (
        f": nested deeper than {MAX_DEPTH} levels"
    )


# ---------------------------------------------------------------- explicit tags

TAG_ERRORS = [
    ("parallelism: !!int\n", 'parallelism: invalid YAML: cannot decode !!null "" as a !!int (line 3)'),
    ("parallelism: !!int x\n", 'parallelism: invalid YAML: cannot decode !!str "x" as a !!int (line 3)'),
    (
        "parallelism: !!bool maybe\n",
        'parallelism: invalid YAML: cannot decode !!str "maybe" as a !!bool (line 3)',
    ),
    ("parallelism: !!float x\n", 'parallelism: invalid YAML: cannot decode !!str "x" as a !!float (line 3)'),
    ("parallelism: !!null 3\n", 'parallelism: invalid YAML: cannot decode !!int "3" as a !!null (line 3)'),
    ("parallelism: !!bool 1\n", 'parallelism: invalid YAML: cannot decode !!int "1" as a !!bool (line 3)'),
    (
        "parallelism: !!timestamp x\n",
        'parallelism: invalid YAML: cannot decode !!str "x" as a !!timestamp (line 3)',
    ),
    (
        "leaderElection:\n  resourceName: !!binary not*base64\n",
        "leaderElection.resourceName: invalid YAML: !!binary value contains invalid base64 data "
        "(line 4)",
    ),
    (
        "parallelism: !!python/name:os.system x\n",
        f'parallelism: unsupported YAML tag "!!python/name:os.system" (line 3): {TAGS_HELP}',
    ),
    (
        "profiles:\n- !!python/object:collections.OrderedDict {schedulerName: a}\n",
        f'profiles[0]: unsupported YAML tag "!!python/object:collections.OrderedDict" (line 4): '
        f"{TAGS_HELP}",
    ),
    ("parallelism: !foo 3\n", f'parallelism: unsupported YAML tag "!foo" (line 3): {TAGS_HELP}'),
    ("!!python/str kind: x\n", f'kind: unsupported YAML tag "!!python/str" (line 3): {TAGS_HELP}'),
    # go-yaml ignores the tag of a collection: the value is a mapping, and the field says so
    (
        "parallelism: !!str {a: 1}\n",
        "parallelism: Invalid value: {...}: expected an integer (int32), got a mapping",
    ),
    (
        "parallelism: !!set {a, b}\n",
        "parallelism: Invalid value: {...}: expected an integer (int32), got a mapping",
    ),
    (
        "parallelism: !!omap [{a: 1}]\n",
        "parallelism: Invalid value: [...]: expected an integer (int32), got a list",
    ),
    (
        "parallelism: !!binary aGVsbG8=\n",
        'parallelism: Invalid value: "hello": expected an integer (int32), got a string',
    ),
    (
        "parallelism: !!timestamp 2001-12-14\n",
        'parallelism: Invalid value: "2001-12-14": expected an integer (int32), got a string',
    ),
    # what PyYAML's resolver takes for a number and is not one: go-yaml's string
    ("parallelism: 0x_\n", 'parallelism: Invalid value: "0x_": expected an integer (int32), got a string'),
]


@pytest.mark.parametrize(("body", "message"), TAG_ERRORS, ids=[b.strip() for b, _ in TAG_ERRORS])
def test_explicit_tags(tmp_path: Path, body: str, message: str) -> None:
    assert error_of(write(tmp_path, body)) == message


def test_core_tags_resolve_as_go_yaml_does(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        parallelism: !!float 8
        enableProfiling: !!bool "false"
        podInitialBackoffSeconds: !!int "2"
        leaderElection: !!map
          resourceName: !!binary a3ViZS1zY2hlZA==
          resourceNamespace: !!str 123
        profiles: !!seq
        - schedulerName: !!str yes
        """)
    cfg = load_config(path)
    assert cfg.parallelism == 8
    assert cfg.enable_profiling is False
    assert cfg.pod_initial_backoff_seconds == 2
    assert cfg.leader_election.resource_name == "kube-sched"
    assert cfg.leader_election.resource_namespace == "123"
    assert [p.scheduler_name for p in cfg.profiles] == ["yes"]


# ---------------------------------------------------------------- every pluginConfig entry


def test_args_of_a_disabled_plugin_are_validated(tmp_path: Path) -> None:
    path = write(tmp_path, ONLY_SORT_AND_BIND + """\
  - name: DefaultPreemption
    args: {minCandidateNodesPercentage: 200}
""")
    assert error_of(path) == (
        "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 200: "
        "not in valid range [0, 100]"
    )


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            "- name: VolumeBinding\n    args: {bindTimeoutSeconds: -1}",
            "profiles[0].pluginConfig[0].args.bindTimeoutSeconds: Invalid value: -1: invalid "
            "BindTimeoutSeconds, should not be a negative value",
        ),
        (
            "- name: NodeResourcesBalancedAllocation\n    args: {resources: [{name: cpu, weight: 2}]}",
            "profiles[0].pluginConfig[0].args.resources[0].weight: Invalid value: 2: must be 1",
        ),
        (
            "- name: PodTopologySpread\n    args: {defaultingType: Sometimes}",
            'profiles[0].pluginConfig[0].args.defaultingType: Unsupported value: "Sometimes": '
            'supported values: "System", "List"',
        ),
        (
            "- name: InterPodAffinity\n    args: {hardPodAffinityWeight: 101}",
            "profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 101: not in "
            "valid range [0, 100]",
        ),
        # NodeResourcesFit's args are decoded strictly with the file...
        (
            "- name: NodeResourcesFit\n    args: {foo: 1}",
            'profiles[0].pluginConfig[0].args.foo: unknown field "foo" (known fields: '
            "ignoredResources, ignoredResourceGroups, scoringStrategy)",
        ),
    ],
    ids=["VolumeBinding", "BalancedAllocation", "PodTopologySpread", "InterPodAffinity", "Fit"],
)
def test_args_of_each_disabled_plugin_are_validated(tmp_path: Path, entry: str, message: str) -> None:
    path = write(tmp_path, ONLY_SORT_AND_BIND + f"  {entry}\n")
    assert error_of(path) == message


def test_disabled_node_resources_fit_args_are_only_decoded(tmp_path: Path) -> None:
    # ...and validated when the plugin is built, as in kube-scheduler, whose validators map
    # keys them as "NodeResourcesFitArgs": disabled, a bad scoring strategy passes
    path = write(tmp_path, ONLY_SORT_AND_BIND + """\
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: Foo}}
""")
    assert load_config(path).profiles[0].plugin_config["NodeResourcesFit"] == {
        "scoringStrategy": {"type": "Foo"}
    }


def test_enabled_plugin_args_are_validated_with_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        profiles:
        - schedulerName: default-scheduler
          pluginConfig:
          - name: DefaultPreemption
            args: {minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0}
        """)
    assert error_of(path) == (
        "profiles[0].pluginConfig[0].args: [minCandidateNodesPercentage: Invalid value: 0: cannot "
        "be zero at the same time as minCandidateNodesAbsolute, minCandidateNodesAbsolute: "
        "Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage]"
    )


def test_args_of_an_unknown_plugin_are_left_alone(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        profiles:
        - schedulerName: default-scheduler
          pluginConfig:
          - name: NoSuchPlugin
            args: {anything: [1, 2]}
        """)
    assert load_config(path).profiles[0].plugin_config["NoSuchPlugin"] == {"anything": [1, 2]}


# ---------------------------------------------------------------- scalars in messages

TOKEN = "eyJhbGciOiJSUzI1NiIsImtpZCI6IiJ9." + "x" * 900


def test_a_token_as_the_document_is_cut(tmp_path: Path) -> None:
    path = tmp_path / "cfg.yaml"
    path.write_text(TOKEN + "\n")
    assert error_of(path) == (
        'line 1: expected a KubeSchedulerConfiguration mapping, got the scalar "'
        + TOKEN[:64] + f'... ({len(TOKEN) - 64} more characters)"'
    )


def test_a_token_in_a_field_is_cut(tmp_path: Path) -> None:
    path = write(tmp_path, f"parallelism: {TOKEN}\n")
    assert error_of(path) == (
        f'parallelism: Invalid value: "{TOKEN[:64]}... ({len(TOKEN) - 64} more characters)": '
        "expected an integer (int32), got a string"
    )


def test_a_token_as_a_field_name_is_cut(tmp_path: Path) -> None:
    path = write(tmp_path, f"{TOKEN}: 1\n")
    shown = f"{TOKEN[:64]}... ({len(TOKEN) - 64} more characters)"
    assert error_of(path) == f'{shown}: unknown field "{shown}"'


def test_a_token_as_a_plugin_name_is_cut(tmp_path: Path) -> None:
    path = write(tmp_path, f"profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: {TOKEN}\n")
    with pytest.raises(ConfigError) as info:
        load_config(path, installed_plugins=["NodeName"])
    assert str(info.value) == (
        f'{path}: profiles[0].plugins.filter.enabled[0].name: unknown plugin "{TOKEN[:64]}... '
        f'({len(TOKEN) - 64} more characters)"; installed plugins: NodeName'
    )


def test_control_characters_are_escaped(tmp_path: Path) -> None:
    path = write(tmp_path, 'leaderElection: {resourceLock: "lease\\e[2J\\ns\\u202e"}\n')
    assert error_of(path) == (
        'leaderElection.resourceLock: Invalid value: "lease\\u001b[2J\\ns\\u202e": '
        'resourceLock value must be "leases"'
    )
    path = write(tmp_path, '"a\\x1b[2Jb": 1\n')
    assert error_of(path) == 'a\\x1b[2Jb: unknown field "a\\u001b[2Jb"'
