"""The house's layers (DESIGN.md, "Layers"): imports point down only, and no modules import each
other in a loop. Read from the code's own import statements (those inside functions too).

    rules (workflow/rules/*.smk) -> steps (workflow/steps) -> systems (systems/*/<package>) -> core (ssdartifact)

A system imports only itself and the core: the systems are separate rooms. Programs beside a
system (systems/*/bench) and the labs are top-level entry points, like the rules."""

from __future__ import annotations

import ast
from pathlib import Path

from ssdartifact import REPO_ROOT

SYSTEMS = ("pio", "emussd", "ace", "cave", "restore")
PACKAGES = {"ssdartifact": REPO_ROOT / "core" / "ssdartifact", "steps": REPO_ROOT / "workflow" / "steps",
            **{name: REPO_ROOT / "systems" / name / name for name in SYSTEMS}}
ALLOWED = {"ssdartifact": {"ssdartifact"}, "steps": {"steps", "ssdartifact", *SYSTEMS},
           **{name: {name, "ssdartifact"} for name in SYSTEMS}}


def modules() -> dict[str, Path]:
    found = {}
    for package, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder.parent).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The project's modules that module `name` imports (a package's name stands for its __init__)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    imported = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                imported.add(target)
    return imported


def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imports_of(name, path, set(found)) for name, path in found.items()}


def test_every_import_points_down_or_within_its_own_room():
    upward = [f"{module} imports {target}" for module, targets in graph().items() for target in sorted(targets)
              if target.split(".")[0] not in ALLOWED[module.split(".")[0]]]
    assert not upward, "imports that break the layers:\n" + "\n".join(upward)


def test_no_modules_import_each_other_in_a_loop():
    edges = graph()
    loops, state = [], {}

    def visit(module, path):
        state[module] = "open"
        for target in sorted(edges[module]):
            if state.get(target) == "open":
                loops.append(" -> ".join([*path[path.index(target):], target]))
            elif target not in state:
                visit(target, [*path, target])
        state[module] = "done"

    for module in sorted(edges):
        if module not in state:
            visit(module, [module])
    assert not loops, "import loops:\n" + "\n".join(loops)


def test_the_check_reads_the_imports_it_must_refuse(tmp_path):
    """The checker is not blind: an upward import and a relative one are both seen."""
    source = tmp_path / "x.py"
    source.write_text("from steps import runtime\ndef f():\n    from . import config\n")
    assert imports_of("ssdartifact.x", source, {"steps", "steps.runtime", "ssdartifact", "ssdartifact.config"}) == \
        {"steps.runtime", "ssdartifact.config"}
