"""The authors' released ReStore (BU-DiSC/ReStore at 8144333f, configs/sources.yaml `restore_original`)
beside ours: their agent (`Run_RL`) and baselines (`Run_tLFU`, `Run_TEMP`, `Run_tLRU`) built from
the pinned tarball with the patch series in systems/restore/original/, and run on the same request
streams and tiers as restore-sim.

    programs = original.build()                          # {"restore": .../Run_RL, "tlfu": ..., ...}
    original.write_stream("trace.csv", "workload_artifact.txt")
    counts = original.run_once(programs["restore"], stream, work, requests=..., pages=..., capacities=..., tiers=...)

Their code states no license: it is built and run from the tarball, never copied into the project.
Their emulator sleeps through every request in one thread pool per tier (real time), serves the
stream open-loop (every request submitted at once) and times the drain of the pools; it seeds
from `std::random_device`. So a run is repeated and its spread kept. Which tier serves each
request and which pages move depend on the policy (and, for their agent, on the pools' queues),
so those counts are compared with ours too.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from ssdartifact import files, native, sources

from . import engine
from .engine import RESTORE_DIR

SOURCE = "restore_original"  # configs/sources.yaml
PATCHES = RESTORE_DIR / "original"  # the series: what their build lacks
BUILD_ROOT = RESTORE_DIR / "build-original"
DOWNLOADS = BUILD_ROOT / "downloads"
# our policy name -> their program, and the name their program gives its log (not the program's)
PROGRAMS = {"restore": "Run_RL", "tlfu": "Run_tLFU", "temp": "Run_TEMP", "tlru": "Run_tLRU"}
LOG_NAMES = {"Run_RL": "RLs2", "Run_tLFU": "LFU", "Run_TEMP": "TEMP", "Run_tLRU": "LRU"}
# The flags of their MakeFile (which names g++-12; the machine's g++ here)
FLAGS = ["-O3", "-std=c++20", "-pthread"]
# The name their programs are given for the stream: not YCSB, TPCC, TPCE or MSR*, which they would
# place from a `.allpageids` file; any other name fills the tiers with pages 0, 1, ... in order
WORKLOAD = "artifact"

# Their log's lines (Run_*.cpp's last lines), and the column each fills
LOG_NUMBERS = {
    "loop_us": r"For loop time: (\d+) microseconds",
    "decision_ns": r"Total \w+ runtime: (\d+) nanoseconds",
    "total_us": r"Total requests time: (\d+) microseconds",
    "reads": r"There are (\d+) reads",
    "writes": r"reads, and (\d+) writes",
    "accesses_t1": r"page hits in Tier1: (\d+)",
    "accesses_t2": r"page hits in Tier2: (\d+)",
    "accesses_t3": r"page hits in Tier3: (\d+)",
    "migrations_t2_t1": r"(?:migrated|upgraded) from Tier2 to Tier1: (\d+)",
    "migrations_t3_t2": r"(?:migrated|upgraded) from Tier3 to Tier2: (\d+)",
}


class OriginalError(RuntimeError):
    """Their code could not be built or run; the message says what to do."""


def patch_series() -> list[Path]:
    return native.patch_series(PATCHES, OriginalError)


def build_key() -> str:
    """The tarball's sha256, the patches, the flags and the compiler: a build's folder name."""
    digest = hashlib.sha256(sources.pin(SOURCE).sha256.encode())
    for patch in patch_series():
        digest.update(patch.name.encode() + b"\0" + patch.read_bytes())
    digest.update(json.dumps([FLAGS, sorted(PROGRAMS.values()), native.compiler_version("g++")]).encode())
    return digest.hexdigest()[:12]


def build_dir() -> Path:
    return BUILD_ROOT / build_key()


def built(directory: Path | None = None) -> dict[str, Path]:
    directory = directory or build_dir()
    return {policy: directory / program for policy, program in PROGRAMS.items()}


def build(say=None) -> dict[str, Path]:
    """Their four programs, built now unless a finished build (its built.json) exists: the pinned,
    sha256-checked tarball (fetched into DOWNLOADS), patched, each program compiled alone."""
    say = say or (lambda message: print(f"restore original: {message}", file=sys.stderr, flush=True))
    missing = [tool for tool in ("g++", "patch") if shutil.which(tool) is None]
    if missing:
        raise OriginalError(f"building the authors' ReStore needs {', '.join(missing)}: run `make setup`")
    directory = build_dir()
    with native.locked(directory):
        if (directory / "built.json").exists():
            return built(directory)
        try:
            tarball = sources.fetch(SOURCE, DOWNLOADS, say=say)
            tree = sources.unpack(SOURCE, tarball, directory / "src")
        except sources.SourceError as error:
            raise OriginalError(str(error)) from None
        say(f"building {', '.join(PROGRAMS.values())} with {len(patch_series())} patches in {directory}")
        with open(directory / "build.log", "w") as log:
            for patch in patch_series():
                _run(["patch", "-p1", "--batch", "--forward", "--quiet", "-i", str(patch)], tree, log)
            for program in PROGRAMS.values():
                _run(["g++", *FLAGS, "-o", str(directory / program), f"cpp/{program}.cpp"], tree, log)
        pin = sources.pin(SOURCE)
        record = {"source": SOURCE, "repository": pin.repository, "commit": pin.commit, "source_sha256": pin.sha256,
                  "patches": {p.name: files.sha256_file(p) for p in patch_series()}, "flags": FLAGS,
                  "compiler": native.compiler_version("g++"), "key": build_key()}
        files.atomic_write_text(directory / "built.json", json.dumps(record, indent=1) + "\n")
    return built(directory)


def unreachable() -> str:
    """"" when their programs can be built here (a finished build, or the pinned tarball already
    fetched or in the local sources folder), else where the tarball was looked for. Checked before
    a run starts: without it the workflow marks this comparison 'not run'."""
    if (build_dir() / "built.json").exists():
        return ""
    found, why = sources.where_from(SOURCE, DOWNLOADS)
    return "" if found else why


def build_record() -> dict:
    return json.loads((build_dir() / "built.json").read_text())


def _run(command: list[str], cwd: Path, log) -> None:
    log.write(f"$ {' '.join(command)}\n")
    log.flush()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "LANG": "C"}
    if subprocess.run(command, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, env=env).returncode != 0:
        raise OriginalError(f"{' '.join(command[:2])}... failed in {cwd}: see {log.name}")


def write_stream(trace_csv: str | Path, stream: str | Path) -> dict:
    """restore-sim's page trace (CSV page,op[,timestamp]) as their input, one `R <page>` or
    `W <page>` a line. Returns the requests and the pages (the highest page id + 1: they place
    pages 0 .. pages-1, as restore-sim does with a trace)."""
    requests, highest = 0, -1
    with open(trace_csv, newline="") as src, open(stream, "w") as dst:
        for line, row in enumerate(csv.DictReader(src), start=2):
            try:
                page, op = int(row["page"]), row["op"]
            except (KeyError, TypeError, ValueError):
                raise OriginalError(f"{trace_csv}: line {line}: not a page request (page,op): {row}") from None
            if op not in ("R", "W") or page < 0:
                raise OriginalError(f"{trace_csv}: line {line}: not a page request (page,op): {row}")
            dst.write(f"{op} {page}\n")
            requests += 1
            highest = max(highest, page)
    return {"requests": requests, "pages": highest + 1}


def arguments(*, requests: int, pages: int, capacities: list[int], tiers: dict) -> list[str]:
    """Their command line: the stream's size, the tiers' capacities in pages and the tiers' device
    models (one thread pool of k servers per tier, reads and writes alike: k_r must be k_w)."""
    if list(tiers["k_r"]) != list(tiers["k_w"]):
        raise OriginalError(f"their emulator has one pool per tier for reads and writes: k_r {tiers['k_r']} "
                            f"must equal k_w {tiers['k_w']}")
    args = [f"-workload={WORKLOAD}", f"-total_num_pages={pages}", f"-total_num_reqs={requests}"]
    for n in range(3):
        latency = tiers["read_latency_us"][n]
        if latency != int(latency):
            raise OriginalError(f"their emulator takes whole microseconds: tier {n + 1} reads in {latency} us")
        args += [f"-max_capacity_tier{n + 1}={capacities[n]}", f"-read_time_tier{n + 1}={int(latency)}",
                 f"-asym_tier{n + 1}={tiers['alpha'][n]}", f"-num_threads_tier{n + 1}={tiers['k_r'][n]}"]
    return args


def log_path(work: Path, capacities: list[int], tiers: dict, program: str) -> Path:
    """Where their program writes its log (it creates only the last folder of it)."""
    latencies = "-".join(str(int(t)) for t in tiers["read_latency_us"])
    return (work / f"Results_{WORKLOAD}" / f"capacity_tests_{latencies}" / f"{capacities[0]}-{capacities[1]}"
            / f"output_{WORKLOAD}_{LOG_NAMES[program]}.log")


def parse_log(text: str) -> dict:
    """The numbers of their log (LOG_NUMBERS); a log without one of them is refused."""
    numbers = {}
    for name, pattern in LOG_NUMBERS.items():
        found = re.search(pattern, text)
        if found is None:
            raise OriginalError(f"their log has no line matching {pattern!r} (the run did not finish?)")
        numbers[name] = int(found.group(1))
    return numbers


def run_once(program: Path, stream: Path, work: Path, *, requests: int, pages: int, capacities: list[int],
             tiers: dict, timeout_s: float = 1800) -> dict:
    """One run of `program` on `stream` (written by write_stream) in the folder `work` (emptied):
    the numbers of its log."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    (work / f"workload_{WORKLOAD}.txt").symlink_to(Path(stream).resolve())
    log = log_path(work, capacities, tiers, Path(program).name)
    log.parent.parent.mkdir(parents=True)
    command = [str(program), *arguments(requests=requests, pages=pages, capacities=capacities, tiers=tiers)]
    try:
        done = subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise OriginalError(f"{Path(program).name} ran longer than {timeout_s:.0f} s on {requests} requests") from None
    if done.returncode != 0 or not log.is_file():
        said = (done.stdout + done.stderr)[-2000:]
        raise OriginalError(f"{Path(program).name} exited with {done.returncode}: {said}")
    numbers = parse_log(log.read_text(errors="replace"))
    served = numbers["reads"] + numbers["writes"]
    if served != requests:
        raise OriginalError(f"{Path(program).name} served {served} of {requests} requests")
    return numbers


# --- the campaign: their four programs and ours on the same streams --------------------------------

RUN_COLUMNS = ["implementation", "workload", "seed", "repeat", "policy", "pages", "requests", "capacity_pages",
               "total_us", "loop_us", "decision_ns", "accesses_t1", "accesses_t2", "accesses_t3",
               "migrations_t2_t1", "migrations_t3_t2", "promotion_rate"]
SUMMARY_COLUMNS = ["implementation", "workload", "seed", "policy", "runs", "total_us", "total_us_min", "total_us_max",
                   "spread", "vs_tlfu", "vs_tlfu_min", "vs_tlfu_max", "vs_temp", "accesses_t1", "accesses_t2",
                   "accesses_t3", "promotion_rate", "tier_gap"]
IMPLEMENTATIONS = ("authors", "artifact")


def promotion_rate(row: dict) -> float | None:
    """Promotions per access served by Tier 2 or Tier 3 (where a promotion is decided)."""
    below = row["accesses_t2"] + row["accesses_t3"]
    return (row["migrations_t2_t1"] + row["migrations_t3_t2"]) / below if below else None


def our_options(p: dict) -> dict:
    """restore-sim's options for ours: the tiers, Chapter 6's options, then the block's `ours` (by
    default their emulator's choices: every request at once, pages 0.. filling the fastest tier)."""
    options = {k: p["tiers"][k] for k in ("read_latency_us", "alpha", "k_r", "k_w")}
    options.update(server_model=p["server_model"], arrival=p["arrival"], clients=p["clients"])
    return {**options, **p["options"], **p.get("ours", {})}


def campaign(p: dict, binary: Path, programs: dict[str, Path], scratch: Path, say=print) -> list[dict]:
    """Every stream (p: workloads, pages, requests, seeds) dumped by restore-sim, run once by ours
    (virtual time: the same every run; our_options) and `repeats` times by each of their
    programs (real time), the repeats outermost so that a busy spell of the machine falls on every
    policy. One row per run (RUN_COLUMNS)."""
    rows = []
    for workload in p["workloads"]:
        for seed in p["seeds"]:
            trace = scratch / f"{workload}-{seed}.csv"
            engine.run(binary, workload=workload, pages=p["pages"], requests=p["requests"], seed=seed,
                       dump_trace=trace)
            stream = scratch / f"{workload}-{seed}.txt"
            size = write_stream(trace, stream)
            ours = engine.run(binary, trace=trace, policy=":".join(p["policies"]), cpu_timing=False,
                              capacity_pct=p.get("capacity_pct", p["default_capacity_pct"]), **our_options(p))
            capacities = [int(c) for c in ours[0]["capacity_pages"].split(":")]
            for r in ours:
                rows.append({**{c: r.get(c) for c in RUN_COLUMNS}, "implementation": "artifact", "workload": workload,
                             "seed": seed, "repeat": 1, "total_us": r["data_access_us"], "loop_us": None,
                             "decision_ns": None})
            for repeat in range(1, p["repeats"] + 1):
                for policy in p["policies"]:
                    say(f"{PROGRAMS[policy]} on {workload} (seed {seed}), repeat {repeat} of {p['repeats']}")
                    numbers = run_once(programs[policy], stream, scratch / "run", requests=size["requests"],
                                       pages=size["pages"], capacities=capacities, tiers=p["tiers"],
                                       timeout_s=p.get("timeout_s", 1800))
                    rows.append({**numbers, "implementation": "authors", "workload": workload, "seed": seed,
                                 "repeat": repeat, "policy": policy, "pages": size["pages"],
                                 "requests": size["requests"], "capacity_pages": ours[0]["capacity_pages"]})
    for row in rows:
        row["promotion_rate"] = promotion_rate(row)
    return [{c: row.get(c) for c in RUN_COLUMNS} for row in rows]


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def summary(rows: list[dict]) -> list[dict]:
    """Per implementation, workload, seed and policy: the median of the runs' times and counts, the
    times' range and spread ((max - min) / median), the time against the same implementation's tLFU
    and TEMP on the same stream (vs_tlfu: the median of the repeats' ratios, each repeat's policy
    against that repeat's tLFU; min and max over the repeats), and for ours the largest gap, over
    the tiers, between the accesses each tier serves in ours and in theirs (a share of the requests)."""
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        groups.setdefault((row["implementation"], row["workload"], row["seed"], row["policy"]), []).append(row)
    out = []
    for (implementation, workload, seed, policy), runs in groups.items():
        def time_of(other, repeat):
            found = [r for r in groups.get((implementation, workload, seed, other), []) if r["repeat"] == repeat]
            return found[0]["total_us"] if found else None
        ratios = {other: [r["total_us"] / time_of(other, r["repeat"]) for r in runs if time_of(other, r["repeat"])]
                  for other in ("tlfu", "temp")}
        times = [r["total_us"] for r in runs]
        middle = _median(times)
        line = {"implementation": implementation, "workload": workload, "seed": seed, "policy": policy,
                "runs": len(runs), "total_us": middle, "total_us_min": min(times), "total_us_max": max(times),
                "spread": (max(times) - min(times)) / middle if middle else None,
                "vs_tlfu": _median(ratios["tlfu"]) if ratios["tlfu"] else None,
                "vs_tlfu_min": min(ratios["tlfu"], default=None), "vs_tlfu_max": max(ratios["tlfu"], default=None),
                "vs_temp": _median(ratios["temp"]) if ratios["temp"] else None,
                "promotion_rate": _median([r["promotion_rate"] or 0 for r in runs])}
        for tier in ("accesses_t1", "accesses_t2", "accesses_t3"):
            line[tier] = _median([r[tier] for r in runs])
        out.append(line)
    for line in out:
        theirs = [o for o in out if o["implementation"] == "authors" and
                  (o["workload"], o["seed"], o["policy"]) == (line["workload"], line["seed"], line["policy"])]
        line["tier_gap"] = None
        if line["implementation"] == "artifact" and theirs:
            requests = next(r["requests"] for r in rows if r["implementation"] == "artifact"
                            and (r["workload"], r["seed"]) == (line["workload"], line["seed"]))
            line["tier_gap"] = max(abs(line[t] - theirs[0][t]) for t in ("accesses_t1", "accesses_t2", "accesses_t3")) \
                / requests
    order = {name: n for n, name in enumerate(IMPLEMENTATIONS)}
    out.sort(key=lambda o: (o["workload"], o["seed"], order[o["implementation"]], o["policy"]))
    return [{c: o.get(c) for c in SUMMARY_COLUMNS} for o in out]


COLUMN_DOCS = {
    "implementation": "authors: their program (BU-DiSC/ReStore at 8144333f, patched); artifact: restore-sim",
    "workload": "restore-sim's workload whose stream both ran (configs/experiments/restore.yaml, original)",
    "seed": "the stream's seed (restore-sim --seed)",
    "repeat": "the run's number (theirs sleep in real time; ours, virtual time, runs once)",
    "policy": "restore (their Run_RL, our ReStore), tlfu, temp, tlru",
    "pages": "pages of the stream (its highest page id + 1)",
    "requests": "requests of the stream",
    "capacity_pages": "tier capacities in pages, fastest first (restore-sim's, passed to theirs)",
    "total_us": "time until every request was served: theirs the wall clock until their pools drained "
                "('Total requests time'), ours the virtual time (data_access_us)",
    "total_us_min": "the fastest run's total_us",
    "total_us_max": "the slowest run's total_us",
    "loop_us": "theirs: wall time of their loop over the requests ('For loop time'); ours: empty",
    "decision_ns": "theirs: wall time in the policy's decisions ('Total <policy> runtime'); ours: empty",
    "accesses_t1": "requests served by Tier 1",
    "accesses_t2": "requests served by Tier 2",
    "accesses_t3": "requests served by Tier 3",
    "migrations_t2_t1": "promotions from Tier 2 to Tier 1",
    "migrations_t3_t2": "promotions from Tier 3 to Tier 2",
    "promotion_rate": "promotions per request served by Tier 2 or 3",
    "runs": "runs summarized",
    "spread": "(total_us_max - total_us_min) / total_us",
    "vs_tlfu": "median over the repeats of total_us / the same implementation's tLFU in that repeat (below 1: faster)",
    "vs_tlfu_min": "the smallest of those ratios",
    "vs_tlfu_max": "the largest of those ratios",
    "vs_temp": "as vs_tlfu, against the same implementation's TEMP",
    "tier_gap": "ours only: the largest, over the tiers, |our accesses - theirs (median)| / requests",
}


def columns(names: list[str]) -> dict[str, str]:
    return {name: COLUMN_DOCS[name] for name in names}
