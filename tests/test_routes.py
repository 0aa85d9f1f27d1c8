"""Each figure's and table's chain (configs/inventory/: its entry and `routes`; ssdartifact.routes)
against the workflow itself: the rule a route names writes the CSV in Snakemake's DAG and calls the
step named, the rules it gathers feed it, its system code and configuration keys exist, the script
takes the CSVs its entry names, and docs/figures.md and the chains the guide quotes are current.
The DAG is a forced dry run of the quick and ci profiles (a few seconds each)."""

from __future__ import annotations

import copy
import fnmatch
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
import yaml
from ssdartifact import REPO_ROOT, config, routes
from ssdartifact.paper import output_of, reproduced_items

PROFILES = ("quick", "ci")
INVENTORY = config.load("inventory")


@cache
def jobs(profile: str) -> tuple[dict, ...]:
    """Every job of the profile's DAG: its rule, inputs and outputs (snakemake -n --forceall)."""
    done = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--forceall", "--rerun-incomplete",
                           "--config", f"profile={profile}"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    found = []
    for line in done.stdout.splitlines():
        if match := re.match(r"(?:local)?rule (\w+):$", line):
            found.append({"rule": match[1], "input": [], "output": []})
        elif found and (match := re.match(r"    (input|output): (.*)$", line)):
            found[-1][match[1]] = match[2].split(", ")
    assert found, done.stdout[-3000:]
    return tuple(found)


def read_csvs(inventory: dict) -> set[str]:
    """The result CSVs the figures and tables read (not the thesis's reference data)."""
    return {csv for entry in reproduced_items(inventory) for csv in entry["reproduced"]["inputs"]
            if not csv.startswith(routes.REFERENCE)}


def wrong_rules(inventory: dict, profile: str) -> list[str]:
    """Each CSV a figure reads whose route names another rule than the one that writes it here."""
    wanted = read_csvs(inventory)
    return [f"{csv}: written by rule {job['rule']}, its route says {routes.route_of(csv, inventory)[0]['rule']}"
            for job in jobs(profile) for csv in job["output"]
            if csv in wanted and routes.route_of(csv, inventory)[0]["rule"] != job["rule"]]


def test_every_csv_a_figure_or_table_reads_has_a_route():
    for csv in sorted(read_csvs(INVENTORY)):
        routes.route_of(csv, INVENTORY)  # raises RouteError, naming the CSV, when none makes it


@pytest.mark.parametrize("profile", PROFILES)
def test_the_rule_a_route_names_writes_the_csv(profile):
    assert wrong_rules(INVENTORY, profile) == []


def test_a_route_naming_the_wrong_rule_is_caught():
    # A route naming the rule that runs Figure 4.8's experiments (run_ace_experiments) where the one
    # that writes its CSV (gather_ace_results) belongs must fail the check above.
    swapped = copy.deepcopy(INVENTORY)
    [ace] = [route for route in swapped["routes"] if route["rule"] == "gather_ace_results"]
    ace["rule"] = "run_ace_experiments"
    assert any(line.startswith("results/ace/fig_4_8.csv: written by rule gather_ace_results")
               for line in wrong_rules(swapped, "quick"))


# A route the profiles checked may not run here, and when they do.
RUNS_ONLY_ELSEWHERE = {"run_restore_original": "the authors' ReStore's pinned source reachable (configs/sources.yaml)"}


def test_every_route_is_checked_by_a_profile():
    made = {csv for profile in PROFILES for job in jobs(profile) for csv in job["output"]} & read_csvs(INVENTORY)
    checked = {routes.route_of(csv, INVENTORY)[0]["rule"] for csv in made}
    assert {route["rule"] for route in INVENTORY["routes"]} - checked <= set(RUNS_ONLY_ELSEWHERE)


def _rule_blocks() -> dict[str, str]:
    """Each rule's text in workflow/rules/*.smk, and the steps modules the rules' aliases stand for."""
    blocks = {}
    for smk in sorted((REPO_ROOT / "workflow" / "rules").glob("*.smk")):
        parts = re.split(r"^\s*rule (\w+):\n", smk.read_text(encoding="utf-8"), flags=re.M)
        blocks.update(zip(parts[1::2], parts[2::2]))
    return blocks


def _step_aliases() -> dict[str, str]:
    aliases = {}
    for smk in sorted((REPO_ROOT / "workflow" / "rules").glob("*.smk")):
        for names in re.findall(r"^from steps import (.+)$", smk.read_text(encoding="utf-8"), flags=re.M):
            for module, alias in re.findall(r"(\w+) as (\w+)", names):
                aliases[alias] = module
    return aliases


def _route_steps():
    for route in INVENTORY["routes"]:
        yield route["rule"], route["step"]
        for before in route.get("after", []):
            yield before["rule"], before["step"]


@pytest.mark.parametrize("rule,step", sorted(set(_route_steps())))
def test_the_rule_calls_the_step_named(rule, step):
    blocks, aliases = _rule_blocks(), _step_aliases()
    assert rule in blocks, f"rule {rule} is not in workflow/rules/*.smk"
    file, function = step.split(":")
    assert re.search(rf"^def {function}\(", (REPO_ROOT / file).read_text(encoding="utf-8"), flags=re.M), step
    # called, or handed to in_its_image to call (common.smk)
    called = {(aliases.get(alias), name) for alias, name in re.findall(r"(\w+)\.(\w+)\b", blocks[rule])}
    assert (Path(file).stem, function) in called, f"rule {rule} does not call {step}"


# A rule a route gathers that the profiles checked may not show feeding it, and when it does.
FEEDS_ONLY_ELSEWHERE = {
    ("raw_vs_fs", "characterize_device"): "a raw device and its file-system twin, both characterized",
    ("gather_cave_results", "run_cave_baselines"): "the baselines' pinned sources reachable (configs/sources.yaml)",
}


def test_the_rules_a_route_gathers_feed_it():
    for route in INVENTORY["routes"]:
        feeding = set()
        for profile in PROFILES:
            made_by = {path: job["rule"] for job in jobs(profile) for path in job["output"]}
            feeding |= {made_by[path] for job in jobs(profile) if job["rule"] == route["rule"]
                        for path in job["input"] if path in made_by and path.endswith(".csv")}
        named = {before["rule"] for before in route.get("after", [])}
        assert feeding <= named, f"rule {route['rule']} also gathers {sorted(feeding - named)}"
        assert named - feeding <= {before for rule, before in FEEDS_ONLY_ELSEWHERE if rule == route["rule"]}


def test_the_system_code_exists():
    missing = [path for route in INVENTORY["routes"] for path in route["system"] if not (REPO_ROOT / path).exists()]
    assert missing == []


def _has_key(data, key: str) -> bool:
    """Whether dotted `key` is in `data` (a trailing * matches panels; a trailing ?, an optional key, is
    looked up in every shipped profile: one must set it)."""
    if key.endswith("?"):
        return _has_key(data, key[:-1]) or any(_has_key(yaml.safe_load(path.read_text(encoding="utf-8")), key[:-1])
                                               for path in sorted((REPO_ROOT / "configs" / "profiles").glob("*.yaml")))
    for part in key.split("."):
        if not isinstance(data, dict):
            return False
        if part.endswith("*"):
            return any(fnmatch.fnmatchcase(name, part) for name in data)
        if part not in data:
            return False
        data = data[part]
    return True


@pytest.mark.parametrize("profile", PROFILES)
def test_the_configuration_keys_exist(profile):
    """Each key of a CSV's chain, for each CSV a figure reads that this profile makes."""
    missing = []
    made = {csv for job in jobs(profile) for csv in job["output"]} & read_csvs(INVENTORY)
    for csv in sorted(made):
        reading = {"id": "-", "caption": "-", "reproduced": {"script": "figures/scripts/x.R", "inputs": [csv]}}
        entry = routes.chain(reading, profile=profile, inventory=INVENTORY)
        for file, keys in entry["inputs"][0]["config"].items():
            path = REPO_ROOT / file
            if not path.exists():
                missing.append(f"{csv}: {file} does not exist")
                continue
            data = yaml.safe_load(path.read_text(encoding="utf-8")) if keys else None
            missing += [f"{csv}: {file} has no key {key}" for key in keys if not _has_key(data, key)]
    assert missing == []


def _takes(script: Path) -> int | None:
    """How many CSVs a script takes before its output (None: as many as it is given)."""
    text = script.read_text(encoding="utf-8")
    if match := re.search(r"figure_args\((\d+)\)", text):
        return int(match[1])
    if match := re.search(r"len\(sys\.argv\) != (\d+)", text):
        return int(match[1]) - 2
    assert "main(*sys.argv[1:])" in text or script.suffix == ".tex", f"{script}: how many CSVs does it take?"
    return None if script.suffix == ".py" else 0


@pytest.mark.parametrize("entry", reproduced_items(INVENTORY), ids=lambda entry: entry["id"])
def test_the_script_takes_the_csvs_its_entry_names(entry):
    script, inputs = entry["reproduced"]["script"], entry["reproduced"]["inputs"]
    assert _takes(REPO_ROOT / script) in (len(inputs), None), script
    for profile in PROFILES:
        for job in jobs(profile):
            if output_of(entry) in job["output"]:
                assert script in job["input"] and set(inputs) <= set(job["input"]), (profile, job)


def test_docs_figures_md_and_the_quoted_chains_are_current():
    assert routes.stale_pages() == [], "run make figures-doc"


def test_a_literal_output_wins_over_a_pattern():
    assert routes.route_of("results/ace/table_4_1.csv", INVENTORY)[0]["rule"] == "describe_ace_devices"
    assert routes.route_of("results/ace/fig_4_8.csv", INVENTORY) == (routes._route("gather_ace_results", INVENTORY),
                                                                     "fig_4_8")
    with pytest.raises(routes.RouteError, match="results/nowhere.csv"):
        routes.route_of("results/nowhere.csv", INVENTORY)


def test_a_quoted_chain_edited_by_hand_is_stale(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / routes.FIGURES_PAGE).write_text(routes.figures_page(INVENTORY), encoding="utf-8")
    page = tmp_path / "docs" / "chapter.md"
    page.write_text("Figure 4.8:\n<!--route:figure 4.8-->\nrule `gather_ace_results` <- `run_ace_experiments`\n"
                    "<!--/route-->\n", encoding="utf-8")
    assert routes.stale_pages(root=tmp_path) == ["docs/chapter.md"]
    page.write_text(routes.quote_chains(page.read_text(encoding="utf-8"), INVENTORY), encoding="utf-8")
    assert routes.stale_pages(root=tmp_path) == []
    quoted = page.read_text(encoding="utf-8")
    assert "made by rule `gather_ace_results` (`workflow/steps/ace.py:gather_ace_results`)" in quoted
    assert "from rule `run_ace_experiments` (`workflow/steps/ace.py:run_ace_experiments`)" in quoted
