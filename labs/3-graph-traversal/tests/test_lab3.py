"""Lab 3's grader: the reference solution gets full marks and the starter the baseline; a traversal
that races, runs on one thread, crashes, loops, writes outside its folder or does not compile loses
exactly those tests' points, each with its message; each student gets their own graphs and device."""

from __future__ import annotations

import json
import os

import pytest
import yaml
from labkit import grade as labkit_grade
from labkit import testing

LAB = labkit_grade.lab_dir(3)
grader = labkit_grade.load_grader(LAB)
KEY = b"a practice key for lab 3's tests"
SOLUTION = (LAB / "solution" / "traversal.cc").read_text()
needs_fuse = pytest.mark.skipif(not os.path.exists("/dev/fuse"),
                                reason="/dev/fuse is absent: the lab's device is emussd")


@pytest.fixture
def small(tmp_path):
    """lab.yaml with smaller graphs, a smaller speedup graph, k_r 4-8 and short limits."""
    config = grader.load_config()
    override = {"hidden": {**config["hidden"], "vertices": [800, 2000], "k_r": [4, 8]},
                "speedup": {**config["speedup"], "vertices": 1000},
                "limits": {**config["limits"], "tsan": {"wall_s": 8, "cpu_s": 60, "memory_mb": 0, "rss_mb": 1024},
                           "run": {"wall_s": 30, "cpu_s": 30, "memory_mb": 2048}}}
    (tmp_path / "small.yaml").write_text(yaml.safe_dump(override))
    (tmp_path / "key").write_bytes(KEY)
    return tmp_path


def scores(result: dict) -> dict:
    return testing.scores(grader, result)


def solution_with(small, name: str, old: str, new: str):
    """The reference solution with one change: a deliberately bad submission."""
    return testing.solution_with(LAB, "traversal.cc", small / name, old, new)


def test_each_student_gets_their_own_graphs_and_device_and_always_the_same_ones():
    config = grader.load_config()
    drawn = [grader.hidden(KEY, f"s{n}", config) for n in range(50)]
    assert grader.hidden(KEY, "s1", config) == drawn[1]
    assert len({json.dumps(d, sort_keys=True) for d in drawn}) == 50
    assert all(4 <= d["device"]["k_r"] <= 16 and [g["shape"] for g in d["graphs"]] == ["hub", "path", "forest"]
               for d in drawn)


@pytest.mark.parametrize("shape", ["hub", "path", "forest"])
def test_the_hidden_graphs_have_their_shape(shape):
    edges, source = grader.edge_list(shape, 3000, 7)
    degree = {}
    for u, v in edges:
        degree[u], degree[v] = degree.get(u, 0) + 1, degree.get(v, 0) + 1
    assert source in degree
    if shape == "hub":
        assert max(degree.values()) >= 1500  # its list spans two blocks of 1,024 neighbours at least
    elif shape == "path":
        assert len(edges) == 2999 and max(degree.values()) == 2 and sorted(degree.values()).count(1) == 2
    else:
        assert len(degree) <= 2700 and len(edges) < len(degree)  # isolated vertices; trees: fewer edges than vertices


@pytest.mark.e2e
@pytest.mark.wall_clock  # the speedup is measured on an emulated SSD
@needs_fuse
def test_the_solution_gets_full_marks_under_load_and_the_starter_the_baseline(small, grade_lab, cpu_hogs):
    solution = grade_lab(3, LAB / "solution", "alice", small)
    assert solution["score"] == 100, json.dumps(solution, indent=1)
    starter = scores(grade_lab(3, LAB / "starter", "bob", small))
    assert sum(score for score, _ in starter.values()) == 10, starter
    assert "the reference" in starter["bfs"][1]
    assert "a speedup counts only for the right answer" in starter["speedup"][1]
    assert "not measured" in starter["speedup"][1]


@pytest.mark.e2e
@pytest.mark.wall_clock
@needs_fuse
def test_a_race_loses_the_race_points_and_one_thread_loses_the_speedup(small, grade_lab):
    racy = solution_with(small, "racy", "next[worker].push_back(neighbours[k]);", "next[0].push_back(neighbours[k]);")
    result = scores(grade_lab(3, racy, "carol", small))
    assert result["race_free"][0] == 0 and "ThreadSanitizer reported a data race" in result["race_free"][1], result
    serial = solution_with(small, "serial", "pool.parallel_for(frontier.size(), [&](size_t i, unsigned worker) {",
                           "for (size_t i = 0, worker = 0; i < frontier.size(); ++i) [&] {")
    serial.joinpath("traversal.cc").write_text(serial.joinpath("traversal.cc").read_text().replace(
        "      });\n    });\n    frontier.clear();", "      });\n    }();\n    frontier.clear();", 1))
    result = scores(grade_lab(3, serial, "dave", small))
    assert [result[name][0] for name in ("builds", "bfs", "wcc", "race_free", "speedup")] == [10, 25, 20, 15, 0], result
    assert "less than 70% of CAVE's" in result["speedup"][1]


@pytest.mark.e2e
def test_a_crash_a_loop_or_a_write_outside_costs_every_run(small, grade_lab, writes_outside):
    crash = solution_with(small, "crash", "++levels;", "++levels; if (levels == 3) *(volatile int*)nullptr = 1;")
    loop = solution_with(small, "loop", "++levels;", "++levels; for (volatile int i = 0; levels == 3; i = i + 1) {}")
    for folder, student, message in ((crash, "erin", "your code crashed (SEGV, caught by ThreadSanitizer)"),
                                     (loop, "fay", "stopped after 8 s (the time limit)")):
        result = scores(grade_lab(3, folder, student, small))
        assert result["builds"][0] == 10 and result["bfs"][0] == 0 and result["race_free"][0] == 0, (student, result)
        assert message in result["bfs"][1], (student, result["bfs"])
    outside = small / "outside.log"  # a traversal opens no file at all (the other labs' tests try writing outside)
    escape = solution_with(small, "escape", "#include <vector>\n", writes_outside(outside))
    result = grade_lab(3, escape, "gus", small)
    assert result["score"] == 0 and "may not open or read files itself" in result["tests"][0]["output"], result
    assert not outside.exists()


@pytest.mark.e2e
def test_a_compile_error_or_a_missing_file_scores_nothing(small, grade_lab):
    broken = solution_with(small, "broken", "++levels;", "++levels")
    result = grade_lab(3, broken, "hal", small)
    assert result["score"] == 0 and "error: expected" in result["tests"][0]["output"], result["tests"][0]
    empty = small / "empty"
    empty.mkdir()
    result = grade_lab(3, empty, "ida", small)
    assert result["score"] == 0 and all("traversal.cc is not in the submission" in t["output"] for t in result["tests"])


def test_the_students_file_registers_the_graded_name():
    for folder in ("starter", "solution"):
        assert f'CAVE_REGISTER_TRAVERSAL("{grader.TRAVERSAL}",' in (LAB / folder / grader.SUBMISSION_FILE).read_text()
    assert "TODO" in (LAB / "starter" / "traversal.cc").read_text() and "TODO" not in SOLUTION


# ----------------------------------------------------------------------------- the red team
# Lab 3 attacked as a student who read the grader would. The expected answers stay where no run
# can read them, the times are the grader's clock around each run, and ThreadSanitizer's options and
# report are the grader's: a traversal that copies answers, forges its times, or switches the
# sanitizer off or hides its report gets exactly what its work earns, or is refused with the reason.


SOLUTION = (LAB / "solution" / "traversal.cc").read_text()
STARTER = (LAB / "starter" / "traversal.cc").read_text()
# The solution with its race-free claim of a neighbour replaced by a racy check-then-set.
RACY = SOLUTION.replace("""          if (level[neighbours[k]].load(std::memory_order_relaxed) == -1 &&
              level[neighbours[k]].compare_exchange_strong(unvisited, depth, std::memory_order_relaxed))
            next[worker].push_back(neighbours[k]);""",
                      """          int32_t* raw = reinterpret_cast<int32_t*>(&level[neighbours[k]]);
          if (*raw == -1) {
            *raw = depth;
            next[worker].push_back(neighbours[k]);
          }
          (void)unvisited;""")
REGISTER = 'CAVE_REGISTER_TRAVERSAL("student", parallel_bfs, components);'


@pytest.mark.e2e
@pytest.mark.parametrize("name, change, refused", [
    ("ifdef", ("#ifdef __SANITIZE_THREAD__\n#define CHECKED 1\n#else\n#define CHECKED 0\n#endif\n", "CHECKED"),
     "compiles differently with ThreadSanitizer"),
    ("pasted", ("#define GLUE(a, b) a##b\n#if GLUE(__SANITIZE_, THREAD__)\n#define CHECKED 1\n#else\n"
                "#define CHECKED 0\n#endif\n", "CHECKED"), "compiles differently with ThreadSanitizer"),
    ("weak", ('extern "C" void __tsan_init() __attribute__((weak));\n', "(&__tsan_init != nullptr)"),
     "calls __tsan_init"),
    ("getenv", ("#include <cstdlib>\n", '(std::getenv("TSAN_OPTIONS") != nullptr)'),
     "may not look at how it was started"),
])
def test_a_traversal_that_races_only_when_the_sanitizer_is_not_there_is_refused(small, grade_lab, name, change,
                                                                                refused):
    """The racy claim of a neighbour where the sanitizer is absent, the solution's where it checks."""
    prelude, checked = change
    folder = small / name
    folder.mkdir()
    (folder / "traversal.cc").write_text(_racy_unless(prelude, checked))
    result = grade_lab(3, folder, name, small)
    assert result["score"] == 0 and refused in result["tests"][0]["output"], json.dumps(result["tests"][0], indent=1)


def _racy_unless(prelude: str, condition: str) -> str:
    """The solution whose claim of a neighbour is RACY's unless `condition` holds."""
    claim = """          int32_t unvisited = -1;
          if (level[neighbours[k]].load(std::memory_order_relaxed) == -1 &&
              level[neighbours[k]].compare_exchange_strong(unvisited, depth, std::memory_order_relaxed))
            next[worker].push_back(neighbours[k]);"""
    racy = """          int32_t* raw = reinterpret_cast<int32_t*>(&level[neighbours[k]]);
          if (*raw == -1) {
            *raw = depth;
            next[worker].push_back(neighbours[k]);
          }"""
    assert claim in SOLUTION
    return SOLUTION.replace("namespace {\n", prelude + "namespace {\n", 1).replace(
        claim, f"          if ({condition}) {{\n{claim}\n          }} else {{\n{racy}\n          }}")


@pytest.mark.e2e
@pytest.mark.wall_clock
@needs_fuse
def test_a_traversal_that_races_only_where_it_is_timed_loses_the_race_points(small, grade_lab):
    """The speedup's graph has a size lab.yaml states: a traversal that races only on it, and claims
    its neighbours safely on every other graph, passes the correctness runs' sanitizer; the run of the
    sanitized build as the speedup is timed catches it."""
    folder = small / "timed"
    folder.mkdir()
    vertices = yaml.safe_load((small / "small.yaml").read_text())["speedup"]["vertices"]
    (folder / "traversal.cc").write_text(_racy_unless("", f"g.n() != {vertices}"))
    result = scores(grade_lab(3, folder, "trent", small))
    assert result["bfs"][0] == 25 and result["race_free"][0] == 0, result
    assert "on the speedup's graph, as it is timed: ThreadSanitizer reported a data race" in result["race_free"][1]


@pytest.mark.e2e
@pytest.mark.parametrize("name, change, refused", [
    ("options", ('extern "C" const char* __tsan_default_options() { return "report_bugs=0:exitcode=0"; }\n', ""),
     "defines __tsan_default_options"),
    ("suppressions", ('extern "C" const char* __tsan_default_suppressions() { return "race:*"; }\n', ""),
     "defines __tsan_default_suppressions"),
    ("annotation", ('extern "C" void AnnotateIgnoreWritesBegin(const char*, int);\n'
                    "namespace { struct Quiet { Quiet() { AnnotateIgnoreWritesBegin(\"\", 0); } } quiet; }\n", ""),
     "calls AnnotateIgnoreWritesBegin"),
    ("report-path", ('extern "C" void __sanitizer_set_report_path(const char*);\n'
                     'namespace { struct Away { Away() { __sanitizer_set_report_path("/dev/null"); } } away; }\n', ""),
     "calls __sanitizer_set_report_path"),
    ("attribute", ("", '__attribute__((no_sanitize("thread")))\n'), "a sanitizer attribute"),
    ("closer", ("#include <cstdio>\nnamespace { struct Closer { Closer() { for (int fd = 3; fd < 64; fd++) "
                "if (FILE* f = fdopen(fd, \"w\")) fclose(f); } } closer; }\n", ""), "close or duplicate"),
    ("exit", ("#include <cstdlib>\nnamespace { struct Leave { ~Leave() { std::_Exit(0); } } leave; }\n", ""),
     "back door"),
    ("dlsym", ('#include <dlfcn.h>\nnamespace { void* found = dlsym(RTLD_DEFAULT, "__tsan_acquire"); }\n', ""),
     "find code at run time"),
    ("asm", ('namespace { struct Raw { Raw() { asm volatile("" ::: "memory"); } } raw; }\n', ""),
     "inline assembly"),
    ("line", ('#line 1 "cave_helpers.h"\n', '__attribute__((no_sanitize("thread")))\n'),
     "#line directives are not allowed in a submission"),
    ("linemarker", ('# 1 "/usr/include/stdio.h" 1 3\n', '__attribute__((no_sanitize("thread")))\n'),
     "#line directives are not allowed in a submission"),
    ("wmemset", ("#include <cwchar>\nnamespace { struct Wide { Wide() { static wchar_t c[4]; "
                 "volatile std::size_t n = 4; std::wmemset(c, 0, n); } } wide; }\n", ""),
     "calls wmemset, which ThreadSanitizer does not see"),
    ("clock", ('#include <ctime>\nextern "C" int clock_nanosleep(clockid_t, int, const timespec*, timespec*) '
               "{ return 0; }\n", ""), "defines clock_nanosleep, a name of the system's libraries"),
])
def test_a_traversal_that_changes_what_the_sanitizer_reports_is_refused(small, grade_lab, name, change, refused):
    prelude, attribute = change
    folder = small / name
    folder.mkdir()
    source = RACY.replace("namespace {\n", prelude + "namespace {\n", 1)
    if attribute:
        source = source.replace("std::vector<uint32_t> levels_from(", attribute + "std::vector<uint32_t> levels_from(")
    (folder / "traversal.cc").write_text(source)
    result = grade_lab(3, folder, name, small)
    assert result["score"] == 0 and refused in result["tests"][0]["output"], json.dumps(result["tests"][0], indent=1)


@pytest.mark.e2e
def test_a_header_beside_the_traversal_is_not_read(small, grade_lab):
    """A header of the submission's would be lines the checks of its own lines do not see (an
    #ifdef __SANITIZE_THREAD__ there): the compiler reads traversal.cc alone."""
    folder = small / "header"
    folder.mkdir()
    (folder / "helpers.h").write_text("#pragma once\nconstexpr int kHelper = 1;\n")
    (folder / "traversal.cc").write_text('#include "helpers.h"\n' + SOLUTION)
    result = grade_lab(3, folder, "henry", small)
    assert result["score"] == 0 and "a submission is traversal.cc alone" in result["tests"][0]["output"], result


@pytest.mark.e2e
def test_a_traversal_that_reads_files_itself_is_refused(small, grade_lab):
    """A traversal that would copy the expected answers, or read the graph around the device (whose model
    may be in its own process: labkit.device), may not open files. (A racy one is caught: above.)"""
    copier = small / "copier"
    copier.mkdir()
    (copier / "traversal.cc").write_text("#include <filesystem>\n#include <fstream>\n" + STARTER.replace(
        REGISTER, """namespace {
// Every answer file a run might see, copied over its own answer (the path from its command line).
struct Copy {
  Copy() {
    std::ifstream cmdline("/proc/self/cmdline");
    std::string argument, previous, out;
    while (std::getline(cmdline, argument, '\\0')) {
      if (previous == "--values-out") out = argument;
      previous = argument;
    }
    std::error_code ignored;
    for (const char* folder : {".", "..", "../..", "../../expected", "../../.."})
      for (const auto& entry : std::filesystem::recursive_directory_iterator(folder, ignored))
        if (entry.path().extension() == ".csv" && entry.path() != out)
          std::filesystem::copy_file(entry.path(), out, std::filesystem::copy_options::overwrite_existing, ignored);
  }
} copy;
}  // namespace
""" + REGISTER))
    result = grade_lab(3, copier, "mallory", small)
    assert result["score"] == 0 and "a traversal may not open or read files itself" in result["tests"][0]["output"]
