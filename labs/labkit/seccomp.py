"""The system calls a submission may not make, as seccomp filters (classic BPF, no privileges
needed once no_new_privs is set). Two filters, stacked:

- CONFINED (installed before the submission's program starts, on every sandboxed process, the
  compiler's too): no socket at all (no network, no Unix socket such as Docker's), no signal to
  any process but itself, no ptrace or reading another process's memory, nothing that mounts,
  loads, reboots, changes identity or opens io_uring (whose requests would bypass this filter).
- RUNNING (installed by trusted code that runs in the submission's process before any of the
  submission's code: labkit.child for Python, the native harness's preinit function for C++): no
  new process (threads only), no exec, no change to a file's mode, owner, times or extended
  attributes (Landlock has no right for them: a grader that is not root would let its own user's
  files, the key's among them, be made readable to all), and for native code no new executable
  memory (no code patching of the sanitizer's runtime). Not the compiler's: the linker sets its
  output's mode.

x86_64 only: elsewhere the filters are not installed and the grading says so (sandbox.strength)."""

from __future__ import annotations

import ctypes
import errno
import platform
import struct

# x86_64 system call numbers (asm/unistd_64.h; tests/test_labkit.py compares them with the header).
NR = {"mmap": 9, "mprotect": 10, "socket": 41, "socketpair": 53, "clone": 56, "fork": 57, "vfork": 58, "execve": 59,
      "kill": 62, "chmod": 90, "fchmod": 91, "chown": 92, "fchown": 93, "lchown": 94, "ptrace": 101, "syslog": 103,
      "setuid": 105, "setgid": 106, "setreuid": 113, "setregid": 114, "setgroups": 116, "setresuid": 117,
      "setresgid": 119, "setfsuid": 122, "setfsgid": 123, "capset": 126, "rt_sigqueueinfo": 129, "utime": 132,
      "mknod": 133, "uselib": 134, "vhangup": 153, "pivot_root": 155, "adjtimex": 159, "chroot": 161, "acct": 163,
      "settimeofday": 164, "mount": 165, "umount2": 166, "swapon": 167, "swapoff": 168, "reboot": 169, "iopl": 172,
      "ioperm": 173, "init_module": 175, "delete_module": 176, "quotactl": 179, "setxattr": 188, "lsetxattr": 189,
      "fsetxattr": 190, "removexattr": 197, "lremovexattr": 198, "fremovexattr": 199, "tkill": 200,
      "lookup_dcookie": 212, "clock_settime": 227, "tgkill": 234, "utimes": 235, "kexec_load": 246, "add_key": 248,
      "request_key": 249, "keyctl": 250, "mknodat": 259, "fchownat": 260, "futimesat": 261, "fchmodat": 268,
      "unshare": 272, "utimensat": 280, "rt_tgsigqueueinfo": 297, "perf_event_open": 298, "fanotify_init": 300,
      "name_to_handle_at": 303, "open_by_handle_at": 304, "clock_adjtime": 305, "setns": 308, "process_vm_readv": 310,
      "process_vm_writev": 311, "kcmp": 312, "finit_module": 313, "kexec_file_load": 320, "bpf": 321, "execveat": 322,
      "userfaultfd": 323, "pkey_mprotect": 329, "pidfd_send_signal": 424, "io_uring_setup": 425,
      "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428, "move_mount": 429, "fsopen": 430,
      "fsconfig": 431, "fsmount": 432, "pidfd_open": 434, "clone3": 435, "pidfd_getfd": 438, "process_madvise": 440,
      "mount_setattr": 442, "quotactl_fd": 443, "memfd_secret": 447, "fchmodat2": 452}

# Never needed by a submission, its compiler or the sanitizers.
FORBIDDEN = ("socket", "socketpair", "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "kcmp",
             "pidfd_open", "pidfd_send_signal", "pidfd_getfd", "tkill", "syslog", "setuid", "setgid", "setreuid",
             "setregid", "setgroups", "setresuid", "setresgid", "setfsuid", "setfsgid", "capset", "mknod", "mknodat",
             "uselib", "vhangup", "pivot_root", "adjtimex", "chroot", "acct", "settimeofday", "mount", "umount2",
             "swapon", "swapoff", "reboot", "iopl", "ioperm", "init_module", "delete_module", "quotactl",
             "lookup_dcookie", "clock_settime", "kexec_load", "add_key", "request_key", "keyctl", "unshare",
             "perf_event_open", "fanotify_init", "name_to_handle_at", "open_by_handle_at", "clock_adjtime", "setns",
             "finit_module", "kexec_file_load", "bpf", "userfaultfd", "io_uring_setup", "io_uring_enter",
             "io_uring_register", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "mount_setattr",
             "quotactl_fd", "memfd_secret")
# Signals: only to the process itself (pid and process group are one after setsid()).
SIGNALS_TO_SELF = {"kill": 0, "tgkill": 0, "rt_sigqueueinfo": 0, "rt_tgsigqueueinfo": 0}  # name: argument of the pid
NO_PROCESS = ("fork", "vfork", "execve", "execveat")
FILE_METADATA = ("chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat", "utime", "utimes",
                 "futimesat", "utimensat", "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr",
                 "fremovexattr")
CLONE_THREAD = 0x00010000
PROT_EXEC = 0x4

AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
_LD_W_ABS, _JEQ, _JSET, _JGE, _RET = 0x20, 0x15, 0x45, 0x35, 0x06
_ALLOW, _KILL_PROCESS = 0x7FFF0000, 0x80000000
_OFFSET_NR, _OFFSET_ARCH = 0, 4


def _errno(number: int) -> int:
    return 0x00050000 | number


def _arg_low(index: int) -> int:
    return 16 + 8 * index  # seccomp_data.args[index], its low 32 bits (little-endian)


def supported() -> bool:
    return platform.machine() == "x86_64"


class _Program:
    """A straight-line BPF program: each check jumps to its own return or falls through."""

    def __init__(self):
        self.code: list[tuple[int, int, int, int]] = []

    def op(self, code: int, k: int, jt: int = 0, jf: int = 0) -> None:
        self.code.append((code, jt, jf, k & 0xFFFFFFFF))

    def deny_call(self, nr: int, result: int) -> None:
        """if nr == `nr`: return `result` (the accumulator holds the call's number)."""
        self.op(_JEQ, nr, 0, 1)
        self.op(_RET, result)

    def bytes(self) -> bytes:
        return b"".join(struct.pack("<HBBI", code, jt, jf, k) for code, jt, jf, k in self.code)


def program(kind: str, self_pid: int = 0, native: bool = False) -> bytes:
    """The filter `kind` ('confined': every sandboxed process, signals only to `self_pid`;
    'running': no new process or exec, no change to a file's metadata, and with `native` no new
    executable memory), as the bytes
    of a struct sock_filter array."""
    p = _Program()
    p.op(_LD_W_ABS, _OFFSET_ARCH)
    p.op(_JEQ, AUDIT_ARCH_X86_64, 1, 0)
    p.op(_RET, _KILL_PROCESS)
    p.op(_LD_W_ABS, _OFFSET_NR)
    p.op(_JGE, X32_SYSCALL_BIT, 0, 1)
    p.op(_RET, _errno(errno.ENOSYS))
    if kind == "confined":
        for name in FORBIDDEN:
            p.deny_call(NR[name], _errno(errno.EACCES if name.startswith("socket") else errno.EPERM))
        for name, argument in SIGNALS_TO_SELF.items():
            # if nr == name: allow when the pid argument is 0 (its own group) or self (or -self for kill)
            allowed = [0, self_pid] + ([-self_pid] if name == "kill" else [])
            p.op(_JEQ, NR[name], 0, 2 + 2 * len(allowed))
            p.op(_LD_W_ABS, _arg_low(argument))
            for value in allowed:
                p.op(_JEQ, value, 0, 1)
                p.op(_RET, _ALLOW)
            p.op(_RET, _errno(errno.EPERM))
    elif kind == "running":
        for name in (*NO_PROCESS, *FILE_METADATA):
            p.deny_call(NR[name], _errno(errno.EPERM))
        p.deny_call(NR["clone3"], _errno(errno.ENOSYS))  # glibc falls back to clone(), whose flags a filter sees
        p.op(_JEQ, NR["clone"], 0, 4)
        p.op(_LD_W_ABS, _arg_low(0))
        p.op(_JSET, CLONE_THREAD, 0, 1)
        p.op(_RET, _ALLOW)
        p.op(_RET, _errno(errno.EPERM))
        if native:
            for name in ("mmap", "mprotect", "pkey_mprotect"):
                p.op(_JEQ, NR[name], 0, 4)
                p.op(_LD_W_ABS, _arg_low(2))  # prot
                p.op(_JSET, PROT_EXEC, 0, 1)
                p.op(_RET, _errno(errno.EPERM))
                p.op(_LD_W_ABS, _OFFSET_NR)  # back to the call's number for the checks after
    else:
        raise ValueError(f"unknown seccomp filter {kind!r}")
    p.op(_RET, _ALLOW)
    return p.bytes()


_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install(code: bytes) -> None:
    """Install a filter on the calling thread (and what it starts); OSError when refused."""
    libc = ctypes.CDLL(None, use_errno=True)
    buffer = ctypes.create_string_buffer(code, len(code))
    fprog = _SockFprog(len(code) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 \
            or libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "seccomp refused the filter")


def c_array(code: bytes, name: str) -> str:
    """The filter as a C array of struct sock_filter, for the native harness."""
    rows = [struct.unpack("<HBBI", code[i:i + 8]) for i in range(0, len(code), 8)]
    body = ",\n".join(f"  {{0x{c:02x}, {jt}, {jf}, 0x{k:08x}u}}" for c, jt, jf, k in rows)
    return f"static const struct sock_filter {name}[] = {{\n{body}\n}};\n"
