"""Build emussd and mount instances of it: used by the tests and the benchmarks.

    from emussd.harness import build, Mount     # with systems/ on sys.path
    binary = build()
    with Mount(binary, tmp_dir, read_latency_us=2000, alpha=3, k_r=8, k_w=4) as m:
        (m.mountpoint / "f").write_bytes(b"...")
        print(m.stats()["ops"]["write"]["count"])
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

EMUSSD_DIR = Path(__file__).resolve().parents[1]  # systems/emussd: CMakeLists.txt and src/
DEFAULT_BUILD_DIR = EMUSSD_DIR / "build"
STATS_NAME = ".emussd_stats"


class EmussdError(RuntimeError):
    pass


# What the workflow runs (its build step builds it, not the GoogleTest tests)
PROGRAMS = ("emussd",)


def build(build_dir: Path = DEFAULT_BUILD_DIR, targets: tuple[str, ...] = ()) -> Path:
    """Configures (once) and builds emussd with CMake; returns the binary's path."""
    for tool in ("cmake", "g++", "pkg-config"):
        if shutil.which(tool) is None:
            raise EmussdError(f"{tool} not found: apt-get install cmake g++ pkg-config libfuse3-dev libgtest-dev")
    build_dir = Path(build_dir)
    if not (build_dir / "CMakeCache.txt").exists():
        _run(["cmake", "-S", str(EMUSSD_DIR), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release"])
    cmd = ["cmake", "--build", str(build_dir), "-j2"]
    for t in targets:
        cmd += ["--target", t]
    _run(cmd)
    return build_dir / "emussd"


def _run(cmd: list[str]) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise EmussdError(f"{' '.join(cmd)} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")


def _terminate_with_parent() -> None:
    """In the child before exec: SIGTERM when the thread that started it dies, so an
    interrupted run (Ctrl-C, a killed workflow) does not leave the device mounted;
    emussd unmounts cleanly on SIGTERM."""
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def fuse_available() -> bool:
    return os.path.exists("/dev/fuse")


class Mount:
    """One emussd instance in the foreground, unmounted on exit (also on error)."""

    def __init__(
        self,
        binary: Path,
        root: Path,
        *,
        read_latency_us: float,
        alpha: float,
        k_r: int,
        k_w: int,
        page_size: int | None = None,
        channels: int | None = None,
        time_dilation: float | None = None,
        backing: Path | None = None,
        mountpoint: Path | None = None,
        stats_out: Path | None = None,
        hide_model: bool = False,
    ):
        self.binary = Path(binary)
        root = Path(root)
        self.backing = Path(backing) if backing else root / "backing"
        self.mountpoint = Path(mountpoint) if mountpoint else root / "mnt"
        self.stats_out = stats_out
        self.log_path = root / f"emussd-{self.mountpoint.name}.log"
        model = [f"--read-latency-us={read_latency_us}", f"--alpha={alpha}", f"--k-r={k_r}", f"--k-w={k_w}"]
        if page_size is not None:
            model.append(f"--page-size={page_size}")
        if channels is not None:
            model.append(f"--channels={channels}")
        if time_dilation is not None:
            model.append(f"--time-dilation={float(time_dilation)!r}")
        # hide_model: the model in emussd's environment, not on its command line, which any process
        # may read in /proc (a lab's hidden device; labs/labkit/sandbox.py)
        self.env = {**os.environ, "EMUSSD_ARGS": " ".join(model)} if hide_model else None
        self.args = [str(self.binary), "--backing", str(self.backing), "--mountpoint", str(self.mountpoint),
                     *([] if hide_model else model), "--foreground"]
        if stats_out is not None:
            self.args += ["--stats-out", str(stats_out)]
        self.proc: subprocess.Popen | None = None
        self.returncode: int | None = None

    fio_ioengine = "psync"  # fio reaches this device through the file system (library.Folder: its engine)

    def fio_arguments(self) -> list[str]:
        return [f"--ioengine={self.fio_ioengine}"]

    def fio_environment(self) -> dict[str, str]:
        return {}

    def start(self, timeout: float = 10.0) -> "Mount":
        self.backing.mkdir(parents=True, exist_ok=True)
        self.mountpoint.mkdir(parents=True, exist_ok=True)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(self.args, stdout=log, stderr=log, stdin=subprocess.DEVNULL, env=self.env,
                                     preexec_fn=_terminate_with_parent)
        log.close()
        deadline = time.monotonic() + timeout
        while not os.path.ismount(self.mountpoint):
            if self.proc.poll() is not None:
                raise EmussdError(f"emussd exited with {self.proc.returncode}: {self.log()}")
            if time.monotonic() > deadline:
                self.stop()
                raise EmussdError(f"emussd did not mount {self.mountpoint} in {timeout} s: {self.log()}")
            time.sleep(0.01)
        return self

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def stats(self) -> dict:
        return json.loads((self.mountpoint / STATS_NAME).read_text())

    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def stop(self, timeout: float = 20.0) -> int | None:
        """Unmounts with fusermount3 -u (retrying while busy) and waits for the exit."""
        if self.proc is None:
            return self.returncode
        deadline = time.monotonic() + timeout
        while os.path.ismount(self.mountpoint) and self.proc.poll() is None:
            r = subprocess.run(["fusermount3", "-u", str(self.mountpoint)], capture_output=True)
            if r.returncode == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.1)  # busy: a file is still open
        try:
            self.returncode = self.proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.returncode = self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.returncode = self.proc.wait()
        if os.path.ismount(self.mountpoint):  # the server is gone: lazy unmount
            subprocess.run(["fusermount3", "-uz", str(self.mountpoint)], capture_output=True)
        self.proc = None
        return self.returncode

    def __enter__(self) -> "Mount":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
