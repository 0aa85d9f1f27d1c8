"""Lab 2's grader: the student's policy.cc (LRU-WSR and ACE's write-back for it, a plug-in of the
bufferpool simulator) compiled into ace-sim in the sandbox, run on small edge cases and on each
student's hidden workloads against the artifact's own lru_wsr, and its ACE schedule replayed on
each student's hidden emulated SSD for the speedup (lab.yaml).

The student's policy runs in a sandboxed process of its own (the simulator's policy_host.cc);
the artifact's ace-sim, outside the sandbox, keeps the pool and asks it for each decision over a
pipe (labkit.plugin.Remote), and writes every number the policy is judged by: its CSV row and its
I/O log, which the grader replays (ace.io_replay). Feedback names the counters that differ from
the reference's, never the reference's values."""

from __future__ import annotations

from pathlib import Path

LAB_DIR = Path(__file__).resolve().parent
SUBMISSION_FILE = "policy.cc"
POLICY = "student"  # the name policy.cc registers (ACESIM_REGISTER_POLICY)
REFERENCE = "lru_wsr"
PAGE_BYTES = 4096
COMPARED = ("hits", "misses", "dirty_evictions", "pages_written", "write_batches")


def load_config(override: Path | None = None) -> dict:
    from labkit import config  # noqa: PLC0415

    return config.load(LAB_DIR, override)


def hidden(key: bytes, student: str, config: dict) -> dict:
    """The student's workloads (synthetic, Table 4.2's generator), n_w and device."""
    from labkit import seeds  # noqa: PLC0415

    rng = seeds.student_rng(key, f"lab{config['lab']}", student)
    spec = config["hidden"]
    workloads = []
    for number in range(spec["workloads"]):
        pool = seeds.draw(rng, spec["pool_pages"])
        workloads.append({"pool_pages": pool, "pages": pool * seeds.draw(rng, spec["pages_per_pool"]),
                          "ops": spec["ops"], "read_pct": seeds.draw(rng, spec["read_pct"]),
                          "hot_ops_pct": seeds.draw(rng, spec["hot_ops_pct"]),
                          "hot_pages_pct": seeds.draw(rng, spec["hot_pages_pct"]), "seed": rng.randrange(1, 1 << 31)})
    device = {name: seeds.draw(rng, spec[name]) for name in ("read_latency_us", "alpha", "k_r", "k_w")}
    return {"workloads": workloads, "n_w": seeds.draw(rng, spec["n_w"]), "device": device}


def _options(workload: dict) -> list[str]:
    """ace-sim's arguments for a synthetic workload (and its pool, when it names one)."""
    return ["--synthetic", *(f"--{name.replace('_', '-')}={value}" for name, value in workload.items())]


def edge_cases(work: Path) -> list[tuple[str, list[str]]]:
    """The validity checks' runs, the same for everyone: the smallest pools, every write dirty, and
    a trace of scans with ACE's prefetching, so that pages are pinned while a victim is chosen."""
    scans = work / "scans.trace"
    lines = []
    for round_ in range(6):
        lines += [f"R {page}" for page in range(40 * round_, 40 * round_ + 60)]
        lines += [f"W {(page * 37) % 300}" for page in range(round_ * 25, round_ * 25 + 25)]
    scans.write_text("\n".join(lines) + "\n", encoding="ascii")
    writes = {"ops": 3000, "pages": 500, "read_pct": 0, "hot_ops_pct": 50, "hot_pages_pct": 50, "seed": 7}
    cases = [(f"a pool of {pool} page{'s' * (pool > 1)}, all writes, ACE {ace} with n_w = 8",
              ["--pool-pages", str(pool), "--ace", ace, "--n-w", "8", *_options(writes)])
             for pool in (1, 2, 3) for ace in ("off", "on")]
    cases += [(f"scans and writes, pool of {pool}, ACE on with {prefetch} prefetching (pinned frames)",
               ["--pool-pages", str(pool), "--ace", "on", "--n-w", "4", "--n-e", "8", "--prefetch", prefetch,
                "--trace", str(scans), "--trace-format", "simple"])
              for pool in (10, 64) for prefetch in ("sequential", "history")]
    return cases


def prepare(say=print) -> Path:
    """What grading needs built (once per machine; Gradescope's setup.sh calls it): the simulator,
    its plug-in library and policy host's sources, and the hidden device. Returns ace-sim."""
    from ace import sim  # noqa: PLC0415
    from labkit import device as lab_device  # noqa: PLC0415

    say("building the bufferpool simulator and its plug-in library")
    reference = sim.build()
    lab_device.prepare(say)
    return reference


def grade(submission: Path, student: str, key: bytes, config: dict, work_root: Path, say=print) -> list:
    """Grade one submission; returns labkit.report.TestResult's in lab.yaml's order."""
    from ace.sim import SIM_BUILD, SIM_DIR  # noqa: PLC0415
    from labkit import config as lab_config  # noqa: PLC0415
    from labkit import plugin, report  # noqa: PLC0415

    tests = report.tests_of(config)
    if (failed := report.missing(tests, submission, SUBMISSION_FILE)) is not None:
        return failed
    secret = hidden(key, student, config)
    limits = lab_config.limits(config)
    reference = prepare(say)
    with lab_config.workspace(work_root, 2) as (root, work):
        source = lab_config.copy_submission(submission, root) / SUBMISSION_FILE
        say(f"grading {student}: compiling {SUBMISSION_FILE}")
        host, compiled = plugin.build(source, SIM_DIR / "src", SIM_BUILD / "libace_sim_plugins_only.a", work,
                                      limits["build"], main=SIM_DIR / "src" / "policy_host.cc", name="policy-host")
        if host is None:
            report.all_failed(tests, "needs policy.cc to compile")
            tests["builds"].failed(compiled)
            return list(tests.values())
        tests["builds"].passed("compiled" + (f", with warnings:\n{compiled}" if compiled else ""))
        runner = plugin.Remote(reference, host, work, root / "engine", limits["run"], POLICY)
        say(f"grading {student}: edge cases, hidden workloads")
        _grade_valid(tests["valid"], runner, root)
        _grade_deterministic(tests["deterministic"], runner, secret)
        for name, ace in (("lru_wsr", "off"), ("ace_writeback", "on")):
            _grade_same_as_reference(tests[name], runner, reference, secret, ace)
        say(f"grading {student}: the speedup on the hidden device")
        _grade_speedup(tests["speedup"], runner, reference, secret, config, root, say)
    return list(tests.values())


def _grade_valid(test, runner, work: Path) -> None:
    cases = edge_cases(work)
    for what, args in cases:
        row, error, _ = runner.run(args)
        if row is None:
            test.failed(f"{what}:\n{error}")
            return
    test.passed(f"{len(cases)} edge cases ran, every victim and write-back candidate one the pool could take")


def _grade_deterministic(test, runner, secret: dict) -> None:
    args = ["--ace", "on", "--n-w", str(secret["n_w"]), *_options(secret["workloads"][0])]
    first, error, first_log = runner.run(args, "--io-log")
    second, error, second_log = runner.run(args, "--io-log") if first is not None else (None, error, b"")
    if first is None or second is None:
        test.failed(f"a hidden workload did not run: {error}")
    elif first != second or first_log != second_log:
        test.failed("two runs of the same workload gave different results (does the policy depend on addresses, "
                    "time or an unseeded random number?)")
    else:
        test.passed("two runs of a hidden workload gave the same evictions and writes, I/O for I/O")


def _grade_same_as_reference(test, runner, reference: Path, secret: dict, ace: str) -> None:
    from ace import sim  # noqa: PLC0415

    matched, notes = 0, []
    for number, workload in enumerate(secret["workloads"], 1):
        what = (f"workload {number} (pool {workload['pool_pages']} of {workload['pages']} pages, "
                f"{workload['read_pct']:g} % reads{', n_w = %d' % secret['n_w'] if ace == 'on' else ''})")
        row, error, _ = runner.run(["--ace", ace, "--n-w", str(secret["n_w"]), *_options(workload)])
        if row is None:
            notes.append(f"{what}: {error}")
            break  # a crash or a hang would repeat on every workload: not worth their time
        expected = sim.run(reference, policy=REFERENCE, ace=ace == "on", n_w=secret["n_w"], synthetic=True, **workload)
        differ = [f"{column.replace('_', ' ')} {row[column]}" for column in COMPARED
                  if int(row[column]) != expected[column]]
        if differ:
            notes.append(f"{what}: yours differ from the reference in " + ", ".join(differ))
        else:
            matched += 1
    total = len(secret["workloads"])
    reference_name = "the artifact's LRU-WSR" + (" with ACE" if ace == "on" else "")
    summary = (f"{matched} of {total} hidden workloads with the same hits, misses, dirty evictions, pages written "
               f"and write batches as the reference ({reference_name})")
    test.partly(matched / total, "\n".join([summary, *notes]))


def _grade_speedup(test, runner, reference: Path, secret: dict, config: dict, root: Path, say) -> None:
    """ACE's write-back schedule against one page at a time, both from the submission, replayed on
    the student's hidden device; the PIO model's ideal for the same workload is the ratio of the
    reference's virtual times on that device (the simulator's model, thesis Appendix A)."""
    from ace import io_replay, sim  # noqa: PLC0415
    from labkit import device as lab_device  # noqa: PLC0415
    from pio import writeback_app  # noqa: PLC0415

    spec, device = config["speedup"], secret["device"]
    workload = {"ops": spec["ops"], "pages": spec["pages"], "read_pct": 0, "hot_ops_pct": 50, "hot_pages_pct": 50,
                "seed": secret["workloads"][0]["seed"]}
    options = {"pool_pages": spec["pool_pages"], "n_w": device["k_w"]}
    logs = {}
    for ace in ("off", "on"):
        row, error, log = runner.run(["--pool-pages", str(options["pool_pages"]), "--ace", ace,
                                      "--n-w", str(options["n_w"]), *_options(workload)], "--io-log")
        if row is None:
            test.failed(f"the write-only workload (ACE {ace}) did not run: {error}")
            return
        (runner.private / "replay.io").write_bytes(log)
        try:
            logs[ace] = io_replay.read_log(runner.private / "replay.io", max_phases=4 * spec["ops"])
        except ValueError as error:
            test.failed(f"the I/O log of ACE {ace} is not one ace-sim writes: {error}")
            return
    model = {ace: sim.run(reference, policy=REFERENCE, ace=ace == "on", synthetic=True, **options, **workload,
                          read_latency_us=device["read_latency_us"], alpha=device["alpha"], k_r=device["k_r"],
                          k_w=device["k_w"])["virtual_runtime_us"] for ace in ("off", "on")}
    ideal = model["off"] / model["on"]
    with lab_device.hidden_ssd(device, root, PAGE_BYTES, say) as (mount, _):
        (mount.mountpoint / "lab2").mkdir()
        writeback_app.prepare(mount.backing / "lab2", spec["pages"], PAGE_BYTES, sparse=True)
        data = mount.mountpoint / "lab2" / writeback_app.DATA_FILE
        seconds = {ace: io_replay.replay(logs[ace], data, PAGE_BYTES, device=mount.model)["seconds"]
                   for ace in ("off", "on")}
    measured = seconds["off"] / seconds["on"]
    fraction = config["tests"]["speedup"]["fraction"]
    verdict = (f"ACE's speedup on your device: {measured:.2f} measured ({seconds['off']:.1f} s against "
               f"{seconds['on']:.1f} s), the model's ideal {ideal:.2f}")
    if measured >= fraction * ideal:
        test.passed(verdict)
    else:
        test.failed(f"{verdict}: less than {fraction:.0%} of the ideal")
