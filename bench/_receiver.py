"""The benches' OTLP receiver in a process of its own: what a collector costs is not the exporter's.

``OTLPReceiver(discard=True)`` in the bench's own process would put its CPU (reading each request, ``gunzip``, the
handler thread started for each one) into the all-CPU per tool call of every row that exports OTLP (``time.
process_time()`` counts every thread of the process), in proportion to the bytes each side sends. A real deployment's
collector runs elsewhere; so does this one. :class:`ReceiverProcess` starts it in a child process, gives its
``endpoint`` and the bytes it has received so far (``bytes_received``, asked of the child over a pipe), and stops it on
exit.
"""

from __future__ import annotations

import subprocess
import sys
from types import TracebackType
from typing import Protocol

__all__ = ["Receiver", "ReceiverProcess"]


class Receiver(Protocol):
    """What a bench row needs of an OTLP receiver: where to send, and how many bytes arrived (``OTLPReceiver`` in the
    tests, :class:`ReceiverProcess` in the benches)."""

    @property
    def endpoint(self) -> str: ...

    @property
    def bytes_received(self) -> int: ...

_CHILD = """
import sys
from hermes_pipeline.demo.otlp_receiver import OTLPReceiver
with OTLPReceiver(discard=True) as receiver:
    print(receiver.endpoint, flush=True)
    for line in sys.stdin:
        if line.strip() != "bytes":
            break
        print(receiver.bytes_received, flush=True)
"""


class ReceiverProcess:
    """An OTLP/HTTP receiver that only counts bytes, on 127.0.0.1, in a child process; a context manager."""

    def __init__(self) -> None:
        self._child = subprocess.Popen([sys.executable, "-c", _CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       text=True)
        assert self._child.stdout is not None
        line = self._child.stdout.readline().strip()
        if not line.startswith("http://"):
            self._child.kill()
            raise RuntimeError(f"the OTLP receiver process did not start (it printed {line!r})")
        self.endpoint = line
        """Base URL, e.g. ``http://127.0.0.1:4318``; traces go to ``{endpoint}/v1/traces``."""

    @property
    def bytes_received(self) -> int:
        """The bytes of the trace requests the receiver has taken so far (after ``gunzip``)."""
        assert self._child.stdin is not None and self._child.stdout is not None
        self._child.stdin.write("bytes\n")
        self._child.stdin.flush()
        return int(self._child.stdout.readline())

    def close(self) -> None:
        if self._child.poll() is None:
            assert self._child.stdin is not None
            self._child.stdin.close()
            try:
                self._child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._child.kill()
                self._child.wait()

    def __enter__(self) -> ReceiverProcess:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()
