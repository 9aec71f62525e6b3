"""The benches' OTLP receiver runs in a process of its own (issue #29: the all-CPU per tool call of a row that exports
OTLP counts the exporter, not the collector it sends to)."""

from __future__ import annotations

import os
import sys
import urllib.request
from pathlib import Path

import psutil
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from _receiver import ReceiverProcess  # noqa: E402


def _post(endpoint: str, body: bytes) -> int:
    request = urllib.request.Request(endpoint + "/v1/traces", data=body, method="POST",
                                     headers={"Content-Type": "application/x-protobuf"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status


def test_the_receiver_counts_bytes_in_another_process_and_stops_with_the_block() -> None:
    with ReceiverProcess() as receiver:
        assert receiver.endpoint.startswith("http://127.0.0.1:")
        port = int(receiver.endpoint.rsplit(":", 1)[1])
        owners = {c.pid for c in psutil.net_connections(kind="tcp")
                  if c.laddr and c.laddr.port == port and c.status == psutil.CONN_LISTEN}
        assert owners and os.getpid() not in owners  # the listening socket is the child's, not this process's
        child = receiver._child
        assert receiver.bytes_received == 0
        assert _post(receiver.endpoint, b"x" * 1000) == 200
        assert _post(receiver.endpoint, b"y" * 234) == 200
        assert receiver.bytes_received == 1234
    assert child.poll() is not None  # stopped on leaving the block
    with pytest.raises(OSError):
        _post(receiver.endpoint, b"z")
