"""The long-running commands stop on SIGTERM / SIGINT wherever the signal lands (BOOK-45: the alerts daemon
exits cleanly on SIGTERM; the demo model server stops the same way).

The earlier handler set a ``threading.Event``; a signal landing while the main thread held that event's lock
inside ``Event.wait`` deadlocked the daemon (seen once in CI). The stress test below sends a signal the moment
the child announces each wait, thousands of times; the Event version hangs within a few thousand rounds.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from hermes_pipeline._stop_signal import StopSignal


def test_signal_before_the_wait_ends_it_at_once() -> None:
    with StopSignal() as stop:
        assert not stop.stopped
        signal.raise_signal(signal.SIGTERM)
        assert stop.wait(3600)
        assert stop.received is signal.SIGTERM
        assert stop.wait(3600)  # stays stopped


def test_sigint_stops_too_and_a_timeout_is_not_a_stop() -> None:
    with StopSignal() as stop:
        assert stop.wait(0.0) is False
        assert stop.wait(0.01) is False
        signal.raise_signal(signal.SIGINT)  # no KeyboardInterrupt: the handler takes it
        assert stop.wait(None)
        assert stop.received is signal.SIGINT


def test_previous_handlers_and_wakeup_fd_come_back() -> None:
    def mine(signum: int, frame: object) -> None:
        pass

    before = signal.signal(signal.SIGTERM, mine)
    try:
        wakeup_before = signal.set_wakeup_fd(-1)
        signal.set_wakeup_fd(wakeup_before)
        with StopSignal():
            assert signal.getsignal(signal.SIGTERM) is not mine
        assert signal.getsignal(signal.SIGTERM) is mine
        assert signal.set_wakeup_fd(wakeup_before) == wakeup_before
    finally:
        signal.signal(signal.SIGTERM, before)


def test_a_signal_from_another_thread_wakes_the_wait() -> None:
    with StopSignal() as stop:
        killer = threading.Thread(target=signal.pthread_kill,
                                  args=(threading.main_thread().ident, signal.SIGTERM))
        killer.start()
        assert stop.wait(3600)
        killer.join()


_CHILD = textwrap.dedent("""
    import sys
    from hermes_pipeline._stop_signal import StopSignal
    for _ in range(int(sys.argv[1])):
        with StopSignal() as stop:
            print("waiting", flush=True)
            if not stop.wait(3600):
                sys.exit("the wait ended without a signal")
    print("all stopped", flush=True)
""")


@pytest.mark.parametrize("rounds", [4000])
def test_signal_landing_as_the_wait_begins_never_hangs(rounds: int) -> None:
    """A signal sent the instant the child starts each wait: every wait ends, none hangs."""
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(rounds)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    progress = [time.monotonic()]
    finished = threading.Event()

    def watchdog() -> None:  # a hang shows as no progress for 20 s; the rounds take well under a second
        while not finished.wait(0.5):
            if time.monotonic() - progress[0] > 20:
                proc.kill()
                return

    threading.Thread(target=watchdog, daemon=True).start()
    try:
        done = 0
        for line in proc.stdout:
            if line != "waiting\n":
                assert line == "all stopped\n"
                break
            progress[0] = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            done += 1
        proc.wait(timeout=60)
    finally:
        finished.set()
        if proc.poll() is None:
            proc.kill()
    assert (proc.returncode, done) == (0, rounds), proc.stderr.read() if proc.stderr else ""
