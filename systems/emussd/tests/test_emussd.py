"""emussd end to end: real mounts under temporary directories.

Data (round trip, remount, concurrent stress, O_DIRECT, fsync), timing (latency,
alpha, saturation at k_r and k_w), fio, refusals and messages, and the stats.
Every mount is unmounted in the fixture's teardown, also when a test fails.
"""

from __future__ import annotations

import json
import mmap
import os
import random
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from emussd.harness import DEFAULT_BUILD_DIR, STATS_NAME, fuse_available  # noqa: E402
from ssdartifact.native import googletest_failures

pytestmark = pytest.mark.skipif(
    not fuse_available(),
    reason="/dev/fuse is absent: emussd needs FUSE (modprobe fuse; in a container --device /dev/fuse)",
)

PAGE = 4096


def run_emussd(binary, *args, env=None, timeout=20) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True, timeout=timeout, env=env)


# ---------------------------------------------------------------- unit tests


def test_googletest_unit_tests_pass(binary):
    """The device model's GoogleTest suite without its timing label (the schedule, the limits, the
    service-time rule and the arguments: no wall-clock bound), via ctest; test_emussd_timing runs the rest."""
    failures = googletest_failures(DEFAULT_BUILD_DIR, "-LE", "timing", timeout=300)
    assert not failures, failures


# ---------------------------------------------------------------------- data


def test_round_trip_survives_unmount_and_remount(mounts, tmp_path):
    rng = random.Random(7)
    files = {
        "empty": b"",
        "one": b"x",
        "page": rng.randbytes(PAGE),
        "unaligned": rng.randbytes(3 * PAGE + 123),
        "dir/sub/large": rng.randbytes(1024 * 1024 + 17),  # more than one FUSE request
    }
    m = mounts(read_latency_us=20, alpha=2, k_r=4, k_w=2)
    for name, data in files.items():
        path = m.mountpoint / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    # Overwrite in the middle, extend, truncate, rename, delete.
    with open(m.mountpoint / "unaligned", "r+b") as f:
        f.seek(5000)
        f.write(b"MIDDLE")
    files["unaligned"] = files["unaligned"][:5000] + b"MIDDLE" + files["unaligned"][5006:]
    with open(m.mountpoint / "one", "ab") as f:
        f.write(b"yz")
    files["one"] = b"xyz"
    os.truncate(m.mountpoint / "page", 1000)
    files["page"] = files["page"][:1000]
    os.rename(m.mountpoint / "dir/sub/large", m.mountpoint / "dir/large")
    files["dir/large"] = files.pop("dir/sub/large")
    (m.mountpoint / "gone").write_bytes(b"bye")
    os.unlink(m.mountpoint / "gone")
    os.rmdir(m.mountpoint / "dir/sub")

    def check(root: Path):
        for name, data in files.items():
            assert (root / name).read_bytes() == data, name
        assert sorted(p.name for p in root.iterdir()) == sorted({n.split("/")[0] for n in files})

    check(m.mountpoint)
    assert m.stop() == 0
    check(m.backing)  # the data is in the backing directory
    m2 = mounts(root=tmp_path / "again", backing=m.backing, read_latency_us=20, alpha=2, k_r=4, k_w=2)
    check(m2.mountpoint)


@pytest.mark.skipif(os.geteuid() != 0, reason="only a mount by root is shared with other users")
def test_a_file_another_user_creates_is_theirs(mounts):
    """Mounted by root, the device is shared (allow_other) and an entry belongs to the user who
    creates it, as on a local file system: a PostgreSQL server, never root, keeps its files there."""
    root = Path(tempfile.mkdtemp(prefix="emussd-owner-", dir="/tmp"))
    root.chmod(0o755)  # traversable by the other user (pytest's own tmp_path is not)
    try:
        m = mounts(root=root / "dev", read_latency_us=20, alpha=2, k_r=4, k_w=2)
        (m.mountpoint / "theirs").mkdir()
        os.chown(m.mountpoint / "theirs", 65534, 65534)
        as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        made = subprocess.run([*as_nobody, "sh", "-c", "mkdir d && echo data > d/f && cat d/f"],
                              cwd=m.mountpoint / "theirs", capture_output=True, text=True)
        assert made.returncode == 0 and made.stdout == "data\n", made.stderr
        for entry in ("d", "d/f"):
            assert (m.mountpoint / "theirs" / entry).stat().st_uid == 65534, entry
            assert (m.backing / "theirs" / entry).stat().st_uid == 65534, entry  # on the backing store too
        m.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)  # (if a check failed, the fixture unmounts it later)


def test_a_symbolic_link_leads_off_the_device(mounts, tmp_path):
    """A link made in the backing directory is followed by the kernel: I/O through it reaches
    the link's target directly and is not served (or counted) by the device."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    m = mounts(read_latency_us=20, alpha=2, k_r=4, k_w=2)
    (m.backing / "wal").symlink_to(elsewhere)
    assert os.readlink(m.mountpoint / "wal") == str(elsewhere)
    (m.mountpoint / "wal" / "segment").write_bytes(b"x" * PAGE)
    assert (elsewhere / "segment").read_bytes() == b"x" * PAGE
    assert m.stats()["ops"]["write"]["count"] == 0


def test_concurrent_readers_and_writers_on_overlapping_ranges(mounts):
    """Writers and readers hit random, unaligned, overlapping ranges of one file at once.

    Expected content is well defined by a shadow copy: each access holds the
    locks of the 4 KiB blocks it touches (taken in ascending order, so no
    deadlock), so accesses to disjoint blocks run concurrently on the device and
    overlapping ones are ordered. Every byte of every read is checked, and the
    whole file at the end and after a remount.
    """
    size, n_blocks = 64 * PAGE, 64
    seed = random.randrange(1 << 30)
    m = mounts(read_latency_us=50, alpha=2, k_r=4, k_w=3)
    path = m.mountpoint / "shared"
    shadow = bytearray(random.Random(seed).randbytes(size))
    path.write_bytes(shadow)
    locks = [threading.Lock() for _ in range(n_blocks)]
    errors: list[str] = []

    def access(i: int, write: bool):
        rng = random.Random(seed * 31 + i)
        fd = os.open(path, os.O_RDWR)
        try:
            for _ in range(300):
                off = rng.randrange(size - 1)
                length = rng.randint(1, min(size - off, 3 * PAGE + 100))
                blocks = range(off // PAGE, (off + length - 1) // PAGE + 1)
                for b in blocks:
                    locks[b].acquire()
                try:
                    if write:
                        data = rng.randbytes(length)
                        assert os.pwrite(fd, data, off) == length
                        shadow[off : off + length] = data
                    else:
                        got = os.pread(fd, length, off)
                        if got != shadow[off : off + length]:
                            bad = next(j for j in range(length) if got[j : j + 1] != shadow[off + j : off + j + 1])
                            errors.append(f"reader {i}: byte {off + bad} differs (seed {seed})")
                finally:
                    for b in blocks:
                        locks[b].release()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(f"thread {i}: {e!r}")
        finally:
            os.close(fd)

    threads = [threading.Thread(target=access, args=(i, i % 2 == 0)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:5]
    assert path.read_bytes() == shadow
    stats = m.stats()["ops"]
    assert stats["write"]["max_in_service"] >= 2, "writers never overlapped in service"
    assert stats["read"]["max_in_service"] >= 2, "readers never overlapped in service"
    backing = m.backing
    assert m.stop() == 0
    assert (backing / "shared").read_bytes() == shadow
    m2 = mounts(backing=backing, mountpoint=m.mountpoint.parent / "mnt2", read_latency_us=50, alpha=2, k_r=4, k_w=3)
    assert (m2.mountpoint / "shared").read_bytes() == shadow


def test_o_direct_open_read_write(mounts):
    m = mounts(read_latency_us=50, alpha=2, k_r=2, k_w=2)
    path = m.mountpoint / "direct"
    rng = random.Random(3)
    payload = rng.randbytes(16 * PAGE)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_DIRECT, 0o644)
    try:
        buf = mmap.mmap(-1, 16 * PAGE)  # page-aligned, as O_DIRECT wants
        buf[:] = payload
        assert os.pwritev(fd, [buf], 0) == len(payload)
        small = mmap.mmap(-1, PAGE)
        assert os.preadv(fd, [small], 5 * PAGE) == PAGE
        assert bytes(small) == payload[5 * PAGE : 6 * PAGE]
        back = mmap.mmap(-1, 16 * PAGE)
        assert os.preadv(fd, [back], 0) == len(payload)
        assert bytes(back) == payload
    finally:
        os.close(fd)
    assert (m.backing / "direct").read_bytes() == payload
    ops = m.stats()["ops"]
    assert ops["write"]["count"] == 1 and ops["write"]["pages"] == 16
    assert ops["read"]["count"] == 2 and ops["read"]["pages"] == 17


def test_page_cache_never_answers(mounts):
    """Buffered reads of the same page go to the device every time (direct_io)."""
    m = mounts(read_latency_us=20, alpha=1, k_r=2, k_w=2)
    (m.backing / "f").write_bytes(b"a" * PAGE)
    with open(m.mountpoint / "f", "rb", buffering=0) as f:
        for _ in range(5):
            f.seek(0)
            assert f.read(PAGE) == b"a" * PAGE
    assert m.stats()["ops"]["read"]["count"] == 5


def test_fsync_reaches_the_backing_store(mounts):
    m = mounts(read_latency_us=20, alpha=2, k_r=2, k_w=2)
    fd = os.open(m.mountpoint / "durable", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.write(fd, b"committed")
        os.fsync(fd)
        os.fdatasync(fd)
    finally:
        os.close(fd)
    fsync = m.stats()["ops"]["fsync"]
    assert fsync["count"] == 2
    assert fsync["service_time_us"] > 0
    assert (m.backing / "durable").read_bytes() == b"committed"


def test_parallel_direct_writes_to_one_file(mounts, tmp_path):
    """k_w writers on the same file are in service together (FOPEN_PARALLEL_DIRECT_WRITES)."""
    root = tmp_path / "one"
    (root / "backing").mkdir(parents=True)
    (root / "backing" / "f").write_bytes(bytes(64 * PAGE))
    m = mounts(root=root, read_latency_us=2000, alpha=2, k_r=4, k_w=4)
    barrier = threading.Barrier(4)

    def write(i):
        fd = os.open(m.mountpoint / "f", os.O_RDWR | os.O_DIRECT)
        buf = mmap.mmap(-1, PAGE)
        try:
            barrier.wait()
            for j in range(10):
                os.pwritev(fd, [buf], (i * 10 + j) * PAGE)
        finally:
            os.close(fd)

    writers = [threading.Thread(target=write, args=(i,)) for i in range(4)]
    for t in writers:
        t.start()
    for t in writers:
        t.join()
    assert m.stats()["ops"]["write"]["max_in_service"] == 4


# ----------------------------------------------------------------------- fio


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (apt-get install fio)")
@pytest.mark.parametrize("engine", ["psync", "io_uring"])
def test_fio_runs_with_direct_io(mounts, engine):
    m = mounts(read_latency_us=200, alpha=3, k_r=4, k_w=2)
    cmd = [
        "fio", "--name=emussd", f"--directory={m.mountpoint}", "--rw=randrw", "--rwmixread=70",
        "--bs=4k", "--size=256k", "--direct=1", f"--ioengine={engine}", "--iodepth=8",
        "--numjobs=2", "--runtime=2", "--time_based", "--output-format=json",
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout[proc.stdout.index("{") :])
    reads = writes = 0
    for job in report["jobs"]:
        assert job["error"] == 0, job
        reads += job["read"]["total_ios"]
        writes += job["write"]["total_ios"]
    assert reads > 0 and writes > 0
    ops = m.stats()["ops"]
    # Every fio I/O went through the device model (the layout adds writes).
    assert ops["read"]["count"] >= reads and ops["write"]["count"] >= writes
    # 2 jobs: 2 reads at once with psync; up to k_r with io_uring's queue depth.
    assert ops["read"]["max_in_service"] == (2 if engine == "psync" else 4)
    assert ops["write"]["max_in_service"] == 2


# ------------------------------------------------------ refusals and messages


def test_refuses_a_non_empty_mount_point(binary, tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "precious").write_text("keep")
    proc = run_emussd(binary, "--backing", tmp_path / "b", "--mountpoint", tmp_path / "m",
                      "--read-latency-us", 100, "--alpha", 2, "--k-r", 2, "--k-w", 2, "--foreground")  # fmt: skip
    assert proc.returncode == 2
    assert "is not empty" in proc.stderr and "precious" in proc.stderr
    assert (tmp_path / "m" / "precious").read_text() == "keep"


def test_refuses_a_mount_point_that_is_already_mounted(binary, mounts, tmp_path):
    m = mounts(read_latency_us=100, alpha=2, k_r=2, k_w=2)
    (tmp_path / "b2").mkdir()
    # The stats file is not listed, so the mount looks empty: refused as a mount point.
    proc = run_emussd(binary, "--backing", tmp_path / "b2", "--mountpoint", m.mountpoint,
                      "--read-latency-us", 100, "--alpha", 2, "--k-r", 2, "--k-w", 2, "--foreground")  # fmt: skip
    assert proc.returncode == 2
    assert "already a mount point" in proc.stderr and "fusermount3 -u" in proc.stderr
    assert os.path.ismount(m.mountpoint)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--k-r", "0"], "--k-r '0' is not allowed: give an integer, 1 <= N <= 4096"),
        (["--alpha", "-1"], "--alpha '-1' is not allowed"),
        (["--page-size", "1000"], "power of two"),
        (["--read-latency-us", "fast"], "--read-latency-us 'fast' is not allowed"),
        (["--bogus", "1"], "unknown argument '--bogus'"),
    ],
)
def test_bad_arguments_say_what_is_allowed(binary, tmp_path, args, message):
    base = ["--backing", tmp_path, "--mountpoint", tmp_path / "m", "--read-latency-us", 100,
            "--alpha", 2, "--k-r", 2, "--k-w", 2]  # fmt: skip
    proc = run_emussd(binary, *base, *args)
    assert proc.returncode == 2
    assert message in proc.stderr, proc.stderr


def test_refuses_nested_backing_and_mount_point(binary, tmp_path):
    (tmp_path / "m").mkdir()
    proc = run_emussd(binary, "--backing", tmp_path, "--mountpoint", tmp_path / "m",
                      "--read-latency-us", 100, "--alpha", 2, "--k-r", 2, "--k-w", 2)  # fmt: skip
    assert proc.returncode == 2
    assert "must not be the same directory or lie inside one another" in proc.stderr


def _in_private_mount_namespace(script: str) -> subprocess.CompletedProcess:
    """Runs a shell script in a new mount namespace (root, or an unprivileged user namespace)."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare (util-linux) is not installed")
    ns = ["unshare", "--mount"] if os.geteuid() == 0 else ["unshare", "--user", "--map-root-user", "--mount"]
    probe = subprocess.run([*ns, "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot create a mount namespace here: {probe.stderr.decode().strip()}")
    return subprocess.run([*ns, "sh", "-ec", script], capture_output=True, text=True, timeout=30)


def test_says_what_to_do_without_dev_fuse(binary, tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "m").mkdir()
    # Hide /dev/fuse behind an empty /dev in a private mount namespace.
    proc = _in_private_mount_namespace(
        f"mount -t tmpfs none /dev; exec {binary} --backing {tmp_path / 'b'} --mountpoint {tmp_path / 'm'} "
        "--read-latency-us 100 --alpha 2 --k-r 2 --k-w 2"
    )
    assert proc.returncode == 3, proc.stderr
    assert "/dev/fuse does not exist" in proc.stderr
    assert "--device /dev/fuse" in proc.stderr and "modprobe fuse" in proc.stderr


def test_says_what_to_install_without_fusermount3(binary, tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "m").mkdir()
    fake = tmp_path / "not-executable"
    fake.write_text("")
    fusermount = shutil.which("fusermount3") or "/usr/bin/fusermount3"
    proc = _in_private_mount_namespace(
        f"mount --bind {fake} {fusermount}; PATH=/usr/bin:/bin exec {binary} --backing {tmp_path / 'b'} "
        f"--mountpoint {tmp_path / 'm'} --read-latency-us 100 --alpha 2 --k-r 2 --k-w 2"
    )
    assert proc.returncode == 3, proc.stderr
    assert "fusermount3 was not found" in proc.stderr and "apt-get install fuse3" in proc.stderr


# --------------------------------------------------------------------- stats


def test_stats_file_counts_every_request_and_is_written_on_unmount(mounts, tmp_path):
    out = tmp_path / "stats" / "final.json"
    out.parent.mkdir()
    m = mounts(read_latency_us=100, alpha=3, k_r=2, k_w=2, page_size=8192, channels=3, stats_out=out)
    (m.backing / "f").write_bytes(bytes(8 * PAGE))
    fd = os.open(m.mountpoint / "f", os.O_RDWR)
    try:
        for i in range(5):
            os.pread(fd, PAGE, i * PAGE)
        for i in range(3):
            os.pwrite(fd, b"w" * (3 * PAGE), i * PAGE)  # 12 KiB = 2 pages of 8 KiB
    finally:
        os.close(fd)
    s = m.stats()
    assert s["params"] == {
        "read_latency_us": 100.0, "alpha": 3, "k_r": 2, "k_w": 2, "page_size": 8192, "channels": 3,
        "time_dilation": 1, "service_time_rule": s["params"]["service_time_rule"], "times": s["params"]["times"],
    }  # fmt: skip
    r, w = s["ops"]["read"], s["ops"]["write"]
    assert (r["count"], r["bytes"], r["pages"]) == (5, 5 * PAGE, 5)
    assert (w["count"], w["bytes"], w["pages"]) == (3, 9 * PAGE, 6)
    assert r["declared_service_time_us"] == pytest.approx(500)
    assert w["declared_service_time_us"] == pytest.approx(6 * 300)
    assert r["service_time_us"] >= 500 and w["service_time_us"] >= 1800
    for key in ("queue_time_us", "late_time_us", "overruns", "max_in_service", "max_queue_length",
                "max_service_time_us"):
        assert key in r and key in w
    assert s["cpu_user_s"] + s["cpu_system_s"] > 0 and s["pid"] == m.pid()
    # Reading the stats is not a device request.
    assert m.stats()["ops"]["read"]["count"] == 5
    assert m.stop() == 0
    final = json.loads(out.read_text())
    assert final["ops"]["read"]["count"] == 5 and final["ops"]["write"]["count"] == 3
    assert not list(out.parent.glob("*.tmp.*")), "temporary file left behind"


def test_stats_read_does_not_wait_for_the_device(mounts):
    """While the only read slot is busy for a second, the stats file answers: it shows the read in service."""
    m = mounts(read_latency_us=1_000_000, alpha=1, k_r=1, k_w=1)
    (m.backing / "f").write_bytes(bytes(PAGE))
    busy = threading.Thread(target=lambda: (m.mountpoint / "f").read_bytes())
    busy.start()
    try:
        seen = []
        while busy.is_alive() and not seen:
            if m.stats()["ops"]["read"]["in_service"] == 1:
                seen.append(True)
        assert seen, "the stats file never answered while the read was in service"
    finally:
        busy.join()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_unmounts_cleanly_and_writes_stats(mounts, tmp_path, sig):
    """Even when started with the signal ignored, as a shell starts a background job (SIGINT)."""
    out = tmp_path / "stats.json"
    inherited = signal.signal(sig, signal.SIG_IGN)
    try:
        m = mounts(read_latency_us=100, alpha=2, k_r=2, k_w=2, stats_out=out)
    finally:
        signal.signal(sig, inherited)
    (m.mountpoint / "f").write_bytes(b"data")
    m.proc.send_signal(sig)
    assert m.proc.wait(timeout=10) == 0, m.log()
    assert not os.path.ismount(m.mountpoint)
    assert json.loads(out.read_text())["ops"]["write"]["count"] == 1
    assert (m.backing / "f").read_bytes() == b"data"


def test_detaches_by_default_and_unmounts_with_fusermount(binary, tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "m").mkdir()
    out = tmp_path / "s.json"
    proc = run_emussd(binary, "--backing", tmp_path / "b", "--mountpoint", tmp_path / "m", "--read-latency-us", 50,
                      "--alpha", 2, "--k-r", 2, "--k-w", 2, "--stats-out", out)  # fmt: skip
    try:
        assert proc.returncode == 0, proc.stderr
        assert os.path.ismount(tmp_path / "m")
        assert json.loads((tmp_path / "m" / STATS_NAME).read_text())["pid"] != os.getpid()
        (tmp_path / "m" / "x").write_bytes(b"1")
    finally:
        subprocess.run(["fusermount3", "-u", str(tmp_path / "m")], check=False)
    deadline = time.monotonic() + 10
    while not out.exists() and time.monotonic() < deadline:  # written atomically at exit
        time.sleep(0.05)
    assert json.loads(out.read_text())["ops"]["write"]["count"] == 1


def test_a_hidden_model_is_neither_on_the_command_line_nor_in_the_environment(mounts):
    """A lab's hidden device (labs/labkit): its parameters come from EMUSSD_ARGS, which emussd blanks
    once read, so another process of the same user finds them in neither /proc file."""
    m = mounts(read_latency_us=1234, alpha=2.7, k_r=13, k_w=5, hide_model=True)
    shown = Path(f"/proc/{m.pid()}/cmdline").read_bytes() + Path(f"/proc/{m.pid()}/environ").read_bytes()
    assert b"1234" not in shown and b"2.7" not in shown and b"--k-r" not in shown and b"EMUSSD_ARGS=" in shown
    params = m.stats()["params"]
    assert (params["read_latency_us"], params["alpha"], params["k_r"], params["k_w"]) == (1234, 2.7, 13, 5)
