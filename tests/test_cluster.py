"""Where a measurement goes on a SLURM cluster, the checks of the device declarations against the
cluster, a job's memory from the benchmarks (ssdartifact.cluster), and `make plan`'s arithmetic
(steps.plan). The real SLURM: tests/test_cluster_e2e.py."""

import subprocess
import sys

import pytest

from ssdartifact import REPO_ROOT, cluster, config
from steps import plan

NODES = {"n1": cluster.Node("n1", {"dev_a"}, {"main"}), "n2": cluster.Node("n2", {"dev_b"}, {"main", "ssd"})}


def test_a_declaration_becomes_the_executors_resources():
    declared = {"name": "x", "kind": "file", "cluster": {"node": "n1", "feature": "dev_a", "partition": "main"}}
    assert cluster.placement(declared) == {
        "constraint": "dev_a", "slurm_partition": "main", "slurm_extra": "--nodelist=n1 --exclusive"}
    # nothing declared: the node to itself, anywhere (Snakemake drops a resource that is None)
    assert cluster.placement({"name": "y", "kind": "emulated"}) == {
        "constraint": None, "slurm_partition": None, "slurm_extra": "--exclusive"}


def test_every_mismatch_with_the_cluster_is_named():
    declared = [
        {"name": "a", "kind": "file", "cluster": {"node": "n9"}},
        {"name": "b", "kind": "emulated", "cluster": {"feature": "dev_c"}},
        {"name": "c", "kind": "block", "cluster": {"partition": "gpu"}},
        {"name": "d", "kind": "file", "cluster": {"node": "n1", "feature": "dev_b"}},
        {"name": "e", "kind": "file"},
        {"name": "f", "kind": "emulated"},  # fine: any node
        {"name": "g", "kind": "file", "cluster": {"feature": "dev_b", "partition": "ssd"}},  # fine: n2
    ]
    problems = cluster.placement_problems(declared, NODES)
    assert problems == [
        "configs/devices.yaml: device 'a': key cluster.node: 'n9' is not a node of this cluster (sinfo -N: n1, n2)",
        "configs/devices.yaml: device 'b': key cluster.feature: 'dev_c' is not a feature of this cluster "
        "(sinfo: dev_a, dev_b)",
        "configs/devices.yaml: device 'c': key cluster.partition: 'gpu' is not a partition of this cluster "
        "(sinfo: main, ssd)",
        "configs/devices.yaml: device 'd': key cluster: no node is node 'n1', feature 'dev_b' at once",
        "configs/devices.yaml: device 'e' is a file device but does not say where it is on the cluster: add "
        "cluster: {node: ...} (or feature: or partition:)",
    ]


def test_the_schema_takes_a_placement_and_refuses_an_unknown_key(configs):
    text = (configs / "devices.yaml").read_text()
    (configs / "devices.yaml").write_text(text.replace("    preset: optane-like\n",
                                                       "    preset: optane-like\n    cluster: {node: n1}\n", 1))
    config.load("devices.yaml")
    (configs / "devices.yaml").write_text(text.replace("    preset: optane-like\n",
                                                       "    preset: optane-like\n    cluster: {host: n1}\n", 1))
    with pytest.raises(config.ConfigError, match=r"cluster: unknown key\(s\) 'host'; allowed keys: feature, node"):
        config.load("devices.yaml")


def test_memory_is_the_measured_peak_with_a_margin_and_the_jobsteps_share(tmp_path):
    first, second = tmp_path / "a.tsv", tmp_path / "b.tsv"
    first.write_text("s\th:m:s\tmax_rss\tmax_vms\n10\t0:00:10\t333.3\t900\n")
    second.write_text("s\th:m:s\tmax_rss\tmax_vms\n3\t0:00:03\tNA\tNA\n")
    assert cluster.memory_mb([first, second]) == 500 + 500  # 333.3 x 1.5 = 500, rounded up to 100 MB
    assert cluster.memory_mb([second]) is None


def test_the_slurm_profile_s_default_memory_is_read_from_it(tmp_path):
    assert cluster.profile_default(REPO_ROOT / "workflow/profiles/slurm", "mem_mb") == 2000
    (tmp_path / "config.yaml").write_text("default-resources:\n  - slurm_account=x\n")
    assert cluster.profile_default(tmp_path, "mem_mb") is None


def test_every_rule_with_a_benchmark_asks_for_the_memory_it_used():
    """A rule whose jobs record their peak (benchmark:) asks for it on a cluster through its own
    resources (common.smk's memory_as_measured), where the rule is defined: one without the entry
    would silently ask for the profile's default, however much it used."""
    import re

    missing = []
    for path in sorted((REPO_ROOT / "workflow/rules").glob("*.smk")):
        text = path.read_text()
        starts = [m for m in re.finditer(r"^( *)(?:local)?rule (\w+):", text, re.M)]
        for start, after in zip(starts, [*starts[1:], None]):
            block = text[start.start():after.start() if after else len(text)]
            if "benchmark:" in block and "**memory_as_measured()," not in block:
                missing.append(f"{path.name}: rule {start[2]}")
    assert missing == []


def test_the_critical_path_is_the_longest_chain():
    jobs = {i: plan.Job(rule, {}, [], [], None, needs=needs, hours=hours) for i, (rule, needs, hours) in enumerate([
        ("build", set(), 1.0), ("measure", {0}, 10.0), ("simulate", set(), 4.0), ("draw", {1, 2}, 0.5)])}
    hours, chain = plan.critical_path(jobs)
    assert hours == 11.5 and [job.rule for job in chain] == ["build", "measure", "draw"]


def test_the_work_of_a_job_follows_the_profiles_sizes():
    full, quick = config.load_profile("full"), config.load_profile("quick")
    job = plan.Job("run_ace_experiments", {"device": "emu-pcie-db"}, [], [], None)
    # the transactions of every run: full runs 750,000 a run, quick 2,000, and more runs
    assert plan._scale(job.rule, full, quick, job, [job]) > 750_000 / 2_000
    drawn = plan.Job("draw_figure", {"name": "fig_4_8"}, [], [], None)
    assert plan._scale(drawn.rule, full, quick, drawn, [drawn]) == 1.0


def test_make_plan_prints_each_device_the_critical_path_and_says_where_its_times_come_from():
    result = subprocess.run([sys.executable, "-m", "steps", "plan", "--profile", "full", "--nodes", "4"],
                            cwd=REPO_ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Per device" in out and "run_ace_experiments[emu-pcie-db]" in out
    assert "Critical path:" in out and "On 4 node(s): at least" in out
    measured = (REPO_ROOT / "results/runs/quick.json").exists()
    assert ("this machine's quick run" in out) if measured else ("NO quick run on this machine" in out)


def test_thread_searches_the_quick_run_did_not_record_are_estimated_from_their_fio_points():
    full = config.load_profile("full")
    point_s = (full["fio_point"]["runtime_ms"] + full["fio_point"]["ramp_ms"]) / 1000
    table = plan.Job("search_device_threads", {"device": "emu-p4500"}, [], [], None)
    figure = plan.Job("search_device_threads", {"device": "loop-ext4"}, [], [], None)
    # reads and writes, 2 log2(256) points each: 32 points at 4 KiB, and as many at 8 KiB for Figure 2.7
    assert plan._searches_s(full, table) == 32 * point_s
    assert plan._searches_s(full, figure) == 64 * point_s


def test_a_measurements_run_seconds_come_from_its_tidy_csv(tmp_path):
    ace = tmp_path / "results/ace/devices/d/runs.csv"
    ace.parent.mkdir(parents=True)
    ace.write_text("transactions,warmup_transactions,wall_s\n100,50,2.0\n100,0,1.5\n")
    cave = tmp_path / "results/cave/devices/d/runs.csv"
    cave.parent.mkdir(parents=True)
    cave.write_text("experiment,runtime_s,load_s\nrun,0.5,0.25\ntimeline,1.0,NA\n")
    (cave.parent / "baselines.csv").write_text(
        "status,runtime_s,preprocess_s,time_limit_s\nran,3.0,1.0,20\ntimed_out,,2.0,20\ncannot_run,,,20\n")
    assert plan.run_seconds("run_ace_experiments", "d", tmp_path) == 2.0 * 1.5 + 1.5  # the warm-up at pgbench's rate
    assert plan.run_seconds("run_cave_experiments", "d", tmp_path) == 1.75
    assert plan.run_seconds("run_cave_baselines", "d", tmp_path) == 3.0 + 1.0 + 20 + 2.0  # stopped: its limit
    assert plan.run_seconds("run_cave_baselines", "elsewhere", tmp_path) is None


def test_a_measurements_runs_scale_with_their_work_and_the_rest_with_their_number(tmp_path, monkeypatch):
    """A quick CAVE job of 100 s, 40 of them its runs: the full profile's job is 40 s x the edges'
    factor + 60 s x the runs' factor, not 100 s x the edges' factor."""
    job = plan.Job("run_cave_experiments", {"device": "emu-pcie"}, [], [], "b.tsv")
    monkeypatch.setattr(plan, "dag", lambda profile: {1: plan.Job(job.rule, dict(job.wildcards), [], [], "b.tsv")})
    monkeypatch.setattr(plan, "quick_seconds", lambda jobs, root: ({job.name: 100.0}, "a test's"))
    monkeypatch.setattr(plan, "quick_run_seconds", lambda jobs, root: {job.name: 40.0})
    monkeypatch.setitem(plan.WORK, job.rule, lambda profile, each: 1000.0 if profile["name"] == "full" else 1.0)
    monkeypatch.setitem(plan.RUNS, job.rule, lambda profile, each: 3.0 if profile["name"] == "full" else 1.0)
    jobs, _ = plan.estimate("full", tmp_path)
    assert jobs[1].hours * 3600 == pytest.approx(40 * 1000 + 60 * 3)
    assert "runs (of 100 s, 40) x 1,000, the rest x 3" in jobs[1].source
