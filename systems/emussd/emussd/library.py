"""The library device: emussd's device model without FUSE, for callers that do their I/O on an
ordinary file and then charge it to the model (no /dev/fuse, no mount, no privileges).

    from emussd import library
    device = library.Device(read_latency_us=2000, alpha=2.5, k_r=8, k_w=4, time_dilation=3)
    arrival = time.monotonic_ns()
    os.preadv(fd, [buffer], offset)              # the real I/O, on any file system
    device.serve("read", 4096, arrival)          # books it as of its arrival, sleeps to its end

`Device` is ctypes over libartifact_device.so (systems/common/include/artifact/device.h), built
here without FUSE (build-library/: -DEMUSSD_FUSE=OFF). ctypes releases the GIL during each call, so
Python threads that serve at once really overlap; one Device shared by all of them is one device.
pio.writeback_app and ace.io_replay take such a device (`device=`) and charge each page to it.

fio gets the same model through its external engine (`fio_engine()`: libfio_emussd.so), built
against the headers of the installed fio (fio/source.yaml, fetched with `apt-get source`):

    EMUSSD_MODEL=read_latency_us=2000,alpha=2.5,k_r=8,k_w=4,time_dilation=3 \\
        fio --thread --ioengine=external:/path/libfio_emussd.so --direct=1 ...
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from .harness import EMUSSD_DIR, EmussdError, _run

LIBRARY_BUILD_DIR = EMUSSD_DIR / "build-library"
FIO_SOURCE_LOCK = EMUSSD_DIR / "fio" / "source.yaml"
OPS = {"read": 0, "write": 1}
# The parameters of EMUSSD_MODEL and of Device, in the order spec() writes them.
KEYS = ("read_latency_us", "alpha", "k_r", "k_w", "page_size", "channels", "time_dilation")


def spec(**model) -> str:
    """EMUSSD_MODEL's form of a device: "read_latency_us=2000,alpha=2.5,k_r=8,k_w=4[,...]" (None left out)."""
    unknown = set(model) - set(KEYS)
    if unknown:
        raise ValueError(f"unknown device parameters {sorted(unknown)}; known: {', '.join(KEYS)}")
    return ",".join(f"{key}={model[key]!r}" for key in KEYS if model.get(key) is not None)


def build(build_dir: Path = LIBRARY_BUILD_DIR, *, fio_engine: bool = False) -> Path:
    """Configures and builds the library device without FUSE (and fio's engine with `fio_engine`);
    returns libartifact_device.so's path."""
    for tool in ("cmake", "g++", "gcc"):
        if shutil.which(tool) is None:
            raise EmussdError(f"{tool} not found: apt-get install cmake g++ gcc libgtest-dev")
    build_dir = Path(build_dir)
    source = fio_source(build_dir / "fio-source") if fio_engine else None
    build_dir.mkdir(parents=True, exist_ok=True)
    cache = build_dir / "CMakeCache.txt"
    wanted = f"EMUSSD_FIO_SOURCE:PATH={source}" if source else None
    if not cache.exists() or (wanted and wanted not in cache.read_text()):
        _run(["cmake", "-S", str(EMUSSD_DIR), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release", "-DEMUSSD_FUSE=OFF",
              *([f"-DEMUSSD_FIO_SOURCE={source}"] if source else [])])
    _run(["cmake", "--build", str(build_dir), "-j2"])
    return build_dir / "libartifact_device.so"


def fio_engine(build_dir: Path = LIBRARY_BUILD_DIR) -> Path:
    """libfio_emussd.so, built for the installed fio: `--ioengine=external:<this path>`."""
    build(build_dir, fio_engine=True)
    return Path(build_dir) / "libfio_emussd.so"


def _source_lock() -> dict:
    import yaml  # noqa: PLC0415 (only the engine's build needs it)

    return yaml.safe_load(FIO_SOURCE_LOCK.read_text())


def fio_source(folder: Path) -> Path:
    """The configured fio source tree of fio/source.yaml under `folder`: the upstream tarball fetched
    once with `apt-get source` (as ACE fetches PostgreSQL's) and sha256-checked, unpacked and
    configured. Refused when the installed fio is another version."""
    lock = _source_lock()
    upstream = lock["version"].split("-")[0]
    if shutil.which("fio") is None:
        raise EmussdError("fio is not installed (apt-get install fio): its engine is built for the installed fio")
    installed = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
    if installed != f"fio-{upstream}":
        raise EmussdError(f"the installed fio is {installed}, but fio/source.yaml pins {upstream}: fio loads only "
                          "engines built against its own headers; update fio/source.yaml to the installed version")
    folder = Path(folder)
    tree = folder / lock["orig"]["top_directory"]
    if (tree / "config-host.h").exists():
        return tree
    tarball = _fetch(lock, folder)
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        with tarfile.open(tarball) as archive:
            archive.extractall(scratch, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        unpacked = Path(scratch) / lock["orig"]["top_directory"]
        _run(["sh", "-c", f"cd '{unpacked}' && ./configure --disable-native >configure.log 2>&1 || "
                          "{ cat configure.log; exit 1; }"])
        os.replace(unpacked, tree)
    return tree


def _fetch(lock: dict, folder: Path) -> Path:
    from ssdartifact.containers.catalog import mirror_of, settings  # noqa: PLC0415
    from ssdartifact.containers.mirror import apt_env  # noqa: PLC0415 (the one place that sets up apt on the mirror)
    from ssdartifact.files import sha256_file  # noqa: PLC0415

    orig = lock["orig"]
    target = folder / orig["file"]
    if target.exists() and sha256_file(target) == orig["sha256"]:
        return target
    base = settings()["base"]
    env = apt_env(base, status="", sources=True)
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        for command in (["apt-get", "update"],
                        ["apt-get", "source", "--download-only", f"{lock['package']}={lock['version']}"]):
            result = subprocess.run(command, cwd=scratch, env=env, capture_output=True, text=True)
            if result.returncode != 0:
                raise EmussdError(f"{' '.join(command)} from {mirror_of(base)} failed (fio's engine needs "
                                  f"fio's headers):\n{(result.stdout + result.stderr)[-2000:]}")
        fetched = Path(scratch) / orig["file"]
        if not fetched.exists() or sha256_file(fetched) != orig["sha256"]:
            raise EmussdError(f"apt-get source gave no {orig['file']} with the sha256 of fio/source.yaml: refusing it")
        os.replace(fetched, target)
    return target


class _Library:
    """libartifact_device.so with its functions' C types, loaded once per path."""

    loaded: dict[Path, ctypes.CDLL] = {}

    @classmethod
    def get(cls, path: Path) -> ctypes.CDLL:
        path = Path(path).resolve()
        if path not in cls.loaded:
            lib = ctypes.CDLL(str(path))
            device, text = ctypes.c_void_p, ctypes.c_char_p
            lib.artifact_device_create.argtypes = [ctypes.c_double, ctypes.c_double, ctypes.c_int, ctypes.c_int,
                                                   ctypes.c_int, ctypes.c_double, text, ctypes.c_size_t]
            lib.artifact_device_create.restype = device
            lib.artifact_device_from_spec.argtypes = [text, text, ctypes.c_size_t]
            lib.artifact_device_from_spec.restype = device
            lib.artifact_device_destroy.argtypes = [device]
            lib.artifact_device_now_ns.restype = ctypes.c_int64
            lib.artifact_device_serve.argtypes = [device, ctypes.c_int, ctypes.c_uint64, ctypes.c_int64]
            lib.artifact_device_stats_json.argtypes = [device, text, ctypes.c_size_t]
            lib.artifact_device_stats_json.restype = ctypes.c_size_t
            cls.loaded[path] = lib
        return cls.loaded[path]


class Device:
    """One emulated device in this process: serve(op, nbytes, arrival_ns) after each real I/O.

    The parameters and their ranges are emussd's (a bad one raises ValueError saying why). The
    object is what pio.writeback_app.run/sweep and ace.io_replay.replay take as `device=`."""

    def __init__(self, *, read_latency_us: float, alpha: float, k_r: int, k_w: int, page_size: int = 4096,
                 channels: int | None = None, time_dilation: float = 1.0, library: Path | None = None):
        self.model = {"read_latency_us": read_latency_us, "alpha": alpha, "k_r": k_r, "k_w": k_w,
                      "page_size": page_size, "channels": channels, "time_dilation": time_dilation}
        self._lib = _Library.get(library or build())
        error = ctypes.create_string_buffer(256)
        self._handle = self._lib.artifact_device_from_spec(spec(**self.model).encode(), error, len(error))
        if not self._handle:
            raise ValueError(f"not an emulated device: {error.value.decode()}")

    @property
    def spec(self) -> str:
        """The device as EMUSSD_MODEL gives it to fio's engine."""
        return spec(**self.model)

    def serve(self, op: str, nbytes: int, arrival_ns: int | None = None) -> None:
        """Charges a read or write of `nbytes` done since `arrival_ns` (time.monotonic_ns() just
        before the I/O; None: now) and sleeps to its booked end, without the GIL."""
        if self._handle is None:
            raise ValueError("the device is closed")
        if self._lib.artifact_device_serve(self._handle, OPS[op], nbytes, arrival_ns or 0) != 0:
            raise ValueError(f"unknown op {op!r}")

    def stats(self) -> dict:
        """The counters, as emussd's .emussd_stats holds them (without the mount's fields)."""
        if self._handle is None:
            raise ValueError("the device is closed")
        size = self._lib.artifact_device_stats_json(self._handle, None, 0)
        buffer = ctypes.create_string_buffer(size)
        self._lib.artifact_device_stats_json(self._handle, buffer, size)
        return json.loads(buffer.value)

    def close(self) -> None:
        if self._handle is not None:
            self._lib.artifact_device_destroy(self._handle)
            self._handle = None

    def __enter__(self) -> "Device":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()



class Folder:
    """An ordinary folder whose files fio and the Python tools read and write through one library
    device: what a FUSE mount (harness.Mount) is for them, without FUSE. Its interface is the
    mount's for those callers: `mountpoint` (where the files are), `backing` (the same folder: there
    is no other), `fio_arguments()` and `fio_environment()` (fio's external engine and the model it
    reads), and `device` (the model for pio.writeback_app and ace.io_replay). Each fio process
    builds its own model from EMUSSD_MODEL: one device per fio run, as each point of a sweep is."""

    def __init__(self, root: Path, **model):
        self.mountpoint = self.backing = Path(root) / "folder"
        self.model = model
        self.device: Device | None = None

    def __enter__(self) -> "Folder":
        self.mountpoint.mkdir(parents=True, exist_ok=True)
        self.device = Device(**self.model)
        return self

    def __exit__(self, *exc) -> None:
        if self.device is not None:
            self.device.close()

    @property
    def fio_ioengine(self) -> str:
        return f"external:{fio_engine()}"

    def fio_arguments(self) -> list[str]:
        return ["--thread", f"--ioengine={self.fio_ioengine}"]

    def fio_environment(self) -> dict[str, str]:
        return {"EMUSSD_MODEL": spec(**self.model)}
