"""Where a step runs is said by its rule, where the rule is defined (issue 44, item 2): its input
`image` names the image, and its run block calls its step through `in_its_image`
(workflow/rules/common.smk). No rule is rewritten once defined: each rule's run function is the
one its run block defines. Checked on the workflow as Snakemake loads it.

Configuration reaches a step through one door, its keyword arguments, which its rule gives: the
profile's values as params, the validated files of configs/ (common.smk's CONFIGS, validated once
per run) handed on by the run block. A step does not load configs/ again (config_hashes, which
records the files' hashes in a sidecar, reads no value)."""

from __future__ import annotations

import ast
import inspect
import json
import re
import subprocess
import sys
from functools import cache

import pytest
from ssdartifact import REPO_ROOT
from steps import ace, cave, emussd, pio, report, restore, runtime, tables

STEP_MODULES = {"ace_steps": ace, "cave_steps": cave, "emussd_steps": emussd, "pio_steps": pio,
                "report_steps": report, "restore_steps": restore, "table_steps": tables}  # as the rules import them

# Each rule as Snakemake holds it once the Snakefile is read: its run function, that function's
# source as Snakemake records it (its code-change trigger), and its inputs' names.
LOADED = """
import json, sys, types
from pathlib import Path
from snakemake.api import SnakemakeApi
from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings

with SnakemakeApi(OutputSettings(quiet={"all"})) as api:
    workflow = api.workflow(resource_settings=ResourceSettings(cores=2), snakefile=Path("Snakefile"),
                            config_settings=ConfigSettings(config={"profile": sys.argv[1]}))._workflow
    print(json.dumps({rule.name: {
        "run": None if rule.run_func is None else {
            "function": isinstance(rule.run_func, types.FunctionType),
            "name": getattr(getattr(rule.run_func, "__code__", None), "co_name", None),
            "wrapped": hasattr(rule.run_func, "__wrapped__")},
        "source": rule.run_func_src, "inputs": sorted(rule.input._names)} for rule in workflow.rules}))
"""


@cache
def loaded_rules(profile: str) -> dict:
    done = subprocess.run([sys.executable, "-c", LOADED, profile], cwd=REPO_ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def rewritten(rules: dict) -> list[str]:
    """The rules whose run function is not the one their run block defines."""
    return sorted(name for name, rule in rules.items() if rule["run"] is not None and (
        not rule["run"]["function"] or rule["run"]["wrapped"] or rule["run"]["name"] != f"__rule_{name}"))


def steps_called(source: str) -> set[str]:
    """The steps a run block calls, or hands to in_its_image to call (`<system>_steps.<step>`)."""
    return set(re.findall(r"\b\w+_steps\.(\w+)\b", source or ""))


def configuration_read(module_source: str, step: str) -> list[str]:
    """Where `step`, or a function of its module it calls (at any depth), loads configs/ itself
    (`config.<anything>(...)`): '<function>: config.<name>'."""
    functions = {node.name: node for node in ast.parse(module_source).body if isinstance(node, ast.FunctionDef)}
    seen, todo, found = set(), [step], []
    while todo:
        name = todo.pop()
        if name in seen or name not in functions:
            continue
        seen.add(name)
        for node in ast.walk(functions[name]):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "config":
                found.append(f"{name}: config.{node.func.attr}")
            elif isinstance(node, ast.Name) and node.id in functions:
                todo.append(node.id)
    return sorted(found)


@pytest.mark.parametrize("profile", ["quick", "ci"])
def test_no_rule_is_rewritten_after_its_definition(profile):
    rules = loaded_rules(profile)
    assert [name for name, rule in rules.items() if rule["run"]], "the workflow has rules with run blocks"
    assert rewritten(rules) == []


def test_a_rewritten_rule_is_caught():
    """What the Snakefile once did to every rule (steps_know_their_job): a wrapper in place of its
    run function, carrying the function's code for `snakemake --lint`."""
    defined = {"run": {"function": True, "name": "__rule_draw_figure", "wrapped": False}}
    as_wrapper_class = {"run": {"function": False, "name": "__rule_draw_figure", "wrapped": False}}
    as_wrapping_function = {"run": {"function": True, "name": "__rule_draw_figure", "wrapped": True}}
    assert rewritten({"draw_figure": defined}) == []
    assert rewritten({"draw_figure": as_wrapper_class}) == rewritten({"draw_figure": as_wrapping_function}) \
        == ["draw_figure"]


@pytest.mark.parametrize("profile", ["quick", "ci"])
def test_a_rule_whose_steps_run_in_an_image_names_it_in_its_definition(profile):
    """A rule that calls a step that runs in an image (@in_image) names the image (input `image`)
    and calls it through in_its_image; a rule with an image runs its step there."""
    rules = loaded_rules(profile)
    in_images = {name for name, rule in rules.items() if steps_called(rule["source"]) & set(runtime.STEPS)}
    assert in_images, "some rule calls a step that runs in an image"
    for name in sorted(in_images | {name for name, rule in rules.items() if "image" in rule["inputs"]}):
        assert "image" in rules[name]["inputs"], f"rule {name}: no input `image` names where its steps run"
        assert re.match(r"\s*in_its_image\(rule, input, output, log, threads, resources, \w+_steps\.\w+,",
                        rules[name]["source"] or ""), f"rule {name}: its step does not run in its image"


@pytest.mark.parametrize("profile", ["quick", "ci"])
def test_a_step_reads_no_configuration_its_rule_gives_it(profile):
    called = {(alias, step) for rule in loaded_rules(profile).values()
              for alias, step in re.findall(r"\b(\w+_steps)\.(\w+)\b", rule["source"] or "")}
    assert {alias for alias, _ in called} <= set(STEP_MODULES), "a rule calls a steps module this test does not know"
    assert len(called) > 30, "the rules' steps are found"
    for alias, step in sorted(called):
        source = inspect.getsource(STEP_MODULES[alias])
        assert configuration_read(source, step) == [], f"{alias}.{step} loads configs/ itself: pass it from its rule"


def test_a_step_that_loads_configuration_itself_is_caught():
    module = ("def _settings():\n    return config.load('experiments/ace.yaml')\n\n"
              "def step(*, experiment):\n    return helper(experiment)\n\n"
              "def helper(experiment):\n    return _settings()['fillfactor']\n\n"
              "def given(*, experiment):\n    return experiment['fillfactor']\n")
    assert configuration_read(module, "step") == ["_settings: config.load"]
    assert configuration_read(module, "given") == []
