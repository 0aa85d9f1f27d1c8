"""Run the patched PostgreSQL: create a cluster, start, stop, crash it, and query it.

    from ace.server import Server
    with Server(install, tmp_dir, {"buffer_replacement_policy": "lru_wsr", "ace": "on"}) as pg:
        pg.sql("CREATE EXTENSION pg_ace")
        print(pg.counters()["ace_batches"])

The server listens on a Unix socket in its own directory only (no TCP). PostgreSQL
refuses to run as root, so when this process is root the server (and the tools that
must write where the server reads, such as pg_regress) run as the unprivileged user
`nobody`, and the cluster's directory is handed to that user.
"""

from __future__ import annotations

import ctypes
import os
import pwd
import signal
import subprocess
import tempfile
import time
from pathlib import Path

UNPRIVILEGED_USER = "nobody"
PORT = 5432  # the socket lives in the server's own directory, so the port never collides
SUPERUSER = "postgres"


class ServerError(RuntimeError):
    pass


def as_server_user(command: list[str]) -> list[str]:
    """`command` as the user the server runs as: ourselves, or `nobody` when we are root."""
    if os.geteuid() != 0:
        return command
    return ["setpriv", f"--reuid={UNPRIVILEGED_USER}", f"--regid={_unprivileged().pw_gid}", "--clear-groups",
            *command]


def _unprivileged() -> pwd.struct_passwd:
    return pwd.getpwnam(UNPRIVILEGED_USER)


def check_reachable(path: Path) -> None:
    """Refuse, saying what to do, a path the server's user could not reach: when we are root the
    server runs as `nobody`, who must be able to traverse every directory above `path`."""
    if os.geteuid() != 0:
        return
    user = _unprivileged()
    blocked = [parent for parent in reversed(Path(path).resolve().parents)
               if parent.exists() and not parent.stat().st_mode & 0o001 and parent.stat().st_uid != user.pw_uid]
    if blocked:
        raise ServerError(f"{path} is out of reach of the user {UNPRIVILEGED_USER!r}, who runs PostgreSQL when you "
                          f"are root: {blocked[0]} is not traversable by others (mode "
                          f"{oct(blocked[0].stat().st_mode & 0o777)}). Run as a non-root user, or move the "
                          f"repository below a directory that others may traverse (or chmod o+x {blocked[0]})")


def hand_over(path: Path) -> None:
    """Make `path` (recursively) the server user's, when we are root."""
    if os.geteuid() == 0:
        user = _unprivileged()
        for root, dirs, files in os.walk(path):
            for name in dirs + files:
                os.lchown(os.path.join(root, name), user.pw_uid, user.pw_gid)
        os.lchown(path, user.pw_uid, user.pw_gid)


def settings_text(settings: dict) -> str:
    """postgresql.conf lines for `settings` (strings quoted)."""
    def value(v):
        if isinstance(v, bool):
            return "on" if v else "off"
        if isinstance(v, (int, float)):
            return str(v)
        return "'" + str(v).replace("'", "''") + "'"
    return "".join(f"{key} = {value(v)}\n" for key, v in settings.items())


class Server:
    def __init__(self, install: Path, root: Path, settings: dict | None = None, *, data_checksums: bool = True,
                 data: Path | None = None):
        """`root` holds the socket and the server log; the cluster is `data` (default root/data),
        which may be on another file system, e.g. an emulated SSD that cannot hold a socket."""
        self.install = Path(install)
        self.bin = self.install / "bin"
        self.root = Path(root)
        self.data = Path(data) if data is not None else self.root / "data"
        self.log_path = self.root / "server.log"
        self.settings = dict(settings or {})
        self.data_checksums = data_checksums
        if len(str(self.root / ".s.PGSQL.5432")) > 100:
            raise ServerError(f"{self.root} is too long for a Unix socket path (at most about 100 characters)")

    # ------------------------------------------------------------------ environment

    def env(self) -> dict:
        """Client environment: the server's socket, superuser and the installed tools first on PATH."""
        return {**os.environ, "PGHOST": str(self.root), "PGPORT": str(PORT), "PGUSER": SUPERUSER,
                "PGDATABASE": "postgres", "PATH": f"{self.bin}:{os.environ.get('PATH', '')}"}

    def _run(self, command: list[str], *, server_user: bool = False, check: bool = True,
             timeout: float | None = None) -> subprocess.CompletedProcess:
        full = as_server_user(command) if server_user else command
        result = subprocess.run(full, env=self.env(), capture_output=True, text=True, timeout=timeout)
        if check and result.returncode != 0:
            raise ServerError(f"{' '.join(command)} exited with {result.returncode}:\n"
                              f"{(result.stdout + result.stderr)[-3000:]}\n{self.log_tail()}")
        return result

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "end of server log:\n" + "\n".join(text.splitlines()[-lines:])

    # ------------------------------------------------------------------ life cycle

    def initdb(self) -> "Server":
        self.root.mkdir(parents=True, exist_ok=True)
        hand_over(self.root)
        flags = ["--data-checksums"] if self.data_checksums else []
        self._run([str(self.bin / "initdb"), "-U", SUPERUSER, "-A", "trust", "-E", "UTF8", "--no-locale",
                   "-D", str(self.data), *flags], server_user=True)
        self.configure({**self.connection_settings(), **self.settings})
        return self

    def connection_settings(self) -> dict:
        """Only this server's own socket: no TCP, the socket in root."""
        return {"listen_addresses": "", "unix_socket_directories": str(self.root), "port": PORT}

    def configure(self, settings: dict) -> None:
        """Append settings to postgresql.conf (the last value of a key wins); restart to apply."""
        with open(self.data / "postgresql.conf", "a", encoding="utf-8") as conf:
            conf.write(settings_text(settings))

    def start(self, timeout: float = 120) -> "Server":
        _become_subreaper()
        self._run([str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.log_path), "-w",
                   "-t", str(int(timeout)), "start"], server_user=True)
        return self

    def stop(self, mode: str = "fast") -> None:
        pid = self.postmaster_pid()
        if pid is not None:
            self._run([str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop"],
                      server_user=True, check=False)
            _reap([pid])

    def postmaster_pid(self) -> int | None:
        try:
            pid = int((self.data / "postmaster.pid").read_text().splitlines()[0])
        except (OSError, ValueError, IndexError):
            return None
        return pid if Path(f"/proc/{pid}").exists() else None

    def crash(self) -> int:
        """SIGKILL the postmaster and every process of the server at once (a power cut, as far as
        PostgreSQL can tell: nothing is flushed or cleaned up). Every process is stopped first,
        so none of them sees another die. Returns how many were killed."""
        pid = self.postmaster_pid()
        if pid is None:
            raise ServerError("the server is not running")
        victims = [pid, *_children(pid)]
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for victim in victims:
                try:
                    os.kill(victim, sig)
                except ProcessLookupError:
                    pass
        _reap(victims)
        deadline = time.monotonic() + 30
        while any(Path(f"/proc/{v}").exists() and _state(v) != "Z" for v in victims):
            if time.monotonic() > deadline:
                raise ServerError("server processes survived SIGKILL for 30 s")
            time.sleep(0.05)
        return len(victims)

    def __enter__(self) -> "Server":
        if not (self.data / "PG_VERSION").exists():
            self.initdb()
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ------------------------------------------------------------------ queries

    def sql(self, query: str, database: str = "postgres") -> str:
        """Run SQL with psql; the result rows, unaligned and tuples-only (fields separated by |)."""
        return self._run([str(self.bin / "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                          "-d", database, "-c", query]).stdout.strip()

    def session(self, database: str = "postgres") -> "Session":
        """One connection for several queries (`Session`)."""
        return Session(self, database)

    def counters(self, database: str = "postgres") -> dict[str, int]:
        """pg_ace_counters() as a dict (the extension is created if missing)."""
        self.sql("CREATE EXTENSION IF NOT EXISTS pg_ace", database)
        rows = self.sql("SELECT name, value FROM pg_ace_counters()", database)
        return {name: int(value) for name, value in (line.split("|") for line in rows.splitlines())}

    def client(self, command: list[str], **kwargs) -> subprocess.CompletedProcess:
        """A client tool of the install (pgbench, psql, ...) against this server."""
        return self._run([str(self.bin / command[0]), *command[1:]], **kwargs)


class Session:
    """A psql connection kept open for several queries, each answered as `Server.sql` answers it.
    A new connection costs 0.1 to 0.3 s on an emulated SSD (the new backend reads the catalogs
    through the device); an ACE run asks three times, around its measured work."""

    END = "-- end of the result --"  # psql's \echo prints it after each result

    def __init__(self, server: Server, database: str = "postgres"):
        self.errors = tempfile.TemporaryFile(mode="w+")  # a file, not a pipe: notices never block psql
        self.process = subprocess.Popen(
            [str(server.bin / "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", database],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errors, text=True, env=server.env())

    def sql(self, query: str) -> str:
        try:
            self.process.stdin.write(f"{query.rstrip().rstrip(';')};\n\\echo {self.END}\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            pass  # psql has ended: reported below
        lines = []
        for line in self.process.stdout:
            if line.rstrip("\n") == self.END:
                return "\n".join(lines).strip()
            lines.append(line.rstrip("\n"))
        self.process.wait()
        self.errors.seek(0)
        raise ServerError(f"psql exited with {self.process.returncode} on {query!r}:\n{self.errors.read()[-3000:]}")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.errors.close()

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _become_subreaper() -> None:
    """The server's processes, orphaned when pg_ctl exits, become our children, so that we can
    reap them: a killed postmaster left as a zombie would look alive to the next start."""
    PR_SET_CHILD_SUBREAPER = 36
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _reap(pids: list[int]) -> None:
    """Wait for each of `pids` that is our child (the rest are someone else's to reap)."""
    for pid in pids:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass


def _children(pid: int) -> list[int]:
    """Every descendant of `pid` (from /proc)."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"
