"""A headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-
pipe``: commands on fd 3, events and replies on fd 4, each message JSON ended by a NUL), so
that no driver or websocket package is needed. Used by ``docs_check.py``."""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
)


@dataclass
class PageLoad:
    """What the browser reported while one page loaded."""

    url: str
    failed: list[str] = field(default_factory=list)  # requests that failed or got >= 400
    errors: list[str] = field(default_factory=list)  # uncaught exceptions, console errors


class Browser:
    """One headless Chromium with one page (a tab) attached."""

    def __init__(self, width: int = 1280, height: int = 900, timeout_s: float = 60) -> None:
        executable = shutil.which("chromium") or shutil.which("chromium-browser")
        if executable is None:
            raise RuntimeError("chromium is not on PATH (Debian: apt-get install chromium)")
        self._profile = tempfile.TemporaryDirectory(prefix="docs-check-profile-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # Move the child's ends above fd 4, then give them to it as fd 3 (it reads commands)
        # and fd 4 (it writes replies and events).
        to_browser_r, from_browser_w = _above_four(to_browser_r), _above_four(from_browser_w)

        def child_pipes() -> None:
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        self._process = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={self._profile.name}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=False,  # Python opens its files non-inheritable (PEP 446)
            preexec_fn=child_pipes,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []
        self.timeout_s = timeout_s
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self._session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        for domain in ("Page", "Network", "Runtime", "Log"):
            self.page_call(f"{domain}.enable")
        self.page_call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )

    def __enter__(self) -> Browser:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (OSError, RuntimeError, TimeoutError):
            self._process.kill()
        self._process.wait(timeout=30)
        os.close(self._to_browser)
        os.close(self._from_browser)
        self._profile.cleanup()

    # -- protocol ----------------------------------------------------------------------------

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            self._events.append(reply)

    def page_call(self, method: str, **params: Any) -> dict[str, Any]:
        return self.call(method, session=self._session, **params)

    def _read(self) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout_s
        while b"\0" not in self._buffer:
            remaining = deadline - time.monotonic()
            readable, _, _ = select.select([self._from_browser], [], [], max(remaining, 0))
            if not readable:
                raise TimeoutError(f"no message from chromium in {self.timeout_s} s")
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        parsed: dict[str, Any] = json.loads(message)
        return parsed

    def _wait_for(self, method: str) -> None:
        """Read until an event ``method`` arrives, keeping every event for the caller."""
        while not any(event.get("method") == method for event in self._events):
            self._events.append(self._read())

    # -- pages -------------------------------------------------------------------------------

    def load(self, url: str, settle_s: float = 0.5) -> PageLoad:
        """Open ``url``, wait for its load event, and report what went wrong on the way."""
        self._events.clear()
        self.page_call("Page.navigate", url=url)
        self._wait_for("Page.loadEventFired")
        time.sleep(settle_s)
        self.page_call("Runtime.evaluate", expression="1")  # collect events sent meanwhile
        report = PageLoad(url=url)
        requested: dict[str, str] = {}
        for event in self._events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Network.requestWillBeSent":
                requested[params.get("requestId")] = params.get("request", {}).get("url", "")
            elif method == "Network.loadingFailed" and not params.get("canceled"):
                where = requested.get(params.get("requestId"), "?")
                report.failed.append(f"{params.get('errorText')} {where}")
            elif method == "Network.responseReceived":
                response = params.get("response", {})
                if int(response.get("status") or 0) >= 400:
                    report.failed.append(f"HTTP {response.get('status')} {response.get('url')}")
            elif method == "Runtime.exceptionThrown":
                report.errors.append(str(params.get("exceptionDetails", {}).get("text")))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                entry = params["entry"]
                report.errors.append(f"{entry.get('text')} {entry.get('url', '')}".strip())
        self._events.clear()
        return report

    def evaluate(self, expression: str) -> Any:
        result = self.page_call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path) -> None:
        data = self.page_call("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))


def _above_four(fd: int) -> int:
    """``fd`` duplicated to a number above 4 (the original closed)."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return moved
