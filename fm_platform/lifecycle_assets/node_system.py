"""What every provisioning step uses: the log, the error that stops provisioning, paths under a
root directory, commands that are run or (dry run) recorded, and bounded waits.

Kept to the Python 3.8 standard library: nodes may ship an older python3.
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import time
from pathlib import Path

COMMAND_LOG = "/var/log/provision/commands.log"
MAX_BACKOFF_S = 60.0


class ProvisionError(Exception):
    """A problem that stops provisioning; its message says what to fix."""


def log(message: str) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    print(f"{stamp} provision: {message}", flush=True)


def load_json(path: Path, what: str) -> dict:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise ProvisionError(f"{what} not found at {path}") from None
    except ValueError as error:
        raise ProvisionError(f"{what} at {path} is not valid JSON: {error}") from None


class System:
    """The node as provisioning sees it: paths under ``root``, commands that are run or (with
    ``dry_run``) appended to ``root``/var/log/provision/commands.log and treated as successful,
    and the clock waits use (``sleep``/``clock``, real time by default)."""

    def __init__(self, root: str, dry_run: bool, sleep=time.sleep, clock=time.monotonic) -> None:
        self.root = Path(root)
        self.dry_run = dry_run
        self.sleep = sleep
        self.clock = clock

    def path(self, absolute: str) -> Path:
        return self.root / absolute.lstrip("/")

    def run(self, *command: str, check: bool = True) -> int:
        """Run ``command``; raise on failure when ``check``; return its exit code."""
        line = " ".join(shlex.quote(part) for part in command)
        log(f"run: {line}")
        if self.dry_run:
            self.record(line)
            return 0
        code = subprocess.run(command, check=False).returncode
        if code != 0 and check:
            raise ProvisionError(f"command failed with exit code {code}: {line}")
        return code

    def record(self, line: str) -> None:
        """Append ``line`` to the dry run's command log."""
        record = self.path(COMMAND_LOG)
        record.parent.mkdir(parents=True, exist_ok=True)
        with record.open("a") as handle:
            handle.write(line + "\n")

    def chown(self, path: Path, uid: int, gid: int) -> None:
        """Give ``path`` to ``uid``:``gid`` (a dry run records it instead)."""
        if self.dry_run:
            self.record(f"chown {uid}:{gid} {path}")
            return
        os.chown(path, uid, gid)

    def resolves(self, name: str) -> bool:
        """True when ``name`` resolves in DNS (a dry run records the lookup and assumes so)."""
        if self.dry_run:
            self.record(f"resolve {name}")
            return True
        try:
            socket.getaddrinfo(name, None)
        except OSError as error:
            log(f"{name} does not resolve yet: {error}")
            return False
        return True

    def local_address(self) -> str | None:
        """The address this host uses for outbound traffic (no packet is sent), or None while
        the network is not up."""
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
                probe.connect(("10.255.255.255", 1))
                address = probe.getsockname()[0]
        except OSError as error:
            log(f"no route yet to find this node's address: {error}")
            return None
        return None if address.startswith("127.") or address == "0.0.0.0" else address

    def wait_until(self, what: str, attempt, timeout_s: float, first_delay_s: float):
        """Call ``attempt`` until it returns something other than None and return that.
        Between attempts sleep ``first_delay_s``, doubling up to MAX_BACKOFF_S; give up once
        ``timeout_s`` have passed (0: try once). Every attempt is logged."""
        start = self.clock()
        delay = first_delay_s
        tries = 0
        while True:
            tries += 1
            result = attempt()
            elapsed = self.clock() - start
            if result is not None:
                log(f"{what}: ready (attempt {tries}, {elapsed:.0f} s)")
                return result
            if elapsed >= timeout_s:
                raise ProvisionError(
                    f"{what}: still not ready after {tries} attempts in {elapsed:.0f} s "
                    f"(limit {timeout_s:g} s)"
                )
            pause = min(delay, max(timeout_s - elapsed, 0.0))
            log(f"{what}: not ready (attempt {tries}, {elapsed:.0f} s); next try in {pause:g} s")
            self.sleep(pause)
            delay = min(delay * 2, MAX_BACKOFF_S)

    def retry(self, what: str, attempts: int, delay_s: float, action) -> None:
        """Call ``action`` until it returns True, at most ``attempts`` times, sleeping
        ``delay_s`` after the first failure and doubling that up to MAX_BACKOFF_S."""
        delay = delay_s
        for attempt in range(1, attempts + 1):
            if action():
                log(f"{what}: done (attempt {attempt}/{attempts})")
                return
            log(f"{what}: attempt {attempt}/{attempts} failed")
            if attempt < attempts:
                log(f"{what}: next try in {delay:g} s")
                self.sleep(delay)
                delay = min(delay * 2, MAX_BACKOFF_S)
        raise ProvisionError(f"{what}: gave up after {attempts} attempts")
