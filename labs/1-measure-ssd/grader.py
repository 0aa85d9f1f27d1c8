"""Lab 1's grader: each student's hidden emulated SSD, their sweep run on it in the sandbox,
and their k_r, k_w, alpha, write-back prediction and plot scored (lab.yaml).

The module has two sides. CHILD (run by labkit.child inside the sandbox, with the submission
loaded) calls the student's functions; it imports only the standard library. `grade` (run by
labkit.grade) sets up the device, calls CHILD's entries through labkit.sandbox, and scores what
they return. The measurements are the grader's: the student's measure() is a request over the
sandbox's pipe, and the grader runs fio on the device itself and keeps every point it gave; a
sweep may return only those points."""

from __future__ import annotations

import math
import os
from dataclasses import replace
from pathlib import Path

LAB_DIR = Path(__file__).resolve().parent
SUBMISSION_MODULE = "measure.py"
JOB_FILE_BYTES = 4 << 20  # each fio job's file on the device (sparse: the model, not the data, sets the timing)
PAGE_BYTES = 4096
REQUESTS_PER_THREAD = 40  # a point lasts this many one-thread latencies of the slowest request at least
POINT_FIELDS = ("threads", "iops", "bandwidth_bytes_s", "lat_mean_us")
BATCH_SHARE = 0.9  # the prediction's write-back batch: this share of the student's k_w, rounded down


# ----------------------------------------------------------------------------- inside the sandbox


CHILD = {
    "sweep": lambda student, arguments, services: student.sweep(services.measure, arguments["max_threads"]),
    "estimate": lambda student, arguments, services: student.estimate(arguments["curves"]),
    "predict": lambda student, arguments, services: student.predict_speedup(
        arguments["read_fraction"], arguments["alpha"], arguments["k_w"], arguments["batch"]),
    "plot": lambda student, arguments, services: student.plot(arguments["curves"], "."),
}


# ----------------------------------------------------------------------------- the grader's side


def load_config(override: Path | None = None) -> dict:
    from labkit import config  # noqa: PLC0415

    return config.load(LAB_DIR, override)


def hidden_device(key: bytes, student: str, config: dict) -> dict:
    from labkit import seeds  # noqa: PLC0415

    rng = seeds.student_rng(key, f"lab{config['lab']}", student)
    return {name: seeds.draw(rng, config["hidden"][name]) for name in ("read_latency_us", "alpha", "k_r", "k_w")}


class Measurements:
    """measure(op, threads) for the student's sweep, run by the grader: fio on the device, each
    point kept. Times are reported at the declared scale (the device may run time-dilated:
    divided back here)."""

    def __init__(self, directory: Path, raw: Path, runtime_ms: int, ramp_ms: int, dilation: float, config: dict,
                 engine: str = "psync", environment: dict | None = None):
        from pio import fio  # noqa: PLC0415 (the grader's side only)

        self.fio, self.directory, self.raw, self.dilation, self.config = fio, directory, raw, dilation, config
        self.environment = environment or {}
        self.base = fio.FioPoint(op="read", pattern="random", block_size=PAGE_BYTES, threads=1, iodepth=1,
                                 engine=engine, runtime_ms=runtime_ms, ramp_ms=ramp_ms, file_size=JOB_FILE_BYTES)
        self.points: list[dict] = []

    def measure(self, op, threads) -> dict:
        if op not in ("read", "write"):
            raise ValueError(f"measure(op, threads): op must be 'read' or 'write', not {op!r}")
        if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= self.config["max_threads"]:
            raise ValueError(f"measure(op, threads): threads must be a whole number from 1 to "
                             f"{self.config['max_threads']}, not {threads!r}")
        if len(self.points) >= self.config["max_points"]:
            raise RuntimeError(f"measure() was called more than {self.config['max_points']} times (the lab's limit)")
        point = replace(self.base, op=op, threads=threads)
        raw = self.raw / f"{len(self.points) + 1:03d}-{op}-{threads}.json"
        self.fio.run(point, self.fio.Target(directory=self.directory), raw, self.environment)
        row = self.fio.tidy_row(raw, point, "lab")
        measured = {"op": op, "threads": threads, "iops": row["iops"] * self.dilation,
                    "bandwidth_bytes_s": row["bandwidth_bytes_s"] * self.dilation,
                    "lat_mean_us": row["lat_mean_us"] / self.dilation}
        self.points.append(measured)
        return {field: measured[field] for field in POINT_FIELDS}

    def given(self, op: str, point: dict) -> bool:
        return any(p["op"] == op and all(p[f] == point[f] for f in POINT_FIELDS) for p in self.points)


def _curves(value, measured: Measurements | None = None) -> dict:
    """The sweep's result as {'read': [points], 'write': [points]}, or ValueError saying what is
    wrong; with `measured`, every point must be one measure() gave for that op."""
    if not isinstance(value, dict) or not {"read", "write"} <= set(value):
        raise ValueError("sweep() must return a dict with 'read' and 'write' lists of measure()'s points")
    curves = {}
    for op in ("read", "write"):
        points = value[op]
        if not isinstance(points, list) or not points:
            raise ValueError(f"sweep()['{op}'] must be a non-empty list of measure()'s points")
        for point in points:
            if not isinstance(point, dict) or not all(isinstance(point.get(f), (int, float)) and math.isfinite(point[f])
                                                      for f in POINT_FIELDS):
                raise ValueError(f"every point of sweep()['{op}'] needs the numbers {', '.join(POINT_FIELDS)}")
        curves[op] = [{f: point[f] for f in POINT_FIELDS} for point in points]
        if measured is not None and not all(measured.given(op, point) for point in curves[op]):
            raise ValueError(f"sweep()['{op}'] holds a point measure() did not give for '{op}': return the points "
                             "measure() returned, unchanged")
    return curves


def _number(value, name: str, integer: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0 \
            or (integer and value != int(value)):
        raise ValueError(f"{name} must be a positive {'whole ' if integer else ''}number, not {value!r}")
    return value


def _within(estimate: float, truth: float, tolerance: float, whole: bool) -> bool:
    allowed = max(tolerance * truth, 1) if whole else tolerance * truth
    return abs(estimate - truth) <= allowed + 1e-9


PLOT_MAGIC = {"plot.png": b"\x89PNG", "plot.pdf": b"%PDF", "plot.svg": b"<svg"}
PLOT_MIN_BYTES = 300


def _plot_file(work: Path) -> str:
    from labkit import sandbox  # noqa: PLC0415

    for name, magic in PLOT_MAGIC.items():
        head = sandbox.read_written(work / name, 4096)
        if head is not None:
            size = os.lstat(work / name).st_size
            if size < PLOT_MIN_BYTES or magic not in head:
                return f"{name} is not a {name.rsplit('.', 1)[1].upper()} figure with data ({size} bytes)"
            return ""
    return "plot() wrote none of plot.png, plot.pdf, plot.svg in the folder it was given (a file, not a link)"


def prepare(say=print) -> None:
    """What grading needs built (once per machine; Gradescope's setup.sh calls it): the hidden device."""
    from labkit import device as lab_device  # noqa: PLC0415

    lab_device.prepare(say)


def grade(submission: Path, student: str, key: bytes, config: dict, work_root: Path, say=print) -> list:
    """Grade one submission; returns labkit.report.TestResult's in lab.yaml's order."""
    from labkit import config as lab_config  # noqa: PLC0415
    from labkit import device as lab_device  # noqa: PLC0415
    from labkit import report, sandbox  # noqa: PLC0415
    from pio import fio, writeback_app  # noqa: PLC0415

    tests = report.tests_of(config)
    if (failed := report.missing(tests, submission, SUBMISSION_MODULE)) is not None:
        return failed
    device = hidden_device(key, student, config)
    limits = lab_config.limits(config)
    with lab_config.workspace(work_root, 1) as (root, work):
        submission = lab_config.copy_submission(submission, root)
        with lab_device.hidden_ssd(device, root, PAGE_BYTES, say) as (mount, dilation):
            slowest_us = device["read_latency_us"] * max(device["alpha"], 1) * dilation
            runtime_ms = max(config["point_runtime_ms"], math.ceil(REQUESTS_PER_THREAD * slowest_us / 1000))
            io_dir = mount.mountpoint / "lab"
            io_dir.mkdir()
            for job in range(config["max_threads"]):  # fio's files, sparse in the backing store
                with open(mount.backing / "lab" / f"{fio.JOB_NAME}.{job}.0", "wb") as handle:
                    handle.truncate(JOB_FILE_BYTES)

            def call(entry, arguments, limit, services=None):  # each call in a folder of its own
                return sandbox.call(Path(__file__), entry, submission, arguments, work=work / entry,
                                    limits=limits[limit], services=services)

            say(f"grading {student}: the sweep (points of {runtime_ms} ms)")
            measurements = Measurements(io_dir, root / "fio", runtime_ms, config["point_ramp_ms"], dilation, config,
                                        mount.fio_ioengine, mount.fio_environment())
            swept = call("sweep", {"max_threads": config["max_threads"]}, "sweep",
                         services={"measure": measurements.measure})
            try:
                curves = _curves(swept.value, measurements) if swept.ok else None
            except ValueError as error:
                swept.error = str(error)
                curves = None
            if curves is None:
                tests["sweep"].failed(f"sweep() failed: {swept.error}\n{swept.output}".rstrip())
                for name in ("k_r", "k_w", "alpha", "prediction", "plot"):
                    tests[name].failed("needs the sweep's curves")
                return list(tests.values())
            tests["sweep"].passed(f"{len(curves['read'])} read and {len(curves['write'])} write points")
            say(f"grading {student}: estimate, prediction and plot")
            estimated = call("estimate", {"curves": curves}, "other")
            estimates = {}
            for name in ("k_r", "k_w", "alpha"):
                try:
                    if not estimated.ok:
                        raise ValueError(f"estimate() failed: {estimated.error}")
                    if not isinstance(estimated.value, dict):
                        raise ValueError("estimate() must return a dict with k_r, k_w and alpha")
                    estimates[name] = _number(estimated.value.get(name), f"estimate()['{name}']", name != "alpha")
                except ValueError as error:
                    tests[name].failed(str(error))
                    continue
                tolerance = config["tests"][name]["tolerance"]
                if _within(estimates[name], device[name], tolerance, name != "alpha"):
                    tests[name].passed(f"{name} = {estimates[name]:g}: within {tolerance:.0%} of the device's")
                else:
                    tests[name].failed(f"{name} = {estimates[name]:g}: not within {tolerance:.0%} of the device's")
            _grade_prediction(tests["prediction"], estimates, config, call, io_dir, mount, writeback_app)
            drawn = call("plot", {"curves": curves}, "other")
            problem = drawn.error and f"plot() failed: {drawn.error}" or _plot_file(work / "plot")
            tests["plot"].failed(problem) if problem else tests["plot"].passed("a figure")
    return list(tests.values())


def _grade_prediction(test, estimates: dict, config: dict, call, io_dir: Path, mount, writeback_app) -> None:
    """The student's PIO prediction for write-backs in batches of 90 % of their own k_w (rounded
    down), against the write-back application run on the device at that batch. From the student's
    k_w, so that nothing about the device leaks; below it, so that a k_w within its tolerance
    (10 % or one thread too high) still gives whole rounds on the device: a batch of k_w + 1
    takes two rounds, half the speedup the model gives it (docs/instructors.md). At least 2: a batch
    of one write is no batch, its speedup 1 whatever the device, which any constant predicts."""
    if "alpha" not in estimates or "k_w" not in estimates:
        test.failed("needs estimate()'s alpha and k_w")
        return
    batch = max(2, min(int(BATCH_SHARE * estimates["k_w"]), config["max_threads"]))
    workload = config["writeback"]
    predicted = call("predict", {"read_fraction": workload["read_fraction"], "alpha": estimates["alpha"],
                                 "k_w": estimates["k_w"], "batch": batch}, "other")
    try:
        if not predicted.ok:
            raise ValueError(f"predict_speedup() failed: {predicted.error}")
        prediction = _number(predicted.value, "predict_speedup()")
    except ValueError as error:
        test.failed(str(error))
        return
    rows = writeback_app.sweep(io_dir, batches=sorted({1, batch}), read_fraction=workload["read_fraction"],
                               pages=workload["pages"], page_size=PAGE_BYTES, duration_s=workload["duration_s"],
                               seed=1, alpha=None, k_w=batch, sparse=True, prepare_in=mount.backing / "lab",
                               repeats=workload["repeats"], device=mount.model)
    measured = rows[-1]["speedup"]
    tolerance = config["tests"]["prediction"]["tolerance"]
    verdict = f"predicted {prediction:.2f}, measured {measured:.2f} with batches of {batch}"
    if abs(prediction - measured) <= tolerance * measured:
        test.passed(verdict)
    else:
        test.failed(f"{verdict}: more than {tolerance:.0%} apart")

