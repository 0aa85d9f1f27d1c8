"""A figure's or table's chain, from its inventory entry to everything that makes it: the script,
the CSVs it reads, the rule and step that write each CSV, the system code the step runs and the
configuration keys that set its devices and parameters (configs/inventory/: each item's
`reproduced`, and `routes`, how each CSV is made). The rules take their outputs from the routes
(outputs, pattern), `make which FIG=4.8` prints a chain, and docs/figures.md, with every chain a
guide page quotes, is written from them (`make figures-doc`; tests/test_routes.py checks all three
against the workflow).

    python -m ssdartifact.routes which figure 4.8 [--profile quick]
    python -m ssdartifact.routes docs [--check]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from . import REPO_ROOT, config
from .files import atomic_write_text
from .paper import is_diagram, output_of

NAME = "{name}"  # the one wildcard of a route's output pattern
PROFILE = "{profile}"  # the profile's file in a route's config: configs/profiles/<profile>.yaml
KINDS = {"figure": "figures", "table": "tables", "supplementary": "supplementary"}
FIGURES_PAGE = "docs/figures.md"
REFERENCE = "results/reference/"


class RouteError(LookupError):
    pass


def _inventory(inventory: dict | None) -> dict:
    return inventory if inventory is not None else config.load("inventory")


def _regex(pattern: str) -> re.Pattern:
    return re.compile(re.escape(pattern).replace(re.escape(NAME), r"(?P<name>[^/]+)") + "$")


def route_of(csv: str, inventory: dict | None = None) -> tuple[dict, str | None]:
    """The route that makes `csv`, and the name its pattern matched (None for a literal path). A
    literal path wins over a pattern, so results/ace/table_4_1.csv is not one of ACE's figures."""
    matches = [(NAME in pattern, route, match["name"] if NAME in pattern else None)
               for route in _inventory(inventory)["routes"] for pattern in route["outputs"]
               if (match := _regex(pattern).match(csv))]
    if not matches:
        raise RouteError(f"{csv}: no route of configs/inventory/ (key routes) makes it")
    _, route, name = min(matches, key=lambda match: match[0])
    return route, name


def _route(rule: str, inventory: dict | None) -> dict:
    for route in _inventory(inventory)["routes"]:
        if route["rule"] == rule:
            return route
    raise RouteError(f"rule {rule}: no route of configs/inventory/ (key routes) names it")


def outputs(rule: str, names=(), inventory: dict | None = None) -> dict[str, str]:
    """What `rule` writes, by name: each literal output under its file's stem, and its pattern
    filled with each of `names` (e.g. the figures a profile runs) under that name."""
    made = {}
    for pattern in _route(rule, inventory)["outputs"]:
        if NAME in pattern:
            made.update({name: pattern.replace(NAME, name) for name in names})
        else:
            made[Path(pattern).stem] = pattern
    return made


def pattern(rule: str, wildcard: str = "name", inventory: dict | None = None) -> str:
    """`rule`'s output pattern, its wildcard named for the rule (e.g. results/pio_model/{curve}.csv)."""
    [found] = [p for p in _route(rule, inventory)["outputs"] if NAME in p]
    return found.replace(NAME, "{" + wildcard + "}")


def item(kind: str, number: str, inventory: dict | None = None) -> dict:
    """The inventory entry of figure, table or supplementary figure `number` (e.g. "4.8", "S1")."""
    if kind not in KINDS:
        raise RouteError(f"{kind}: allowed kinds: {', '.join(KINDS)}")
    for entry in _inventory(inventory).get(KINDS[kind], []):
        if entry["id"] == number:
            return entry
    raise RouteError(f"{kind} {number} is not in configs/inventory/")


def _config(route: dict, name: str | None, profile: str) -> dict[str, list[str]]:
    def fill(text: str) -> str:
        return text.replace(PROFILE, profile).replace(NAME, name or NAME)
    return {fill(file): [fill(key) for key in keys] for file, keys in route["config"].items()}


def chain(entry: dict, profile: str = "<profile>", inventory: dict | None = None) -> dict:
    """Everything that makes `entry`: its script, output and drawing rule, and the CSVs it reads,
    grouped by how they are made (rule, step, the rules it gathers, system code, config files and keys)."""
    reproduced = entry.get("reproduced")
    if reproduced is None:
        return {"id": entry["id"], "caption": entry["caption"], "reproduced": False}
    output = output_of(entry)
    drawn_by = "draw_diagram" if is_diagram(entry) else "draw_figure" if output.endswith(".pdf") else "typeset_table"
    made = {"id": entry["id"], "caption": entry["caption"], "reproduced": True, "script": reproduced["script"],
            "output": output, "drawn_by": drawn_by, "partial": reproduced.get("partial"), "reference": [], "inputs": []}
    for csv in reproduced["inputs"]:
        if csv.startswith(REFERENCE):
            made["reference"].append(csv)
            continue
        route, name = route_of(csv, inventory)
        how = {"rule": route["rule"], "step": route["step"], "after": route.get("after", []),
               "system": route["system"], "config": _config(route, name, profile)}
        same = [group for group in made["inputs"] if {k: v for k, v in group.items() if k != "csvs"} == how]
        if same:
            same[0]["csvs"].append(csv)
        else:
            made["inputs"].append({"csvs": [csv], **how})
    return made


def _keys(keys: list[str], quote: str = "") -> str:
    return ": " + ", ".join(f"{quote}{key}{quote}" for key in keys) if keys else " (all of it)"


def as_text(kind: str, made: dict) -> str:
    """A chain as `make which` prints it, from the item down to its configuration."""
    lines = [f"{kind.capitalize()} {made['id']}: {made['caption']}"]
    if not made["reproduced"]:
        return lines[0] + "\n  not reproduced by this artifact (configs/inventory/ has no `reproduced` for it)"
    lines.append(f"  {made['output']} <- rule {made['drawn_by']} <- script {made['script']}")
    if made["partial"]:
        lines.append(f"  (in part: {made['partial']})")
    if not made["inputs"] and not made["reference"]:
        lines.append("    (a TikZ picture: it reads no data)")
    for group in made["inputs"]:
        lines.append(f"    <- {', '.join(group['csvs'])}")
        lines.append(f"       <- rule {group['rule']} -> step {group['step']}")
        lines += [f"          from rule {r['rule']} -> step {r['step']}" for r in group["after"]]
        lines.append(f"       system: {', '.join(group['system']) or '(the step alone)'}")
        lines += [f"       config: {file}{_keys(keys)}" for file, keys in group["config"].items()]
    lines += [f"    <- {csv} (the thesis's published numbers: results/reference/)" for csv in made["reference"]]
    return "\n".join(lines)


def as_markdown(kind: str, made: dict, heading: bool = True) -> str:
    """A chain as docs/figures.md (under a heading) and the guide's pages show it. No caption: the
    page changes only when what makes an item does (`make which` prints the caption)."""
    name = f"{kind.capitalize()} {made['id']}"
    lines = [f"### {name}", ""] if heading else []
    if not made["reproduced"]:
        return "\n".join(lines + ["Not reproduced by this artifact."])
    reads = "which reads:" if made["inputs"] or made["reference"] else "a TikZ picture: it reads no data."
    if made["partial"]:
        lines += [f"Reproduced in part: {made['partial']}.", ""]
    lines.append(("" if heading else f"**{name}**: ")
                 + f"`{made['output']}` <- rule `{made['drawn_by']}` <- `{made['script']}`, {reads}")
    if made["inputs"] or made["reference"]:
        lines.append("")
    for group in made["inputs"]:
        lines.append("- " + ", ".join(f"`{csv}`" for csv in group["csvs"]))
        lines.append(f"  - made by rule `{group['rule']}` (`{group['step']}`)")
        if group["after"]:
            lines.append("  - from " + ", ".join(f"rule `{r['rule']}` (`{r['step']}`)" for r in group["after"]))
        lines.append("  - system: " + (", ".join(f"`{path}`" for path in group["system"]) or "the step alone"))
        lines += [f"  - config: `{file}`{_keys(keys, '`')}" for file, keys in group["config"].items()]
    lines += [f"- `{csv}`: the thesis's published numbers" for csv in made["reference"]]
    return "\n".join(lines)


INTRO = """\
Generated from `configs/inventory/` (each item's `reproduced`, and `routes`) by `make
figures-doc`: do not edit it by hand. `make which FIG=4.8` (or `TABLE=4.3`, `SUPP=S1`) prints one
chain, with the item's caption and the profile's file named. A chain starts at the item: the
output, the rule that draws it and its script. Then, for each CSV the script reads: the rule that
writes it and its step (`file:function`), the rules whose outputs that rule gathers, the system
code the step runs, and the configuration keys that set its devices and parameters. `<profile>` is
the profile's name (`quick` by default); a key ending in `*` stands for each of its panels, one
ending in `?` is set by some profiles only."""


def figures_page(inventory: dict | None = None) -> str:
    """docs/figures.md: every figure's and table's chain, in thesis order."""
    inventory = _inventory(inventory)
    parts = ["# Every figure and table, and what makes it", "", INTRO, ""]
    for kind, section in KINDS.items():
        parts += [f"## {section.capitalize()}", ""]
        for entry in inventory.get(section, []):
            parts += [as_markdown(kind, chain(entry, inventory=inventory)), ""]
    return "\n".join(parts)


# A guide page quotes a chain between these markers, e.g. <!--route:figure 4.8-->...<!--/route-->,
# and `make figures-doc` writes it there.
QUOTED = re.compile(r"(<!--route:(?P<kind>\w+) (?P<id>[\w.]+)-->\n).*?(<!--/route-->)", re.S)


def quote_chains(text: str, inventory: dict | None = None) -> str:
    def chain_of(match: re.Match) -> str:
        made = chain(item(match["kind"], match["id"], inventory), inventory=inventory)
        return match[1] + as_markdown(match["kind"], made, heading=False) + "\n" + match[4]
    return QUOTED.sub(chain_of, text)


def generated_pages(inventory: dict | None = None, root: Path = REPO_ROOT) -> dict[Path, str]:
    """Every page the routes write: docs/figures.md, and each guide page that quotes a chain."""
    inventory = _inventory(inventory)
    pages = {root / FIGURES_PAGE: figures_page(inventory)}
    for page in sorted((root / "docs").glob("*.md")):
        text = page.read_text(encoding="utf-8")
        if QUOTED.search(text):
            pages[page] = quote_chains(text, inventory)
    return pages


def stale_pages(root: Path = REPO_ROOT) -> list[str]:
    """The pages whose chains differ from the routes' (or are missing)."""
    return [str(path.relative_to(root)) for path, text in generated_pages(root=root).items()
            if not path.exists() or path.read_text(encoding="utf-8") != text]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ssdartifact.routes", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    which = commands.add_parser("which", help="print one item's chain")
    which.add_argument("kind", choices=list(KINDS))
    which.add_argument("id")
    which.add_argument("--profile", default="quick")
    docs = commands.add_parser("docs", help=f"write {FIGURES_PAGE} and the chains the guide quotes")
    docs.add_argument("--check", action="store_true", help="only say which pages are stale")
    args = parser.parse_args(argv)
    try:
        if args.command == "which":
            print(as_text(args.kind, chain(item(args.kind, args.id), profile=args.profile)))
            return 0
        if args.check:
            stale = stale_pages()
            for page in stale:
                print(f"{page}: stale; run make figures-doc", file=sys.stderr)
            return 1 if stale else 0
        for path, text in generated_pages().items():
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                atomic_write_text(path, text)
                print(f"wrote {path.relative_to(REPO_ROOT)}")
        return 0
    except RouteError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
