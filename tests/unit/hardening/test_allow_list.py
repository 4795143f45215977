"""The plugin allow-list (``KUBESCHED_LOAD_PLUGINS``) and the built-in plugin names.

Every distribution here is real: a ``*.dist-info`` directory (METADATA, entry_points.txt) beside
its module in a temporary site directory on ``sys.path``, found by importlib.metadata as any
installed distribution. A module that must not be imported records its import in a file and
raises, so a test sees both ``sys.modules`` and the record."""

from __future__ import annotations

import logging
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.runtime.cli import main
from kubesched.runtime.cluster.simulated import SimulatedCluster
from kubesched.runtime.config import load_config_data
from kubesched.runtime.registry import (
    SKIP_BUILTIN,
    SKIP_UNLISTED,
    Registry,
    SkippedEntryPoint,
    UnknownPluginError,
    _unmatched_entries,
)
from kubesched.runtime.scheduler import Scheduler
from kubesched.sdk._text import printable

#: the contrib plugins installed in the test environment, as the warnings list them
CONTRIB = "kubesched-coscheduling (Coscheduling), kubesched-gpushare (BestFitScore, DotProductScore, FGDScore, GpuClusteringScore, GpuPackingScore, GpuShare, RandomScore), kubesched-priority-label (PriorityLabel), kubesched-sticky-node (StickyNode)"
INSTALLED = (
    "installed third-party plugins: kubesched-broken-import (BrokenImport), "
    + CONTRIB.replace("kubesched-priority-label", "kubesched-listed (ListedPlugin), kubesched-priority-label")
    + ", kubesched-takeover (NodeResourcesFit), kubesched-tripwire (Tripwire)"
)
MODULES = ("kubesched_tripwire", "kubesched_listed", "kubesched_takeover", "kubesched_broken_import")

FINE = """
from kubesched.sdk import hookimpl


class {cls}:
    @hookimpl
    def filter(self, node_info):
        return None
"""

TRIPWIRE = """
with open({record!r}, "a") as f:
    f.write("{module}\\n")
raise RuntimeError("{module} must not be imported")
"""


def install(site: Path, dist: str, version: str, entry_points: dict[str, str], module: str, source: str) -> None:
    """Install distribution ``dist`` with ``entry_points`` (name -> value) in group
    kubesched.plugins and the one-file module ``module``."""
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    lines = "".join(f"{name} = {value}\n" for name, value in entry_points.items())
    (info / "entry_points.txt").write_text(f"[kubesched.plugins]\n{lines}")
    (site / f"{module}.py").write_text(textwrap.dedent(source))


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A site directory on sys.path holding four distributions: kubesched-listed (ListedPlugin,
    fine), kubesched-tripwire (Tripwire, whose module records its import and raises),
    kubesched-takeover (an entry point named NodeResourcesFit, module likewise) and
    kubesched-broken-import (BrokenImport, whose module raises ImportError)."""
    site = tmp_path / "site"
    site.mkdir()
    record = tmp_path / "imported.txt"
    record.write_text("")
    install(site, "kubesched-listed", "2.0", {"ListedPlugin": "kubesched_listed:ListedPlugin"}, "kubesched_listed", FINE.format(cls="ListedPlugin"))
    install(site, "kubesched-tripwire", "1.0", {"Tripwire": "kubesched_tripwire:Tripwire"}, "kubesched_tripwire",
            TRIPWIRE.format(record=str(record), module="kubesched_tripwire"))
    install(site, "kubesched-takeover", "0.3", {"NodeResourcesFit": "kubesched_takeover:Fit"}, "kubesched_takeover",
            TRIPWIRE.format(record=str(record), module="kubesched_takeover"))
    install(site, "kubesched-broken-import", "1.0", {"BrokenImport": "kubesched_broken_import:BrokenImport"},
            "kubesched_broken_import", "import kubesched_no_such_module\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delenv("KUBESCHED_LOAD_PLUGINS", raising=False)
    yield site
    for m in MODULES:
        sys.modules.pop(m, None)


def imported(site: Path) -> list[str]:
    """The guarded modules imported so far (recorded by the module, or present in sys.modules)."""
    record = (site.parent / "imported.txt").read_text().split()
    return sorted(set(record) | {m for m in ("kubesched_tripwire", "kubesched_takeover") if m in sys.modules})


def unmatched(entry: str, hint: str | None = None) -> str:
    did = f' did you mean "{hint}"?' if hint else ""
    return f'KUBESCHED_LOAD_PLUGINS entry "{entry}" matches no installed plugin distribution or plugin name;{did} {INSTALLED}'


TAKEOVER = (
    'distribution "kubesched-takeover" 0.3 registers plugin "NodeResourcesFit", the name of a built-in plugin:'
    " it is not loaded, the built-in NodeResourcesFit is used"
)


def third_party(reg: Registry) -> list[str]:
    return sorted(s.name for s in reg.specs() if s.distribution != "kubesched")


# the allow-list: which entry points load -----------------------------------------------------

@pytest.mark.parametrize(
    "allow",
    [
        "ListedPlugin",
        "listedplugin",
        "LISTEDPLUGIN",
        "kubesched-listed",
        "kubesched_listed",  # the module's spelling
        "Kubesched.Listed",
        "KUBESCHED__-.listed",
        "  kubesched-listed  ,",
        ",,ListedPlugin,,",
    ],
)
def test_listed_by_distribution_or_plugin_name_in_any_pip_spelling(site: Path, allow: str) -> None:
    reg = Registry.discover(allow=allow)
    assert third_party(reg) == ["ListedPlugin"]
    assert reg.get("ListedPlugin").distribution == "kubesched-listed"
    assert reg.warnings() == []
    assert imported(site) == []


def test_an_unlisted_distribution_is_never_imported(site: Path) -> None:
    reg = Registry.discover(allow="ListedPlugin")
    assert imported(site) == []
    assert "Tripwire" not in reg and "BrokenImport" not in reg
    skipped = {s.name: s for s in reg.skipped}
    assert skipped["Tripwire"] == SkippedEntryPoint("Tripwire", "kubesched-tripwire", "1.0", "kubesched_tripwire:Tripwire", SKIP_UNLISTED)
    assert skipped["Tripwire"].describe() == 'plugin "Tripwire" (kubesched-tripwire 1.0): not loaded, not listed in KUBESCHED_LOAD_PLUGINS'
    assert skipped["PriorityLabel"].reason == SKIP_UNLISTED
    assert skipped["NodeResourcesFit"].reason == SKIP_UNLISTED  # unlisted comes first: no takeover warning


def test_the_guard_does_fire_when_the_distribution_is_listed(site: Path) -> None:
    """The tripwire works: listed, its module is imported (and breaks the plugin, with its error)."""
    reg = Registry.discover(allow="kubesched-tripwire")
    assert imported(site) == ["kubesched_tripwire"]
    assert reg.get("Tripwire").describe_error() == (
        'plugin "Tripwire" from distribution kubesched-tripwire 1.0 failed to load: '
        "RuntimeError: kubesched_tripwire must not be imported"
    )


def test_set_and_empty_loads_only_the_runtimes_own_plugins(site: Path) -> None:
    reg = Registry.discover(allow="")
    assert third_party(reg) == []
    assert imported(site) == []
    assert reg.warnings() == []
    assert "NodeResourcesFit" in reg and "PrioritySort" in reg


def test_from_the_environment(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBESCHED_LOAD_PLUGINS", "kubesched_listed")
    reg = Registry.discover()
    assert third_party(reg) == ["ListedPlugin"]
    assert imported(site) == []


@pytest.mark.parametrize("allow", ["NodeResourcesFit", "kubesched", "noderesourcesfit,PrioritySort"])
def test_an_entry_naming_the_runtime_or_a_built_in_matches_and_loads_no_third_party(site: Path, allow: str) -> None:
    reg = Registry.discover(allow=allow)
    assert reg.allow_warnings == []
    assert reg.get("NodeResourcesFit").distribution == "kubesched"
    assert set(third_party(reg)) == set()


# allow-list entries that match nothing -------------------------------------------------------

@pytest.mark.parametrize(
    ("allow", "warnings"),
    [
        ("ListedPlugn", [unmatched("ListedPlugn", "ListedPlugin")]),
        ("kubesched-lsited", [unmatched("kubesched-lsited", "kubesched-listed")]),
        ("priority_label", [unmatched("priority_label", "PriorityLabel")]),
        ("zzz", [unmatched("zzz")]),
        ("zzz,ZZZ,z-z-z,zzz", [unmatched("zzz"), unmatched("z-z-z")]),
        ("ListedPlugin,nope", [unmatched("nope")]),
        ("\x1b[2Jevil", [unmatched("\\x1b[2Jevil")]),
        ("a\nfake log line", [unmatched("a\\nfake log line")]),
        ("x" * 100, [unmatched("x" * 64 + "... (36 more characters)")]),
    ],
)
def test_an_entry_that_matches_nothing_is_one_warning(
    site: Path, allow: str, warnings: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="kubesched.registry"):
        reg = Registry.discover(allow=allow)
    assert reg.warnings() == warnings
    assert [(r.name, r.levelname, r.getMessage()) for r in caplog.records] == [("kubesched.registry", "WARNING", w) for w in warnings]
    assert reg.copy().warnings() == warnings
    assert imported(site) == []


def test_no_third_party_plugin_installed_says_so() -> None:
    assert _unmatched_entries(["gpu-pack"], [("PrioritySort", "kubesched", True)]) == [
        'KUBESCHED_LOAD_PLUGINS entry "gpu-pack" matches no installed plugin distribution or plugin name;'
        " no third-party plugins are installed"
    ]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(max_size=20), max_size=4).map(",".join))
def test_any_allow_list_gives_single_line_warnings_and_imports_nothing_unlisted(site: Path, allow: str) -> None:
    reg = Registry.discover(allow=allow)
    assert imported(site) == [] or "tripwire" in allow.lower() or "takeover" in allow.lower()
    for w in reg.warnings():
        assert printable(w) == w  # nothing left to escape: one line, no control characters
    for s in reg.skipped:
        assert printable(s.describe()) == s.describe()
    assert "NodeResourcesFit" in reg and reg.get("NodeResourcesFit").distribution == "kubesched"


# built-in plugin names cannot be taken over --------------------------------------------------

DEFAULT_CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


@pytest.mark.parametrize("allow", [None, "kubesched-takeover", "NodeResourcesFit"])
def test_a_third_party_entry_point_named_like_a_built_in_is_not_loaded(
    site: Path, allow: str | None, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="kubesched.registry"):
        reg = Registry.discover(allow=allow)
    assert "kubesched_takeover" not in imported(site)
    fit = reg.get("NodeResourcesFit")
    assert (fit.distribution, fit.value, fit.broken) == ("kubesched", "kubesched.runtime.plugins.noderesources.fit:Fit", False)
    assert reg.warnings() == [TAKEOVER]
    assert [r.getMessage() for r in caplog.records] == [TAKEOVER]
    (skipped,) = [s for s in reg.skipped if s.reason == SKIP_BUILTIN]
    assert skipped.describe() == 'plugin "NodeResourcesFit" (kubesched-takeover 0.3): not loaded, "NodeResourcesFit" is the name of a built-in plugin'
    cfg = load_config_data(DEFAULT_CONFIG, installed_plugins=reg.names())
    scheduler = Scheduler(cfg, reg, SimulatedCluster([]), simulated=True)  # the default profile builds
    scheduler.shutdown()


def test_every_runtime_plugin_name_is_protected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    own = sorted(s.name for s in Registry.discover(allow="").specs() if s.distribution == "kubesched")
    site = tmp_path / "site"
    site.mkdir()
    install(site, "kubesched-grab-all", "1.0", {n: f"kubesched_grab_all:{n}" for n in own}, "kubesched_grab_all",
            'raise RuntimeError("kubesched_grab_all must not be imported")\n')
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delenv("KUBESCHED_LOAD_PLUGINS", raising=False)
    reg = Registry.discover()
    assert "kubesched_grab_all" not in sys.modules
    assert all(reg.get(n).distribution == "kubesched" and not reg.get(n).broken for n in own)
    assert reg.warnings() == [
        f'distribution "kubesched-grab-all" 1.0 registers plugin "{n}", the name of a built-in plugin:'
        f" it is not loaded, the built-in {n} is used"
        for n in own
    ]


# a broken plugin package stays reported --------------------------------------------------------

def test_a_listed_package_that_fails_to_import_is_broken_with_its_distribution(site: Path) -> None:
    reg = Registry.discover(allow="kubesched-broken-import")
    spec = reg.get("BrokenImport")
    assert spec.broken
    assert spec.describe_error() == (
        'plugin "BrokenImport" from distribution kubesched-broken-import 1.0 failed to load: '
        "ModuleNotFoundError: No module named 'kubesched_no_such_module'"
    )


# kubesched plugins -----------------------------------------------------------------------------

def test_cli_plugins_shows_what_was_skipped_and_why(site: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("KUBESCHED_LOAD_PLUGINS", "ListedPlugin,prioritylabl")
    with caplog.at_level(logging.WARNING, logger="kubesched.registry"):
        res = CliRunner().invoke(main, ["plugins"])
    assert res.exit_code == 0, res.output
    assert caplog.records == []  # printed by the command, once, not logged besides
    assert "ListedPlugin" in res.stdout and "Tripwire" not in res.stdout
    assert res.stderr.splitlines() == [
        'skipped: plugin "BestFitScore" (kubesched-gpushare 0.1.0): not loaded, not listed in KUBESCHED_LOAD_PLUGINS',
        'skipped: plugin "BrokenImport" (kubesched-broken-import 1.0): not loaded, not listed in KUBESCHED_LOAD_PLUGINS',
        'skipped: plugin "Coscheduling" (kubesched-coscheduling 0.1.0): not loaded, not listed in KUBESCHED_LOAD_PLUGINS',
        'skipped: plugin "DotProductScore" (kubesched-gpushare 0.1.0): not loaded, not listed in KUBESCHED_LOAD_PLUGINS',
        'skipped: plugin "FGDScore" (kubesched-gpushare 0.1.0): not loaded, not listed in KUBESCHED_LOAD_PLUGINS',
        'skipped: plugin "GpuClusteringScore" (kubesched-gpushare 0.1.0): not loaded, not listed in KUBESCHED_LOAD_PLUGINS',
        'skipped: plugin "GpuPackingScore" (kubesched-gpushare 0.1.0): not loaded, not listed in KUBESCHED_LOAD_PLUGINS',
        'skipped: plugin "GpuShare" (kubesched-gpushare 0.1.0): not loaded, not listed in KUBESCHED_LOAD_PLUGINS',
        'skipped: plugin "NodeResourcesFit" (kubesched-takeover 0.3): not loaded, not listed in KUBESCHED_LOAD_PLUGINS',
        'skipped: plugin "PriorityLabel" (kubesched-priority-label 0.1.0): not loaded, not listed in KUBESCHED_LOAD_PLUGINS',
        'skipped: plugin "RandomScore" (kubesched-gpushare 0.1.0): not loaded, not listed in KUBESCHED_LOAD_PLUGINS',
        'skipped: plugin "StickyNode" (kubesched-sticky-node 0.1.0): not loaded, not listed in KUBESCHED_LOAD_PLUGINS',
        'skipped: plugin "Tripwire" (kubesched-tripwire 1.0): not loaded, not listed in KUBESCHED_LOAD_PLUGINS',
        f"warning: {unmatched('prioritylabl', 'PriorityLabel')}",
    ]
    assert imported(site) == []


def test_cli_plugins_warns_once_about_a_taken_built_in_name(site: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="kubesched.registry"):
        res = CliRunner().invoke(main, ["plugins", "--json"])
    assert res.exit_code == 0, res.output
    assert caplog.records == []
    err = res.stderr.splitlines()
    assert err.count(f"warning: {TAKEOVER}") == 1
    assert 'skipped: plugin "NodeResourcesFit" (kubesched-takeover 0.3): not loaded, "NodeResourcesFit" is the name of a built-in plugin' in err
    assert imported(site) == ["kubesched_tripwire"]  # listed (no allow-list): imported, and broken


# names from users and distributions are escaped in messages ---------------------------------------

def test_unknown_plugin_name_is_escaped_and_cut() -> None:
    reg = Registry.discover(allow="")
    with pytest.raises(UnknownPluginError) as ei:
        reg.get("Prio\x1b[2J" + "x" * 80)
    assert str(ei.value).startswith('unknown plugin "Prio\\x1b[2J' + "x" * 56 + '... (24 more characters)" installed plugins: ')


def test_broken_plugin_error_with_control_characters_is_one_escaped_line() -> None:
    reg = Registry.discover(allow="")
    spec = reg.register("Evil\x1b[31m", 42, distribution="evil\ndist", version="1")
    assert spec.describe_error() == (
        'plugin "Evil\\x1b[31m" from distribution evil\\ndist 1 failed to load: entry point 42 is not a class or factory'
    )


def test_a_distribution_without_name_or_version_is_listed_as_unknown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    info = site / "noname-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\n")
    (info / "entry_points.txt").write_text("[kubesched.plugins]\nNoName = kubesched_noname_missing:X\n")
    monkeypatch.syspath_prepend(str(site))
    reg = Registry.discover(allow=None)
    assert reg.get("NoName").describe_error() == (
        'plugin "NoName" from distribution <unknown> failed to load: '
        "ModuleNotFoundError: No module named 'kubesched_noname_missing'"
    )
    assert "NoName" in Registry.discover(allow="<unknown>")  # listed by its placeholder
    assert "NoName" not in Registry.discover(allow="")


def test_control_characters_in_installed_names_are_escaped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    install(site, "kubesched-\x1b[2Jevil", "1\x07", {"NodeName": "kubesched_evil_missing:X", "Evil\x1b[0m": "kubesched_evil_missing:Y"},
            "kubesched_evil_unused", "")
    monkeypatch.syspath_prepend(str(site))
    reg = Registry.discover(allow=None)
    assert reg.get("Evil\x1b[0m").describe_error() == (
        'plugin "Evil\\x1b[0m" from distribution kubesched-\\x1b[2Jevil 1\\x07 failed to load: '
        "ModuleNotFoundError: No module named 'kubesched_evil_missing'"
    )
    assert reg.warnings() == [
        'distribution "kubesched-\\x1b[2Jevil" 1\\x07 registers plugin "NodeName", the name of a built-in plugin:'
        " it is not loaded, the built-in NodeName is used"
    ]
    assert Registry.discover(allow="nope").warnings() == [
        'KUBESCHED_LOAD_PLUGINS entry "nope" matches no installed plugin distribution or plugin name;'
        f" installed third-party plugins: kubesched-\\x1b[2Jevil (Evil\\x1b[0m, NodeName), {CONTRIB}"
    ]


def test_cli_plugins_escapes_installed_names_in_the_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    install(site, "kubesched-[red]x\x1b[2J", "1", {"Evil\x1b[0m": "kubesched_evil_missing:Y"}, "kubesched_evil_unused", "")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delenv("KUBESCHED_LOAD_PLUGINS", raising=False)
    res = CliRunner().invoke(main, ["plugins"])
    assert res.exit_code == 0, res.output
    assert "\x1b" not in res.stdout and "\x1b" not in res.stderr
    row = next(line for line in res.stdout.splitlines() if "Evil" in line)
    assert "Evil\\x1b[0m" in row and "kubesched-[red]x\\x1b[2J" in row  # markup shown as text, not applied
    assert (
        'broken: plugin "Evil\\x1b[0m" from distribution kubesched-[red]x\\x1b[2J 1 failed to load: '
        "ModuleNotFoundError: No module named 'kubesched_evil_missing'"
    ) in res.stderr.splitlines()
