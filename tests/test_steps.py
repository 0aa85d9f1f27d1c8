"""How rules start tools: reproducible environment, output in the log, clear failures."""

import io
import json
import platform
import socket
import subprocess

import pytest

from ssdartifact import REPO_ROOT, provenance
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


def test_with_the_docker_runtime_a_step_runs_in_its_rules_image(monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(runtime, "_run_in_container", lambda name, kwargs, devices, caps, scratch:
                        calls.append((runtime.current_job().image, name, kwargs, devices, caps, scratch)))
    monkeypatch.delenv(runtime.IN_CONTAINER, raising=False)
    monkeypatch.setitem(runtime.RUNTIME, "kind", "docker")
    with runtime.running(runtime.Job("pio", (), 1, None)):
        pio.pio_model_curve(curve="fig_3_2", csv=str(tmp_path / "c.csv"), log=str(tmp_path / "l.log"))
    with runtime.running(runtime.Job("emussd", (), 1, None)):
        emussd.emussd_saturation(saturation={"device": "emu-x"}, binary="bin", csv="c.csv", device_stats="s.json",
                                 raw="raw", fio_point={"runtime_ms": 1, "ramp_ms": 0}, log="l.log")
    assert [(c[0], c[1]) for c in calls] == [("pio", "pio_model_curve"), ("emussd", "emussd_saturation")]
    assert calls[0][2]["curve"] == "fig_3_2", "the step's keyword arguments go into the container"
    assert calls[1][3:5] == (("/dev/fuse",), ("SYS_ADMIN",)), "FUSE needs its device and capability, nothing more"
    assert calls[0][5] == [], "a curve writes its declared outputs only"
    assert calls[1][5] == [REPO_ROOT / "scratch/emussd", REPO_ROOT / "scratch/device-locks",
                           REPO_ROOT / "scratch/local-disk"], \
        "a step that opens a device writes emussd's scratch, the devices' locks and the declared file devices"
    assert not (tmp_path / "c.csv").exists(), "nothing may run on the host"


STDIN = []  # what _docker_step's commands were given on standard input


def _docker_step(monkeypatch, job=None):
    """pio_model_curve in docker mode as its rule's run block calls it (in_its_image: running its
    job); the docker command it runs."""
    from ssdartifact.containers import build, engine, hardened

    commands = []
    monkeypatch.delenv(runtime.IN_CONTAINER, raising=False)
    monkeypatch.setitem(runtime.RUNTIME, "kind", "docker")
    monkeypatch.setattr(build, "ensure_image", lambda name: f"ssd-artifact/{name}:0")
    monkeypatch.setattr(engine, "image_id", lambda tag: "sha256:1")
    monkeypatch.setattr(hardened, "give_back", lambda paths: commands.append(("given back", paths)))
    monkeypatch.setattr(runtime.subprocess, "run", lambda command, **kwargs: commands.append(command)
                        or STDIN.append(kwargs.get("input")) or subprocess.CompletedProcess(command, 0, "", ""))
    call = lambda: pio.pio_model_curve(curve="fig_3_1", csv="results/pio_model/fig_3_1.csv",  # noqa: E731
                                       log="results/logs/pio_model_curve/fig_3_1.log")
    if job is None:
        call()
    else:
        with runtime.running(job):
            call()
    assert getattr(runtime._JOB, "current", None) is None, "the job ends with its run block"
    return commands


def test_a_step_in_docker_mode_gets_its_jobs_image_outputs_threads_and_memory(monkeypatch, tmp_path):
    paths = [tmp_path / "out/fig_3_1.csv", tmp_path / "out/fig_3_1.csv.json", tmp_path / "logs/fig_3_1.log"]
    command, given = _docker_step(monkeypatch, runtime.Job("pio", tuple(map(str, paths)), 3, 1500))
    mounts = [command[i + 1] for i, part in enumerate(command) if part == "--mount"]
    writable = [tmp_path / "logs", tmp_path / "out"]  # the outputs' folders, made by the host user
    assert mounts == [f"type=bind,source={REPO_ROOT},target={REPO_ROOT},readonly",
                      *(f"type=bind,source={path},target={path}" for path in writable)]
    assert given == ("given back", writable)
    assert command[command.index("--cpus") + 1] == "3" and command[command.index("--memory") + 1] == "1500m"
    env = [command[i + 1] for i, part in enumerate(command) if part == "-e"]
    assert f"{provenance.HOST_ENV}={socket.gethostname()}" in env
    assert f"{runtime.IN_CONTAINER}=ssd-artifact/pio:0@sha256:1" in env
    assert command[command.index("ssd-artifact/pio:0") + 1:][-3:] == ["steps", "run", "pio_model_curve"]
    # its keyword arguments on standard input: an argument holds at most 128 KiB, the claims are half that
    assert "--interactive" in command and json.loads(STDIN[-1])["curve"] == "fig_3_1"

    # a rule that declares none (common.smk, declares_memory: Snakemake's guess is no declaration)
    command, _ = _docker_step(monkeypatch, runtime.Job("report", tuple(map(str, paths)), 1, None))
    assert command[command.index("--memory") + 1] == f"{runtime.DEFAULT_MEMORY_MB}m"
    assert "ssd-artifact/report:0" in command, "the image is the rule's (its job's), not the step's"


def test_a_step_in_docker_mode_outside_a_workflow_job_is_refused(monkeypatch):
    with pytest.raises(runtime.StepFailed, match="run it through the workflow"):
        _docker_step(monkeypatch)


def test_inside_the_container_the_step_runs_itself(monkeypatch, tmp_path):
    monkeypatch.setitem(runtime.RUNTIME, "kind", "docker")
    monkeypatch.setenv(runtime.IN_CONTAINER, "ssd-artifact/pio:0123@sha256:abc")
    monkeypatch.setenv(provenance.HOST_ENV, "the-machine")
    csv = tmp_path / "c.csv"
    call = '{"curve": "fig_3_1", "csv": "%s", "log": "%s"}' % (csv, tmp_path / "l.log")
    monkeypatch.setattr("sys.stdin", io.StringIO(call))  # as docker --interactive passes it
    assert main(["run", "pio_model_curve"]) == 0
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


def test_steps_that_open_a_device_write_every_declared_file_device_that_is_there(configs, tmp_path):
    """A declared directory that is missing is neither made nor passed in: `docker run -v` would make
    it, and a step that opens the device refuses it by name."""
    import yaml
    data = yaml.safe_load((configs / "devices.yaml").read_text())
    outside, missing = tmp_path / "ssd" / "bench", tmp_path / "unmounted" / "bench"
    outside.mkdir(parents=True)
    data["devices"] += [{"name": "my-ssd", "kind": "file", "path": str(outside), "max_bytes": 1 << 30},
                        {"name": "gone", "kind": "file", "path": str(missing), "max_bytes": 1 << 30}]
    (configs / "devices.yaml").write_text(yaml.safe_dump(data))
    assert runtime.devices_bind_paths() == [REPO_ROOT / "scratch/local-disk", outside]
    assert not (tmp_path / "unmounted").exists()


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


def test_an_unknown_step_is_refused_by_name(monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("{}"))
    with pytest.raises(runtime.StepFailed, match="no step named 'nope'; steps: .*build_cave"):
        main(["run", "nope"])


def test_a_step_takes_keyword_arguments_only(tmp_path):
    with pytest.raises(TypeError):
        pio.pio_model_curve("fig_3_2", str(tmp_path / "c.csv"), str(tmp_path / "l.log"))


def test_the_workflow_builds_the_programs_it_runs_not_the_unit_tests(tmp_path, monkeypatch):
    """A build step asks CMake for its system's PROGRAMS only: the GoogleTest suites (and their
    listing at build time) are the unit tests' to build, and took half of a fresh build's time."""
    (tmp_path / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.16)\nproject(p C)\n"
                                             "add_executable(tool a.c)\nadd_executable(tool_tests a.c)\n")
    (tmp_path / "a.c").write_text("int main(void) { return 0; }\n")
    from ssdartifact import native

    native.cmake_build(tmp_path, tmp_path / "build", "p", "cmake gcc", targets=("tool",))
    assert (tmp_path / "build/tool").exists() and not (tmp_path / "build/tool_tests").exists()
    native.cmake_build(tmp_path, tmp_path / "build", "p", "cmake gcc")  # without targets: everything
    assert (tmp_path / "build/tool_tests").exists()

    from ace import sim
    from cave import engine as cave_engine
    from emussd import harness
    from restore import engine as restore_engine
    from steps import ace as ace_steps
    from steps import cave as cave_steps
    from steps import restore as restore_steps

    asked = []
    for module in (sim, cave_engine, harness, restore_engine):
        monkeypatch.setattr(module, "build", lambda build_dir, targets=(), **_: asked.append(targets) or build_dir)
    for build_step in (ace_steps.build_ace_simulator, cave_steps.build_cave, emussd.build_emussd,
                       restore_steps.build_restore_simulator):
        build_step.__wrapped__(binary=str(tmp_path / "bin/x"), log=str(tmp_path / "log"))
    assert asked == [sim.PROGRAMS, cave_engine.PROGRAMS, harness.PROGRAMS, restore_engine.PROGRAMS]
