"""A C++ plug-in submission (labs 2, 3 and 4): the student's file compiled in the sandbox, checked,
and linked with the system's library, a main() of the grader's choosing and the native harness
(labkit/native/harness.c: no new process, exec or executable memory once the program starts).

What a submission's object may not do, checked before it is linked (`refused`): define or call the
sanitizers' interfaces (their options, suppressions, annotations that hide a race), find code at
run time (dlopen, dlsym), leave the process by a back door (a raw system call, _Exit,
quick_exit), start or replace a process, make memory executable, close or duplicate file
descriptors (the sanitizer's report goes through one), or run code before the harness (a
.preinit_array, an IFUNC), define a name of the system's libraries (a C name, operator new, std's),
or, built with ThreadSanitizer, call a C function the sanitizer does not see; nor may its source
hold inline assembly, a sanitizer attribute or a #line directive. The compiler reads the submitted
file alone (never a header beside it). A function the submission's object defines that the engine
or the system's libraries define too (a weak copy, whoever wrote it) is renamed before the link
(own_copies): it serves the submission alone."""

from __future__ import annotations

import functools
import os
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
# Nor may it look at how it was started (its environment, its program's name): the runs
# ThreadSanitizer checks and the runs that are timed would otherwise tell themselves apart.
STARTUP = ("getenv", "secure_getenv", "__secure_getenv", "environ", "__environ", "_environ", "program_invocation_name",
           "program_invocation_short_name", "__progname", "__progname_full", "__libc_argv", "__libc_argc")
FILE_CLASSES = ("_ZNSt14basic_ifstream", "_ZNSt14basic_ofstream", "_ZNSt13basic_fstream", "_ZNSt13basic_filebuf",
                "_ZNSt10filesystem", "_ZNKSt10filesystem", "_ZNSt7__cxx1114basic_ifstream")
# What an object built with ThreadSanitizer may call by a C name (not a mangled C++ one): what the
# labs' solutions, starters and tests need, each intercepted by the sanitizer (it sees what the call
# reads and writes) or touching no memory of the program's. Any other C function (wmemset, say)
# could write shared memory where the sanitizer does not look.
SANITIZED_CALLS = frozenset((
    "memcpy", "memmove", "memset", "memcmp", "memchr", "strlen", "strnlen", "strcmp", "strncmp", "strchr",
    "malloc", "free", "calloc", "realloc", "aligned_alloc", "posix_memalign",
    "__gxx_personality_v0", "_Unwind_Resume", "__stack_chk_fail", "__assert_fail", "abort",
    "__dso_handle", "_GLOBAL_OFFSET_TABLE_", "__libc_single_threaded", "__errno_location",
    "pthread_create", "pthread_join", "pthread_detach", "pthread_self", "pthread_equal", "pthread_once",
    "sched_yield", "nanosleep", "usleep",
    "printf", "puts", "putchar", "fwrite", "fputs", "fflush", "fprintf", "snprintf", "vsnprintf", "stdout", "stderr"))
SANITIZED_CALL_PATTERN = re.compile(
    r"__cxa_(atexit|thread_atexit|begin_catch|end_catch|rethrow|allocate_exception|free_exception|throw|"
    r"guard_(acquire|release|abort)|pure_virtual|deleted_virtual|call_unexpected|bad_cast|bad_typeid|"
    r"throw_bad_array_new_length|get_exception_ptr|current_exception_type)|"
    r"pthread_(mutex_(init|destroy|lock|trylock|timedlock|unlock)|"
    r"rwlock_(init|destroy|rdlock|tryrdlock|timedrdlock|wrlock|trywrlock|timedwrlock|unlock)|"
    r"cond_(init|destroy|signal|broadcast|wait|timedwait|clockwait)|barrier_(init|destroy|wait)|"
    r"spin_(init|destroy|lock|trylock|unlock))|"
    r"(sqrt|cbrt|hypot|pow|exp|exp2|expm1|log|log2|log10|log1p|sin|cos|tan|asin|acos|atan|atan2|sinh|cosh|tanh|"
    r"floor|ceil|round|trunc|rint|nearbyint|lround|llround|lrint|llrint|fmod|remainder|fabs|fmin|fmax|fdim|fma|"
    r"copysign|ldexp|scalbn|erf|erfc|tgamma)[fl]?|"
    r"__(popcount|parity|clz|ctz|ffs)[sdt]i2|__(u?div|u?mod|mul)ti3")  # libgcc's arithmetic
# What a submission may define (nm's kinds of a global definition): only names of its own. A C name
# the system's libraries export (clock_nanosleep, __libc_single_threaded) or a global operator new
# or delete would replace the system's for the engine too, and so would a name of the C++
# library's (std, __gnu_cxx), except the weak copies every object holds of the templates and inline
# functions it uses (kinds W, V, u: the linker keeps one). A C name of its own (a global variable
# outside any namespace) is the submission's, unless reserved (a leading underscore).
DEFINED, STRONG = set("TDBRWVuiCGS"), set("TDBRiCGS")
DEFINABLE = frozenset(("DW.ref.__gxx_personality_v0",))  # the compiler's own, in every object that may throw
SYSTEM_LIBRARIES = ("libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "libtsan.so.2")
REPLACED = re.compile(r"_Z(nw|na|dl|da)")  # the global operator new, new[], delete, delete[]
LIBRARY_NAMES = re.compile(r"_Z(T[VISTHW]|G[VR]|T[hv]n?\d+_(n?\d+_)?)?N?[rVKRO]*"
                           r"(St|S[absiod]|9__gnu_cxx|10__cxxabiv1|11__gnu_debug)")
# own_copies: `readelf -sW`'s row of a symbol defined in a section (type, binding, section, name),
# `readelf -gW`'s line of a COMDAT group (its signature) and of one of its sections.
SYMBOL_ROW = re.compile(r"\s*\d+:\s+[0-9a-fA-F]+\s+\S+\s+(\w+)\s+(\w+)\s+\S+\s+(\d+)\s+(\S+)\s*$")
GROUP_HEADER = re.compile(r"COMDAT group section \[\s*\d+\] `[^']*' \[(.+)\] contains \d+ sections?:")
GROUP_MEMBER = re.compile(r"\s*\[\s*(\d+)\]\s+\S")
OWN_COPY_SUFFIX = ".submission"
# A line marker of the preprocessor's output: the line number, the file's name, the flags (1: the
# file starts, 2: back in it, 3: a system header, 4: extern "C").
LINE_MARKER = re.compile(r'# (\d+) "((?:[^"\\]|\\.)*)"((?: \d+)*)\s*$')
COMPILER_NAMES = ("<built-in>", "<command-line>")  # the compiler's own "files" (its predefined macros)
SYSTEM_HEADERS = (Path("/usr"),)  # the compiler's and the C library's headers
# A directive that renames lines: `#line`, or GCC's form `# 12 "file" 1 3` (also spelled %: or ??=).
LINE_DIRECTIVE = re.compile(r"[\s\ufeff]*(#|%:|\?\?=)\s*(line\b|\d)")
SOURCE_RULES = ((re.compile(r"\b(asm|__asm|__asm__)\b"), "inline assembly"),
                (re.compile(r"no_sanitize|disable_sanitizer", re.IGNORECASE), "a sanitizer attribute"),
                (re.compile(r"\b(ifunc|preinit_array|init_priority)\b"), "code that runs before the program starts"))


def own_lines(preprocessed: str, source: Path, headers: tuple[Path, ...] = ()) -> list[tuple[int, str]]:
    """The submission's own lines after the preprocessor, with their line numbers in `source`: every
    line that does not come from a header of the system's (`headers`, the folders of the system's
    and the common headers, and the compiler's own under /usr), whatever file name a line marker
    gives it (a made-up one is the submission's)."""
    trusted = tuple(str(folder).rstrip("/") + "/" for folder in (*headers, *SYSTEM_HEADERS))
    own, number, lines = False, 0, []
    for line in preprocessed.splitlines():
        marker = LINE_MARKER.match(line)
        if marker:
            name = marker.group(2)
            number, own = int(marker.group(1)), not (name in COMPILER_NAMES or name.startswith(trusted))
            continue
        if own:
            lines.append((number, line))
        number += 1
    return lines


def refused_line_directives(preprocessed: str, source: Path, text: str = "") -> str:
    """Why a submission that renames its own lines is refused, or '': a `#line` directive, or a GNU line
    marker (`# 1 "/usr/include/stdio.h" 1 3`), would make its lines look like a header's to the
    checks. In `preprocessed`, a marker without flag 1 or 2 (entering or leaving a file) names the
    file it is in (the compiler's own markers do); `text` is the source as written, where no
    directive may be a `#line` or a number (the GNU form, whose output is a real #include's: only
    the source as written tells them apart; a macro cannot make a directive)."""
    current = str(source)
    for line in preprocessed.splitlines():
        marker = LINE_MARKER.match(line)
        if not marker:
            continue
        name, flags = marker.group(2), marker.group(3).split()
        if "1" in flags or "2" in flags:
            current = name
        elif name not in (current, str(source), *COMPILER_NAMES) and not name.endswith("//"):  # with -g, the
            # compiler's working directory (-fworking-directory) is named so, once, before any line
            return f"{source.name}: #line directives are not allowed in a submission (one names {name[:120]!r})"
    spliced = re.sub(r"\\[ \t\f\v]*\r?\n", "", text)  # the compiler's line splicing, even with spaces after
    for physical in spliced.splitlines():
        # A comment is blank space before a directive's '#'; a line that ends a comment is read both
        # ways (after the comment, and as a line of its own): a refusal too many costs nothing.
        for line in (physical, physical.rsplit("*/", 1)[-1]):
            if LINE_DIRECTIVE.match(re.sub(r"/\*.*?\*/", " ", line)):
                return f"{source.name}: #line directives are not allowed in a submission ({physical.strip()[:120]})"
    return ""


def refused_source(preprocessed: str, source: Path, headers: tuple[Path, ...] = ()) -> str:
    """Why the submission's own lines (after the preprocessor) are refused, or ''."""
    for number, line in own_lines(preprocessed, source, headers):
        for rule, what in SOURCE_RULES:
            if rule.search(line):
                return f"{source.name}, line {number}: {what} is not allowed in a submission ({line.strip()[:120]})"
    return ""


def refused_difference(plain: str, sanitized: str, source: Path, headers: tuple[Path, ...] = ()) -> str:
    """Why a submission is refused whose own lines the preprocessor makes different with the
    sanitizer's flag (`#ifdef __SANITIZE_THREAD__`, however spelled): the code ThreadSanitizer
    checks must be the code that runs without it. '' when they are the same."""
    mine, checked = own_lines(plain, source, headers), own_lines(sanitized, source, headers)
    for (number, line), (_, other) in zip(mine, checked, strict=False):
        if line != other:
            return (f"{source.name}, line {number}: your code compiles differently with ThreadSanitizer: a "
                    "submission may not change what it does when the sanitizer checks it")
    if len(mine) != len(checked):
        return (f"{source.name}: your code compiles differently with ThreadSanitizer: a submission may not change "
                "what it does when the sanitizer checks it")
    return ""


def refused_object(symbols: str, sections: str, files: bool = True, sanitized: bool = False) -> str:
    """Why the submission's object is refused, or '': `symbols` is `nm -P` of it, `sections` the
    names of its sections (`readelf -SW`); without `files`, also any use of files of its own or of
    how it was started. Only an object built with ThreadSanitizer (`sanitized`) may call the
    sanitizer, and only the calls its instrumentation makes (never weak ones: a weak reference is
    a submission asking whether the sanitizer is there)."""
    for line in symbols.splitlines():
        fields = line.split()
        if len(fields) < 2:
            continue
        name, kind = fields[0].split("@")[0], fields[1]
        if kind == "i":
            return f"{name} is an IFUNC (code that runs before the program starts): not allowed in a submission"
        if SANITIZER_NAMES.match(name) and not (sanitized and kind == "U" and TSAN_INSTRUMENTATION.fullmatch(name)):
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
        if not files and kind in "UwVvBDd" and name in STARTUP:
            return (f"your code uses {name}: a traversal may not look at how it was started (its environment, its "
                    "program's name); what it needs, the engine gives it")
    if ".preinit_array" in sections:
        return "your code has a .preinit_array (code that runs before the program starts): not allowed in a submission"
    return refused_names(symbols, sanitized)


@functools.cache
def system_library_names() -> frozenset[str]:
    """The names the libraries a submission is linked with export (`nm -D` of each, where g++
    finds it; one that is not installed has none)."""
    import subprocess  # noqa: PLC0415 (only here: the grader's own tools)

    names = set()
    for library in SYSTEM_LIBRARIES:
        path = subprocess.run(["g++", f"-print-file-name={library}"], capture_output=True, text=True,
                              check=True).stdout.strip()
        if "/" in path:
            listing = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True,
                                     check=True).stdout
            names.update(fields[2].split("@")[0] for line in listing.splitlines() if len(fields := line.split()) >= 3)
    return frozenset(names)


def _replaces_a_c_name(name: str) -> bool:
    return not name.startswith("_Z") and name not in DEFINABLE and (name.startswith("_")
                                                                     or name in system_library_names())


def refused_names(symbols: str, sanitized: bool = False) -> str:
    """Why the submission's object (`nm -P` of it) is refused for a name of the system's it defines
    (DEFINED, LIBRARY_NAMES), or, built with ThreadSanitizer (`sanitized`), for a C function it calls
    that the sanitizer does not see (SANITIZED_CALLS); ''."""
    for line in symbols.splitlines():
        fields = line.split()
        if len(fields) < 2:
            continue
        name, kind = fields[0].split("@")[0], fields[1]
        if kind in DEFINED and (_replaces_a_c_name(name) or REPLACED.match(name)
                                or (kind in STRONG and LIBRARY_NAMES.match(name))):
            return (f"your code defines {name}, a name of the system's libraries: a submission may define only its "
                    "own names (its globals in a namespace of its own, or static)")
        if sanitized and kind in "Uwv" and not name.startswith("_Z") and name not in SANITIZED_CALLS \
                and not SANITIZED_CALL_PATTERN.fullmatch(name) and not TSAN_INSTRUMENTATION.fullmatch(name):
            return (f"your code calls {name}, which ThreadSanitizer does not see: a submission may use only the C "
                    "functions it watches or that touch no memory of the program's (memcpy, memmove, memset, "
                    "memcmp, strlen, malloc and free, the pthread locks and threads, printf and puts, the math "
                    "functions) and the C++ library")
    return ""


def engine_names(library: Path, kinds: set[str] = STRONG) -> frozenset[str]:
    """The names the engine's library (trusted, read outside the sandbox) defines as one of nm's
    `kinds` (strongly, by default)."""
    import subprocess  # noqa: PLC0415 (only here: the grader's own tools)

    listing = subprocess.run(["nm", "-P", "--defined-only", str(library)], capture_output=True, text=True,
                             check=True).stdout
    return frozenset(fields[0] for line in listing.splitlines() if len(fields := line.split()) >= 2
                     and fields[1] in kinds)


def refused_engine_names(symbols: str, engine: frozenset[str]) -> str:
    """Why the submission's object (`nm -P` of it) is refused for defining a name the engine's
    library defines: linked first, its definition would replace the engine's (a device's read, a
    counter), weak or not; ''."""
    for line in symbols.splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[1] in DEFINED and fields[0].split("@")[0] in engine:
            return (f"your code defines {fields[0].split('@')[0]}, which the engine defines: a submission may define "
                    "only its own names, not replace the engine's")
    return ""


def own_copies(symbols: str, groups: str, defined_elsewhere: frozenset[str]) -> dict[str, str]:
    """The renames (name: new name) after which the submission's object defines no function of
    `defined_elsewhere` (the engine's library's and the system libraries' names): `symbols` is
    `readelf -sW` of the object, `groups` `readelf -gW`. A function is renamed with every global
    symbol of its COMDAT group and the group's signature, so that the linker never takes the
    submission's group for one of the engine's.

    Why: the weak copy of an inline function or template a header instantiates (legitimate, in
    every object) and one the submission wrote to replace the system's (an inline
    std::chrono::steady_clock::now, an explicit specialization of the engine's
    std::deque<long>::pop_front) look alike to nm and readelf. Linked first, either would serve
    the engine too. Renamed, each serves the submission alone."""
    rows = [(match[1], match[2], int(match[3]), match[4]) for line in symbols.splitlines()
            if (match := SYMBOL_ROW.match(line))]  # (type, binding, section, name) of each defined symbol
    group_of, signatures = {}, []
    for line in groups.splitlines():
        if header := GROUP_HEADER.match(line):
            signatures.append(header[1])
        elif signatures and (member := GROUP_MEMBER.match(line)):
            group_of[int(member[1])] = len(signatures) - 1
    visible = [row for row in rows if row[1] in ("GLOBAL", "WEAK", "UNIQUE")]
    renamed = {name for kind, _, _, name in visible if kind == "FUNC" and name in defined_elsewhere}
    groups_renamed = {group_of[section] for _, _, section, name in visible if name in renamed and section in group_of}
    renamed |= {name for _, _, section, name in visible if group_of.get(section, -1) in groups_renamed}
    renamed |= {signatures[group] for group in groups_renamed}
    return {name: name + OWN_COPY_SUFFIX for name in sorted(renamed)}


def _rename_own_copies(obj: Path, work: Path, limits: sandbox.Limits, defined_elsewhere: frozenset[str]) -> str:
    """own_copies applied to the submission's object in place (objcopy, in the sandbox: the
    object is the submission's); why it could not be, or ''."""
    tables = [sandbox.run(["readelf", option, str(obj)], work=work, limits=limits, what="readelf",
                          keep_head=sandbox.REPORT_LIMIT) for option in ("-sW", "-gW")]
    if any(table.error or table.value != 0 or len(table.head) >= sandbox.REPORT_LIMIT for table in tables):
        return "the compiled object could not be read whole: " + next((t.error for t in tables if t.error), "")
    renames = own_copies(tables[0].head, tables[1].head, defined_elsewhere)
    if not renames:
        return ""
    listing = work / "own-copies.txt"
    listing.unlink(missing_ok=True)  # written by the grader: never through a link the sandbox left there
    fd = os.open(listing, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    os.fchmod(fd, 0o644)  # the sandbox's user reads it (the grader's umask keeps its files to itself)
    with os.fdopen(fd, "w") as handle:
        handle.writelines(f"{name} {new}\n" for name, new in renames.items())
    done = sandbox.run(["objcopy", f"--redefine-syms={listing}", str(obj)], work=work, limits=limits, what="objcopy")
    if done.error or done.value != 0:
        return f"the compiled object could not be prepared for the link: {done.error or done.output.strip()[:500]}"
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
    # The submission's file alone, never its folder: a header beside it would be code of the
    # submission's that the checks of its own lines (own_lines) take for the system's.
    readable = (*sorted(include.glob("*.h")), *sorted(COMMON_INCLUDE.rglob("*.h")), main, library, source)
    headers = (include, COMMON_INCLUDE)

    def compiler(command: list[str], *also: Path) -> tuple[bool, str]:
        done = sandbox.run(command, work=work, limits=limits, readable=(*readable, *also),
                           listable=(include, COMMON_INCLUDE), what="the compiler")
        first = (done.head or done.output).strip()[:COMPILER_OUTPUT_KEPT]  # the first errors matter, not the last
        if done.error or done.value != 0:
            alone = (f" (a submission is {source.name} alone: the compiler may read no other file of it, only the "
                     "system's headers)") if "Permission denied" in first else ""
            return False, (done.error or f"{source.name} does not compile{alone}") + f":\n{first}"
        return True, first

    def preprocessed_text(flags: list[str]) -> tuple[str | None, str]:
        ok, message = compiler(["g++", *flags, "-E", str(source), "-o", str(preprocessed)])
        if not ok:
            return None, message
        return (sandbox.read_written(preprocessed, sandbox.REPORT_LIMIT * 16) or b"").decode("utf-8", "replace"), ""

    text, message = preprocessed_text(compile_flags)
    if text is None:
        return None, message
    written = source.read_bytes().decode("utf-8", "replace")
    problem = refused_line_directives(text, source, written) or refused_source(text, source, headers)
    sanitized = any(flag.startswith("-fsanitize") for flag in flags)
    if sanitized and not problem:
        plain, message = preprocessed_text([flag for flag in compile_flags if not flag.startswith("-fsanitize")])
        if plain is None:
            return None, message
        problem = refused_line_directives(plain, source) or refused_difference(plain, text, source, headers)
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
    problem = refused_object(listing.head, sections.head, files, sanitized) \
        or refused_engine_names(listing.head, engine_names(library))
    if problem:
        return None, problem
    problem = _rename_own_copies(obj, work, limits, system_library_names() | engine_names(library, DEFINED))
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
        private.mkdir(mode=0o700, exist_ok=True)

    def run(self, args: list[str], output_option: str | None = None) -> tuple[dict | None, str, bytes]:
        """(the engine's row as text, or None with why the run did not end, the extra file's bytes)."""
        import csv  # noqa: PLC0415 (only here)
        import io  # noqa: PLC0415
        import os  # noqa: PLC0415
        import subprocess  # noqa: PLC0415

        self.runs += 1
        cpu = min(os.sched_getaffinity(0))
        out, extra = self.private / f"run-{self.runs}.csv", self.private / f"run-{self.runs}.extra"
        # The run's options (a hidden workload, its seed) go in a file only the grader reads: the
        # policy host could read the engine's command line (/proc/<pid>/cmdline is everyone's).
        hidden = self.private / f"run-{self.runs}.args"
        if any("\n" in arg for arg in args):
            raise ValueError(f"an engine option holds a line break: {args!r}")
        with os.fdopen(os.open(hidden, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as file:
            file.write("".join(f"{arg}\n" for arg in args))
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
        command = [str(self.engine), "--args-file", str(hidden), "--policy", self.policy, "--remote-fds",
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
