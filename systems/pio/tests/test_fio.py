"""fio measurement points: the command we run and the tidy row we derive from fio's JSON."""

import json
from pathlib import Path

import pytest

from pio import fio, sweep


def point(**changes):
    base = dict(op="read", pattern="random", block_size=4096, threads=2, iodepth=1, engine="psync",
                runtime_ms=300, ramp_ms=100, file_size=1 << 20)
    return fio.FioPoint(**{**base, **changes})


def test_command_is_direct_time_based_with_one_file_per_job(tmp_path):
    args = fio.command(point(op="write", threads=4, iodepth=8), tmp_path, tmp_path / "o.json")
    for expected in ("--rw=randwrite", "--direct=1", "--time_based", "--numjobs=4", "--thread", "--iodepth=8",
                     "--runtime=300ms", "--ramp_time=100ms", "--group_reporting", "--output-format=json",
                     "--percentile_list=50:99:99.9:99.99"):
        assert expected in args
    assert [p.name for p in fio.job_files(point(threads=3), tmp_path)] == ["point.0.0", "point.1.0", "point.2.0"]


@pytest.mark.parametrize("bad", [dict(op="trim"), dict(pattern="zigzag"), dict(threads=0), dict(file_size=512)])
def test_invalid_points_are_refused(bad):
    with pytest.raises(ValueError):
        point(**bad)


def test_real_fio_run_gives_a_tidy_row(tmp_path):
    p = point()
    fio.run(p, tmp_path, tmp_path / "raw.json")
    row = fio.tidy_row(tmp_path / "raw.json", p, "scratch")
    assert set(row) == set(fio.TIDY_COLUMNS)
    assert row["device"] == "scratch" and row["threads"] == 2 and row["iops"] > 0
    assert row["lat_p50_us"] <= row["lat_p99_us"] <= row["lat_p99_99_us"]
    assert row["bandwidth_bytes_s"] == pytest.approx(row["iops"] * 4096, rel=0.01)
    assert 0.2 < row["duration_s"] < 1.0


def test_a_run_without_completed_ios_is_an_error(tmp_path):
    report = {"jobs": [{"job_runtime": 1000, "read": {"total_ios": 0, "iops": 0, "bw_bytes": 0,
                                                       "clat_ns": {"mean": 0}}}]}
    (tmp_path / "raw.json").write_text(json.dumps(report))
    with pytest.raises(RuntimeError, match="completed no read"):
        fio.tidy_row(tmp_path / "raw.json", point(), "x")


def test_write_points_can_ask_for_steady_state_and_record_it(tmp_path):
    p = point(op="write", steady_state="iops_slope:2%", steady_window_ms=60000)
    args = fio.command(p, tmp_path, tmp_path / "o.json")
    assert "--steadystate=iops_slope:2%" in args and "--ss_dur=60000ms" in args
    side = {"total_ios": 10, "iops": 1.0, "bw_bytes": 4096,
            "clat_ns": {"mean": 1000, "percentile": {v: 1000 for v in fio.PERCENTILES.values()}}}
    for attained, expected in ((1, "reached"), (0, "not reached")):
        report = {"jobs": [{"job_runtime": 2000, "write": side, "steadystate": {"attained": attained}}]}
        (tmp_path / "raw.json").write_text(json.dumps(report))
        assert fio.tidy_row(tmp_path / "raw.json", p, "d")["steady_state"] == expected
    report = {"jobs": [{"job_runtime": 2000, "read": side}]}
    (tmp_path / "raw.json").write_text(json.dumps(report))
    assert fio.tidy_row(tmp_path / "raw.json", point(), "d")["steady_state"] == fio.UNCHECKED


def test_on_a_block_device_each_job_gets_a_region_of_its_own():
    args = fio.command(point(threads=4), fio.Target(block_device="/dev/nvme9n1"), "o.json")
    assert "--filename=/dev/nvme9n1" in args and not any(a.startswith("--directory") for a in args)
    assert f"--offset_increment={point(threads=4).file_size}" in args  # job i at i x its region's size
    assert not any(a.startswith("--offset_increment") for a in fio.command(point(), Path("d"), "o.json"))
    with pytest.raises(ValueError):
        fio.Target()


def test_interference_reads_beside_throttled_writers_on_separate_files(tmp_path):
    foreground = point(threads=1)
    background = point(op="write", threads=3)
    args = sweep.interference_command(foreground, background, 1000, fio.Target(directory=tmp_path), tmp_path / "o")
    assert args.index("--name=foreground") < args.index("--name=background") < args.index("--rate=,1000")
    assert "--filename=point.0.0" in args and "--filename=point.1.0:point.2.0:point.3.0" in args
    alone = sweep.interference_command(foreground, None, 0, fio.Target(directory=tmp_path), tmp_path / "o")
    assert "--name=background" not in alone


def test_real_interference_run_reports_foreground_reads(tmp_path):
    rows = sweep.interference(point(threads=1), point(op="write", threads=2), 4e6, [0, 0.5],
                              fio.Target(directory=tmp_path), tmp_path / "raw", "scratch",
                              progress=open("/dev/null", "w"))
    assert [r["background_fraction"] for r in rows] == [0, 0.5]
    assert rows[0]["background_bytes_s"] == 0 and rows[1]["background_bytes_s"] > 0
    assert rows[1]["background_target_bytes_s"] == 2e6
    assert all(r["lat_mean_us"] > 0 for r in rows)


def test_the_thread_search_lengthens_its_points_to_forty_one_thread_latencies(tmp_path, monkeypatch):
    """A slow request (33 ms in a 0.3 s point) would leave few requests per thread and a point that
    reads low from fio's drain at its end: the search's first point sets the others' length."""
    from pio import characterize
    measured = []

    def fake_measure(p, target, raw_dir, device, progress, label="", run=1):
        measured.append(p)
        return {"bandwidth_bytes_s": 16384 * min(p.threads, 5) / 0.0334, "lat_mean_us": 33400.0}

    monkeypatch.setattr(sweep, "measure", fake_measure)
    rule = characterize.Rule(max_threads=16, plateau_growth=0.1, saturation_fraction=0.95, latency_knee_factor=1.2)
    sweep.thread_search(point(runtime_ms=300, block_size=16384), fio.Target(directory=tmp_path), tmp_path, "d", rule)
    assert measured[0].threads == 1 and measured[0].runtime_ms == 300
    assert {p.runtime_ms for p in measured[1:]} == {1336}  # 40 x 33.4 ms
    assert sweep.long_enough(point(runtime_ms=300), 1000.0).runtime_ms == 300  # never shortened
