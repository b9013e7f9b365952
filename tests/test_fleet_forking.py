"""Work in a forked process (:mod:`fm_platform.fleet.forking`)."""

from __future__ import annotations

import os
import threading

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
