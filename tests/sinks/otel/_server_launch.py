"""Start a real tracing backend (Phoenix, MLflow) for a test module and always stop it (test helper).

One shape for every backend: a free port on 127.0.0.1, the server's own Python (an environment of its own when
its pins conflict with hermes-agent's), its log and working files under ``tmp_path``, start-up bounded by polling
its health URL against a deadline (only polling tells when a server is up), and, whatever happens, the whole
process group stopped: TERM, a grace period for the leader, then KILL for whatever is left (a server may spawn
workers that outlive their leader).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import httpx
import pytest

__all__ = ["Server", "clean_env", "free_port", "launched"]


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def clean_env(*prefixes: str) -> dict[str, str]:
    """This process's environment without the variables starting with ``prefixes`` (the server's own settings
    and OpenTelemetry's are the test's to choose)."""
    return {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}


class Server:
    """A running backend: its base URL, process (a group leader), log file, environment and an HTTP client."""

    def __init__(self, base: str, process: subprocess.Popen[bytes], log: Path, env: dict[str, str],
                 timeout: float = 10.0) -> None:
        self.base = base
        self.process = process
        self.log = log
        self.env = env
        self.client = httpx.Client(base_url=base, timeout=timeout)

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]


S = TypeVar("S", bound=Server)


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop ``process``'s whole process group (see the module docstring)."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        process.wait(15)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait(5)


@contextmanager
def launched(kind: type[S], name: str, command: list[str], *, work: Path, env: dict[str, str], port: int,
             health: str, deadline: float, poll: float, timeout: float = 10.0) -> Iterator[S]:
    """Run ``command`` (in ``work``, with ``env``, output to ``work/<name>.log``, a process group of its own) and
    yield a ``kind`` for ``http://127.0.0.1:<port>`` once ``health`` answers 200; the test fails naming the
    server and quoting its log if it exits first or misses ``deadline`` seconds. Stopped on exit, always."""
    log = work / f"{name}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
    server = kind(f"http://127.0.0.1:{port}", process, log, env, timeout)
    try:
        until = time.monotonic() + deadline
        while True:  # only polling tells when a server is up
            if process.poll() is not None:
                pytest.fail(f"{name} exited with {process.returncode}:\n{server.log_tail()}")
            try:
                if server.client.get(health).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > until:
                pytest.fail(f"{name} did not answer {health} within {deadline:.0f} s:\n{server.log_tail()}")
            time.sleep(poll)
        yield server
    finally:
        server.client.close()
        stop(process)
