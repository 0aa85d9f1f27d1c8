"""ReStore's rules (workflow/rules/restore.smk, steps.restore, restore.plan, restore.results): its configs are
validated with clear messages, the planner gives each profile its CSVs, the parameters of a
figure come from the right place, and the derived columns the figures and claims read are right."""

import csv
import re

import pytest
import yaml

from restore import experiment as restore_experiment, plan, results
from ssdartifact import claims, config
from steps import restore as restore_steps
from steps.runtime import StepFailed


def _edit(path, change):
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


def _error(profile="quick"):
    with pytest.raises(config.ConfigError) as caught:
        config.check_all(profile)
    return str(caught.value)


@pytest.mark.parametrize(("relative", "change", "expected"), [
    ("experiments/restore.yaml", lambda d: d.update(server_model="pooled"),
     "configs/experiments/restore.yaml: key server_model: 'pooled' is not allowed; allowed values: 'shared', 'split'"),
    ("experiments/restore.yaml", lambda d: d.update(tiers=["restore-tier-1", "tier-x", "restore-tier-3"]),
     "configs/experiments/restore.yaml: key tiers[1]: 'tier-x' is neither a preset of configs/emussd_presets.yaml"),
    ("emussd_presets.yaml", lambda d: d["presets"]["restore-tier-2"].update(alpha=0.5),
     "configs/experiments/restore.yaml: key tiers[1]: 'restore-tier-2' has alpha 0.5; ReStore's tiers need alpha >= 1"),
    ("experiments/ace.yaml", lambda d: d["simulator"]["fig_4_14a"].update(device="local-disk"),
     "configs/experiments/ace.yaml: key simulator.fig_4_14a.device: 'local-disk' is neither a preset"),
    ("experiments/restore.yaml", lambda d: d["figures"]["fig_6_8"].update(workloads=["5hf90", "hot"]),
     "configs/experiments/restore.yaml: key figures.fig_6_8.workloads[1]: 'hot' does not match the required form"),
    ("experiments/restore.yaml", lambda d: d.update(policies=["tlfu", "arc"]),
     "configs/experiments/restore.yaml: key policies[1]: 'arc' is not allowed; allowed values: 'static', 'tlfu'"),
    ("experiments/restore.yaml", lambda d: d["traces"].update(tpcc={"path": "t.csv", "format": "blktrace"}),
     "configs/experiments/restore.yaml: key traces.tpcc.format: 'blktrace' is not allowed; allowed values: 'page'"),
    ("profiles/quick.yaml", lambda d: d["restore"].update(pages=10),
     "configs/profiles/quick.yaml: key restore.pages: 10 is out of range; it must be >= 100"),
    ("profiles/quick.yaml", lambda d: d["restore"]["figures"].update(fig_6_99={}),
     "configs/profiles/quick.yaml: key restore.figures: unknown key(s) 'fig_6_99'; allowed keys: crosscheck, "
     "fig_6_1, fig_6_10"),
    ("profiles/quick.yaml", lambda d: d["restore"]["figures"].update(fig_6_12={"groups": [[10000, 1000000]]}),
     "configs/profiles/quick.yaml: key restore.figures.fig_6_12.groups:"),
    ("experiments/restore.yaml", lambda d: d["sensitivity"].update(figures=["fig_6_13"]),
     "configs/experiments/restore.yaml: key sensitivity.figures[0]: 'fig_6_13' is not allowed"),
    ("experiments/restore.yaml", lambda d: d["sensitivity"]["parameters"].update(rl_lr=[0.1]),
     "configs/experiments/restore.yaml: key sensitivity.parameters.rl_lr:"),
    ("profiles/quick.yaml", lambda d: d["restore"]["sensitivity"].update(requests=10),
     "configs/profiles/quick.yaml: key restore.sensitivity.requests: 10 is out of range"),
])
def test_bad_values_name_file_key_and_allowed(configs, relative, change, expected):
    _edit(configs / relative, change)
    assert expected in _error()


def test_shipped_profiles_plan_their_csvs():
    quick = plan.outputs(config.load_profile("quick")["restore"])
    assert "results/restore/fig_6_8.csv" in quick["deterministic"]
    assert quick["measured"] == ["results/restore/table_6_6.csv", "results/restore/crosscheck.csv",
                                 "results/restore/crosscheck_pairs.csv", *plan.ORIGINAL_CSVS]
    ci = plan.outputs(config.load_profile("ci")["restore"])
    assert ci["measured"] == []  # the ci profile measures nothing: all its outputs are checksummed
    assert len(ci["deterministic"]) == 10
    assert plan.outputs(None) == {"simulated": [], "sensitivity": [], "deterministic": [], "measured": []}
    assert set(plan.SENSITIVITY_CSVS) <= set(quick["deterministic"])  # virtual time: checksummed
    recorded = plan.outputs(config.load_profile("quick")["restore"], recorded_trace=True)
    assert recorded["simulated"] == quick["simulated"] and "results/restore/fig_6_8.csv" in recorded["deterministic"]
    assert [p for p in recorded["measured"] if p not in quick["measured"]] == [
        "results/restore/fig_6_7.csv", "results/restore/fig_6_13.csv", "results/restore/table_6_5.csv"]


def test_figure_params_precedence():
    experiment = config.load("experiments/restore.yaml")
    profile = {"pages": 1000, "requests": 5000, "seeds": [2],
               "figures": {"fig_6_8": {"tier_grid": {"t1_pct": [3], "t2_pct": [8]}}, "crosscheck": {}}}
    p = plan.figure_params(experiment, profile, "fig_6_8")
    assert p["tier_grid"] == {"t1_pct": [3], "t2_pct": [8]}  # the profile's block wins
    assert p["workloads"] == ["5hf90", "10hf90", "10hf80"]  # the experiment's block
    assert (p["pages"], p["requests"], p["seeds"]) == (1000, 5000, [2])  # the profile's size
    assert p["options"]["cpu_timing"] is False  # virtual time only: deterministic
    assert "cpu_timing" not in experiment["options"]  # the loaded config is not changed
    cross = plan.figure_params(experiment, profile, "crosscheck")
    assert cross["pages"] == experiment["figures"]["crosscheck"]["pages"]  # its own size wins
    assert "cpu_timing" not in cross["options"]


def test_a_profile_that_builds_the_server_records_tpcc_unless_a_tpcc_trace_is_configured():
    experiment = config.load("experiments/restore.yaml")
    quick = config.load_profile("quick")
    assert plan.recorded_tpcc(experiment, quick) == {"warehouses": 1, "transactions": 10000}
    assert plan.with_recorded_traces(experiment, quick)["traces"]["tpcc"] == {"path": plan.TPCC_TRACE,
                                                                            "format": "postgres"}
    assert "tpcc" not in experiment["traces"]  # the loaded config is not changed
    assert plan.trace_inputs(plan.with_recorded_traces(experiment, quick), "fig_6_13") == [plan.trace_csv("tpcc")]
    assert plan.recorded_tpcc(experiment, config.load_profile("ci")) is None  # no server: no trace
    given = {**experiment, "traces": {"tpcc": {"path": "mine.trace", "format": "postgres"}}}
    assert plan.recorded_tpcc(given, quick) is None and plan.with_recorded_traces(given, quick) is given
    with pytest.raises(plan.RestoreError, match="restore.tpcc_trace records TPC-C on the ACE server"):
        plan.recorded_tpcc(experiment, {**quick, "ace_server": False})


def _row(policy, data, up, group="g", slower=100):
    return {"workload": group, "t1_pct": 3, "t2_pct": 8, "seed": 1, "policy": policy, "data_access_us": data,
            "migrations_t2_t1": up, "migrations_t3_t2": 0, "accesses_t2": slower // 2, "accesses_t3": slower // 2}


def test_group_columns_rank_and_compare_with_restore_and_static():
    rows = [_row("static", 100.0, 0), _row("tlfu", 150.0, 40), _row("restore", 120.0, 10), _row("tlru", 150.0, 80)]
    results.add_group_columns(rows, results.GROUPS["fig_6_8"])
    by = {r["policy"]: r for r in rows}
    assert [by[p]["rank"] for p in ("static", "restore", "tlfu", "tlru")] == [1, 2, 3, 3]  # ties share a rank
    assert by["static"]["adaptive_rank"] is None and by["restore"]["adaptive_rank"] == 1
    assert by["tlfu"]["restore_speedup"] == 1.25 and by["tlru"]["restore_migration_reduction"] == 8
    assert by["restore"]["normalized_data_access"] == 1.2
    assert by["static"]["restore_migration_reduction"] == 0
    # what decides (issue 43): each run's promotions per Tier 2-3 access, and the group's headroom, tLFU
    # against the oracle Static
    assert by["tlru"]["promotion_rate"] == 0.8 and by["restore"]["promotion_rate"] == 0.1
    assert all(r["headroom"] == 1.5 for r in rows)
    alone = [_row("restore", 120.0, 0, slower=0)]
    results.add_group_columns(alone, results.GROUPS["fig_6_8"])
    assert alone[0]["promotion_rate"] is None and alone[0]["headroom"] is None  # no Tier 2-3 access, no tLFU


def test_crosscheck_pairs_flag_disagreements_beyond_the_tolerance():
    rows = [{"engine": e, "seed": 1, "policy": p, "data_access_us": v}
            for e, values in (("sim", {"tlfu": 100, "exd": 200, "temp": 101}),
                              ("emu", {"tlfu": 110, "exd": 90, "temp": 100}))
            for p, v in values.items()]
    pairs = {(r["policy_a"], r["policy_b"]): r for r in results.crosscheck_pairs(rows, 0.05)}
    assert not pairs[("tlfu", "exd")]["agree"] and pairs[("tlfu", "exd")]["beyond_tolerance"]
    assert not pairs[("tlfu", "temp")]["agree"] and not pairs[("tlfu", "temp")]["beyond_tolerance"]  # a near-tie
    assert pairs[("tlfu", "temp")]["rule_based"]


def test_a_missing_trace_names_the_config_key(tmp_path):
    with pytest.raises(StepFailed, match=r"key traces.tpcc.path: .*missing.trace does not exist"):
        restore_steps.convert_restore_trace(name="tpcc", source=str(tmp_path / "missing.trace"),
                                            trace_format="postgres", csv_out=str(tmp_path / "out.csv"),
                                            log=str(tmp_path / "log"))


def test_a_postgres_buffer_trace_becomes_a_page_trace(tmp_path):
    source = tmp_path / "buffer.trace"
    source.write_text("1,1663,5,16384,0,7,R\n1,1663,5,16384,0,7,W\n2,1663,5,16384,0,9,R\n")
    out = tmp_path / "traces" / "tpcc.csv"
    restore_steps.convert_restore_trace(name="tpcc", source=str(source), trace_format="postgres", csv_out=str(out),
                                        log=str(tmp_path / "log"))
    assert out.read_text().splitlines() == ["page,op", "0,R", "0,W", "1,R"]
    assert (tmp_path / "traces" / "tpcc.csv.json").exists()


def test_a_page_trace_without_line_breaks_is_refused_before_it_is_copied(tmp_path):
    source = tmp_path / "tpcc.csv"
    with open(source, "wb") as handle:
        handle.truncate(2 << 30)  # 2 GiB of NUL bytes that take no room on disk
    with pytest.raises(StepFailed, match=r"key traces.tpcc: .*tpcc.csv:1: a line longer than 4096 bytes"):
        restore_steps.convert_restore_trace(name="tpcc", source=str(source), trace_format="page",
                                            csv_out=str(tmp_path / "out" / "tpcc.csv"), log=str(tmp_path / "log"))
    assert not list((tmp_path / "out").iterdir())


def test_a_small_figure_is_deterministic(tmp_path):
    """Two runs of a small Figure 6.8 give the same bytes (virtual time, CPU timing off)."""
    from restore import engine  # noqa: PLC0415

    binary = engine.build()  # a no-op when it is up to date; never a silent skip
    experiment = config.load("experiments/restore.yaml")
    profile = {"pages": 500, "requests": 4000, "seeds": [1],
               "figures": {"fig_6_8": {"workloads": ["5hf90"], "tier_grid": {"t1_pct": [3], "t2_pct": [8]}}}}
    params = {"fig_6_8": plan.figure_params(experiment, profile, "fig_6_8")}
    outputs = []
    for name in ("a", "b"):
        csv_out = tmp_path / name / "fig_6_8.csv"
        csv_out.parent.mkdir()
        restore_steps.simulate_restore_figures(figures=["fig_6_8"], binary=str(binary), params=params,
                                               csvs=[str(csv_out)], log=str(tmp_path / name / "log"), jobs=2)
        outputs.append(csv_out.read_bytes())
    assert outputs[0] == outputs[1]
    with open(tmp_path / "a" / "fig_6_8.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["policy"] for r in rows] == experiment["policies"]
    assert all(r["cpu_us"] == "NA" for r in rows)
    assert list(rows[0]) == results.csv_columns("fig_6_8")


# ---- the sensitivity study (configs/experiments/restore.yaml, sensitivity) ----

def _sensitivity(parameters, values=None):
    experiment = config.load("experiments/restore.yaml")
    experiment["sensitivity"] = {"figures": ["fig_6_8"], "parameters": parameters}
    return experiment, {"pages": 500, "requests": 4000, "seeds": [1], "figures": {},
                        "sensitivity": {"values": values or {}}}


def test_the_sensitivity_grid_is_one_parameter_at_a_time_around_the_chapters_values():
    experiment, profile = _sensitivity({"rl_lr": [0.01, 0.1, 0.3],
                                        "arrival": ["closed", {"arrival": "poisson", "rate": 1000}]})
    points = plan.sensitivity_points(experiment, profile)
    assert [(p["parameter"], p["value"], p["position"], p["is_default"], p["options"]) for p in points] == [
        ("rl_lr", "0.01", -1, False, {"rl_lr": 0.01}), ("rl_lr", "0.1", 0, True, {}),
        ("rl_lr", "0.3", 1, False, {"rl_lr": 0.3}), ("arrival", "closed", 0, True, {}),
        ("arrival", "poisson rate=1000", 1, False, {"arrival": "poisson", "rate": 1000})]
    profile["sensitivity"]["values"] = {"rl_lr": [0.1, 0.3]}  # a coarser grid: a subset
    assert [p["value"] for p in plan.sensitivity_points(experiment, profile)][:2] == ["0.1", "0.3"]
    # the shipped grids plan (the quick one is coarser), each parameter's chapter value once
    for name in ("quick", "full"):
        shipped = config.load_profile(name)["restore"]
        points = plan.sensitivity_points(config.load("experiments/restore.yaml"), shipped)
        # rl_p_init: issue 43
        assert sum(p["is_default"] for p in points) == len({p["parameter"] for p in points}) == 10


@pytest.mark.parametrize(("parameters", "values", "expected"), [
    ({"rl_beta": [0.1, 0.2]}, None,
     "key sensitivity.parameters.rl_beta: the chapter's value is not stated; add rl_beta to `options`"),
    ({"rl_lr": [0.01, 0.3]}, None,
     "key sensitivity.parameters.rl_lr: the chapter's value (0.1) must be among the values exactly once"),
    ({"rl_lr": [0.01, 0.1]}, {"rl_lr": [0.05, 0.1]},
     "key restore.sensitivity.values.rl_lr: [0.05] not among configs/experiments/restore.yaml"),
    ({"rl_lr": [0.01, 0.1]}, {"rl_lr": [0.01]},
     "key restore.sensitivity.values.rl_lr: the chapter's value (0.1) must be one of them"),
    ({"rl_lr": [0.01, 0.1]}, {"rl_b": [10]}, "key restore.sensitivity.values: rl_b not among"),
])
def test_a_bad_sensitivity_grid_names_its_key_before_anything_runs(parameters, values, expected):
    with pytest.raises(plan.RestoreError, match=re.escape(expected)):
        plan.sensitivity_points(*_sensitivity(parameters, values))


def test_the_chapters_point_gives_the_claims_reports_verdicts_and_a_point_changes_the_runs(tmp_path):
    """At the chapter's values the sensitivity study's runs are the figure's own (the same
    parameters, so the same CSV) and its verdicts the claims report's on that CSV; a point that
    changes ReStore's learning rate changes ReStore's runs and no other policy's."""
    from restore import engine  # noqa: PLC0415

    binary = str(engine.build())  # a no-op when it is up to date; never a silent skip
    experiment, profile = _sensitivity({"rl_lr": [0.1, 0.0001]})
    profile["figures"] = {"fig_6_8": {"workloads": ["5hf90", "10hf90"], "tier_grid": {"t1_pct": [1, 3],
                                                                                        "t2_pct": [4, 8]}}}
    params = plan.sensitivity_params(experiment, profile)
    assert params == {"fig_6_8": plan.figure_params(experiment, profile, "fig_6_8")}
    main = tmp_path / plan.RESULTS / "fig_6_8.csv"
    main.parent.mkdir(parents=True)
    restore_steps.simulate_restore_figures(figures=["fig_6_8"], binary=binary, params=params, csvs=[str(main)],
                                           log=str(tmp_path / "log"), jobs=2)
    checked = restore_steps.sensitivity_claims(config.load("claims")["claims"], ["fig_6_8"])
    assert len(checked) == 7 and all(c["id"].startswith("restore-6.") for c in checked)
    report = {row["id"]: row["status"] for row in claims.evaluate_all(checked, root=tmp_path)}
    points = plan.sensitivity_points(experiment, profile)
    rows = restore_steps.sensitivity_verdicts(binary, params, points, checked, jobs=2)
    assert {r["claim"]: r["status"] for r in rows if r["is_default"]} == report
    assert set(report.values()) == {"pass", "fail"}  # both verdicts occur: the comparison can tell them apart

    runs = {}
    for point in points:
        run = {**params["fig_6_8"], "options": {**params["fig_6_8"]["options"], **point["options"]}, "binary": binary}
        runs[point["value"]] = {(r["policy"], r["workload"], r["t1_pct"], r["t2_pct"]): r["data_access_us"]
                                for r in restore_experiment.fig_6_8(run)}
    changed = {key[0] for key in runs["0.1"] if runs["0.1"][key] != runs["0.0001"][key]}
    assert changed == {"restore"}


def test_table_s8_says_per_configuration_who_is_fastest_how_often_restore_promotes_and_the_headroom(tmp_path):
    import importlib.util
    spec = importlib.util.spec_from_file_location("s8", "figures/scripts/supp_restore_decides.py")
    s8 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(s8)
    rows = [_row("static", 100.0, 0), _row("tlfu", 150.0, 4), _row("temp", 160.0, 2), _row("restore", 120.0, 97)]
    results.add_group_columns(rows, results.GROUPS["fig_6_8"])
    path = tmp_path / "runs.csv"
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    s8.main(str(path), str(path), str(tmp_path / "s8.tex"))
    table = (tmp_path / "s8.tex").read_text()
    # fastest ReStore (rank 1), promoting on 97 % of its Tier 2-3 accesses, tLFU 4 %, TEMP 2 %, Static 1.5 x tLFU
    assert "g & 3 /\\allowbreak{} 8 & ReStore & 1 & 97 & 4 & 2 & 1.50 \\\\" in table
