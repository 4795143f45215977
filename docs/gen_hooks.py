"""Regenerate docs/hooks.md from the hook specifications: ``python docs/gen_hooks.py``.

tests/unit/test_docs.py checks that docs/hooks.md is up to date with the specs."""

from __future__ import annotations

import inspect
import pathlib

from kubesched.sdk import hookspecs
from kubesched.sdk.points import EXTENSION_POINTS, OTHER_HOOKS

HEADER = """# Hook reference

Generated from `sdk/src/kubesched/sdk/hookspecs.py` by `python docs/gen_hooks.py`; the
docstrings are the contract. Mark implementations with `@kubesched.sdk.hookimpl`; a method may
declare fewer arguments than the spec. `None` returned from a hook means Success; an exception,
or a return value the contract does not allow, becomes a Status with code Error for that pod.

| extension point (config name) | hooks |
|---|---|
"""


def signature(name: str) -> str:
    fn = getattr(hookspecs, name)
    sig = inspect.signature(fn)
    params = ", ".join(sig.parameters)
    return f"{name}({params})"


def hook_names() -> list[str]:
    out: list[str] = []
    for point in EXTENSION_POINTS:
        for h in point.hook_names:
            if h not in out:
                out.append(h)
    out.insert(2, "events_to_register")
    out += [h.name for h in OTHER_HOOKS if h.name not in out]
    return out


def render() -> str:
    lines = [HEADER]
    for point in EXTENSION_POINTS:
        lines.append(f"| `{point.name}` | {', '.join(f'`{h}`' for h in point.hook_names)} |\n")
    lines.append("| (any plugin) | `events_to_register` |\n")
    lines.append("| (plugins enabled at filter or score) | `sign_pod` |\n")
    for name in hook_names():
        doc = inspect.getdoc(getattr(hookspecs, name)) or ""
        lines.append(f"\n## `{signature(name)}`\n\n{doc}\n")
    return "".join(lines)


if __name__ == "__main__":
    path = pathlib.Path(__file__).with_name("hooks.md")
    path.write_text(render(), encoding="utf-8")
    print(f"wrote {path}")
