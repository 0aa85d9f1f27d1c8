"""Thesis Table 6.2 (issue 23): the step that gathers its devices' 4 KiB rows (measured, or left out
with the profile's reason), the script that typesets them beside the thesis's rows, and the clear
errors on inputs they cannot use."""

import csv
import subprocess
import sys

import pytest

from pio import characterize
from ssdartifact import REPO_ROOT
from ssdartifact.tidy import write_csv
from steps import runtime, tables

SCRIPT = "figures/scripts/table_6_2.py"
REFERENCE = REPO_ROOT / "results/reference/table_6_2.csv"
ROWS = [{"thesis_device": "Intel Optane P4800X SSD", "device": "emu-optane"},
        {"thesis_device": "Intel PCIe P4510 SSD", "device": "emu-pcie"},
        {"thesis_device": "SATA ST2000NX0463 HDD", "device": "emu-hdd"}]


def alpha_k_csv(path, device, block_size=4096, k_r=6, read_saturated=True):
    """An alpha_k.csv as the characterization writes it: one random row of `device`."""
    row = {column: "" for column in characterize.ALPHA_K_COLUMNS}
    row.update(device=device, pattern="random", block_size=block_size, alpha=1.3, alpha_cost=1.1, k_r=k_r, k_w=5,
               read_saturated=read_saturated, write_saturated=True, read_lat_1_us=2071.5, write_lat_1_us=2290.25)
    write_csv(path, {**characterize.ALPHA_K_COLUMNS, "time_dilation": "D"}, [{**row, "time_dilation": 3.1}])
    return str(path)


def describe(tmp_path, alpha_k, not_run, rows=ROWS):
    out = tmp_path / "table_6_2.csv"
    tables.describe_restore_devices(rows=rows, alpha_k=alpha_k, not_run=not_run, csv_out=str(out),
                                    log=str(tmp_path / "describe.log"))
    with open(out, newline="", encoding="utf-8") as handle:
        return out, list(csv.DictReader(handle))


def typeset(*inputs, tmp_path, name="table_6_2.tex"):
    out = tmp_path / name
    result = subprocess.run([sys.executable, SCRIPT, *map(str, inputs), str(out)], cwd=REPO_ROOT,
                            capture_output=True, text=True)
    return result, (out.read_text(encoding="utf-8") if out.exists() else "")


def test_a_measured_device_gets_its_4_kib_row_and_a_left_out_one_its_reason(tmp_path):
    alpha_k = {"emu-optane": alpha_k_csv(tmp_path / "optane.csv", "emu-optane"),
               "emu-hdd": alpha_k_csv(tmp_path / "hdd.csv", "emu-hdd", k_r=1)}
    _, rows = describe(tmp_path, alpha_k, {"emu-pcie": "too slow for this profile's budget"})
    assert [(r["device"], r["status"]) for r in rows] == [("emu-optane", "measured"), ("emu-pcie", "not run"),
                                                         ("emu-hdd", "measured")]
    optane, pcie, hdd = rows
    # alpha is the cost ratio (alpha_cost), not the bandwidth ratio; the declared scale comes from the preset
    assert (optane["alpha"], optane["k_r"], optane["read_lat_1_us"]) == ("1.1", "6", "2071.5")
    assert (optane["declared_read_latency_us"], hdd["declared_read_latency_us"]) == ("2000", "7000")
    assert pcie["reason"] == "too slow for this profile's budget" and pcie["read_lat_1_us"] == "NA"


def test_a_device_neither_measured_nor_left_out_is_an_error(tmp_path):
    with pytest.raises(runtime.StepFailed, match="'emu-pcie' is neither measured nor left out with a reason"):
        describe(tmp_path, {"emu-optane": alpha_k_csv(tmp_path / "o.csv", "emu-optane"),
                            "emu-hdd": alpha_k_csv(tmp_path / "h.csv", "emu-hdd")}, {})


def test_a_characterization_without_the_4_kib_row_says_which_file(tmp_path):
    only_8k = alpha_k_csv(tmp_path / "optane.csv", "emu-optane", block_size=8192)
    with pytest.raises(runtime.StepFailed, match=r"'emu-optane': .*optane.csv: no random 4096-byte row"):
        describe(tmp_path, {"emu-optane": only_8k}, {}, rows=ROWS[:1])


def test_the_table_puts_each_measured_device_under_the_thesis_s_row(tmp_path):
    alpha_k = {"emu-optane": alpha_k_csv(tmp_path / "optane.csv", "emu-optane", k_r=64, read_saturated=False),
               "emu-hdd": alpha_k_csv(tmp_path / "hdd.csv", "emu-hdd", k_r=1)}
    measured, _ = describe(tmp_path, alpha_k, {"emu-pcie": "its writes take 28 ms. The full profile runs it."})
    result, tex = typeset(measured, REFERENCE, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = tex.splitlines()
    optane = lines.index(r"Intel Optane P4800X SSD (thesis) & 6.8 $\mu$s & 7.6 $\mu$s & 1.1 & 6 & 5 & thesis T1716 \\")
    # 2000 us declared over the thesis's 6.8 us; a k whose search found no plateau is a lower bound
    assert lines[optane + 1] == (r"emu-optane (294$\times$) & 2072 $\mu$s & 2290 $\mu$s & 1.10 & $\geq$64 & 5 & "
                                 r"measured \\")
    assert r"emu-pcie & – & – & – & – & – & not run (1) \\" in tex
    assert r"Not run in this profile: (1) emu-pcie: its writes take 28 ms. The full profile runs it." in tex
    assert r"emu-hdd (1$\times$) & 2072 $\mu$s & 2290 $\mu$s & 1.10 & 1 & 5 & measured" in tex
    assert r"(N$\times$): an emulated device, measured at its declared latency, N times the thesis device's" in tex
    assert typeset(measured, REFERENCE, tmp_path=tmp_path, name="again.tex")[1] == tex  # same inputs, same bytes


def test_a_device_the_thesis_does_not_list_is_refused_with_what_to_correct(tmp_path):
    measured, _ = describe(tmp_path, {"emu-optane": alpha_k_csv(tmp_path / "o.csv", "emu-optane")}, {},
                           rows=[{"thesis_device": "Intel Optane P4800", "device": "emu-optane"}])
    result, tex = typeset(measured, REFERENCE, tmp_path=tmp_path)
    assert result.returncode != 0 and not tex
    assert "stands for 'Intel Optane P4800', which is not a row of" in result.stderr
    assert "correct its thesis_device in configs/experiments/restore.yaml (table_6_2)" in result.stderr


def test_a_table_csv_without_its_columns_is_refused_naming_them(tmp_path):
    stale = tmp_path / "old.csv"
    stale.write_text("thesis_device,device,status\nIntel Optane P4800X SSD,emu-optane,measured\n")
    result, tex = typeset(stale, REFERENCE, tmp_path=tmp_path)
    assert result.returncode != 0 and not tex
    assert f"{stale}: no column(s) declared_read_latency_us, reason, read_lat_1_us" in result.stderr
    assert "rebuild it (rule describe_restore_devices)" in result.stderr


def test_a_real_device_runs_at_its_own_latency_and_gets_no_scale(tmp_path):
    measured = tmp_path / "real.csv"
    header = ",".join(tables.TABLE_6_2_COLUMNS)
    measured.write_text(f"{header}\nSATA ST2000NX0463 HDD,my-hdd,NA,NA,measured,,7012.5,7290,1.04,1,1,true,true,1,"
                        "results/pio/devices/my-hdd/alpha_k.csv\n")
    result, tex = typeset(measured, REFERENCE, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert r"my-hdd & 7012 $\mu$s & 7290 $\mu$s & 1.04 & 1 & 1 & measured \\" in tex and "(N$\\times$)" not in tex
