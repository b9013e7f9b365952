"""Work done in a forked process, on a second core, while this one goes on."""

from __future__ import annotations

import os
import sys
import tempfile
import threading
from collections.abc import Callable


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


def forked(compute: Callable[[], bytes]) -> Callable[[], bytes | None]:
    """Runs ``compute`` in a forked process; the returned function waits for its bytes
    (None when it failed: raised, or died)."""
    out = tempfile.TemporaryFile()  # noqa: SIM115 (the returned function closes it)
    pid = os.fork()
    if pid == 0:  # the forked process: never returns, never runs the parent's exit handlers
        code = 1
        try:
            out.write(compute())
            out.flush()
            code = 0
        finally:
            os._exit(code)

    def result() -> bytes | None:
        _, status = os.waitpid(pid, 0)
        with out:
            if status != 0:
                return None
            out.seek(0)
            return out.read()

    return result
