"""ssdartifact.memlimit: a child process in a memory cgroup is held to its limit, page cache
included, and one that needs more is killed and reported; the group is removed afterwards."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ssdartifact import memlimit


@pytest.fixture
def limited():
    def group(limit_bytes: int) -> memlimit.MemoryCgroup:
        try:
            with memlimit.MemoryCgroup(limit_bytes, "probe"):
                pass
        except memlimit.LimitUnavailable as missing:
            pytest.skip(str(missing))
        return memlimit.MemoryCgroup(limit_bytes, "test")
    return group


def test_a_limit_below_one_mib_is_refused():
    with pytest.raises(ValueError, match="at least 1 MiB"):
        memlimit.MemoryCgroup(4096, "tiny")


def test_a_process_over_its_limit_is_killed_and_counted(limited):
    with limited(32 << 20) as group:
        result = subprocess.run([sys.executable, "-c", "x = bytearray(128 << 20)"], preexec_fn=group.join)
        usage = group.usage()
        path = group.path
    assert result.returncode == -9 and usage.oom_kills >= 1
    assert usage.peak_bytes is None or usage.peak_bytes <= 32 << 20
    assert not path.exists()


def test_the_page_cache_a_process_fills_is_held_to_its_limit(limited, tmp_path):
    big = tmp_path / "big.bin"
    big.write_bytes(b"\1" * (96 << 20))
    memlimit.evict([tmp_path])
    with limited(32 << 20) as group:
        result = subprocess.run(["sh", "-c", f"cat {big} {big} > /dev/null"], preexec_fn=group.join)
        usage = group.usage()
    assert result.returncode == 0  # a cache is reclaimed at the limit, not a reason to kill
    assert usage.oom_kills == 0 and (usage.peak_bytes is None or usage.peak_bytes <= 32 << 20)
    assert usage.peak_bytes is None or usage.peak_bytes > 16 << 20  # the cache was charged to the group


def test_counters_are_read_from_flat_keyed_files(tmp_path):
    (tmp_path / "memory.events").write_text("low 0\nhigh 0\nmax 7\noom 1\noom_kill 1\n")
    assert memlimit._field(tmp_path / "memory.events", "max") == 7
    assert memlimit._field(tmp_path / "memory.events", "oom_kill") == 1
    assert memlimit._field(tmp_path / "absent", "max") == 0
