"""A real headless Chromium (Debian's `chromium`), driven over the DevTools protocol through a pipe
(--remote-debugging-pipe: JSON messages ending in NUL on file descriptors 3 and 4), so no
WebSocket client or driver package is needed. Used to check the HTML report (test_workflow_e2e.py)."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Browser:
    """One page; every console error, uncaught exception and failed load it reports is kept in `errors`."""

    def __init__(self) -> None:
        self.profile = tempfile.mkdtemp(prefix="chromium-")
        commands_read, self._commands = os.pipe()
        self._events, events_write = os.pipe()
        # chromium reads commands from its fd 3 and writes replies and events to its fd 4: moved
        # above 9 first, so that placing one pipe end at 3 or 4 cannot close the other
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (commands_read, events_write)]
        os.close(commands_read)
        os.close(events_write)

        def wire() -> None:
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)
        self.process = subprocess.Popen(
            [chromium(), "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--remote-debugging-pipe", f"--user-data-dir={self.profile}", "about:blank"],
            preexec_fn=wire, pass_fds=(3, 4), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for fd in high:
            os.close(fd)
        self._buffer, self._next, self.errors, self.session = b"", 0, [], None
        try:
            target = self.send("Target.createTarget", url="about:blank")["targetId"]
            self.session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
            for domain in ("Runtime", "Log", "Page"):
                self.send(f"{domain}.enable")
        except BaseException:
            self.close()
            raise

    def send(self, method: str, timeout: float = 60, **params) -> dict:
        self._next += 1
        message = {"id": self._next, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            message["sessionId"] = self.session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def _receive(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("Chromium did not answer")
            chunk = os.read(self._events, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed its pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message = json.loads(raw)
        self._note(message)
        return message

    def _note(self, message: dict) -> None:
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
            shown = (str(a.get("value", a.get("description"))) for a in params["args"])
            self.errors.append("console: " + " ".join(shown))
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            self.errors.append(f"exception: {details.get('exception', {}).get('description', details['text'])}")
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            self.errors.append(f"log: {params['entry']['text']} {params['entry'].get('url', '')}")
        elif method == "Page.loadEventFired":
            self.loaded = True

    def open(self, path: Path, timeout: float = 60) -> None:
        self.loaded = False
        self.send("Page.navigate", url=path.resolve().as_uri())
        deadline = time.monotonic() + timeout
        while not self.loaded:
            self._receive(deadline)

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (awaited when it is a promise)."""
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=10)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        os.close(self._commands)
        os.close(self._events)
        shutil.rmtree(self.profile, ignore_errors=True)
