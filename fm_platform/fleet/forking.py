"""Work done in a forked process, on a second core, while this one goes on."""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import threading
from collections.abc import Callable
from typing import IO


def can_fork() -> bool:
    """Whether forking can pay and is safe: on Linux (macOS's system libraries are not
    safe to use in a forked child, Python's documentation warns; Windows has no fork),
    where this process may run on more than one core and runs one thread (forking a
    process with others may leave the forked one waiting on a lock they held)."""
    if sys.platform != "linux" or threading.active_count() != 1:
        return False
    affinity = getattr(os, "sched_getaffinity", None)
    cores = len(affinity(0)) if affinity is not None else os.cpu_count() or 1
    return cores > 1


class Forked:
    """Work running in a forked process (:func:`forked`): call it to wait for the bytes
    it hands back (None when it failed: raised, or died; the same again on a later call),
    or :meth:`cancel` it when they are no longer wanted. ``pid``: the forked process's."""

    def __init__(self, pid: int, out: IO[bytes]) -> None:
        self.pid = pid
        self._out = out
        self._waited = False
        self._result: bytes | None = None

    def __call__(self) -> bytes | None:
        if not self._waited:
            self._waited = True
            _, status = os.waitpid(self.pid, 0)
            with self._out:
                if status == 0:
                    self._out.seek(0)
                    self._result = self._out.read()
        return self._result

    def cancel(self) -> None:
        """Stops the forked process and reaps it (nothing once it has been waited for)."""
        if not self._waited:
            os.kill(self.pid, signal.SIGKILL)
            self()


def forked(compute: Callable[[], bytes]) -> Forked:
    """Runs ``compute`` in a forked process (:class:`Forked`)."""
    out = tempfile.TemporaryFile()  # noqa: SIM115 (Forked closes it)
    pid = os.fork()
    if pid == 0:  # the forked process: never returns, never runs the parent's exit handlers
        code = 1
        try:
            out.write(compute())
            out.flush()
            code = 0
        finally:
            os._exit(code)
    return Forked(pid, out)
