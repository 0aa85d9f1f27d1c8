"""The workflow through Snakemake's SLURM executor on a real SLURM (tests/slurm_cluster.py: Debian's
slurm-wlm and munge, two device nodes on this one host): the ci profile's outputs are the native
run's bytes (its committed checksums), a device on a node the cluster lacks stops the run before
anything runs, and a job the scheduler kills leaves nothing that looks complete and is redone by
the next run (docs/cluster.md). Slow: `make test-e2e` runs it in its native lane; `-m slurm` selects it."""

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import yaml
from ssdartifact import cluster as cluster_placement
from slurm_cluster import jobs, missing_tools, single_host_cluster

pytestmark = [pytest.mark.e2e, pytest.mark.slurm]

NODES = {"n1": ["dev_a"], "n2": ["dev_b"]}


@pytest.fixture(scope="module")
def cluster():
    missing = missing_tools()
    if missing:
        pytest.skip(f"SLURM is not installed ({', '.join(missing)}): Debian's slurm-wlm and munge")
    if os.geteuid() != 0:
        pytest.skip("starting slurmd and munged needs root")
    top = Path(tempfile.mkdtemp(prefix="artifact-slurm-", dir="/tmp"))
    try:
        with single_host_cluster(top, NODES) as env:
            yield env
    finally:
        shutil.rmtree(top, ignore_errors=True)


def make(root, env, *args):
    env = {k: v for k, v in env.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    result = subprocess.run(["make", *args], cwd=root, env=env, capture_output=True, text=True)
    return result.returncode, result.stdout + result.stderr


def test_the_ci_profile_through_slurm_gives_the_native_bytes(clone, cluster):
    code, out = make(clone, cluster, "reproduce", "PROFILE=ci", "CLUSTER=slurm")
    assert code == 0, out[-4000:]
    ran = [job for job in jobs(cluster) if job["comment"].startswith("rule_")]
    assert ran and all(job["state"] == "COMPLETED" for job in ran), ran
    # deterministic jobs go anywhere: both nodes took some
    assert {job["node"] for job in ran} == set(NODES), ran
    # nothing ran here before: a job asks for the profile's default memory until a job of its rule
    # has finished, then for what that rule used (no more than its largest record). A group of the
    # figures' small jobs (the profile's groups) asks for its members' sum, whichever of the two each has.
    profile = clone / "workflow/profiles/slurm"
    default = cluster_placement.profile_default(profile, "mem_mb")
    settings = yaml.safe_load((profile / "config.yaml").read_text())
    grouped = [entry.split("=")[0] for entry in settings["groups"]]
    groups = {entry.split("=")[1] for entry in settings["groups"]}  # a group job's name: "<group>_<its rules>"
    group_size = max(int(entry.split("=")[1]) for entry in settings["group-components"])
    records = clone / "results/benchmarks"

    def measured(rule):
        return cluster_placement.memory_mb([*records.glob(f"{rule}.tsv"), *records.glob(f"{rule}/*.tsv")]) or 0

    asked = {}
    for job in ran:
        rule = job["comment"].removeprefix("rule_").split("_wildcards_")[0]
        asked.setdefault(rule, []).append(int(job["memory"].removesuffix("M")))
    assert any(default in mbs for mbs in asked.values()), asked
    most_in_a_group = group_size * max(default, *map(measured, grouped))
    for rule, mbs in asked.items():
        fits = ((lambda mb: cluster_placement.SNAKEMAKE_IN_JOB_MB < mb <= most_in_a_group)
                if rule in grouped or rule.split("_")[0] in groups
                else (lambda mb: mb == default or cluster_placement.SNAKEMAKE_IN_JOB_MB < mb <= measured(rule)))
        assert all(map(fits, mbs)), (rule, mbs, measured(rule))
    code, out = make(clone, cluster, "verify", "PROFILE=ci")  # the committed manifest of the native run
    assert code == 0 and "verify: OK" in out, out[-3000:]
    assert "Nothing to be done" in make(clone, cluster, "reproduce", "PROFILE=ci", "CLUSTER=slurm")[1]


def test_a_device_on_a_node_the_cluster_lacks_stops_before_anything_runs(clone, cluster):
    declared = clone / "configs/devices.yaml"
    original = declared.read_text()
    declared.write_text(original.replace("  - name: emu-optane\n", "  - name: emu-optane\n    cluster: {node: n9}\n")
                        .replace("  - name: emu-pcie\n", "  - name: emu-pcie\n    cluster: {feature: dev_c}\n"))
    before = {job["id"] for job in jobs(cluster)}
    try:
        code, out = make(clone, cluster, "reproduce", "PROFILE=lab", "CLUSTER=slurm")
    finally:
        declared.write_text(original)
    assert code != 0
    assert "the declared devices do not match the SLURM cluster; nothing was run" in out, out[-3000:]
    assert "device 'emu-optane': key cluster.node: 'n9' is not a node of this cluster (sinfo -N: n1, n2)" in out
    assert "device 'emu-pcie': key cluster.feature: 'dev_c' is not a feature of this cluster" in out
    # no new job id (the earlier tests' finished jobs may have left squeue meanwhile: MinJobAge)
    assert {job["id"] for job in jobs(cluster)} <= before, "nothing may be submitted"


def test_a_job_cancelled_by_the_scheduler_leaves_no_result_and_a_rerun_redoes_only_it(clone, cluster):
    victim = "simulate_restore_figures"
    outputs = sorted((clone / "results/restore").glob("fig_6_*.csv"))
    assert outputs
    for path in outputs:  # the job that writes them runs again
        path.unlink()
    # it ran through SLURM before: it asks for what it used then (its rule's `resources:`)
    measured = cluster_placement.memory_mb([clone / f"results/benchmarks/{victim}.tsv"])
    env = {k: v for k, v in cluster.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    run = subprocess.Popen(["make", "reproduce", "PROFILE=ci", "CLUSTER=slurm"], cwd=clone, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 300
        while not (running := [j for j in jobs(cluster, "RUNNING") if j["comment"].startswith(f"rule_{victim}")]):
            assert run.poll() is None and time.monotonic() < deadline, "the job never ran"
            time.sleep(0.5)
        subprocess.run(["scancel", running[0]["id"]], env=cluster, check=True)
        assert running[0]["memory"] == f"{measured}M", running
        out = run.communicate(timeout=300)[0]
    finally:
        if run.poll() is None:
            run.terminate()
    assert run.returncode != 0 and "CANCELLED" in out, out[-3000:]
    # no result that looks complete: the job's outputs are absent (or Snakemake marked them incomplete)
    assert not any(path.exists() for path in outputs), [p for p in outputs if p.exists()]
    code, out = make(clone, cluster, "reproduce", "PROFILE=ci", "CLUSTER=slurm")
    assert code == 0, out[-3000:]
    assert f"rule {victim}" in out or f"localrule {victim}" in out
    assert "rule pio_model_curve" not in out, "only the cancelled job and what needs it run again"
    code, out = make(clone, cluster, "verify", "PROFILE=ci")
    assert code == 0 and "verify: OK" in out, out[-3000:]
