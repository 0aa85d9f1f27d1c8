"""Lab 3's grader: the student's traversal.cc (CAVE's parallel BFS level loop and WCC, a plug-in of
the out-of-core graph engine) compiled into cave in the sandbox with ThreadSanitizer, for the
correctness runs on each student's hidden graphs (answers compared with CAVE's own, vertex by
vertex) and for the speedup with k_r threads on each student's hidden emulated SSD, compared with
CAVE's own, built the same way, on the same device (lab.yaml).

Everything the submission produces runs in the sandbox (the compilers, the binaries), each run in
a fresh folder of its own. What it is judged by is the grader's: the expected answers stay where
no run can read them, every answer is compared vertex by vertex, the times are the grader's
clock around each run (medians of runs interleaved with CAVE's own on the same device), and
ThreadSanitizer's options are the grader's, its report read whole from a pipe the run cannot
rewrite (labkit.plugin refuses a submission that defines or calls the sanitizer's interface)."""

from __future__ import annotations

import os
import random
import re
import statistics
from pathlib import Path

LAB_DIR = Path(__file__).resolve().parent
SUBMISSION_FILE = "traversal.cc"
TRAVERSAL = "student"  # the name traversal.cc registers (CAVE_REGISTER_TRAVERSAL)
PAGE_BYTES = 4096
# What ThreadSanitizer found, from the summary line it ends each report with: a race (or a misuse
# of a lock or a thread), or a crash it caught (it exits 66 instead of dying by the signal).
TSAN_SUMMARY = re.compile(r"SUMMARY: ThreadSanitizer: ([a-zA-Z -]+?)(?: /| \(|\n|$)")
TSAN_CRASHES = ("SEGV", "BUS", "FPE", "ILL", "ABRT")
TSAN_FLAGS = ("-O1", "-g", "-fsanitize=thread")
TSAN_EXIT = 66  # the status ThreadSanitizer ends a run with when it reported something
TSAN_MARK = "labkit: ThreadSanitizer reported a problem"  # the harness's own line per report
ANSWER_LIMIT = 64 << 20  # bytes of an answer the grader reads (a hidden graph's is well under a megabyte)
# The grader's options (the environment's and the harness's __tsan_default_options alike): every
# report, to the FIFO labkit.sandbox makes (log_path.<pid>), the run going on after each.
TSAN_OPTIONS = f"halt_on_error=0:abort_on_error=0:exitcode={TSAN_EXIT}:report_bugs=1:report_thread_leaks=1:" \
               "report_signal_unsafe=1:print_suppressions=0:die_after_fork=1:log_path="  # + the FIFO's prefix
LAB_BUILD = ("-DCAVE_URING=OFF", "-DCAVE_TESTS=OFF")  # the lab's libraries: no io_uring (a plain link line)


def load_config(override: Path | None = None) -> dict:
    from labkit import config  # noqa: PLC0415

    return config.load(LAB_DIR, override)


def hidden(key: bytes, student: str, config: dict) -> dict:
    """The student's graphs (shapes and sizes, a seed each) and device."""
    from labkit import seeds  # noqa: PLC0415

    rng = seeds.student_rng(key, f"lab{config['lab']}", student)
    spec = config["hidden"]
    graphs = [{"shape": shape, "vertices": seeds.draw(rng, spec["vertices"]), "seed": rng.randrange(1, 1 << 31)}
              for shape in spec["shapes"]]
    device = {name: seeds.draw(rng, spec[name]) for name in ("read_latency_us", "alpha", "k_r", "k_w")}
    return {"graphs": graphs, "device": device, "speedup_seed": rng.randrange(1, 1 << 31)}


def edge_list(shape: str, n: int, seed: int) -> tuple[list[tuple[int, int]], int]:
    """A graph of one of the lab's shapes, as (edges, a BFS source with neighbours); vertex ids are
    shuffled, so that neither the source nor the structure follows the ids.
    hub: a sparse random graph with one vertex joined to half of the others (its list spans several
    4 KiB blocks); path: one long path (as many BFS levels as vertices); forest: random trees of
    different sizes and vertices with no edge at all (many components, isolated ones)."""
    rng = random.Random(seed)
    ids = list(range(n))
    rng.shuffle(ids)
    edges = []
    if shape == "hub":
        edges = [(rng.randrange(n), rng.randrange(n)) for _ in range(2 * n)]
        edges += [(0, v) for v in rng.sample(range(1, n), n // 2)]
    elif shape == "path":
        edges = [(v, v + 1) for v in range(n - 1)]
    elif shape == "forest":
        trees = rng.randint(5, 30)
        used = int(n * 0.9)  # the rest stay isolated
        cuts = sorted(rng.sample(range(1, used), trees - 1))
        for start, end in zip([0, *cuts], [*cuts, used], strict=True):
            edges += [(v, rng.randrange(start, v)) for v in range(start + 1, end)]
    else:
        raise ValueError(f"unknown graph shape {shape!r} (hub, path, forest)")
    edges = [(ids[u], ids[v]) for u, v in edges if u != v]
    touched = sorted({u for edge in edges for u in edge})
    return edges, rng.choice(touched)


def _write_snap(edges: list[tuple[int, int]], path: Path) -> None:
    """SNAP's edge list; the graph's vertices are 0 to the largest id (ids with no edge are isolated)."""
    path.write_text("".join(f"{u} {v}\n" for u, v in edges), encoding="ascii")


def prepare(say=print) -> dict:
    """What grading needs built (once per machine; Gradescope's setup.sh calls it): CAVE's engine
    and plug-in library, plain and with ThreadSanitizer, and the hidden device. Returns the two
    engines' binaries by kind."""
    from cave import engine  # noqa: PLC0415
    from labkit import device as lab_device  # noqa: PLC0415

    say("building CAVE's plug-in libraries, plain and with ThreadSanitizer (once per machine)")
    builds = {"plain": engine.build(engine.CAVE_DIR / "build-lab", LAB_BUILD),
              "tsan": engine.build(engine.CAVE_DIR / "build-lab-tsan",
                                   (*LAB_BUILD, f"-DCMAKE_CXX_FLAGS={' '.join(TSAN_FLAGS[1:])}"))}
    lab_device.prepare(say)
    return builds


def grade(submission: Path, student: str, key: bytes, config: dict, work_root: Path, say=print) -> list:
    """Grade one submission; returns labkit.report.TestResult's in lab.yaml's order."""
    from cave import engine  # noqa: PLC0415
    from labkit import config as lab_config  # noqa: PLC0415
    from labkit import plugin, report  # noqa: PLC0415

    tests = report.tests_of(config)
    if (failed := report.missing(tests, submission, SUBMISSION_FILE)) is not None:
        return failed
    secret = hidden(key, student, config)
    limits = lab_config.limits(config)
    builds = prepare(say)
    with lab_config.workspace(work_root, 3) as (root, work):
        source = lab_config.copy_submission(submission, root) / SUBMISSION_FILE
        (root / "reports").mkdir()
        os.chmod(root / "reports", 0o711)  # a run's user opens its own report FIFO there, lists nothing
        say(f"grading {student}: compiling {SUBMISSION_FILE} with ThreadSanitizer")
        include = engine.CAVE_DIR / "src"
        # One build, with ThreadSanitizer, for every run, the timed ones too: the code that is timed
        # is the code the sanitizer checks, so that no run can take a racy path only where the
        # sanitizer is absent (however it tells: its slowness, its heap's addresses, ...).
        binary, compiled = plugin.build(
            source, include, builds["tsan"].parent / "libcave_plugins_only.a", work, limits["build"],
            main=include / "main.cc", flags=(*TSAN_FLAGS, "-pthread"), name="cave-tsan", files=False,
            tsan=(TSAN_OPTIONS + str(root / "reports" / "tsan"), str(root / "reports" / "tsan"), TSAN_EXIT))
        if binary is None:
            report.all_failed(tests, f"needs {SUBMISSION_FILE} to compile")
            tests["builds"].failed(compiled)
            return list(tests.values())
        tests["builds"].passed("compiled" + (f", with warnings:\n{compiled}" if compiled else ""))
        say(f"grading {student}: hidden graphs, with ThreadSanitizer")
        graphs = _graphs(builds["plain"], secret, root, engine)
        _grade_correctness(tests, binary, builds["plain"], graphs, root, work, limits, config, engine)
        if tests["bfs"].score == 0:  # measuring a BFS that answers nothing right costs minutes and says nothing
            tests["speedup"].failed("not measured: a speedup counts only for the right answer, and BFS gave none "
                                    "on the hidden graphs")
            return list(tests.values())
        say(f"grading {student}: the speedup on the hidden device")
        _grade_speedup(tests, binary, builds, secret, config, root, work, limits, say, engine)
    return list(tests.values())


class Runs:
    """The submission's program run in the sandbox, each run in a fresh folder of its own (nothing
    one run leaves is there for the next), its answer (--values-out) read back by the grader."""

    def __init__(self, binary: Path, work: Path, limits, readable: tuple[Path, ...], *, reports: Path,
                 sanitized: bool = False):
        self.binary, self.work, self.limits, self.readable = binary, work, limits, readable
        self.report_to = reports if sanitized else None  # only a ThreadSanitizer build writes reports
        # The same environment with or without ThreadSanitizer: a run cannot tell from it which it is.
        self.env = {"TSAN_OPTIONS": f"{TSAN_OPTIONS}{reports}"}
        self.count = 0

    def run(self, options: dict, traversal: str = TRAVERSAL):
        """(the sandbox's Outcome, the answer's text or None)."""
        from cave import engine  # noqa: PLC0415
        from labkit import sandbox  # noqa: PLC0415

        self.count += 1
        folder = self.work / f"run-{self.count}"
        sandbox.prepare_folder(folder)
        answer = folder / "answer.csv"
        command = [str(self.binary), "run", *engine.arguments({**options, "values_out": answer}),
                   "--traversal", traversal]
        outcome = sandbox.run(command, work=folder, limits=self.limits, readable=(self.binary, *self.readable),
                              what="your code",
                              report_to=self.report_to, env=self.env)
        data = sandbox.read_written(answer, ANSWER_LIMIT)
        text = data.decode("utf-8", errors="replace") if data is not None else None
        sandbox.remove_tree(folder)
        return outcome, text


def _graphs(reference: Path, secret: dict, root: Path, engine) -> list[dict]:
    """The hidden graphs in root/graphs (readable by the runs), each with its expected answers in
    root/expected (never readable by them)."""
    from labkit import sandbox  # noqa: PLC0415

    folder, expected = root / "graphs", root / "expected"
    folder.mkdir()
    expected.mkdir()
    graphs = []
    for graph in secret["graphs"]:
        edges, source = edge_list(graph["shape"], graph["vertices"], graph["seed"])
        text = expected / f"{graph['shape']}.txt"
        _write_snap(edges, text)
        block_file = folder / f"{graph['shape']}.cave"
        engine.convert(reference, text, block_file, undirected=True)
        graphs.append({**graph, "file": block_file, "source": source})
    sandbox.share(folder, root)
    return graphs


def _grade_correctness(tests: dict, tsan_binary: Path, reference: Path, graphs: list[dict], root: Path, work: Path,
                       limits: dict, config: dict, engine) -> None:
    """BFS and WCC on each hidden graph with `threads` workers and a small cache, built with
    ThreadSanitizer: the answers vertex by vertex against CAVE's own, and the race reports. A run
    that does not end normally (killed, stopped, ended by a back door) is not race-checked."""
    threads = config["correctness"]["threads"]
    runs = Runs(tsan_binary, work, limits["tsan"], tuple(graph["file"] for graph in graphs),
                reports=root / "reports" / "tsan", sanitized=True)
    right = {"bfs": 0, "wcc": 0}
    notes = {"bfs": [], "wcc": [], "race_free": []}
    unchecked, stopped = 0, ""
    for graph in graphs:
        for algorithm in ("bfs", "wcc"):
            what = f"{algorithm.upper()} on the {graph['shape']} graph ({graph['vertices']} vertices)"
            options = {"graph": graph["file"], "algorithm": algorithm, "io_threads": threads,
                       "cache_blocks": config["correctness"]["cache_blocks"],
                       **({"source": graph["source"]} if algorithm == "bfs" else {})}
            expected = root / "expected" / f"{graph['shape']}-{algorithm}.csv"
            engine.run(reference, **options, values_out=expected)
            if stopped:  # a run stopped at the time limit would be stopped again: not worth the wait
                notes[algorithm].append(f"{what}: not run ({stopped})")
                unchecked += 1
                continue
            outcome, answer = runs.run(options)
            if "(the time limit)" in outcome.error:
                stopped = "an earlier run was stopped at the time limit"
            race, problem = _sanitizer_verdict(outcome, tsan_binary)
            if race:
                notes["race_free"].append(f"{what}: {race}")
            elif problem:
                unchecked += 1
                notes["race_free"].append(f"{what}: not checked for races: the run did not end normally ({problem})")
            if answer is not None and answer == expected.read_text():
                right[algorithm] += 1
                notes[algorithm].append(f"{what}: every vertex right")
            elif problem and answer is None:
                notes[algorithm].append(f"{what}: {problem}\n{outcome.output.strip()}".rstrip())
            else:
                notes[algorithm].append(f"{what}: {_first_difference(answer, expected)}")
    for algorithm in ("bfs", "wcc"):
        tests[algorithm].partly(right[algorithm] / len(graphs), "\n".join(notes[algorithm]))
    if notes["race_free"]:
        tests["race_free"].failed("\n".join(notes["race_free"]))
    elif right["bfs"] + right["wcc"] == 0:
        tests["race_free"].failed("not judged: a traversal that finds nothing has nothing to race on")
    else:
        tests["race_free"].passed(f"ThreadSanitizer reported nothing in {2 * len(graphs)} runs with {threads} workers")


def _sanitizer_verdict(outcome, tsan_binary: Path) -> tuple[str, str]:
    """(what ThreadSanitizer reported in a run, or ''; why the run did not end normally, or '')."""
    found = {kind.strip() for kind in TSAN_SUMMARY.findall(outcome.report)}
    crashed = found & set(TSAN_CRASHES)
    race = sorted(found - set(TSAN_CRASHES))
    problem = outcome.error or (f"{Path(tsan_binary).name} stopped with status {outcome.value}"
                                if outcome.value not in (0, TSAN_EXIT) else "")
    if crashed:
        problem = f"your code crashed ({', '.join(sorted(crashed))}, caught by ThreadSanitizer)"
    if race or outcome.value == TSAN_EXIT or TSAN_MARK in outcome.report:
        return ("ThreadSanitizer reported " + (f"a {', '.join(race)}:\n{_race_summary(outcome.report)}" if race else
                                               "a problem (its report did not reach the grader whole)")), problem
    return "", problem


def _race_summary(output: str) -> str:
    """ThreadSanitizer's summary lines and the lines of its reports in the student's file."""
    lines = [line.strip() for line in output.splitlines()
             if "SUMMARY: ThreadSanitizer" in line or SUBMISSION_FILE in line]
    return "\n".join(dict.fromkeys(lines[:8]))


def _first_difference(answer: str | None, expected: Path) -> str:
    if answer is None:
        return "no answer written"
    got, want = answer.splitlines(), expected.read_text().splitlines()
    for mine, theirs in zip(got, want, strict=False):
        if mine != theirs:
            vertex, value = theirs.split(",")
            return f"vertex {vertex}: {mine.split(',')[-1][:40]}, the reference {value} (and maybe others)"
    return f"{len(got) - 1} vertices answered, the graph has {len(want) - 1}"


def _grade_speedup(tests: dict, binary: Path, builds: dict, secret: dict, config: dict, root: Path, work: Path,
                   limits: dict, say, engine) -> None:
    """BFS on the student's hidden device: CAVE's own with 1 and with k_r workers and the student's
    with k_r, `repeats` times, interleaved, timed by the grader around each run; the student's
    speedup is CAVE's one-worker median over the student's k_r median (so that a slow one-worker
    run gains nothing), against a share of CAVE's own speedup. Every run's answer is checked. All
    are ThreadSanitizer builds, CAVE's own too (the same cost for both): a race in a timed run (on
    the speedup's graph, with k_r workers) fails race_free as well."""
    test = tests["speedup"]
    reports = root / "reports" / "tsan"
    from cave.experiment import place_on_device  # noqa: PLC0415
    from labkit import device as lab_device  # noqa: PLC0415
    from labkit import sandbox  # noqa: PLC0415

    spec, device = config["speedup"], secret["device"]
    text, graph, expected = root / "speedup.txt", root / "speedup.cave", root / "expected" / "speedup-bfs.csv"
    engine.generate(builds["plain"], text, model="ba", vertices=spec["vertices"], m=spec["m"],
                    seed=secret["speedup_seed"])
    engine.convert(builds["plain"], text, graph, undirected=True)
    k = device["k_r"]
    raced = ""
    with lab_device.hidden_ssd(device, root, PAGE_BYTES, say) as (mount, _):
        on_device = place_on_device(graph, mount.mountpoint / "lab3")
        sandbox.share(on_device, root)
        options = {"graph": on_device, "algorithm": "bfs", "cache_blocks": spec["cache_blocks"], "source": 0,
                   **({"emulate": mount.emulate} if mount.emulate else {})}
        engine.run(builds["plain"], **options, io_threads=1, values_out=expected)
        runs = {who: Runs(program, work, limits["tsan"], (on_device,), reports=reports, sanitized=True)
                for who, program in (("cave", builds["tsan"]), ("yours", binary))}
        seconds = {("cave", 1): [], ("cave", k): [], ("yours", k): []}
        failure = ""
        for _ in range(spec.get("repeats", 3)):
            if failure:
                break
            for who, threads in seconds:
                outcome, answer = runs[who].run({**options, "io_threads": threads},
                                                traversal=TRAVERSAL if who == "yours" else "cave")
                workers = f"{threads} worker{'s' * (threads > 1)}"
                race, problem = _sanitizer_verdict(outcome, builds["tsan"] if who == "cave" else binary)
                if who == "cave" and (race or problem):
                    raise RuntimeError(f"CAVE's own BFS failed on the device: {race or problem}\n{outcome.output}")
                if race and not raced:
                    raced = f"BFS with {workers} on the speedup's graph, as it is timed: {race}"
                if problem:
                    failure = f"BFS with {workers} did not run on the device: {problem}\n{outcome.output.strip()}"
                elif answer != expected.read_text():
                    failure = (f"BFS with {workers} on the speedup's graph: {_first_difference(answer, expected)}: "
                               "a speedup counts only for the right answer")
                if failure:
                    break
                seconds[(who, threads)].append(outcome.seconds)
    if raced:
        race_free = tests["race_free"]
        race_free.failed((f"{race_free.output}\n" if race_free.score == 0 else "") + raced)
    if failure:
        test.failed(failure.rstrip())
        return
    median = {run: statistics.median(times) for run, times in seconds.items()}
    speedup = {"cave": median[("cave", 1)] / median[("cave", k)], "yours": median[("cave", 1)] / median[("yours", k)]}
    share = config["tests"]["speedup"]["share"]
    verdict = (f"BFS with {k} workers on your device, against CAVE's own with 1 ({median[('cave', 1)]:.2f} s): yours "
               f"{speedup['yours']:.2f} times faster ({median[('yours', k)]:.2f} s), CAVE's own {speedup['cave']:.2f} "
               f"({median[('cave', k)]:.2f} s); medians of {len(seconds[('cave', 1)])} runs each, interleaved, "
               "all built with ThreadSanitizer")
    if speedup["yours"] >= share * speedup["cave"]:
        test.passed(verdict)
    else:
        test.failed(f"{verdict}: less than {share:.0%} of CAVE's")
