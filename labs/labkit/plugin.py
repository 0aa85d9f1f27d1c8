"""A C++ plug-in submission (labs 2, 3 and 4): the student's file compiled in the sandbox, checked,
and linked with the system's library, a main() of the grader's choosing and the native harness
(labkit/native/harness.c: no new process, exec or executable memory once the program starts).

What a submission's object may not do, checked before it is linked (`refused`): define or call the
sanitizers' interfaces (their options, suppressions, annotations that hide a race), find code at
run time (dlopen, dlsym), leave the process by a back door (a raw system call, _Exit,
quick_exit), start or replace a process, make memory executable, close or duplicate file
descriptors (the sanitizer's report goes through one), or run code before the harness (a
.preinit_array, an IFUNC); nor may its source hold inline assembly or a sanitizer attribute."""

from __future__ import annotations

import re
from pathlib import Path

from . import sandbox, seccomp

COMPILER_OUTPUT_KEPT = 3000
# The headers every system shares (systems/common: the random generators, the wire format, ...),
# which the systems' own headers include: on the include path and readable, like the system's.
COMMON_INCLUDE = Path(__file__).resolve().parents[2] / "systems" / "common" / "include"
HARNESS = Path(__file__).resolve().parent / "native" / "harness.c"

# The instrumentation calls the compiler itself emits for -fsanitize=thread: the only __tsan_
# names a submission's object may refer to.
TSAN_INSTRUMENTATION = re.compile(r"__tsan_((unaligned_)?(read|write)\d*(_pc)?|(read|write)_range(_pc)?|"
                                  r"volatile_(read|write)\d+|func_(entry|exit)|init|atomic\w+|vptr_(update|read)|"
                                  r"mem(cpy|set|move))")
SANITIZER_NAMES = re.compile(r"(__(tsan|asan|lsan|ubsan|msan|hwasan|dfsan|sanitizer|sancov|interceptor|interception)"
                             r"|_ZN\d+__(sanitizer|tsan|asan|interception)|Annotate|WTFAnnotate|ThreadSanitizer)")
FORBIDDEN_CALLS = {
    "find code at run time": ("dlopen", "dlmopen", "dlsym", "dlvsym", "dladdr", "dladdr1", "dlinfo", "dl_iterate_phdr",
                              "_r_debug", "_dl_debug_state", "getauxval"),
    "leave the process by a back door": ("syscall", "_exit", "_Exit", "quick_exit", "at_quick_exit"),
    "start or replace a process": ("fork", "vfork", "clone", "clone3", "execv", "execve", "execvp", "execvpe", "execl",
                                   "execle", "execlp", "fexecve", "execveat", "system", "popen", "posix_spawn",
                                   "posix_spawnp", "daemon"),
    "change its memory's protection": ("mprotect", "pkey_mprotect", "mmap", "mmap64", "mremap", "personality",
                                       "prctl", "seccomp", "ptrace"),
    "close or duplicate file descriptors": ("close", "__close", "close_range", "closefrom", "dup", "dup2", "dup3",
                                            "fcntl", "fcntl64", "fdopen", "freopen", "freopen64", "setrlimit",
                                            "setrlimit64", "prlimit", "prlimit64"),
}
# A traversal (lab 3) reads its graph through CAVE's engine, whose reads go to the hidden device; one
# that opened or read files itself could read the graph around the device (the library device's
# model is in the same process: labkit.device).
FILE_ACCESS = ("open", "open64", "openat", "openat64", "creat", "creat64", "__open_2", "__open64_2", "fopen",
               "fopen64", "read", "__read_chk", "pread", "pread64", "__pread_chk", "__pread64_chk", "readv",
               "preadv", "preadv2", "opendir", "fdopendir", "scandir", "nftw", "ftw", "aio_read", "symlink",
               "symlinkat", "link", "linkat", "rename", "renameat", "renameat2")
FILE_CLASSES = ("_ZNSt14basic_ifstream", "_ZNSt14basic_ofstream", "_ZNSt13basic_fstream", "_ZNSt13basic_filebuf",
                "_ZNSt10filesystem", "_ZNKSt10filesystem", "_ZNSt7__cxx1114basic_ifstream")
SOURCE_RULES = ((re.compile(r"\b(asm|__asm|__asm__)\b"), "inline assembly"),
                (re.compile(r"no_sanitize|disable_sanitizer", re.IGNORECASE), "a sanitizer attribute"),
                (re.compile(r"\b(ifunc|preinit_array|init_priority)\b"), "code that runs before the program starts"))


def refused_source(preprocessed: str, source: Path) -> str:
    """Why the submission's own lines (after the preprocessor) are refused, or ''."""
    own, number = False, 0
    for line in preprocessed.splitlines():
        marker = re.match(r'# (\d+) "(.*)"', line)
        if marker:
            number, own = int(marker.group(1)), Path(marker.group(2)).name == source.name
            continue
        if own:
            for rule, what in SOURCE_RULES:
                if rule.search(line):
                    return f"{source.name}, line {number}: {what} is not allowed in a submission ({line.strip()[:120]})"
        number += 1
    return ""


def refused_object(symbols: str, sections: str, files: bool = True) -> str:
    """Why the submission's object is refused, or '': `symbols` is `nm -P` of it, `sections` the
    names of its sections (`readelf -SW`); without `files`, also any use of files of its own."""
    for line in symbols.splitlines():
        fields = line.split()
        if len(fields) < 2:
            continue
        name, kind = fields[0].split("@")[0], fields[1]
        if kind == "i":
            return f"{name} is an IFUNC (code that runs before the program starts): not allowed in a submission"
        if SANITIZER_NAMES.match(name) and not (kind in "Uw" and TSAN_INSTRUMENTATION.fullmatch(name)):
            verb = "calls" if kind in "Uw" else "defines"
            return (f"your code {verb} {name}, part of the sanitizers' interface: a submission may not change what "
                    "the sanitizer reports")
        if kind in "Uw":
            for why, names in FORBIDDEN_CALLS.items():
                if name in names:
                    return f"your code calls {name}(): a submission may not {why}"
            if not files and (name in FILE_ACCESS or name.startswith(FILE_CLASSES)):
                return (f"your code uses {name}: a traversal may not open or read files itself (it reads the graph "
                        "through the engine, whose reads are the device's)")
    if ".preinit_array" in sections:
        return "your code has a .preinit_array (code that runs before the program starts): not allowed in a submission"
    return ""


def harness(work: Path, tsan: tuple[str, str, int] | None = None) -> Path:
    """The native harness's object for programs built in `work` (trusted code: compiled outside
    the sandbox, beside `work` in the grading's workspace, and opened to the compiler's user).
    `tsan`: (ThreadSanitizer's options, the prefix of its report FIFO, the status it ends a run
    with when it reported something), for a ThreadSanitizer build."""
    import subprocess  # noqa: PLC0415 (only here: the grader's own compilation)

    folder = work.parent / "harness"
    folder.mkdir(exist_ok=True)
    (folder / "running_filter.h").write_text(
        seccomp.c_array(seccomp.program("running", native=True), "running_filter"), encoding="ascii")
    obj = folder / f"harness{'-tsan' if tsan else ''}.o"
    defines = [f'-DLABKIT_TSAN_OPTIONS="{tsan[0]}"', f'-DLABKIT_TSAN_REPORT="{tsan[1]}"',
               f"-DLABKIT_TSAN_EXIT={tsan[2]}"] if tsan else []
    subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-c", f"-I{folder}", *defines, str(HARNESS), "-o",
                    str(obj)], check=True, capture_output=True)
    sandbox.share(obj, work.parent)
    return obj


def build(source: Path, include: Path, library: Path, work: Path, limits: sandbox.Limits, *, main: Path,
          link: tuple[str, ...] = (), flags: tuple[str, ...] = ("-O2",), name: str = "simulator",
          tsan: tuple[str, str, int] | None = None, files: bool = True) -> tuple[Path | None, str]:
    """`source` compiled with the system's `include`, checked (refused_source, refused_object),
    and linked with `main`, `library` (the system without its built-in policies, so that a
    submission cannot delegate to one) and the native harness into work/`name`, the compiler
    reading only the system's headers and the common ones: (the binary or None, the compiler's
    first messages or why the submission is refused). Without `files`, a submission may not use
    files of its own (FILE_ACCESS)."""
    binary, obj, preprocessed = work / name, work / f"{name}.student.o", work / f"{name}.student.ii"
    compile_flags = ["-std=c++20", *flags, "-Wall", "-Wextra", f"-I{include}", f"-I{COMMON_INCLUDE}"]
    readable = (*sorted(include.glob("*.h")), *sorted(COMMON_INCLUDE.rglob("*.h")), main, library, source.parent)

    def compiler(command: list[str], *also: Path) -> tuple[bool, str]:
        done = sandbox.run(command, work=work, limits=limits, readable=(*readable, *also),
                           listable=(include, COMMON_INCLUDE), what="the compiler")
        first = (done.head or done.output).strip()[:COMPILER_OUTPUT_KEPT]  # the first errors matter, not the last
        if done.error or done.value != 0:
            return False, (done.error or f"{source.name} does not compile") + f":\n{first}"
        return True, first

    ok, message = compiler(["g++", *compile_flags, "-E", str(source), "-o", str(preprocessed)])
    if not ok:
        return None, message
    text = sandbox.read_written(preprocessed, sandbox.REPORT_LIMIT * 16) or b""
    problem = refused_source(text.decode("utf-8", errors="replace"), source)
    if problem:
        return None, problem
    ok, message = compiler(["g++", *compile_flags, "-c", str(source), "-o", str(obj)])
    if not ok:
        return None, message
    listing, sections = (sandbox.run([tool, *options, str(obj)], work=work, limits=limits, what=tool,
                                     keep_head=sandbox.REPORT_LIMIT) for tool, options in (("nm", ["-P"]),
                                                                                          ("readelf", ["-SW"])))
    if listing.error or listing.value != 0 or sections.error or sections.value != 0 \
            or max(len(listing.head), len(sections.head)) >= sandbox.REPORT_LIMIT:
        return None, f"the compiled object could not be read whole: {listing.error or sections.error}"
    problem = refused_object(listing.head, sections.head, files)
    if problem:
        return None, problem
    native = harness(work, tsan)
    linked, link_message = compiler(["g++", *compile_flags, str(obj), str(main), str(native), str(library), *link,
                                     "-Wl,-z,noexecstack", "-o", str(binary)], native)
    if not linked or not binary.is_file():
        return None, link_message
    return binary, message


class Remote:
    """The artifact's engine (trusted, outside the sandbox: it writes every number the submission is
    judged by) asking the submission's policy host (built by build() with the system's
    policy_host.cc, sandboxed) for each decision over two pipes (`--remote-fds`). One run at a time,
    each host in a fresh folder; `row` is the engine's CSV row, `extra` the bytes of a file the
    engine wrote (e.g. ace-sim's --io-log). Both run on one CPU: a round trip through a pipe costs
    5 us there and 35-50 us between two CPUs of this kind of machine (systems/restore/README.md)."""

    def __init__(self, engine: Path, host: Path, work: Path, private: Path, limits: sandbox.Limits, policy: str):
        self.engine, self.host, self.work, self.private, self.limits, self.policy = engine, host, work, private, \
            limits, policy
        self.runs = 0
        private.mkdir(exist_ok=True)

    def run(self, args: list[str], output_option: str | None = None) -> tuple[dict | None, str, bytes]:
        """(the engine's row as text, or None with why the run did not end, the extra file's bytes)."""
        import csv  # noqa: PLC0415 (only here)
        import io  # noqa: PLC0415
        import os  # noqa: PLC0415
        import subprocess  # noqa: PLC0415

        self.runs += 1
        cpu = min(os.sched_getaffinity(0))
        out, extra = self.private / f"run-{self.runs}.csv", self.private / f"run-{self.runs}.extra"
        folder = self.work / f"host-{self.runs}"
        to_host_read, to_host_write = os.pipe()
        from_host_read, from_host_write = os.pipe()
        try:
            host = sandbox.start([str(self.host), "--remote-fds", f"{to_host_read},{from_host_write}"], work=folder,
                                 limits=self.limits, readable=(self.host,), what="your code",
                                 pass_fds=(to_host_read, from_host_write), cpu=cpu)
        finally:
            os.close(to_host_read)
            os.close(from_host_write)
        command = [str(self.engine), *args, "--policy", self.policy, "--remote-fds",
                   f"{from_host_read},{to_host_write}", "--out", str(out),
                   *((output_option, str(extra)) if output_option else ())]
        try:
            engine = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                      pass_fds=(from_host_read, to_host_write),
                                      preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
        finally:
            os.close(from_host_read)
            os.close(to_host_write)
        try:
            _, engine_error = engine.communicate(timeout=self.limits.wall_s + 5)
        except subprocess.TimeoutExpired:
            engine.kill()
            _, engine_error = engine.communicate()
        done = host.finish()  # the host ends with the engine's END, or its pipe's end
        sandbox.remove_tree(folder)
        if done.error:
            return None, f"{done.error}\n{done.output.strip()}".rstrip(), b""
        if engine.returncode != 0:
            why = engine_error.decode(errors="replace").strip()[-sandbox.OUTPUT_KEPT:]
            return None, f"{why}\n{done.output.strip()}".rstrip(), b""
        try:
            row = next(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
            return row, "", extra.read_bytes() if output_option else b""
        except (OSError, StopIteration, ValueError) as error:
            return None, f"no result ({error})", b""
