"""Lab 3's grader: the student's traversal.cc (CAVE's parallel BFS level loop and WCC, a plug-in of
the out-of-core graph engine) compiled into cave in the sandbox twice, with ThreadSanitizer for the
correctness runs on each student's hidden graphs (answers compared with CAVE's own, vertex by
vertex) and optimized for the speedup with k_r threads on each student's hidden emulated SSD,
compared with CAVE's own on the same device (lab.yaml).

Everything the submission produces runs in the sandbox (the compilers, the binaries); the grader
reads its answers and its CSV row, trusting no more than the numbers."""

from __future__ import annotations

import filecmp
import random
import re
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
    reference = engine.build()
    say(f"grading {student}: building CAVE's libraries for plug-ins (once per machine)")
    libraries = {"plain": engine.build(engine.CAVE_DIR / "build-lab", LAB_BUILD).parent / "libcave_plugins_only.a",
                 "tsan": engine.build(engine.CAVE_DIR / "build-lab-tsan",
                                      (*LAB_BUILD, f"-DCMAKE_CXX_FLAGS={' '.join(TSAN_FLAGS[1:])}")).parent
                 / "libcave_plugins_only.a"}
    with lab_config.workspace(work_root, 3) as (root, work):
        say(f"grading {student}: compiling {SUBMISSION_FILE} (optimized, and with ThreadSanitizer)")
        source, include = Path(submission) / SUBMISSION_FILE, engine.CAVE_DIR / "src"
        binaries, messages = {}, []
        for kind, flags in (("plain", ("-O2",)), ("tsan", TSAN_FLAGS)):
            binaries[kind], compiled = plugin.build(source, include, libraries[kind], work, limits["build"],
                                                    flags=(*flags, "-pthread"), name=f"cave-{kind}")
            messages.append(compiled)
            if binaries[kind] is None:
                report.all_failed(tests, f"needs {SUBMISSION_FILE} to compile")
                tests["builds"].failed(compiled)
                return list(tests.values())
        tests["builds"].passed("compiled" + (f", with warnings:\n{messages[0]}" if messages[0] else ""))
        say(f"grading {student}: hidden graphs, with ThreadSanitizer")
        graphs = _graphs(reference, secret, root / "graphs", engine)
        _grade_correctness(tests, binaries["tsan"], graphs, reference, work, limits, config, engine)
        if tests["bfs"].score == 0:  # measuring a BFS that answers nothing right costs minutes and says nothing
            tests["speedup"].failed("not measured: a speedup counts only for the right answer, and BFS gave none "
                                    "on the hidden graphs")
            return list(tests.values())
        say(f"grading {student}: the speedup on the hidden device")
        _grade_speedup(tests["speedup"], binaries["plain"], reference, secret, config, root, work, limits, say, engine)
    return list(tests.values())


def _graphs(reference: Path, secret: dict, folder: Path, engine) -> list[dict]:
    folder.mkdir()
    graphs = []
    for graph in secret["graphs"]:
        edges, source = edge_list(graph["shape"], graph["vertices"], graph["seed"])
        text = folder / f"{graph['shape']}.txt"
        _write_snap(edges, text)
        block_file = folder / f"{graph['shape']}.cave"
        engine.convert(reference, text, block_file, undirected=True)
        graphs.append({**graph, "file": block_file, "source": source})
    return graphs


def _grade_correctness(tests: dict, tsan_binary: Path, graphs: list[dict], reference: Path, work: Path, limits: dict,
                       config: dict, engine) -> None:
    """BFS and WCC on each hidden graph with `threads` workers and a small cache, built with
    ThreadSanitizer: the answers vertex by vertex against CAVE's own, and the race reports."""
    from labkit import plugin  # noqa: PLC0415

    threads = config["correctness"]["threads"]
    runner = plugin.Runner(tsan_binary, work, limits["tsan"], TRAVERSAL, option="--traversal", out_option=None,
                           readable=tuple(graph["file"] for graph in graphs))
    right = {"bfs": 0, "wcc": 0}
    notes = {"bfs": [], "wcc": [], "race_free": []}
    races, stopped = 0, ""
    for graph in graphs:
        for algorithm in ("bfs", "wcc"):
            what = f"{algorithm.upper()} on the {graph['shape']} graph ({graph['vertices']} vertices)"
            options = {"graph": graph["file"], "algorithm": algorithm, "io_threads": threads,
                       "cache_blocks": config["correctness"]["cache_blocks"],
                       **({"source": graph["source"]} if algorithm == "bfs" else {})}
            expected = work / f"expected-{graph['shape']}-{algorithm}.csv"
            engine.run(reference, **options, values_out=expected)
            answer = work / f"answer-{graph['shape']}-{algorithm}.csv"
            answer.unlink(missing_ok=True)
            if stopped:  # a run stopped at the time limit would be stopped again: not worth the wait
                notes[algorithm].append(f"{what}: not run ({stopped})")
                continue
            row, error, _ = runner.run(["run", *engine.arguments({**options, "values_out": answer})])
            if "(the time limit)" in error:
                stopped = "an earlier run was stopped at the time limit"
            found = {kind.strip() for kind in TSAN_SUMMARY.findall(error)}
            if found & set(TSAN_CRASHES):
                error = (f"your code crashed ({', '.join(sorted(found & set(TSAN_CRASHES)))}, "
                         f"caught by ThreadSanitizer)\n{error}")
            race = sorted(found - set(TSAN_CRASHES))
            if race:
                races += 1
                notes["race_free"].append(f"{what}: ThreadSanitizer reported a {', '.join(race)}:\n"
                                          + _race_summary(error))
            if row is None and not race and not answer.is_file():
                notes[algorithm].append(f"{what}: {error}")
            elif answer.is_file() and filecmp.cmp(answer, expected, shallow=False):
                right[algorithm] += 1
                notes[algorithm].append(f"{what}: every vertex right")
            else:
                notes[algorithm].append(f"{what}: {_first_difference(answer, expected)}")
    for algorithm in ("bfs", "wcc"):
        tests[algorithm].partly(right[algorithm] / len(graphs), "\n".join(notes[algorithm]))
    if races:
        tests["race_free"].failed("\n".join(notes["race_free"]))
    elif right["bfs"] + right["wcc"] == 0:
        tests["race_free"].failed("not judged: a traversal that finds nothing has nothing to race on")
    else:
        tests["race_free"].passed(f"ThreadSanitizer reported nothing in {2 * len(graphs)} runs with {threads} workers")


def _race_summary(output: str) -> str:
    """ThreadSanitizer's summary lines and the lines of its reports in the student's file."""
    lines = [line.strip() for line in output.splitlines()
             if "SUMMARY: ThreadSanitizer" in line or SUBMISSION_FILE in line]
    return "\n".join(dict.fromkeys(lines[:8]))


def _first_difference(answer: Path, expected: Path) -> str:
    if not answer.is_file():
        return "no answer written"
    got, want = answer.read_text().splitlines(), expected.read_text().splitlines()
    for line, (mine, theirs) in enumerate(zip(got, want, strict=False)):
        if mine != theirs:
            vertex, value = theirs.split(",")
            return f"vertex {vertex}: {mine.split(',')[-1]}, the reference {value} (and maybe others)"
    return f"{len(got) - 1} vertices answered, the graph has {len(want) - 1}"


def _grade_speedup(test, binary: Path, reference: Path, secret: dict, config: dict, root: Path, work: Path,
                   limits: dict, say, engine) -> None:
    """BFS with 1 and with k_r workers on the student's hidden device, the student's and CAVE's own:
    the student's speedup against a share of CAVE's."""
    from cave.experiment import place_on_device  # noqa: PLC0415
    from labkit import device as lab_device  # noqa: PLC0415
    from labkit import plugin  # noqa: PLC0415

    spec, device = config["speedup"], secret["device"]
    text, graph = root / "speedup.txt", root / "speedup.cave"
    engine.generate(reference, text, model="ba", vertices=spec["vertices"], m=spec["m"], seed=secret["speedup_seed"])
    engine.convert(reference, text, graph, undirected=True)
    with lab_device.hidden_ssd(device, root, PAGE_BYTES, say) as (mount, _):
        on_device = place_on_device(graph, mount.mountpoint / "lab3")
        runner = plugin.Runner(binary, work, limits["run"], TRAVERSAL, option="--traversal", out_option=None,
                               readable=(on_device,))
        seconds = {}
        for threads in (1, device["k_r"]):
            options = {"graph": on_device, "algorithm": "bfs", "io_threads": threads,
                       "cache_blocks": spec["cache_blocks"], "source": 0}
            ours = engine.run(reference, **options)
            seconds[("cave", threads)] = ours["runtime_s"]
            row, error, _ = runner.run(["run", *engine.arguments(options)])
            workers = f"{threads} worker{'s' * (threads > 1)}"
            if row is None:
                test.failed(f"BFS with {workers} did not run on the device: {error}")
                return
            if (int(row["reached"]), int(row["levels"])) != (ours["reached"], ours["levels"]):
                test.failed(f"BFS with {workers} on the speedup's graph reached {row['reached']} vertices in "
                            f"{row['levels']} levels, CAVE's own {ours['reached']} in {ours['levels']}: a speedup "
                            "counts only for the right answer")
                return
            seconds[("yours", threads)] = float(row["runtime_s"])
    speedup = {who: seconds[(who, 1)] / seconds[(who, device["k_r"])] for who in ("cave", "yours")}
    share = config["tests"]["speedup"]["share"]
    verdict = (f"BFS with {device['k_r']} workers against 1 on your device: yours {speedup['yours']:.2f} times faster "
               f"({seconds[('yours', 1)]:.2f} s, {seconds[('yours', device['k_r'])]:.2f} s), CAVE's own "
               f"{speedup['cave']:.2f}")
    if speedup["yours"] >= share * speedup["cave"]:
        test.passed(verdict)
    else:
        test.failed(f"{verdict}: less than {share:.0%} of CAVE's")
