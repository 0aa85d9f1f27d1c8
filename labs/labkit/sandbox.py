"""Running a submission's code so that it cannot hurt the grader, the machine or the other students.

Every call into a submission (a function of a Python submission, its compiler, a program built
from it) runs in a process of its own, and whatever that process does:

- it runs under its own user when the grader is root (Gradescope's containers, `sudo`): no
  signal, /proc file or file of the grader's is then its to touch, and its process count is its
  own; otherwise under the grader's user, with its capabilities dropped;
- Landlock (Linux 5.13 and later, no privileges needed) confines its reads to the system's files
  and what the lab allows, and its writes to its own folder; from ABI 4 it may not bind or
  connect a TCP socket, from ABI 6 not signal a process outside itself nor reach an abstract
  Unix socket;
- seccomp (labkit.seccomp) refuses every socket, every signal to another process, ptrace and
  the calls that mount, load or change identity; and, once the submission's own code is about to
  run, any new process or exec (threads only);
- limits: wall-clock time (everything it started is killed when the call ends), CPU time,
  memory, the number of its threads and processes, and the bytes it may leave in its folder
  (watched while it runs);
- what it prints goes through a pipe the grader reads whole (a submission cannot rewrite it).

Without Landlock or seccomp (an old kernel, another architecture) grading still runs, for a
student checking their own work; `strength()` says what held, and a class's grading refuses
such a machine unless told otherwise (labkit.grade)."""

from __future__ import annotations

import ctypes
import json
import os
import random
import resource
import select
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from . import seccomp

LABKIT_ROOT = Path(__file__).resolve().parents[1]  # labs/

# Landlock (include/uapi/linux/landlock.h): the file-system rights it can take away.
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR, _REMOVE_DIR, _REMOVE_FILE = (1 << bit for bit in range(6))
_MAKE = sum(1 << bit for bit in range(6, 13))  # char, dir, reg, sock, fifo, block, sym
_REFER, _TRUNCATE = 1 << 13, 1 << 14
_READ = _EXECUTE | _READ_FILE | _READ_DIR
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE  # what a rule on a file (not a folder) may allow
_NET_BIND_TCP, _NET_CONNECT_TCP = 1, 2
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1, 2
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446  # x86_64 and arm64 alike
_PR_SET_NO_NEW_PRIVS, _PR_SET_PDEATHSIG, _PR_CAPBSET_DROP, _PR_CAP_AMBIENT = 38, 1, 24, 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
# What any program reads to start (the interpreter, its libraries, the system's settings). The
# rest of the machine is unreadable: the grader's key, the lab's solution and hidden files, the
# device's control file, other students' work.
SYSTEM_READABLE = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/dev", "/proc",
                   "/sys", "/run", sys.prefix, sys.base_prefix, sys.exec_prefix]

OUTPUT_KEPT = 2000           # the end of what a submission printed, shown in its feedback
OUTPUT_HEAD = 64 << 10       # the start of it, kept for messages that come first (a compiler's)
REPORT_LIMIT = 16 << 20      # a sanitizer's report is read whole, up to this much
FILE_LIMIT = 256 << 20       # the largest single file a submission may write
MESSAGE_LIMIT = 16 << 20     # a line of labkit.child's protocol
WATCH_EVERY_S = 0.05         # how often the folder's size is looked at while a call runs
FOLDER_ENTRIES = 20000       # files and folders a call may leave in its folder


def landlock_abi() -> int:
    """Landlock's ABI version here, 0 when the kernel lacks it."""
    libc = ctypes.CDLL(None, use_errno=True)
    version = libc.syscall(_SYS_CREATE_RULESET, None, 0, 1)  # LANDLOCK_CREATE_RULESET_VERSION
    return max(version, 0)


def own_user() -> bool:
    """Whether calls run under a user of their own: the grader is root."""
    return os.geteuid() == 0


def strength() -> tuple[bool, str]:
    """(whether the sandbox holds in full here, what it is made of)."""
    abi = landlock_abi()
    parts = []
    if own_user():
        parts.append("a user of its own")
    if abi:
        parts.append(f"Landlock ABI {abi}" + (" (files, network, signals)" if abi >= 6 else
                                               " (files, network)" if abi >= 4 else " (files)"))
    if seccomp.supported():
        parts.append("seccomp (no socket, signal, new process or exec)")
    full = abi >= 1 and seccomp.supported()
    missing = [] if full else [what for what, there in (("Landlock (Linux 5.13+)", abi >= 1),
                                                        ("seccomp's filters (x86_64)", seccomp.supported()))
                               if not there]
    summary = ", ".join(parts) or "nothing"
    return full, summary + (f"; missing: {', '.join(missing)}" if missing else "")


@dataclass(frozen=True)
class Limits:
    wall_s: float
    cpu_s: float
    memory_bytes: int                # 0: no address-space limit (ThreadSanitizer maps terabytes it never touches)
    tasks: int = 64                  # threads and processes at once
    disk_bytes: int = 256 << 20      # what the call may leave in its folder, in all
    rss_bytes: int = 0               # resident memory, watched while it runs (0: not watched); for the runs
    # with no address-space limit (ThreadSanitizer's)


@dataclass
class Outcome:
    value: object = None
    error: str = ""          # empty: the call returned `value`
    output: str = ""         # what the submission printed (the end of it)
    head: str = ""           # the start of what it printed
    report: str = ""         # a sanitizer's report, whole (report_to)
    seconds: float = 0.0     # wall-clock time from start to end, measured by the grader

    @property
    def ok(self) -> bool:
        return not self.error


# ----------------------------------------------------------------------------- the process's user


class _User:
    """The user a grading's calls run under when the grader is root: an unused uid (no process
    has it), so that its process count is its own and killing all of its processes kills only them."""
    uid: int | None = None

    @classmethod
    def get(cls) -> int | None:
        if not own_user():
            return None
        if cls.uid is None:
            used = _uids_in_use()
            rng = random.SystemRandom()
            cls.uid = next(uid for uid in iter(lambda: 0x60000000 + rng.randrange(1 << 24), None) if uid not in used)
        return cls.uid


def _uids_in_use() -> set[int]:
    uids = set()
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                uids.add(os.stat(entry.path).st_uid)
            except OSError:
                pass
    return uids


def _tasks_of(uid: int) -> int:
    """Threads and processes of `uid` now (RLIMIT_NPROC counts them all)."""
    count = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if os.stat(entry.path).st_uid == uid:
                count += len(os.listdir(f"{entry.path}/task"))
        except OSError:
            pass
    return count


def prepare_folder(folder: Path) -> None:
    """A folder the calls may write: theirs when they run under their own user. Whatever an earlier
    call left at that name (a link to the grader's files, say) is removed first."""
    folder = Path(folder)
    if os.path.lexists(folder) and (folder.is_symlink() or not folder.is_dir()):
        folder.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    uid = _User.get()
    if uid is not None:
        os.chown(folder, uid, uid, follow_symlinks=False)


def read_written(path: Path, limit: int) -> bytes | None:
    """A file a call wrote, as the grader reads it: a regular file only, never through a link (a
    link to the expected answers would otherwise be read as the submission's), at most `limit`
    bytes; None when there is no such file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return handle.read(limit)


def share(path: Path, top: Path) -> None:
    """Open `path` (a file or a folder and what it holds) to the calls' own user, read-only, and
    let it pass through the folders from `top` down to it; nothing when calls run as the grader."""
    if _User.get() is None:
        return
    path = Path(path)
    for folder in [path.parent, *path.parent.parents]:
        os.chmod(folder, os.stat(folder).st_mode | stat.S_IXOTH)
        if folder == Path(top):
            break
    for item in [path, *(path.rglob("*") if path.is_dir() else [])]:
        mode = os.lstat(item).st_mode
        if stat.S_ISLNK(mode):
            continue
        extra = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) or mode & stat.S_IXUSR else 0)
        os.chmod(item, mode | extra)


def unreadable_for_calls(paths) -> list[str]:
    """The paths a call under its own user could not reach (a folder on the way, or the path
    itself, not open to it)."""
    uid = _User.get()
    if uid is None:
        return []
    problems = []
    for path in map(Path, paths):
        if not path.exists():
            continue
        for step in [*reversed(path.parents), path]:
            info = step.stat()
            need = 0o1 if step != path or stat.S_ISDIR(info.st_mode) else 0o4  # pass through / read
            shift = 6 if info.st_uid == uid else 3 if info.st_gid == uid else 0
            if (info.st_mode >> shift) & need != need:
                problems.append(f"{step} (mode {stat.filemode(info.st_mode)})")
                break
    return problems


# ----------------------------------------------------------------------------- confinement, in the child


def _landlock(listable: list[str], readable: list[str], writable: list[str], files: list[str]) -> None:
    """Reads only beneath `readable` and `writable`, writes only beneath `writable` and into
    `files` (without removing them), folders beneath `listable` listed (names only: Python finds
    its packages by listing the folders on its path); no TCP and, from ABI 6, no signal or
    abstract socket outside. Raises OSError when Landlock refuses."""
    abi = landlock_abi()
    if abi < 1:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    write = _WRITE_FILE | _REMOVE_DIR | _REMOVE_FILE | _MAKE | (_REFER if abi >= 2 else 0) \
        | (_TRUNCATE if abi >= 3 else 0)
    attr = (_READ | write).to_bytes(8, "little")
    if abi >= 4:
        attr += (_NET_BIND_TCP | _NET_CONNECT_TCP).to_bytes(8, "little")
    if abi >= 6:
        attr += (_SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL).to_bytes(8, "little")
    ruleset = libc.syscall(_SYS_CREATE_RULESET, attr, len(attr), 0)
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "Landlock refused to create a ruleset")
    for rights, paths in ((_READ_DIR, listable), (_READ, readable), (_READ | write, writable), (_WRITE_FILE, files)):
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


def _drop_capabilities(libc) -> None:
    """No capability now or after exec (a root grader's child under its own user has none anyway)."""
    for cap in range(64):
        libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)  # EINVAL past the last capability: ignored
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable: empty
    libc.capset(header, data)



# ----------------------------------------------------------------------------- running


class Running:
    """A sandboxed process under way: start() made it, finish() waits for it (the watchdog of its
    folder, the time limit) and kills whatever it left."""

    def __init__(self, child: subprocess.Popen, work: Path, watched: list[Path], limits: Limits, what: str,
                 output_fd: int, report_fifo: Path | None, started: float, keep_head: int = OUTPUT_HEAD):
        self.child, self.work, self.watched, self.limits, self.what = child, work, watched, limits, what
        self.started, self.deadline = started, started + limits.wall_s
        self.stopped = ""  # why the grader stopped it, once it has
        self._output = _Capture(output_fd, keep_head=keep_head, keep_tail=4 * OUTPUT_KEPT)
        self.report_fifo = report_fifo
        self._report = _Capture.fifo(report_fifo) if report_fifo is not None else None

    @property
    def pid(self) -> int:
        return self.child.pid

    def check(self) -> bool:
        """Whether it may go on: within its time, its resident memory and its folder's size (else it
        is killed and `stopped` says why)."""
        if self.stopped:
            return False
        if time.monotonic() > self.deadline:
            self.stop(f"stopped after {self.limits.wall_s:g} s (the time limit): does it loop forever?")
        elif self.limits.rss_bytes and resident_bytes(self.child.pid) > self.limits.rss_bytes:
            self.stop(f"{self.what} used more than {self.limits.rss_bytes >> 20} MiB of memory (the limit)")
        else:
            used, entries = folder_usage(self.watched, self.limits.disk_bytes)
            if used > self.limits.disk_bytes or entries > FOLDER_ENTRIES:
                self.stop(f"{self.what} wrote more than {self.limits.disk_bytes >> 20} MiB or {FOLDER_ENTRIES} "
                          "files in its folder (the limit)")
        return not self.stopped

    def stop(self, why: str) -> None:
        self.stopped = self.stopped or why
        _kill(self.child.pid)

    def finish(self) -> Outcome:
        while self.child.poll() is None:
            if not self.check():
                break
            try:
                self.child.wait(timeout=WATCH_EVERY_S)
            except subprocess.TimeoutExpired:
                pass
        self.check()  # what it left behind counts too
        _kill(self.child.pid)
        self.child.wait()
        seconds = time.monotonic() - self.started
        output, head = self._output.close()
        report = self._report.close()[0] if self._report else ""
        if self.report_fifo is not None:
            self.report_fifo.unlink(missing_ok=True)
        outcome = Outcome(value=self.child.returncode, output=output, head=head, report=report, seconds=seconds)
        if self.stopped:
            outcome.error = self.stopped
        elif self.child.returncode < 0:
            name = signal.Signals(-self.child.returncode).name
            why = {"SIGXCPU": f"used more than {self.limits.cpu_s:g} s of CPU time",
                   "SIGKILL": "was killed (out of memory?)",
                   "SIGSEGV": "crashed (segmentation fault)",
                   "SIGABRT": "aborted (an uncaught exception or a failed assertion: see its output)",
                   "SIGXFSZ": f"wrote a file larger than {FILE_LIMIT >> 20} MiB"}.get(name, f"was killed by {name}")
            outcome.error = f"{self.what} {why}"
        return outcome


def start(command: list[str], *, work: Path, limits: Limits, readable=(), writable=(), listable=(),
          what: str = "the submission", pass_fds: tuple[int, ...] = (), env: dict[str, str] | None = None,
          report_to: Path | None = None, cpu: int | None = None, keep_head: int = OUTPUT_HEAD) -> Running:
    """Start `command` sandboxed in `work` (its folder: it may write there and in `writable`, read
    there, in `readable` and SYSTEM_READABLE, and list the folders beneath `listable`). `pass_fds`
    stay open in it (pipes to an engine: the command names them); `env` adds to its environment;
    `report_to` is a prefix: the FIFO `<prefix>.<pid>` is made for it to write its sanitizer's
    report into (read whole, never rewritten); `cpu` pins it to one CPU. Its own code installs
    seccomp's 'running' filter before the submission's runs (labkit.child, the native harness);
    a compiler runs without it. `keep_head`: how much of the start of what it prints is kept."""
    prepare_folder(work)
    uid = _User.get()
    program = shutil.which(command[0]) or command[0]
    unreachable = unreadable_for_calls([program, *readable, *listable, *writable, work])
    if unreachable:
        raise RuntimeError(f"the sandbox's user cannot reach {', '.join(unreachable)}: a root grader runs "
                           "submissions under a user of their own, so the system, the artifact and the workspace "
                           "must be readable by others (chmod o+rX), as a fresh clone is")
    may_write = [str(work), "/dev/null", *map(str, writable)]
    may_read = [*SYSTEM_READABLE, *map(str, readable)]
    tasks_now = 0 if uid is not None else _tasks_of(os.getuid())
    output_read, output_write = os.pipe()

    def prepare() -> None:  # in the child, before exec: the order matters (comments)
        libc = ctypes.CDLL(None, use_errno=True)
        os.setsid()
        if os.sched_getscheduler(0) != os.SCHED_OTHER:  # a grader measuring in real time (labkit.device)
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        fifo = []
        if report_to is not None:
            fifo = [f"{report_to}.{os.getpid()}"]
            if os.path.lexists(fifo[0]):  # an earlier run's, whose process had this pid
                os.unlink(fifo[0])
            os.mkfifo(fifo[0], 0o600)
            if uid is not None:
                os.chown(fifo[0], uid, uid)
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})
        for limit, value in ((resource.RLIMIT_CPU, (int(limits.cpu_s), int(limits.cpu_s) + 1)),
                             (resource.RLIMIT_CORE, (0, 0)), (resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT)),
                             (resource.RLIMIT_NOFILE, (256, 256)),
                             (resource.RLIMIT_NPROC, (tasks_now + limits.tasks, tasks_now + limits.tasks))):
            resource.setrlimit(limit, value)
        if limits.memory_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        if uid is not None:  # a user of its own: no signal, /proc file or file of the grader's
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
        _drop_capabilities(libc)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # after setuid, which clears it
        _landlock(list(map(str, listable)), may_read, may_write, fifo)
        if seccomp.supported():
            seccomp.install(seccomp.program("confined", self_pid=os.getpid()))

    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work), "TMPDIR": str(work),
                   "LC_ALL": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(LABKIT_ROOT), **(env or {})}
    try:
        started = time.monotonic()
        child = subprocess.Popen(command, cwd=work, env=environment, stdin=subprocess.DEVNULL, stdout=output_write,
                                 stderr=subprocess.STDOUT, preexec_fn=prepare, pass_fds=pass_fds)
    except subprocess.SubprocessError as error:  # prepare() failed: the grader's machine, not the submission
        raise RuntimeError(f"the sandbox could not be set up: {error}") from error
    finally:
        os.close(output_write)
    report_fifo = Path(f"{report_to}.{child.pid}") if report_to is not None else None
    watched = [work, *(Path(path) for path in writable)]
    return Running(child, work, watched, limits, what, output_read, report_fifo, started, keep_head)


def run(command: list[str], *, work: Path, limits: Limits, what: str = "the submission", **options) -> Outcome:
    """Run a program (a compiler on the submission, a binary built from it) in the sandbox, in
    `work` (start()'s options). Its value is its exit status; an error when it was killed or
    stopped (`what` names it in the message), not when it exited non-zero."""
    return start(command, work=work, limits=limits, what=what, **options).finish()


def call(grader: Path, entry: str, submission: Path, arguments: dict, *, work: Path, limits: Limits,
         readable=(), listable=(), services: dict | None = None) -> Outcome:
    """Run `entry` of the lab's grader (its CHILD table) in a sandboxed Python child (labkit.child),
    in `work`, and return its result. The child may write only in `work`, read only there, in
    `readable`, the submission, the grader's file, labkit and SYSTEM_READABLE. `services` are the
    grader's functions the child may ask for by name (each request checked by the function, run
    by the grader: a measurement the submission cannot make up)."""
    services = services or {}
    to_child_read, to_child_write = os.pipe()
    from_child_read, from_child_write = os.pipe()
    command = [sys.executable, "-m", "labkit.child", str(grader), entry, str(submission), str(to_child_read),
               str(from_child_write)]
    try:
        running = start(command, work=work, limits=limits, readable=(Path(__file__).parent, grader, submission,
                                                                     *readable),
                        listable=(LABKIT_ROOT, *listable), pass_fds=(to_child_read, from_child_write))
    finally:
        os.close(from_child_write)
        os.close(to_child_read)
    answer = None
    with open(to_child_write, "w", encoding="utf-8") as to_child, _Lines(from_child_read) as lines:
        try:
            to_child.write(json.dumps({"arguments": arguments, "services": sorted(services)}) + "\n")
            to_child.flush()
            while answer is None and running.check():
                line = lines.next(timeout=WATCH_EVERY_S)
                if line is None:
                    continue
                if line is _Lines.END:
                    break
                message = json.loads(line)
                if not isinstance(message, dict):
                    raise ValueError("not a JSON object")
                if "service" in message:
                    to_child.write(json.dumps(_serve(services, message)) + "\n")
                    to_child.flush()
                else:
                    answer = message
        except (ValueError, OSError, RecursionError) as error:  # BrokenPipe, a line too long, not JSON or
            # nested deeper than the parser goes: its doing
            running.stop(f"the submission broke the grader's protocol ({error})")
        except BaseException:  # the grader's own failure, or an interrupt: the child does not outlive it
            running.stop("the grader stopped")
            running.finish()
            raise
    outcome = running.finish()
    if outcome.error:
        return outcome
    if answer is None:
        outcome.error = (f"the submission exited with status {outcome.value} without an answer (did it call exit(), "
                         "or run out of memory?)")
        return outcome
    outcome.value, outcome.error = answer.get("value"), str(answer.get("error", ""))
    return outcome


def _serve(services: dict, message: dict) -> dict:
    name, args = message.get("service"), message.get("args")
    if name not in services or not isinstance(args, list):
        return {"error": f"no such service {name!r}"}
    try:
        return {"value": services[name](*args)}
    except (ValueError, TypeError, RuntimeError) as error:  # a request the service refuses
        return {"error": f"{type(error).__name__}: {error}"}


# ----------------------------------------------------------------------------- what it prints, its folder


class _Capture:
    """Everything a file descriptor gives until its end, read by a thread: the start and the end
    kept, the rest counted (a submission printing gigabytes costs the grader nothing)."""

    def __init__(self, fd: int, keep_head: int, keep_tail: int):
        self.fd, self.keep_head, self.keep_tail = fd, keep_head, keep_tail
        self.head, self.tail, self.total = bytearray(), bytearray(), 0
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    @classmethod
    def fifo(cls, path: Path) -> "_Capture":
        """A FIFO's whole content (up to REPORT_LIMIT). The grader holds a writer open too, opened
        before the reading starts, so that the reader sees no end before the process has ended
        (close() lets it go)."""
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        writer = os.open(path, os.O_WRONLY)
        os.set_blocking(fd, True)
        capture = cls(fd, keep_head=REPORT_LIMIT, keep_tail=0)
        capture.writer = writer
        return capture

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.fd, 1 << 16)
            except OSError:
                break
            if not chunk:
                break
            self.total += len(chunk)
            if len(self.head) < self.keep_head:
                self.head += chunk[:self.keep_head - len(self.head)]
            self.tail = (self.tail + chunk)[-self.keep_tail:] if self.keep_tail else self.tail

    def close(self) -> tuple[str, str]:
        """(the end of it, at most OUTPUT_KEPT characters; the start of it)."""
        if hasattr(self, "writer"):
            os.close(self.writer)
        self.thread.join(timeout=5)
        os.close(self.fd)
        head = self.head.decode(errors="replace")
        if not self.keep_tail:
            rest = self.total - len(self.head)
            return head + (f"\n... ({rest} more bytes)" if rest > 0 else ""), head
        text = self.tail.decode(errors="replace")
        return (text if len(text) <= OUTPUT_KEPT else "..." + text[-OUTPUT_KEPT:]), head


class _Lines:
    """Lines from a pipe, with a timeout per wait, each at most MESSAGE_LIMIT long."""
    END = object()

    def __init__(self, fd: int):
        self.fd, self.buffer = fd, bytearray()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        os.close(self.fd)

    def next(self, timeout: float):
        if b"\n" not in self.buffer:
            ready, _, _ = select.select([self.fd], [], [], timeout)
            if not ready:
                return None
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                return _Lines.END
            self.buffer += chunk
            if len(self.buffer) > MESSAGE_LIMIT:
                raise ValueError(f"a message longer than {MESSAGE_LIMIT >> 20} MiB")
            if b"\n" not in self.buffer:
                return None
        line, _, rest = bytes(self.buffer).partition(b"\n")
        self.buffer = bytearray(rest)
        return line.decode("utf-8", errors="replace")


def resident_bytes(pid: int) -> int:
    """The resident memory of process `pid` (its VmRSS: every thread's, shared pages included), 0 once it
    has ended. Watched every WATCH_EVERY_S, so a burst overshoots by what that time can touch."""
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status:
                if line.startswith(b"VmRSS:"):
                    return int(line.split()[1]) << 10  # kB
    except (OSError, ValueError, IndexError):
        pass
    return 0


def folder_usage(folders: list[Path], stop_above: int) -> tuple[int, int]:
    """(bytes on disk, entries) beneath `folders`, without following links; counting stops once
    past `stop_above` or FOLDER_ENTRIES. A folder its owner made unreadable is opened again."""
    used = entries = 0
    stack = [str(folder) for folder in folders]
    while stack and used <= stop_above and entries <= FOLDER_ENTRIES:
        folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                for entry in listing:
                    entries += 1
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    used += info.st_blocks * 512
                    if stat.S_ISDIR(info.st_mode):
                        stack.append(entry.path)
        except PermissionError:
            _open_up(folder)
            stack.append(folder) if os.access(folder, os.R_OK | os.X_OK) else None
        except OSError:
            continue
    return used, entries


def _open_up(path: str) -> None:
    try:
        os.chmod(path, 0o700)
    except OSError:
        pass


def remove_tree(path: Path) -> None:
    """Remove what a submission left, whatever modes it gave its files."""
    def retry(function, target, _):
        _open_up(os.path.dirname(target))
        _open_up(target)
        try:
            function(target)
        except OSError:
            pass
    shutil.rmtree(path, onerror=retry)


def _kill(pid: int) -> None:
    """The process group, and, under a user of its own, every process of that user."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    uid = _User.get()
    if uid is not None:  # kill(-1) as that user: every process it may signal, which are its own
        helper = os.fork()
        if helper == 0:
            try:
                os.setgroups([])
                os.setresgid(uid, uid, uid)
                os.setresuid(uid, uid, uid)
                if os.getresuid() == (uid, uid, uid):  # never as root: kill(-1) would end the machine's processes
                    os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        os.waitpid(helper, 0)


