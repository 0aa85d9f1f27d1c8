"""PostgreSQL's regression suite, its isolation suite and pg_ace's test against a running
patched server.

    from ace.regress import run_core_suite
    run_core_suite(server, out_dir)     # raises RegressionFailed with the diffs

This is `make installcheck-parallel`: the same tests as `make check`, against a server
started with the settings under test (a replacement policy, ACE, a small pool, data
checksums) instead of a throw-away default one. pg_regress runs as the server's user,
since the tests make the server write files into the output directory.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from .build import source_tree
from .server import PORT, SUPERUSER, Server, as_server_user, hand_over


class RegressionFailed(AssertionError):
    pass


def _pg_regress(server: Server, out_dir: Path, args: list[str], program: str = "src/test/regress/pg_regress") -> str:
    source = source_tree(server.install)
    command = [str(source / program), f"--bindir={server.bin}", f"--outputdir={out_dir}",
               f"--host={server.root}", f"--port={PORT}", f"--user={SUPERUSER}", *args]
    result = subprocess.run(as_server_user(command), env=server.env(), capture_output=True, text=True)
    output = result.stdout + result.stderr
    if result.returncode != 0:
        diffs = out_dir / "regression.diffs"
        shown = diffs.read_text(errors="replace")[:6000] if diffs.exists() else ""
        failed = [line.strip() for line in output.splitlines() if "FAILED" in line or "failed (ignored)" in line]
        raise RegressionFailed(f"pg_regress {' '.join(args[-1:])} failed: {'; '.join(failed) or output[-2000:]}\n"
                               f"{shown}\n(all diffs: {diffs})\n{server.log_tail()}")
    return output


def run_core_suite(server: Server, out_dir: Path, max_concurrent: int = 20) -> str:
    """The core regression suite (parallel schedule). Returns pg_regress's output."""
    source = source_tree(server.install)
    regress = source / "src/test/regress"
    return _pg_regress(server, _fresh(out_dir), [
        f"--inputdir={regress}", f"--dlpath={regress}", f"--schedule={regress}/parallel_schedule",
        f"--max-concurrent-tests={max_concurrent}"])


def run_isolation_suite(server: Server, out_dir: Path) -> str:
    """PostgreSQL's isolation suite (`make installcheck` in src/test/isolation): 115 specs of
    concurrent sessions, run one at a time as PostgreSQL's schedule says (the specs share
    object names, so they cannot run side by side). Returns pg_isolation_regress's output."""
    isolation = source_tree(server.install) / "src/test/isolation"
    return _pg_regress(server, _fresh(out_dir), [f"--inputdir={isolation}",
                                                 f"--schedule={isolation}/isolation_schedule"],
                       program="src/test/isolation/pg_isolation_regress")


def run_pg_ace_suite(server: Server, out_dir: Path) -> str:
    """pg_ace's own test (it resets the counters)."""
    source = source_tree(server.install)
    return _pg_regress(server, _fresh(out_dir), [
        f"--inputdir={source / 'contrib/pg_ace'}", "--dbname=contrib_regression", "pg_ace"])


def _fresh(out_dir: Path) -> Path:
    """An empty output directory that pg_regress, as the server's user, can write into."""
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    hand_over(out_dir)
    return out_dir
