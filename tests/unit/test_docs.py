"""Every hook is documented in docs/hooks.md with its exact signature, and exercised by a test
(as datasette's test_docs.py does)."""

from __future__ import annotations

import importlib.util
import pathlib
import re

import pytest

from kubesched.sdk import EXTENSION_POINT_HOOKS, OTHER_HOOKS

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _gen():  # docs/gen_hooks.py is not a package
    spec = importlib.util.spec_from_file_location("gen_hooks", ROOT / "docs" / "gen_hooks.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


GEN = _gen()
HOOKS = GEN.hook_names()


def test_every_extension_point_hook_is_listed() -> None:
    listed = {h for hs in EXTENSION_POINT_HOOKS.values() for h in hs} | set(OTHER_HOOKS)
    assert set(HOOKS) == listed


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_documented_with_exact_signature(hook: str) -> None:
    text = (ROOT / "docs" / "hooks.md").read_text(encoding="utf-8")
    assert f"## `{GEN.signature(hook)}`" in text, f"docs/hooks.md lacks {GEN.signature(hook)}; run python docs/gen_hooks.py"


def test_hooks_md_is_up_to_date() -> None:
    assert (ROOT / "docs" / "hooks.md").read_text(encoding="utf-8") == GEN.render()


@pytest.mark.parametrize("hook", HOOKS)
def test_hook_has_a_test(hook: str) -> None:
    """Some test under tests/ implements the hook with @hookimpl (so it runs in a framework)."""
    pattern = re.compile(rf"def {hook}\(")
    found = any(pattern.search(p.read_text(encoding="utf-8")) for p in (ROOT / "tests").rglob("test_*.py"))
    assert found, f"no test implements the {hook} hook"


def _modules(package: pathlib.Path) -> list[str]:
    out = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package)
        if rel.parts[0] == "plugins" or path.name in ("__init__.py", "__main__.py"):
            continue
        out.append(path.stem)
    for sub in sorted(p for p in package.iterdir() if p.is_dir() and (p / "__init__.py").exists()):
        out.append(sub.name + "/")
    return out


@pytest.mark.parametrize(
    "package",
    ["runtime/src/kubesched/runtime", "sdk/src/kubesched/sdk", "runtime/src/kubesched/testing"],
)
def test_architecture_page_names_every_module(package: str) -> None:
    """docs/architecture.md describes each module's job: a module it does not name is new
    or renamed, and the page must say what it does."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = [m for m in _modules(ROOT / package) if f"`{m}" not in text and f"{m}.py" not in text]
    assert not missing, f"docs/architecture.md does not describe: {missing}"
