"""How rules start tools: reproducible environment, output in the log, clear failures."""

import json
import platform

import pytest

from ssdartifact import provenance
from ssdartifact.tidy import write_csv
from steps import emussd, pio, runtime
from steps.__main__ import main


def test_a_failing_tool_is_reported_with_the_end_of_its_log(tmp_path):
    log = tmp_path / "logs" / "x.log"
    with pytest.raises(runtime.StepFailed) as caught:
        runtime.run_logged(["sh", "-c", "echo first; echo 'the real reason' >&2; exit 3"], str(log))
    message = str(caught.value)
    assert "exited with 3" in message and "the real reason" in message
    assert "first" in log.read_text()


def test_tools_see_the_reproducible_date(tmp_path):
    log = tmp_path / "env.log"
    runtime.run_logged(["sh", "-c", "echo $SOURCE_DATE_EPOCH $FORCE_SOURCE_DATE"], str(log))
    assert log.read_text().split() == [runtime.REPRODUCIBLE_ENV["SOURCE_DATE_EPOCH"], "1"]


def test_with_the_docker_runtime_a_step_runs_in_its_image(monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(runtime, "_run_in_container", lambda image, name, kwargs, devices, caps:
                        calls.append((image, name, kwargs, devices, caps)))
    monkeypatch.delenv(runtime.IN_CONTAINER, raising=False)
    monkeypatch.setitem(runtime.RUNTIME, "kind", "docker")
    pio.pio_model_curve(curve="fig_3_2", csv=str(tmp_path / "c.csv"), log=str(tmp_path / "l.log"))
    emussd.emussd_saturation(binary="bin", csv="c.csv", device_stats="s.json", raw="raw",
                             fio_point={"runtime_ms": 1, "ramp_ms": 0}, log="l.log")
    assert [(c[0], c[1]) for c in calls] == [("pio", "pio_model_curve"), ("emussd", "emussd_saturation")]
    assert calls[0][2]["curve"] == "fig_3_2", "the step's keyword arguments go into the container"
    assert calls[1][3:] == (("/dev/fuse",), ("SYS_ADMIN",)), "FUSE needs its device and capability, nothing more"
    assert not (tmp_path / "c.csv").exists(), "nothing may run on the host"


def test_inside_the_container_the_step_runs_itself(monkeypatch, tmp_path):
    monkeypatch.setitem(runtime.RUNTIME, "kind", "docker")
    monkeypatch.setenv(runtime.IN_CONTAINER, "ssd-artifact/pio:0123@sha256:abc")
    monkeypatch.setenv(provenance.HOST_ENV, "the-machine")
    csv = tmp_path / "c.csv"
    call = '{"curve": "fig_3_1", "csv": "%s", "log": "%s"}' % (csv, tmp_path / "l.log")
    assert main(["run", "pio_model_curve", call]) == 0
    recorded = json.loads((tmp_path / "c.csv.json").read_text())
    assert recorded["runtime"] == {"kind": "docker", "image": "ssd-artifact/pio:0123", "image_id": "sha256:abc",
                                   "container_id": provenance.container_id()}
    assert recorded["host"]["hostname"] == "the-machine" and recorded["host"]["kernel"] == platform.release()


def test_the_container_id_is_read_from_the_mounted_hostname_file():
    container = "0f" * 32
    mountinfo = (f"812 790 8:1 /var/lib/docker/containers/{container}/resolv.conf /etc/resolv.conf rw - ext4 sda\n"
                 f"813 790 8:1 /var/lib/docker/containers/{container}/hostname /etc/hostname rw - ext4 sda\n")
    assert provenance.container_id(mountinfo) == container
    assert provenance.container_id("25 1 8:1 / / rw - ext4 /dev/sda1\n") is None


def test_only_declared_directories_outside_the_repository_are_mounted(configs, tmp_path):
    import yaml
    data = yaml.safe_load((configs / "devices.yaml").read_text())
    outside = tmp_path / "ssd" / "bench"
    data["devices"].append({"name": "my-ssd", "kind": "file", "path": str(outside), "max_bytes": 1 << 30})
    (configs / "devices.yaml").write_text(yaml.safe_dump(data))
    assert runtime.devices_bind_paths() == [outside]  # local-disk lives inside the repository
    assert outside.is_dir()


def test_raw_devices_are_paired_with_their_file_system_twins(tmp_path):
    import csv
    import json

    columns = {"device": "d", "sweep": "s", "pattern": "p", "op": "o", "threads": "t"}
    sweeps = []  # one file per device: a characterization's sweeps or its thread searches alone
    for device in ("nvme-fs", "nvme-raw", "other"):
        rows = [{"device": device, "sweep": sweep, "pattern": "random", "op": "read", "threads": 1}
                for sweep in ("threads", "queue_depth")]
        sweeps.append(tmp_path / device / "sweeps.csv")
        sweeps[-1].parent.mkdir()
        write_csv(sweeps[-1], columns, rows)
        (tmp_path / device / "sweeps.csv.json").write_text(json.dumps({"columns": columns}))
    out = tmp_path / "raw_vs_fs.csv"
    pio.pair_raw_and_file_system(sweeps=[str(s) for s in sweeps], csv_out=str(out), pairs={"nvme-raw": "nvme-fs"},
                                 log=str(tmp_path / "log"))
    paired = list(csv.DictReader(out.open()))
    assert [(r["ssd"], r["access"], r["device"]) for r in paired] == [
        ("nvme-raw", "without file system", "nvme-raw"), ("nvme-raw", "with file system", "nvme-fs")]
    assert all(r["sweep"] == "threads" for r in paired)


def test_an_unknown_step_is_refused_by_name():
    with pytest.raises(runtime.StepFailed, match="no step named 'nope'; steps: .*build_cave"):
        main(["run", "nope", "{}"])


def test_a_step_takes_keyword_arguments_only(tmp_path):
    with pytest.raises(TypeError):
        pio.pio_model_curve("fig_3_2", str(tmp_path / "c.csv"), str(tmp_path / "l.log"))
