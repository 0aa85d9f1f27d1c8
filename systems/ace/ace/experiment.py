"""Chapter 4's experiment driver: one measured pgbench run of the patched PostgreSQL.

    template = ensure_template(install, Database("synthetic", 10), templates_dir)
    row = measure(install, run, template, data_dir=..., wal_dir=..., settings=...)

Every run starts from the same database: a template cluster, loaded once per database
(`ensure_template`) off the device under test, is copied onto the device (through the
device's preparation path, which bypasses an emulated SSD's timing), with its WAL on
another declared path behind the `pg_wal` link, as the thesis keeps the WAL on a
separate device. Then the server starts with the run's policy and pool, a warm-up runs
the workload until the pool is full and dirty, the counters are reset, and the measured
work runs: the same pgbench transactions (count and seed) for every configuration, so
runtimes compare the same work (the thesis ran its baseline for 10 minutes and the same
work for the others; `calibrate` finds the transaction count that takes a given time).
"""

from __future__ import annotations

import dataclasses
import fcntl
import fnmatch
import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from . import synthetic
from .server import Server, Session, check_reachable, hand_over

PAGE_BYTES = 8192       # PostgreSQL's block size
MIN_POOL_PAGES = 64     # PostgreSQL needs a few buffers per backend; far below every grid point
DATABASE = "postgres"

# The variants of each policy (thesis Figure 4.8): baseline, ACE without and with prefetching.
VARIANTS = {
    "baseline": {"ace": False},
    "ace": {"ace": True, "ace_prefetch": "off"},
    "ace_pf": {"ace": True, "ace_prefetch": "history"},
}
POLICIES = ("clock", "lru", "cflru", "lru_wsr")

# What defines how a run is made and measured (a kept run's result depends on these files).
_ACE_DIR = Path(__file__).resolve().parents[1]
DRIVER_SOURCES = sorted([Path(__file__).resolve(), _ACE_DIR / "ace" / "synthetic.py", _ACE_DIR / "ace" / "tpcc.py",
                         *(_ACE_DIR / "workloads" / "tpcc").rglob("*.sql")])

COUNTERS = ("hits", "misses", "evictions", "dirty_victims", "writes_backend", "writes_bgwriter",
            "writes_checkpointer", "ace_batches", "ace_batch_pages", "prefetch_issued", "prefetch_used",
            "ace_pins_refused")


class ExperimentError(RuntimeError):
    pass


@dataclass(frozen=True)
class Database:
    """What a template cluster holds: the synthetic pgbench database (size = scale) or TPC-C
    (size = warehouses)."""
    kind: str
    size: int
    fillfactor: int = 90
    seed: int = 1

    def key(self) -> str:
        return f"{self.kind}-{self.size}-ff{self.fillfactor}-seed{self.seed}"


@dataclass(frozen=True)
class Run:
    """One measured run. `workload` names it (MS, rw50, tpcc-mix, ...); a synthetic run has
    read_pct/hot_ops_pct/hot_pages_pct, a TPC-C run its transaction mix."""
    database: Database
    workload: str
    policy: str
    variant: str
    n_w: int
    n_e: int
    pool_fraction: float
    clients: int
    transactions: int          # measured transactions per client
    warmup_transactions: int   # per client, before the counters are reset
    seed: int
    repetition: int
    read_pct: int | None = None
    hot_ops_pct: int | None = None
    hot_pages_pct: int | None = None
    tpcc_mix: str | None = None

    def __post_init__(self):
        if self.policy not in POLICIES:
            raise ValueError(f"policy {self.policy!r} is not one of {', '.join(POLICIES)}")
        if self.variant not in VARIANTS:
            raise ValueError(f"variant {self.variant!r} is not one of {', '.join(VARIANTS)}")
        if (self.tpcc_mix is None) == (self.read_pct is None):
            raise ValueError("a run is either synthetic (read_pct, hot_ops_pct, hot_pages_pct) or TPC-C (tpcc_mix)")

    def plain(self) -> dict:
        return dataclasses.asdict(self)

    def key(self) -> str:
        """A stable name for this run's raw output (its every parameter, hashed)."""
        text = json.dumps(self.plain(), sort_keys=True)
        return f"{self.workload}-{self.policy}-{self.variant}-{hashlib.sha256(text.encode()).hexdigest()[:12]}"

    def server_settings(self, pool_pages: int) -> dict:
        ace = VARIANTS[self.variant]
        settings = {"shared_buffers": f"{pool_pages * PAGE_BYTES // 1024}kB",
                    "buffer_replacement_policy": self.policy, **ace}
        if ace["ace"]:
            settings.update(ace_n_w=self.n_w, ace_n_e=self.n_e)
        return settings

    def workload_arguments(self, directory: Path) -> list[str]:
        """pgbench's arguments for the measured workload (scripts written into `directory`)."""
        if self.tpcc_mix is not None:
            from . import tpcc  # noqa: PLC0415 (only TPC-C runs need it)

            return ["--no-vacuum", *tpcc.pgbench_variables(self.database.size),
                    *tpcc.write_scripts(directory, self.tpcc_mix)]
        workload = synthetic.SyntheticWorkload(self.read_pct, self.hot_ops_pct, self.hot_pages_pct)
        return workload.pgbench_arguments(directory, self.database.size)


# ---------------------------------------------------------------------- templates


def ensure_template(install: Path, database: Database, templates_dir: Path,
                    progress: Callable[[str], None] = print) -> Path:
    """The template cluster of `database` under templates_dir (loaded once; reused while
    its record `template.json` exists). Returns the template's directory."""
    target = Path(templates_dir) / database.key()
    record = target / "template.json"
    if record.exists():
        return target
    Path(templates_dir).mkdir(parents=True, exist_ok=True)
    with open(Path(templates_dir) / f"{database.key()}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two campaigns may need it at once: one loads, the other waits
        if not record.exists():
            _load_template(install, database, target, progress)
    return target


def _load_template(install: Path, database: Database, target: Path, progress: Callable[[str], None]) -> None:
    record = target / "template.json"
    shutil.rmtree(target, ignore_errors=True)  # a load that did not finish left no record
    target.mkdir(parents=True)
    target.chmod(0o755)
    progress(f"loading the {database.kind} database (size {database.size}) into {target}")
    started = time.monotonic()
    with Server(install, target, {"autovacuum": False, "max_wal_size": "8GB", "checkpoint_timeout": "1h"}) as pg:
        pg.sql("CREATE EXTENSION pg_ace")
        if database.kind == "synthetic":
            pg.client(["pgbench", *synthetic.load_arguments(database.size, database.fillfactor)], timeout=3600)
        elif database.kind == "tpcc":
            from . import tpcc  # noqa: PLC0415

            tpcc.load(pg, database.size, database.seed)
        else:
            raise ExperimentError(f"unknown database kind {database.kind!r}")
        pg.sql("CHECKPOINT")
        size_bytes = int(pg.sql(f"SELECT pg_database_size('{DATABASE}')"))
    facts = {**dataclasses.asdict(database), "bytes": size_bytes, "pages": size_bytes // PAGE_BYTES,
             "load_seconds": round(time.monotonic() - started, 1)}
    record.write_text(json.dumps(facts, indent=2) + "\n", encoding="utf-8")


def template_facts(template: Path) -> dict:
    return json.loads((Path(template) / "template.json").read_text(encoding="utf-8"))


def pool_pages(template: Path, fraction: float) -> int:
    """shared_buffers as a fraction of the database (thesis: 6 % by default)."""
    return max(MIN_POOL_PAGES, round(template_facts(template)["pages"] * fraction))


def place_cluster(template: Path, data_dir: Path, wal_dir: Path) -> None:
    """Make data_dir the template's cluster and wal_dir its WAL, linked as pg_wal: an exact copy,
    written over what an earlier run left there (`mirror`)."""
    source = Path(template) / "data"
    mirror(source, data_dir, exclude=("pg_wal", "postmaster.*"))
    mirror(source / "pg_wal", wal_dir)
    (Path(data_dir) / "pg_wal").symlink_to(Path(wal_dir).resolve())
    for path in (data_dir, wal_dir):
        hand_over(Path(path))
        Path(path).chmod(0o700)


MIRROR_CHUNK = 1 << 16


def mirror(source: Path, target: Path, exclude: tuple[str, ...] = ()) -> None:
    """Make the directory `target` a byte-for-byte copy of `source` (files, their modes, symlinks,
    subdirectories; `exclude`: names, glob patterns, in source's top level, left out), writing only
    the chunks that differ and removing what source does not have. A run's cluster is the last
    run's rewritten in place: a fresh copy creates ~1,000 files and 100 MB of new pages every run,
    1.4 s of a 6 s run on a freshly booted 2-core VM, where mirroring the last run's takes 0.1 s."""
    source, target = Path(source), Path(target)
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        target.unlink()
    target.mkdir(parents=True, exist_ok=True)
    wanted = {entry.name: entry for entry in os.scandir(source)
              if not any(fnmatch.fnmatch(entry.name, pattern) for pattern in exclude)}
    for entry in os.scandir(target):
        if entry.name not in wanted or _kind(entry) != _kind(wanted[entry.name]):
            _remove(Path(entry.path))
    for name, entry in wanted.items():
        placed = target / name
        kind = _kind(entry)
        if kind == "link":
            link = os.readlink(entry.path)
            if placed.is_symlink() and os.readlink(placed) != link:
                placed.unlink()
            if not placed.is_symlink():
                os.symlink(link, placed)
            continue
        if kind == "dir":
            mirror(Path(entry.path), placed)
        else:
            _mirror_file(Path(entry.path), placed)
        placed.chmod(entry.stat().st_mode & 0o7777)


def _kind(entry: os.DirEntry) -> str:
    return "link" if entry.is_symlink() else "dir" if entry.is_dir(follow_symlinks=False) else "file"


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


def _mirror_file(source: Path, target: Path) -> None:
    size = source.stat().st_size
    read_fd = os.open(source, os.O_RDONLY)
    try:
        write_fd = os.open(target, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            os.ftruncate(write_fd, size)
            for offset in range(0, size, MIRROR_CHUNK):
                chunk = os.pread(read_fd, MIRROR_CHUNK, offset)
                if os.pread(write_fd, len(chunk), offset) != chunk:
                    os.pwrite(write_fd, chunk, offset)
        finally:
            os.close(write_fd)
    finally:
        os.close(read_fd)


# ---------------------------------------------------------------------- pgbench


def parse_pgbench(output: str) -> dict:
    """The numbers of pgbench's summary (PostgreSQL 15 format)."""
    def number(pattern: str) -> float:
        match = re.search(pattern, output, re.MULTILINE)
        if match is None:
            raise ExperimentError(f"pgbench's output has no {pattern!r}:\n{output[-2000:]}")
        return float(match.group(1))

    result = {"transactions": int(number(r"^number of transactions actually processed: (\d+)")),
              "failed": int(number(r"^number of failed transactions: (\d+)")),
              "latency_ms": number(r"^latency average = ([\d.]+) ms"),
              "tps": number(r"^tps = ([\d.]+) \(without initial connection time\)")}
    # Transactions per script: listed when there are several, else the one script ran them all.
    scripts = re.findall(r"^SQL script \d+: (.+)\n(?: - weight: .*\n)? - (\d+) transactions", output, re.MULTILINE)
    if not scripts:
        scripts = re.findall(r"^transaction type: (.+)$", output, re.MULTILINE)[:1]
        scripts = [(path, result["transactions"]) for path in scripts]
    result["per_script"] = {Path(path.strip()).stem: int(count) for path, count in scripts}
    return result


def pgbench(pg: Server, arguments: list[str], clients: int, transactions: int, seed: int,
            output: Path | None = None) -> dict:
    """Run pgbench (its report is kept in `output`) and return its numbers."""
    command = ["pgbench", "-n", "-c", str(clients), "-j", str(clients), "-t", str(transactions),
               f"--random-seed={seed}", *arguments, DATABASE]
    started = time.monotonic()
    result = pg.client(command, timeout=24 * 3600)
    if output is not None:
        Path(output).write_text(f"$ {' '.join(command)}\n{result.stdout}{result.stderr}", encoding="utf-8")
    parsed = parse_pgbench(result.stdout)
    parsed["wall_s"] = time.monotonic() - started
    if parsed["failed"]:
        raise ExperimentError(f"pgbench reported {parsed['failed']} failed transactions:\n{result.stdout[-2000:]}")
    if parsed["transactions"] != clients * transactions:
        raise ExperimentError(f"pgbench processed {parsed['transactions']} of {clients * transactions} transactions")
    return parsed


# ---------------------------------------------------------------------- one run


def _kept(prefix: Path | None, suffix: str) -> Path | None:
    return None if prefix is None else Path(f"{prefix}.{suffix}")


def measure(install: Path, run: Run, template: Path, *, data_dir: Path, wal_dir: Path, settings: dict,
            placed_data_dir: Path | None = None, written_pages: Callable[[], int | None] = lambda: None,
            keep: Path | None = None) -> dict:
    """One run: place the cluster, start the server, warm up, measure. Returns the row's
    measurements (runtime, tps, the pool's counters and its dirty pages at the start and the end,
    the device's written pages). The raw
    outputs are kept as <keep>.warmup.txt, <keep>.pgbench.txt (pgbench's reports) and
    <keep>.server.log.

    The server uses data_dir; the cluster is copied to placed_data_dir, the same directory
    by another path when given (an emulated SSD's backing store: copying is not measured)."""
    for path in (data_dir, wal_dir):
        check_reachable(path)
    place_cluster(template, placed_data_dir or data_dir, wal_dir)
    pages = pool_pages(template, run.pool_fraction)
    root = Path(tempfile.mkdtemp(prefix="ace-run-", dir="/tmp"))  # the socket: short, local
    scripts = root / "scripts"
    scripts.mkdir()
    hand_over(root)  # the server writes its log there
    try:
        pg = Server(install, root, data=data_dir)
        pg.configure({**pg.connection_settings(), **settings, **run.server_settings(pages)})
        pg.start()
        try:
            with pg.session() as session:  # one connection, idle while pgbench runs
                check_batch_sizes(session, run)
                arguments = run.workload_arguments(scripts)
                if run.warmup_transactions:
                    pgbench(pg, arguments, run.clients, run.warmup_transactions, run.seed + 1_000_003,
                            _kept(keep, "warmup.txt"))
                # Counters as differences of snapshots, each read in one statement with the device's
                # count right after it: the background writer cleans on its own clock (a round every
                # 200 ms), also between the warm-up and the run and after the run.
                start, before = pool_state(session), written_pages()
                measured = pgbench(pg, arguments, run.clients, run.transactions, run.seed, _kept(keep, "pgbench.txt"))
                end, after = pool_state(session), written_pages()
            counters = {name: end[name] - start.get(name, 0) for name in end}
        finally:
            pg.stop("immediate")  # the cluster is thrown away: no shutdown checkpoint to wait for
        if keep is not None:
            shutil.copyfile(root / "server.log", _kept(keep, "server.log"))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    row = {"pool_pages": pages, "database_pages": template_facts(template)["pages"],
           "runtime_s": measured["transactions"] / measured["tps"], "wall_s": measured["wall_s"],
           "tps": measured["tps"], "latency_ms": measured["latency_ms"],
           "measured_transactions": measured["transactions"],
           "new_orders": measured["per_script"].get("new_order") if run.tpcc_mix else None,
           **{name: counters.get(name, 0) for name in COUNTERS},
           "device_written_pages": None if before is None or after is None else after - before,
           "dirty_pages_before": start["dirty_pages"], "dirty_pages_after": end["dirty_pages"]}
    row["logical_writes"] = row["writes_backend"] + row["writes_bgwriter"] + row["writes_checkpointer"]
    return row


def check_batch_sizes(pg: Server | Session, run: Run) -> None:
    """Refuse a run whose server batches fewer pages than its n_w or n_e: the server bounds
    both by the pool (at most 1 + shared_buffers / 8 pages; systems/ace/README.md), and such a
    run would not be the one its parameters name. The same query creates pg_buffercache (pool_state)."""
    ace = VARIANTS[run.variant]
    expected = {"ace_n_w_effective": run.n_w if ace["ace"] else 1,
                "ace_n_e_effective": run.n_e if ace.get("ace_prefetch", "off") != "off" else 1}
    shown = pg.sql("CREATE EXTENSION IF NOT EXISTS pg_buffercache; SELECT "
                   + ", ".join(f"current_setting('{name}')" for name in [*expected, "shared_buffers"])).split("|")
    got = dict(zip(expected, map(int, shown)))
    if got != expected:
        raise ExperimentError(
            f"the server runs {got} for n_w = {run.n_w}, n_e = {run.n_e}: a pool of {shown[-1]} "
            "allows batches of at most 1 + shared_buffers / 8 pages. Give this figure a larger pool_fraction "
            "(configs/experiments/ace.yaml or the profile) or a larger database, or a smaller n_w / n_e")


def pool_state(pg: Server | Session) -> dict[str, int]:
    """The pool's counters (pg_ace_counters) and its dirty pages, read in one statement. A run's
    writes plus the change in dirty pages are the writes its updates cost, whenever the pool
    writes them (a short run ends with many still owed)."""
    rows = pg.sql("SELECT name, value FROM pg_ace_counters() UNION ALL "
                  "SELECT 'dirty_pages', count(*) FILTER (WHERE isdirty) FROM pg_buffercache")
    return {name: int(value) for name, value in (line.split("|") for line in rows.splitlines())}
