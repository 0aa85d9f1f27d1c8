"""Running a submission's code so that it cannot hurt the grader: in a child process with a
wall-clock limit (the whole process group is killed), a memory limit, a CPU-time limit, and,
where the kernel has Landlock (Linux 5.13 and later, unprivileged), no write anywhere but the
folders the grader allows (the submission's private copy, the device it measures). A crash, a
hang, runaway memory or a forbidden write ends that call with a message; the grader goes on.
Reads are confined too (SYSTEM_READABLE): a submission cannot read the instructor's key, the
solution or the hidden parameters of its device."""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

LABKIT_ROOT = Path(__file__).resolve().parents[1]  # labs/

# Landlock (include/uapi/linux/landlock.h): the file-system rights it can take away.
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR, _REMOVE_DIR, _REMOVE_FILE = (1 << bit for bit in range(6))
_MAKE = sum(1 << bit for bit in range(6, 13))  # char, dir, reg, sock, fifo, block, sym
_REFER, _TRUNCATE = 1 << 13, 1 << 14
_READ = _EXECUTE | _READ_FILE | _READ_DIR
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE  # what a rule on a file (not a folder) may allow
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446  # x86_64 and arm64 alike
_PR_SET_NO_NEW_PRIVS = 38
# What any program reads to start (the interpreter, its libraries, the system's settings). The
# rest of the machine is unreadable: the grader's key, the lab's solution and hidden files, the
# device's control file, other students' work. /proc is readable, so a hidden device's parameters
# never go on a command line (emussd reads them from its environment, which Landlock protects).
SYSTEM_READABLE = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/dev", "/proc",
                   "/sys", "/run", sys.prefix, sys.base_prefix, sys.exec_prefix]


def landlock_abi() -> int:
    """Landlock's ABI version here, 0 when the kernel lacks it."""
    libc = ctypes.CDLL(None, use_errno=True)
    version = libc.syscall(_SYS_CREATE_RULESET, None, 0, 1)  # LANDLOCK_CREATE_RULESET_VERSION
    return max(version, 0)


def _confine(listable: list[str], readable: list[str], writable: list[str]) -> None:
    """In the child, before exec: reads only beneath `readable` and `writable`, writes only beneath
    `writable` (folders or files), and folders beneath `listable` listed (names only: Python finds
    its packages by listing the folders on its path). Raises OSError when Landlock refuses (Popen
    then raises SubprocessError in the grader)."""
    abi = landlock_abi()
    if abi < 1:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    write = _WRITE_FILE | _REMOVE_DIR | _REMOVE_FILE | _MAKE | (_REFER if abi >= 2 else 0) \
        | (_TRUNCATE if abi >= 3 else 0)
    handled = ctypes.c_uint64(_READ | write)
    ruleset = libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(handled), ctypes.sizeof(handled), 0)
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "Landlock refused to create a ruleset")
    for rights, paths in ((_READ_DIR, listable), (_READ, readable), (_READ | write, writable)):
        for path in paths:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # absent here (/lib32 on most machines)
            allowed = rights if os.path.isdir(path) else rights & _FILE_RIGHTS
            attr = allowed.to_bytes(8, "little") + fd.to_bytes(4, "little", signed=True)
            rule = ctypes.create_string_buffer(attr, 12)
            if libc.syscall(_SYS_ADD_RULE, ruleset, 1, rule, 0) < 0:  # struct landlock_path_beneath_attr, packed
                raise OSError(ctypes.get_errno(), f"Landlock refused a rule for {path}")
            os.close(fd)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.syscall(_SYS_RESTRICT_SELF, ruleset, 0) < 0:
        raise OSError(ctypes.get_errno(), "Landlock refused to confine the process")
    os.close(ruleset)


@dataclass(frozen=True)
class Limits:
    wall_s: float
    cpu_s: float
    memory_bytes: int


@dataclass
class Outcome:
    value: object = None
    error: str = ""          # empty: the call returned `value`
    output: str = ""         # what the submission printed (the end of it)

    @property
    def ok(self) -> bool:
        return not self.error


OUTPUT_KEPT = 2000
FILE_LIMIT = 256 << 20  # the largest file a submission may write, its printed output included


def call(grader: Path, entry: str, submission: Path, arguments: dict, *, work: Path, limits: Limits,
         writable: tuple[Path, ...] = (), readable: tuple[Path, ...] = (), listable: tuple[Path, ...] = ()) -> Outcome:
    """Run `entry` of the lab's grader (its CHILD table) in a sandboxed child, in `work`, and return
    its result. The child may write only in `work` and `writable`, read only there, in `readable`,
    the submission, the grader's file, labkit and SYSTEM_READABLE, and list the folders beneath
    `listable` (to import a module of `readable` from a package there)."""
    work.mkdir(parents=True, exist_ok=True)
    request, answer = work / ".request.json", work / ".answer.json"
    request.write_text(json.dumps(arguments), encoding="utf-8")
    answer.unlink(missing_ok=True)
    command = [sys.executable, "-m", "labkit.child", str(grader), entry, str(submission), str(request), str(answer)]
    status, error, printed = _confined(command, work, limits, readable=(Path(__file__).parent, grader, submission,
                                                                        *readable),
                                       writable=writable, listable=(LABKIT_ROOT, *listable))
    if error:
        return Outcome(error=error, output=printed)
    try:
        result = json.loads(answer.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return Outcome(error=f"the submission exited with status {status} without an answer "
                             "(did it call exit(), or run out of memory?)", output=printed)
    return Outcome(value=result.get("value"), error=result.get("error", ""), output=printed)


def run(command: list[str], *, work: Path, limits: Limits, readable: tuple[Path, ...] = (),
        writable: tuple[Path, ...] = (), listable: tuple[Path, ...] = (), what: str = "the submission") -> Outcome:
    """Run a program (a compiler on the submission, a binary built from it) in the sandbox, in
    `work`: the same limits and confinement as call(). Its value is its exit status; an error when
    it was killed or stopped (`what` names it in the message), not when it exited non-zero."""
    work.mkdir(parents=True, exist_ok=True)
    status, error, printed = _confined(command, work, limits, readable=readable, writable=writable, listable=listable,
                                       what=what)
    return Outcome(value=status, error=error, output=printed)


def _confined(command: list[str], work: Path, limits: Limits, *, readable, writable, listable=(),
              what: str = "the submission") -> tuple[int | None, str, str]:
    """(exit status, why it was stopped or killed, the end of its output)."""
    may_write = [str(work), "/dev/null", *map(str, writable)]
    may_read = [*SYSTEM_READABLE, *map(str, readable)]

    def prepare() -> None:
        os.setsid()
        if limits.memory_bytes:  # 0: none (ThreadSanitizer maps terabytes of shadow memory it never touches)
            resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        resource.setrlimit(resource.RLIMIT_CPU, (int(limits.cpu_s), int(limits.cpu_s) + 1))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT))
        _confine(list(map(str, listable)), may_read, may_write)

    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work), "TMPDIR": str(work),
                   "LC_ALL": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(LABKIT_ROOT)}
    output = work / ".output"
    with open(output, "wb") as printed_to:
        try:
            child = subprocess.Popen(command, cwd=work, env=environment, stdin=subprocess.DEVNULL, stdout=printed_to,
                                     stderr=subprocess.STDOUT, preexec_fn=prepare)
        except subprocess.SubprocessError as error:  # prepare() failed: the grader's machine, not the submission
            raise RuntimeError(f"the sandbox could not be set up: {error}") from error
        try:
            child.wait(timeout=limits.wall_s)
        except subprocess.TimeoutExpired:
            _kill_group(child.pid)
            child.wait()
            return None, f"stopped after {limits.wall_s:g} s (the time limit): does it loop forever?", _tail(output)
        finally:
            _kill_group(child.pid)  # nothing the submission started outlives the call
    printed = _tail(output)
    if child.returncode < 0:
        name = signal.Signals(-child.returncode).name
        why = {"SIGXCPU": f"used more than {limits.cpu_s:g} s of CPU time",
               "SIGKILL": "was killed (out of memory?)",
               "SIGSEGV": "crashed (segmentation fault)",
               "SIGABRT": "aborted (an uncaught exception or a failed assertion: see its output)",
               "SIGXFSZ": f"wrote a file larger than {FILE_LIMIT >> 20} MiB (its printed output counts)"}.get(
                   name, f"was killed by {name}")
        return child.returncode, f"{what} {why}", printed
    return child.returncode, "", printed


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _tail(output: Path) -> str:
    """The end of what the submission printed (a file, not a pipe: printing gigabytes costs the
    grader nothing, and the file is limited by RLIMIT_FSIZE)."""
    with open(output, "rb") as handle:
        handle.seek(max(0, os.fstat(handle.fileno()).st_size - 4 * OUTPUT_KEPT))
        text = handle.read().decode(errors="replace")
    return text if len(text) <= OUTPUT_KEPT else "..." + text[-OUTPUT_KEPT:]
