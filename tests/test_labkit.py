"""The labs' shared grading kit: hidden parameters per student, Gradescope's results.json, and a
sandbox that no submission can hang, crash, exhaust or write outside of."""

from __future__ import annotations

import json
import re
import sys
import textwrap
from pathlib import Path

import pytest
from labkit import report, sandbox, seeds

KEY = b"an instructor's secret, 32 bytes"
FAST = sandbox.Limits(wall_s=20, cpu_s=20, memory_bytes=1 << 30)


def test_the_same_student_gets_the_same_parameters_and_two_students_different_ones():
    spec = {"alpha": [1.0, 5.0], "k_r": [4, 64], "latency": {"choices": [2000, 3000, 4000]}}

    def device(student, key=KEY):
        rng = seeds.student_rng(key, "lab1", student)
        return {name: seeds.draw(rng, value) for name, value in spec.items()}

    assert device("alice") == device("alice") == device(" alice ")
    drawn = [device(f"student{n}") for n in range(200)]
    assert len({tuple(d.values()) for d in drawn}) > 190
    assert all(1.0 <= d["alpha"] <= 5.0 and 4 <= d["k_r"] <= 64 and d["latency"] in (2000, 3000, 4000) for d in drawn)
    assert {d["k_r"] for d in drawn} >= {4, 64} or len({d["k_r"] for d in drawn}) > 40  # the whole range is used
    assert device("alice") != device("alice", key=b"another instructor's secret key")
    assert seeds.student_rng(KEY, "lab1", "alice").random() != seeds.student_rng(KEY, "lab2", "alice").random()


def test_a_missing_or_short_key_is_refused_with_what_to_do(tmp_path, monkeypatch):
    monkeypatch.delenv(seeds.KEY_ENV, raising=False)
    with pytest.raises(seeds.SecretKeyError, match="KEY=<file>"):
        seeds.load_key(None)
    (tmp_path / "key").write_text("short\n")
    with pytest.raises(seeds.SecretKeyError, match="shorter than 16 bytes"):
        seeds.load_key(tmp_path / "key")
    with pytest.raises(seeds.SecretKeyError, match="cannot read"):
        seeds.load_key(tmp_path / "absent")
    monkeypatch.setenv(seeds.KEY_ENV, KEY.decode())
    assert seeds.load_key(None) == KEY
    with pytest.raises(ValueError, match="must not be empty"):
        seeds.student_rng(KEY, "lab1", "  ")


def test_results_json_has_gradescope_fields_and_the_total(tmp_path):
    tests = [report.TestResult("k_r", 20).passed("k_r 17, true 17"), report.TestResult("plot", 10).failed("no plot"),
             report.TestResult("partial", 5, score=2.5, output="half")]
    result = report.results(tests, "lab 1 for alice")
    report.write(result, tmp_path / "out" / "results.json")
    written = json.loads((tmp_path / "out" / "results.json").read_text())
    assert written["score"] == 22.5 and written["output"] == "lab 1 for alice"
    assert [set(t) for t in written["tests"]] == [{"name", "score", "max_score", "output"}] * 3
    assert "[20/20] k_r" in report.feedback(written) and "Total: 22.5/35" in report.feedback(written)
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["results.json"]  # no temporary file left


GRADER = """
SUBMISSION_MODULE = "answer.py"
CHILD = {"run": lambda student, arguments, services: student.run(services, **arguments)}
"""


@pytest.fixture
def workspace():
    """A grading's workspace, where the graders make theirs (a root grader's calls run under a user
    of their own, which must reach it)."""
    from labkit import config as lab_config
    from labkit.grade import LABS_DIR

    with lab_config.workspace(LABS_DIR / "build" / "work", 0) as (root, work):
        yield root, work


def call(workspace, body: str, limits=FAST, services=None, **arguments):
    root, work = workspace
    submission = root / "original"
    submission.mkdir(exist_ok=True)
    (submission / "answer.py").write_text(textwrap.dedent(body))
    (root / "grader.py").write_text(GRADER)
    sandbox.share(root / "grader.py", root)
    from labkit import config as lab_config
    copy = root / "submission"
    if copy.exists():
        sandbox.remove_tree(copy)
    copy = lab_config.copy_submission(submission, root)
    return sandbox.call(root / "grader.py", "run", copy, arguments, work=work, limits=limits, services=services)


def test_a_call_returns_what_the_submission_returns_and_what_it_printed(workspace):
    outcome = call(workspace, """
        def run(services, x):
            print("working on", x)
            return {"twice": 2 * x}
    """, x=21)
    assert outcome.ok and outcome.value == {"twice": 42} and "working on 21" in outcome.output


def test_a_service_is_the_graders_to_run_and_to_refuse(workspace):
    asked = []

    def measure(op, threads):
        if threads > 8:
            raise ValueError("threads must be at most 8")
        asked.append((op, threads))
        return {"threads": threads}

    outcome = call(workspace, """
        def run(services):
            first = services.measure("read", 2)
            try:
                services.measure("read", 99)
            except Exception as error:  # the grader's refusal, as an exception in the submission
                return first, str(error)
    """, services={"measure": measure})
    assert outcome.value == [{"threads": 2}, "ValueError: threads must be at most 8"] and asked == [("read", 2)]


def test_an_exception_names_itself_and_the_submission_line(workspace):
    outcome = call(workspace, """
        def run(services):
            return 1 / 0
    """)
    assert not outcome.ok and outcome.error.startswith("ZeroDivisionError: division by zero")
    assert "answer.py" in outcome.error and "return 1 / 0" in outcome.error


def test_an_endless_loop_is_stopped_at_the_time_limit(workspace):
    outcome = call(workspace, """
        import time
        def run(services):
            while True:
                time.sleep(0.01)
    """, limits=sandbox.Limits(wall_s=1.5, cpu_s=20, memory_bytes=1 << 30))
    assert "stopped after 1.5 s (the time limit)" in outcome.error


def test_no_process_can_be_started_and_nothing_outlives_the_call(workspace):
    outcome = call(workspace, """
        import os, subprocess
        def run(services):
            tried = []
            for start in (lambda: subprocess.Popen(["sleep", "29.0417"]), os.fork,
                          lambda: os.posix_spawn("/bin/sleep", ["sleep", "29.0417"], {}),
                          lambda: os.execv("/bin/sleep", ["sleep", "29.0417"])):
                try:
                    start()
                    tried.append("started")
                except OSError as error:
                    tried.append(error.errno)
            return tried
    """)
    assert outcome.value == [1, 1, 1, 1], outcome  # EPERM, each
    # (an argument no other process on a shared machine would use)
    assert not [p for p in Path("/proc").glob("[0-9]*") if _cmdline(p).startswith("sleep\0" + "29.0417")]


def _cmdline(process: Path) -> str:
    try:
        return (process / "cmdline").read_text(errors="replace")
    except OSError:
        return ""


def test_endless_output_costs_the_grader_nothing_and_ends_with_the_call(workspace):
    outcome = call(workspace, """
        import sys
        def run(services):
            while True:
                sys.stdout.write("x" * 65536)
    """, limits=sandbox.Limits(wall_s=2, cpu_s=20, memory_bytes=1 << 30))
    assert "stopped after 2 s" in outcome.error
    assert outcome.output.endswith("x" * 100) and len(outcome.output) <= sandbox.OUTPUT_KEPT + 3


def test_cpu_time_beyond_the_limit_ends_the_call(workspace):
    outcome = call(workspace, """
        def run(services):
            while True:
                pass
    """, limits=sandbox.Limits(wall_s=30, cpu_s=1, memory_bytes=1 << 30))
    assert outcome.error == "the submission used more than 1 s of CPU time"


def test_runaway_memory_fails_the_call_not_the_grader(workspace):
    outcome = call(workspace, """
        def run(services):
            return len(bytearray(2 << 30))
    """, limits=sandbox.Limits(wall_s=20, cpu_s=20, memory_bytes=512 << 20))
    assert outcome.error.startswith("MemoryError")


def test_a_crash_and_an_exit_without_an_answer_are_reported(workspace):
    crash = call(workspace, """
        import ctypes
        def run(services):
            return ctypes.string_at(0)
    """)
    assert crash.error == "the submission crashed (segmentation fault)"
    exited = call(workspace, """
        import os
        def run(services):
            os._exit(3)
    """)
    assert "exited with status 3 without an answer" in exited.error


def test_threads_are_counted_and_the_folder_is_capped(workspace):
    outcome = call(workspace, """
        import threading
        def run(services):
            stop, started = threading.Event(), 0
            try:
                for _ in range(1000):
                    threading.Thread(target=stop.wait).start()
                    started += 1
            except RuntimeError:
                pass
            stop.set()
            return started
    """, limits=sandbox.Limits(wall_s=20, cpu_s=20, memory_bytes=1 << 30, tasks=16))
    assert outcome.ok and outcome.value < 16
    filled = call(workspace, """
        def run(services):
            for n in range(100):
                with open(f"fill-{n}", "wb") as handle:
                    handle.write(bytes(8 << 20))
    """, limits=sandbox.Limits(wall_s=20, cpu_s=20, memory_bytes=1 << 30, disk_bytes=64 << 20))
    assert filled.error == "the submission wrote more than 64 MiB or 20000 files in its folder (the limit)"
    many = call(workspace, """
        import os
        def run(services):
            for n in range(100000):
                os.mkdir(f"d{n}")
    """, limits=sandbox.Limits(wall_s=30, cpu_s=30, memory_bytes=1 << 30))
    assert "files in its folder (the limit)" in many.error


@pytest.mark.skipif(sandbox.landlock_abi() < 1, reason="the kernel has no Landlock: writes outside are not prevented")
def test_a_write_outside_the_submission_folder_is_refused(workspace):
    root, work = workspace
    outside = root / "outside.txt"
    outcome = call(workspace, f"""
        from pathlib import Path
        def run(services):
            Path("inside.txt").write_text("fine")
            Path({str(outside)!r}).write_text("not allowed")
    """)
    assert outcome.error.startswith("PermissionError") and str(outside) in outcome.error
    assert not outside.exists() and (work / "inside.txt").read_text() == "fine"


@pytest.mark.skipif(sandbox.landlock_abi() < 1, reason="the kernel has no Landlock: reads are not confined")
def test_files_outside_what_the_submission_may_read_are_unreadable(workspace, tmp_path):
    root, _ = workspace
    for secret in (root / "secret.key", tmp_path / "secret.key"):
        secret.write_text("the instructor's key")
        secret.chmod(0o644)
        outcome = call(workspace, f"""
            import pathlib
            def run(services):
                return pathlib.Path({str(secret)!r}).read_text()
        """)
        assert outcome.error.startswith("PermissionError") and "secret.key" in outcome.error


def test_a_file_a_call_wrote_is_read_as_a_file_never_through_a_link(workspace):
    root, work = workspace
    (root / "expected.csv").write_text("the answers")
    outcome = call(workspace, f"""
        import os
        def run(services):
            os.symlink({str(root / "expected.csv")!r}, "answer.csv")
            open("plain.csv", "w").write("mine")
    """)
    assert outcome.ok, outcome
    assert sandbox.read_written(work / "answer.csv", 100) is None  # the grader's file stays the grader's
    assert sandbox.read_written(work / "plain.csv", 100) == b"mine"
    (work / "run-1").symlink_to(root)  # a folder's name taken by a link: removed before a call uses it
    sandbox.prepare_folder(work / "run-1")
    assert (work / "run-1").is_dir() and not (work / "run-1").is_symlink() and (root / "expected.csv").exists()


def test_the_key_is_in_no_environment_the_submission_can_read(workspace, monkeypatch):
    monkeypatch.setenv(seeds.KEY_ENV, KEY.decode())
    outcome = call(workspace, """
        import os
        def run(services):
            found = [name for name in os.environ if "SECRET" in name]
            for process in os.listdir("/proc"):
                for part in ("environ", "mem", "cmdline"):
                    try:
                        with open(f"/proc/{process}/{part}", "rb") as handle:
                            if b"an instructor's secret" in handle.read(1 << 20):
                                found.append(f"{process}/{part}")
                    except OSError:
                        pass
            return found
    """)
    assert outcome.ok and outcome.value == [], outcome


def test_no_signal_reaches_the_grader_or_any_other_process(workspace):
    outcome = call(workspace, """
        import os, signal
        def run(services):
            refused = []
            parent = os.getppid()
            for aim in (lambda: os.kill(parent, signal.SIGKILL), lambda: os.killpg(os.getpgid(parent), signal.SIGKILL),
                        lambda: os.kill(-1, signal.SIGKILL), lambda: os.kill(1, signal.SIGTERM)):
                try:
                    aim()
                except (OSError, ValueError) as error:
                    refused.append(type(error).__name__)
            os.kill(os.getpid(), 0)  # itself: allowed
            return refused
    """)
    assert outcome.value == ["PermissionError"] * 4, outcome


def test_no_socket_of_any_kind_can_be_opened(workspace):
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    accepted = []
    def accept():
        try:
            accepted.append(listener.accept())
        except OSError:  # closed at the end of the test
            pass

    threading.Thread(target=accept, daemon=True).start()
    outcome = call(workspace, f"""
        import socket
        def run(services):
            results = []
            port = {listener.getsockname()[1]}
            for family, kind, where in ((socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", port)),
                                        (socket.AF_INET, socket.SOCK_DGRAM, ("127.0.0.1", 9)),
                                        (socket.AF_UNIX, socket.SOCK_STREAM, "/run/docker.sock"),
                                        (socket.AF_UNIX, socket.SOCK_STREAM, "\\0labkit-abstract"),
                                        (socket.AF_NETLINK, socket.SOCK_RAW, None)):
                try:
                    s = socket.socket(family, kind)
                    s.connect(where)
                    results.append("connected")
                except OSError as error:
                    results.append(error.errno)
            return results
    """)
    listener.close()
    assert outcome.value == [13] * 5 and not accepted, outcome  # EACCES, each


def test_another_process_cannot_be_traced_or_read(workspace):
    outcome = call(workspace, """
        import ctypes, os
        def run(services):
            libc = ctypes.CDLL(None, use_errno=True)
            parent = os.getppid()
            attached = libc.ptrace(16, parent, 0, 0)  # PTRACE_ATTACH
            buffer = ctypes.create_string_buffer(8)
            local = (ctypes.c_void_p * 2)(ctypes.addressof(buffer), 8)
            read = libc.process_vm_readv(parent, local, 1, local, 1, 0)
            return attached, read
    """)
    assert outcome.value == [-1, -1], outcome


def test_a_submission_that_breaks_the_protocol_is_stopped(workspace):
    outcome = call(workspace, """
        import os, sys
        def run(services):
            os.write(int(sys.argv[-1]), b"not json\\n")  # labkit.child's pipe to the grader
            import time
            time.sleep(5)
    """)
    assert outcome.error.startswith("the submission broke the grader's protocol"), outcome


def test_a_nesting_too_deep_for_the_parser_is_a_broken_protocol_not_the_graders_error(workspace):
    outcome = call(workspace, """
        import os, sys
        def run(services):
            os.write(int(sys.argv[-1]), b"[" * 200000 + b"\\n")
            import time
            time.sleep(5)
    """)
    assert outcome.error.startswith("the submission broke the grader's protocol"), outcome


def test_no_file_mode_owner_time_or_attribute_can_be_changed(workspace):
    # Landlock has no right for these: a grader that is not root would let its user's files be made
    # readable to all. The call's own folder is the submission's, so only the filter can refuse.
    outcome = call(workspace, """
        import os
        def run(services):
            open("mine", "w").close()
            tried = []
            for change in (lambda: os.chmod("mine", 0o777), lambda: os.chmod(".", 0o777),
                           lambda: os.chown("mine", os.getuid(), os.getgid()), lambda: os.utime("mine", (0, 0)),
                           lambda: os.setxattr("mine", "user.x", b"1"), lambda: os.removexattr("mine", "user.x")):
                try:
                    change()
                    tried.append("changed")
                except OSError as error:
                    tried.append(error.errno)
            with open("mine") as handle:
                try:
                    os.fchmod(handle.fileno(), 0o777)
                    tried.append("changed")
                except OSError as error:
                    tried.append(error.errno)
            return tried
    """)
    assert outcome.value == [1] * 7, outcome  # EPERM, each


def test_the_filters_system_call_numbers_are_the_kernels(tmp_path):
    header = Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h")
    if not header.exists():
        pytest.skip("no x86_64 kernel headers (linux-libc-dev)")
    from labkit import seccomp

    defined = dict(re.findall(r"#define __NR_(\w+) (\d+)", header.read_text()))
    assert {name: number for name, number in seccomp.NR.items() if name in defined} == \
        {name: int(defined[name]) for name in seccomp.NR if name in defined}
    # the newest calls, which older headers lack, are known
    assert set(seccomp.NR) - set(defined) <= {"fchmodat2"}, set(seccomp.NR) - set(defined)


def test_the_students_tarball_has_the_starter_and_grader_but_no_solution_test_or_key(tmp_path, monkeypatch):
    from labkit import dist

    tarball = dist.build(1, tmp_path / "lab-1.tar.gz")
    import tarfile
    with tarfile.open(tarball) as archive:
        names = archive.getnames()
        assert all(member.uid == 0 and member.mtime == 0 for member in archive.getmembers())
    inside = [name.split("/", 1)[1] for name in names]
    assert "labs/1-measure-ssd/starter/measure.py" in inside and "labs/labkit/grade.py" in inside
    assert "labs/1-measure-ssd/grader.py" in inside and "Makefile" in inside
    assert not [name for name in inside if "/solution/" in name or "/tests/" in name and name.startswith("labs/")]
    assert not [name for name in inside if name.endswith(".key")]
    # the artifact's own CI stays out; the lab's Classroom autograding goes in
    assert [name for name in inside if name.startswith(".github/")] == [".github/workflows/classroom.yml"]
    assert dist.build(1, tmp_path / "again.tar.gz").read_bytes() == tarball.read_bytes()  # the same bytes
    # a key kept in a packed file is found, and the tarball refused
    notes = dist.REPO_ROOT / "labs" / "README.md"
    before = notes.read_bytes()
    notes.write_bytes(before + b"\nnotes: " + KEY)
    try:
        with pytest.raises(dist.CannotGrade, match="labs/README.md holds the instructor's key"):
            dist.build(1, tmp_path / "refused.tar.gz", key=KEY)
    finally:
        notes.write_bytes(before)
    # a file git does not track (collected submissions, say) stays out
    stray = dist.REPO_ROOT / "labs" / "submissions-left-by-a-test.txt"
    stray.write_text("alice's answers")
    try:
        assert "labs/submissions-left-by-a-test.txt" not in dist.members()
        assert "labs/submissions-left-by-a-test.txt" in dist.untracked()
    finally:
        stray.unlink()


@pytest.mark.parametrize("path, kept", [
    ("labs/1-measure-ssd/solution/measure.py", False), ("labs/2-bufferpool/tests/test_lab2.py", False),
    ("labs/1-measure-ssd/starter/measure.py", True), ("labs/course.key", False), ("tests/test_labkit.py", True),
    ("systems/pio/pio/characterize.py", True), (".github/workflows/ci.yml", False),
])
def test_what_the_students_tarball_withholds(path, kept):
    from labkit import dist

    assert dist.withheld(path) is not kept


@pytest.mark.parametrize("lab", [1, 2, 3, 4])
def test_each_labs_classroom_workflow_reports_every_test_and_passes_actionlint(tmp_path, lab):
    import shutil
    import subprocess

    from labkit import classroom, grade

    text = classroom.workflow(lab)
    tests = grade.load_grader(grade.lab_dir(lab)).load_config()["tests"]
    for index, (name, spec) in enumerate(tests.items(), 1):
        assert f"test-name: {name}\n" in text and f"max-score: {spec['points']}\n" in text
        assert f"TEST-{index}_RESULTS: ${{{{ steps.test-{index}.outputs.result }}}}" in text
    assert "secrets.LAB_SECRET_KEY" in text and f"--lab {lab} --submission labs/" in text
    workflow = tmp_path / ".github" / "workflows" / "classroom.yml"
    workflow.parent.mkdir(parents=True)
    workflow.write_text(text)
    actionlint = shutil.which("actionlint") or shutil.which("actionlint", path=str(Path(sys.executable).parent))
    if actionlint is None:
        pytest.skip("actionlint is not installed (make setup installs it)")
    done = subprocess.run([actionlint, str(workflow)], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_classroom_check_passes_only_a_test_with_full_marks(tmp_path):
    import json
    import subprocess

    from labkit import classroom

    (tmp_path / "results.json").write_text(json.dumps({"tests": [
        {"name": "a", "score": 10, "max_score": 10, "output": "all right"},
        {"name": "b", "score": 5, "max_score": 10, "output": "half"}]}))
    for index, status in ((0, 0), (1, 1)):
        done = subprocess.run(classroom.CHECK.format(index=index), shell=True, cwd=tmp_path,
                              capture_output=True, text=True)
        assert done.returncode == status, done.stderr


PROBE = r"""
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
// What a submission's static constructor (before main, after the harness) may still do.
namespace {
int refused(int result) { return result < 0 ? errno : 0; }
struct Probe {
  Probe() {
    char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
    std::printf("exec %d\n", refused(execv(argv[0], argv)));
    pid_t child = fork();
    if (child == 0) _exit(0);
    std::printf("fork %d\n", refused(child));
    void* code = mmap(nullptr, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    std::printf("exec memory %d\n", code == MAP_FAILED ? errno : 0);
    std::printf("socket %d\n", refused(socket(AF_INET, SOCK_STREAM, 0)));
    int joined = 0;
    std::thread([&] { joined = 1; }).join();
    std::printf("thread %d\n", joined);
    std::printf("chmod %d\n", refused(chmod(".", 0777)));
  }
} probe;
}  // namespace
int main() { return 0; }
"""


def test_the_native_harness_forbids_processes_exec_and_code_before_the_submission_runs(workspace):
    import subprocess

    from labkit import plugin

    root, work = workspace
    (root / "probe.cc").write_text(PROBE)
    binary = work / "probe"
    subprocess.run(["g++", "-std=c++20", "-O1", "-pthread", str(root / "probe.cc"), str(plugin.harness(work)),
                    "-Wl,-z,noexecstack", "-o", str(binary)], check=True)
    sandbox.share(binary, root)
    outcome = sandbox.run([str(binary)], work=work, limits=FAST, readable=(binary,))
    assert outcome.ok and outcome.value == 0, outcome
    assert outcome.output.split("\n")[:6] == ["exec 1", "fork 1", "exec memory 1", "socket 13", "thread 1",
                                              "chmod 1"], outcome


@pytest.mark.parametrize("line, refused", [
    ("int x = 1;", ""),
    ('asm("nop");', "inline assembly"),
    ("__asm__ volatile(\"\");", "inline assembly"),
    ('__attribute__((no_sanitize("thread"))) void f() {}', "a sanitizer attribute"),
    ("[[gnu::no_sanitize_thread]] void f() {}", "a sanitizer attribute"),
    ('void g() __attribute__((ifunc("r")));', "before the program starts"),
    ('__attribute__((section(".preinit_array"))) void (*p)() = 0;', "before the program starts"),
])
def test_a_submission_source_is_refused_for_what_the_sanitizer_cannot_see(line, refused):
    from labkit import plugin

    preprocessed = f'# 1 "/x/traversal.cc"\n{line}\n# 1 "/usr/include/stdio.h"\nasm("in a system header");\n'
    problem = plugin.refused_source(preprocessed, Path("traversal.cc"))
    assert (refused in problem and "traversal.cc, line 1" in problem) if refused else problem == ""


@pytest.mark.parametrize("symbols, refused", [
    ("__tsan_func_entry U\n__tsan_read4 U\n__tsan_atomic32_compare_exchange_val U\n_Z4walkv T 0 0\n", ""),
    ("__tsan_init w\n", "calls __tsan_init"),  # a weak reference: asking whether the sanitizer is there
    ("__tsan_default_options T 0 10\n", "defines __tsan_default_options"),
    ("__tsan_acquire U\n", "calls __tsan_acquire"),
    ("AnnotateBenignRaceSized U\n", "calls AnnotateBenignRaceSized"),
    ("__sanitizer_set_report_fd U\n", "calls __sanitizer_set_report_fd"),
    ("_ZN11__sanitizer5flagsEv U\n", "part of the sanitizers' interface"),
    ("dlsym U\n", "find code at run time"),
    ("_Exit U\n", "back door"),
    ("syscall U\n", "back door"),
    ("execve U\n", "start or replace a process"),
    ("close U\n", "close or duplicate"),
    ("fdopen U\n", "close or duplicate"),
    ("mprotect U\n", "protection"),
    ("resolver i 0 0\n", "IFUNC"),
])
def test_a_submission_object_is_refused_for_what_it_defines_or_calls(symbols, refused):
    from labkit import plugin

    problem = plugin.refused_object(symbols, "  [ 1] .text PROGBITS\n", sanitized=True)
    assert refused in problem if refused else problem == ""
    assert "preinit_array" in plugin.refused_object("", "  [ 5] .preinit_array PREINIT_ARRAY\n")


def test_an_object_built_without_the_sanitizer_may_not_name_it_at_all():
    """The instrumentation's calls are the compiler's only in the ThreadSanitizer build; in the plain
    build they can only be the submission's own, asking whether the sanitizer is there."""
    from labkit import plugin

    assert plugin.refused_object("__tsan_func_entry U\n", "", sanitized=True) == ""
    assert "calls __tsan_func_entry" in plugin.refused_object("__tsan_func_entry U\n", "")


@pytest.mark.parametrize("plain, sanitized, refused", [
    ("int x = 1;\n", "int x = 1;\n", False),
    ("int fast = 1;\n", "int fast = 0;\n", True),  # #ifdef __SANITIZE_THREAD__, or a pasted name
    ("int x = 1;\n", "int x = 1;\nint y = 2;\n", True),
])
def test_a_submission_that_compiles_differently_with_the_sanitizer_is_refused(plain, sanitized, refused):
    from labkit import plugin

    def preprocessed(own: str) -> str:
        return f'# 1 "/x/traversal.cc"\n{own}# 1 "/usr/include/stdio.h"\nint header;\n'
    problem = plugin.refused_difference(preprocessed(plain), preprocessed(sanitized), Path("traversal.cc"))
    assert ("compiles differently with ThreadSanitizer" in problem) if refused else problem == ""


@pytest.mark.parametrize("symbol", ["getenv", "secure_getenv", "environ", "program_invocation_name", "__progname"])
def test_a_traversal_may_not_look_at_how_it_was_started(symbol):
    from labkit import plugin

    assert plugin.refused_object(f"{symbol} U\n", "", files=True) == ""
    assert "may not look at how it was started" in plugin.refused_object(f"{symbol} U\n", "", files=False)


@pytest.mark.parametrize("symbol", ["open", "pread64", "fopen", "opendir", "__pread_chk",
                                    "_ZNSt14basic_ifstreamIcSt11char_traitsIcEEC1EPKcSt13_Ios_Openmode",
                                    "_ZNSt10filesystem7__cxx1118directory_iteratorC1ERKNS_7__cxx114pathE"])
def test_a_traversal_may_not_use_files_of_its_own(symbol):
    from labkit import plugin

    assert plugin.refused_object(f"{symbol} U\n", "", files=True) == ""
    assert "may not open or read files itself" in plugin.refused_object(f"{symbol} U\n", "", files=False)


@pytest.mark.parametrize("preprocessed, written", [
    ('# 1 "/x/traversal.cc"\n# 1 "cave_helpers.h"\n__attribute__((no_sanitize("thread"))) void f();\n', ""),
    ('# 1 "/x/traversal.cc"\n# 7 "/usr/include/stdio.h" 3\nvoid f();\n', ""),  # renamed as a system header
    ("", '#line 1 "cave_helpers.h"\n'),
    ("", '#include <vector>\n# 1 "/usr/include/stdio.h" 1 3\n'),  # GCC's form: its output is a real #include's
    ("", "  %: line 4\n"),
    ("", "#/* hidden */line 4\n"),
    ("", "#\\\nline 4\n"),
    ("", "int x; /* a comment\n that ends */ # 12 \"x.h\"\n"),
])
def test_a_submission_may_not_rename_its_own_lines(preprocessed, written):
    from labkit import plugin

    problem = plugin.refused_line_directives(preprocessed, Path("/x/traversal.cc"), written)
    assert problem.startswith("traversal.cc: #line directives are not allowed in a submission"), problem


def test_the_compilers_own_line_markers_are_not_line_directives():
    from labkit import plugin

    preprocessed = ('# 0 "/x/traversal.cc"\n# 0 "/work//"\n# 0 "<built-in>"\n# 0 "<command-line>"\n'
                    '# 1 "/usr/include/stdc-predef.h" 1 3 4\n# 0 "<command-line>" 2\n# 1 "/x/traversal.cc"\n'
                    '# 1 "/usr/include/c++/12/vector" 1 3\n# 58 "/usr/include/c++/12/vector" 3\nint v;\n'
                    '# 3 "/x/traversal.cc" 2\n# 1 "/sys/src/algorithms.h" 1\n# 9 "/sys/src/algorithms.h"\n'
                    'int a;\n# 4 "/x/traversal.cc" 2\n# 9 "/x/traversal.cc"\nint x;\n')
    written = '#include <vector>\n#include "algorithms.h"\n#if 1\n  #  define N 1 /* # 1 "x" */\n#endif\n'
    assert plugin.refused_line_directives(preprocessed, Path("/x/traversal.cc"), written) == ""
    # Every line but the system's and the common headers' is the submission's, whatever its file's name.
    lines = plugin.own_lines(preprocessed + '# 1 "made-up.h" 1\nint hidden;\n', Path("/x/traversal.cc"),
                             (Path("/sys/src"),))
    assert [line for _, line in lines] == ["int x;", "int hidden;"]


@pytest.mark.skipif(sandbox.landlock_abi() < 1, reason="the kernel has no Landlock: the compiler reads any file")
def test_the_compiler_reads_the_submissions_file_alone(workspace):
    """A header beside traversal.cc would be lines of the submission's that the checks take for a header."""
    from labkit import config as lab_config
    from labkit import plugin

    root, work = workspace
    original, system = root / "original", root / "system"
    original.mkdir()
    system.mkdir()
    (system / "engine.h").write_text("inline int engine() { return 1; }\n")
    sandbox.share(system, root)
    (original / "helpers.h").write_text("#ifdef __SANITIZE_THREAD__\n#endif\n")
    (original / "traversal.cc").write_text('#include "engine.h"\n#include "helpers.h"\nint f() { return engine(); }\n')
    source = lab_config.copy_submission(original, root) / "traversal.cc"
    binary, message = plugin.build(source, system, system / "libnone.a", work, FAST, main=system / "main.cc")
    assert binary is None and "a submission is traversal.cc alone" in message and "helpers.h: Permission denied" in \
        message, message
    source.write_text('#include "engine.h"\n#line 1 "engine.h"\nint f() { return engine(); }\n')
    binary, message = plugin.build(source, system, system / "libnone.a", work, FAST, main=system / "main.cc")
    assert binary is None and message.startswith("traversal.cc: #line directives are not allowed"), message


@pytest.mark.parametrize("symbol, refused", [
    ("wmemset U", "calls wmemset, which ThreadSanitizer does not see"),
    ("wmemchr U", "calls wmemchr, which ThreadSanitizer does not see"),
    ("strcpy U", "calls strcpy, which ThreadSanitizer does not see"),
    ("__memcpy_chk U", "calls __memcpy_chk, which ThreadSanitizer does not see"),
    ("memcpy U", ""), ("memset U", ""), ("malloc U", ""), ("pthread_mutex_lock U", ""), ("pthread_create U", ""),
    ("sqrt U", ""), ("log2f U", ""), ("__cxa_guard_acquire U", ""), ("printf U", ""), ("stdout U", ""),
    ("__popcountdi2 U", ""), ("__tsan_write4 U", ""),
    ("_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE U", ""),  # C++: as before
])
def test_a_sanitized_object_may_call_only_the_c_functions_the_sanitizer_sees(symbol, refused):
    from labkit import plugin

    problem = plugin.refused_object(symbol + "\n", "", files=False, sanitized=True)
    assert refused in problem if refused else problem == "", problem
    assert plugin.refused_object(symbol + "\n", "", files=True) == "" or symbol.startswith("__tsan")  # plain builds


@pytest.mark.parametrize("symbol, refused", [
    ("clock_nanosleep T 0 10", True), ("nanosleep W 0 10", True), ("environ B 0 8", True), ("optind D 0 4", True),
    ("__libc_single_threaded D 0 1", True), ("_hidden B 0 4", True), ("_Znwm T 0 10", True),
    ("_ZdlPv W 0 10", True),
    ("_ZdaPvm T 0 10", True), ("_ZnwmSt11align_val_t T 0 10", True),
    ("_ZNSt6chrono3_V212steady_clock3nowEv T 0 10", True),
    ("_ZNSt11this_thread11__sleep_forENSt6chrono8durationIlSt5ratioILl1ELl1EEEENS1_IlS2_ILl1ELl1000000000EEEE T 0 1",
     True),
    ("_ZNK9__gnu_cxx24__concurrence_lock_error4whatEv T 0 1", True), ("_ZSt4cout B 0 8", True),
    ("_ZNSolsEi T 0 1", True), ("_ZTVSt9exception D 0 8", True),
    ("clock_nanosleep t 0 10", False), ("counter b 0 4", False),  # its own: local
    ("counter B 0 4", False), ("table R 0 4", False), ("next_vertex D 0 4", False),  # its own C names
    ("DW.ref.__gxx_personality_v0 V 0 8", False), ("_Z4walkv T 0 10", False),
    ("_ZN12_GLOBAL__N_15levelE b 0 4", False), ("_ZTIN6acesim6PolicyE V 0 8", False),
    ("_ZNSt6vectorIiSaIiEE17_M_default_appendEm W 0 10", False),  # the weak copies of what its headers instantiate
    ("_ZNSt14_Function_baseD1Ev W 0 10", False), ("clock_nanosleep U", False),
])
def test_a_submission_may_define_only_names_of_its_own(symbol, refused):
    from labkit import plugin

    for sanitized in (False, True):
        problem = plugin.refused_object(symbol + "\n", "", sanitized=sanitized)
        name = symbol.split()[0]
        if refused:
            assert problem.startswith(f"your code defines {name}, a name of the system's libraries"), problem
        else:
            assert "defines" not in problem, problem


def test_a_submission_may_not_define_a_name_the_engine_defines(tmp_path):
    # Linked first, a definition of the engine's own function would replace it (weak or not): a
    # device's read, a counter. Its inline functions' weak copies come from the same headers.
    import subprocess

    from labkit import plugin

    (tmp_path / "engine.cc").write_text("namespace eng { int read_block(int b) { return b; } int reads = 0;\n"
                                        "inline int degree(int v) { return v; }\n"
                                        "int use(int v) { return degree(v); } }\n")
    subprocess.run(["g++", "-c", str(tmp_path / "engine.cc"), "-o", str(tmp_path / "engine.o")], check=True)
    subprocess.run(["ar", "rcs", str(tmp_path / "libengine.a"), str(tmp_path / "engine.o")], check=True)
    engine = plugin.engine_names(tmp_path / "libengine.a")
    assert {"_ZN3eng10read_blockEi", "_ZN3eng5readsE"} <= engine and "_ZN3eng6degreeEi" not in engine
    for symbol in ("_ZN3eng10read_blockEi T 0 4", "_ZN3eng10read_blockEi W 0 4", "_ZN3eng5readsE B 0 4"):
        assert plugin.refused_engine_names(symbol + "\n", engine).startswith(
            f"your code defines {symbol.split()[0]}, which the engine defines"), symbol
    for symbol in ("_ZN3eng6degreeEi W 0 4", "_ZN3eng10read_blockEi U", "_ZN12_GLOBAL__N_14walkEv t 0 4"):
        assert plugin.refused_engine_names(symbol + "\n", engine) == "", symbol


def test_resident_memory_beyond_the_limit_ends_the_call(workspace):
    """ThreadSanitizer's runs have no address-space limit (it maps terabytes it never touches): their
    resident memory is watched instead."""
    from labkit import config as lab_config

    limits = lab_config.limits({"limits": {"tsan": {"wall_s": 30, "cpu_s": 30, "memory_mb": 0, "rss_mb": 200}}})
    assert limits["tsan"] == sandbox.Limits(30, 30, 0, rss_bytes=200 << 20)
    outcome = call(workspace, """
        import time
        def run(services):
            kept = b"x" * (600 << 20)
            time.sleep(20)
            return len(kept)
    """, limits=limits["tsan"])
    assert outcome.error == "the submission used more than 200 MiB of memory (the limit)", outcome
    assert outcome.seconds < 15


def test_a_submissions_copy_of_a_system_or_engine_function_serves_the_submission_alone(workspace):
    """An inline redefinition of std::chrono::steady_clock::now (a function libstdc++ exports) and an
    explicit specialization of a template member the engine instantiates (std::deque<long>::pop_front)
    compile to weak COMDAT copies, like those every header leaves in an object. Linked first, they
    would serve the engine too (its clock at 0, its queue never popped). Renamed, they serve the
    submission alone, and the engine gets the system's code."""
    import subprocess

    from labkit import config as lab_config
    from labkit import plugin

    root, work = workspace
    original, system = root / "original", root / "system"
    original.mkdir()
    system.mkdir()
    (system / "engine.cc").write_text(
        "#include <chrono>\n#include <deque>\nnamespace eng {\n"
        "long clock_ns() { return std::chrono::steady_clock::now().time_since_epoch().count(); }\n"
        "long second(long x) { std::deque<long> q; q.push_back(x); q.push_back(x + 1); q.pop_front(); "
        "return q.front(); }\n}\n")
    subprocess.run(["g++", "-O0", "-c", str(system / "engine.cc"), "-o", str(system / "engine.o")], check=True)
    subprocess.run(["ar", "rcs", str(system / "libengine.a"), str(system / "engine.o")], check=True)
    (system / "main.cc").write_text(
        "#include <cstdio>\nnamespace eng { long clock_ns(); long second(long); }\nlong submission();\n"
        'int main() { std::printf("engine %d %ld submission %ld\\n", eng::clock_ns() > 0, eng::second(41), '
        "submission()); }\n")
    sandbox.share(system, root)
    (original / "traversal.cc").write_text(
        "#include <chrono>\n#include <deque>\n"
        "namespace std::chrono { inline steady_clock::time_point steady_clock::now() noexcept { return {}; } }\n"
        "template <> inline void std::deque<long>::pop_front() noexcept {}\n"
        "auto* keep_now = &std::chrono::steady_clock::now;\n"
        "void (std::deque<long>::*keep_pop)() noexcept = &std::deque<long>::pop_front;\n"
        "long submission() { std::deque<long> q; q.push_back(1); (q.*keep_pop)(); "
        "return keep_now().time_since_epoch().count() + long(q.size()); }\n")
    source = lab_config.copy_submission(original, root) / "traversal.cc"
    binary, message = plugin.build(source, system, system / "libengine.a", work, FAST, main=system / "main.cc")
    assert binary is not None, message
    ran = sandbox.run([str(binary)], work=work, limits=FAST)
    assert ran.value == 0 and ran.output.strip() == "engine 1 42 submission 1", ran


def test_own_copies_renames_a_function_with_its_whole_comdat_group():
    from labkit import plugin

    symbols = """
Symbol table '.symtab' contains 6 entries:
   Num:    Value          Size Type    Bind   Vis      Ndx Name
     1: 0000000000000000     0 NOTYPE  LOCAL  DEFAULT   12 _ZNSsD5Ev
     2: 0000000000000000    40 FUNC    WEAK   DEFAULT   12 _ZNSsD2Ev
     3: 0000000000000000    40 FUNC    WEAK   DEFAULT   12 _ZNSsD1Ev
     4: 0000000000000000    63 FUNC    WEAK   DEFAULT   14 _ZN3own4walkEv
     5: 0000000000000000    63 FUNC    GLOBAL DEFAULT    3 _Z9traversalv
     6: 0000000000000000     0 NOTYPE  GLOBAL DEFAULT  UND _ZNSsD1Ev_used
     7: 0000000000000000     9 FUNC    WEAK   DEFAULT    5 _ZNSt6chrono3_V212steady_clock3nowEv
"""
    groups = """
COMDAT group section [    1] `.group' [_ZNSsD5Ev] contains 2 sections:
   [Index]    Name
   [   12]   .text._ZNSsD2Ev
   [   13]   .rela.text._ZNSsD2Ev

COMDAT group section [    2] `.group' [_ZN3own4walkEv] contains 1 sections:
   [Index]    Name
   [   14]   .text._ZN3own4walkEv
"""
    elsewhere = frozenset({"_ZNSsD1Ev", "_ZNSt6chrono3_V212steady_clock3nowEv", "_Z9other"})
    assert plugin.own_copies(symbols, groups, elsewhere) == {
        name: name + ".submission" for name in ("_ZNSsD1Ev", "_ZNSsD2Ev", "_ZNSsD5Ev",
                                                "_ZNSt6chrono3_V212steady_clock3nowEv")}
    assert plugin.own_copies(symbols, groups, frozenset()) == {}
