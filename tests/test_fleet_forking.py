"""Work in a forked process (:mod:`fm_platform.fleet.forking`)."""

from __future__ import annotations

import os
import threading
import time

import pytest

from fm_platform.fleet.forking import can_fork, forked


def test_a_forked_process_hands_back_its_bytes():
    wait = forked(lambda: f"{os.getpid()}".encode())
    assert int(wait()) != os.getpid()


def test_a_forked_process_that_raises_hands_back_nothing():
    def fail() -> bytes:
        raise RuntimeError("fails")

    assert forked(fail)() is None


def test_a_process_running_other_threads_does_not_fork():
    done = threading.Event()
    other = threading.Thread(target=done.wait)
    other.start()
    try:
        assert not can_fork()
    finally:
        done.set()
        other.join()


def test_a_forked_process_is_waited_for_once():
    wait = forked(lambda: b"done")
    assert wait() == b"done"
    assert wait() == b"done"


def test_a_cancelled_forked_process_is_stopped_and_reaped():
    wait = forked(lambda: time.sleep(60) or b"late")
    started = time.monotonic()
    wait.cancel()
    assert time.monotonic() - started < 30
    with pytest.raises(ProcessLookupError):
        os.kill(wait.pid, 0)  # reaped: no such process, not even a zombie
    assert wait() is None
    wait.cancel()  # nothing left to stop
