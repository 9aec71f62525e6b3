"""The dashboard serves from a bounded pool with an idle timeout (spec 06 BOOK-38; issue 26 "the dashboard starts
one thread per connection").

Real sockets on 127.0.0.1: fifty idle connections cost the server its fixed pool of threads, not fifty;
the ones beyond the pool and its queue are answered 503 at once; every idle one is closed by the server
after the idle timeout (each test waits on the sockets' EOF, never on a clock), and the pool serves
normal requests again afterwards.
"""

from __future__ import annotations

import select
import socket
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hermes_pipeline.dashboard import load_sources, make_server
from hermes_pipeline.dashboard.server import DashboardServer

WORKERS = 3
QUEUE = 5
IDLE = 0.5
HANG_GUARD_S = 60.0
"""Only against a hang of a broken server: the tests wait on socket events, which come much sooner."""


@contextmanager
def pooled(home: Path) -> Iterator[DashboardServer]:
    server = make_server(load_sources(home), "127.0.0.1", 0, workers=WORKERS, queue_size=QUEUE, idle_timeout=IDLE)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _read_to_eof(sockets: list[socket.socket], count: int, threads: list[int] | None = None
                 ) -> dict[socket.socket, bytes]:
    """Wait until ``count`` of ``sockets`` reached EOF (the server closed them); what each one received.
    ``threads`` gets the process's thread count at every wake-up."""
    received = {s: b"" for s in sockets}
    open_ = set(sockets)
    closed: dict[socket.socket, bytes] = {}
    while len(closed) < count:
        if threads is not None:
            threads.append(threading.active_count())
        ready, _, _ = select.select(list(open_), [], [], HANG_GUARD_S)
        assert ready, f"only {len(closed)} of {count} connections were closed by the server"
        for s in ready:
            data = s.recv(65536)
            if data:
                received[s] += data
            else:
                open_.discard(s)
                closed[s] = received[s]
    return closed


def test_fifty_idle_connections_use_the_fixed_pool_and_are_closed_after_the_idle_timeout(tmp_path: Path) -> None:
    with pooled(tmp_path) as server:
        url = f"http://127.0.0.1:{server.port}/"
        before = threading.active_count()
        sockets = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(50)]
        try:
            threads: list[int] = []
            # every one ends: the ones beyond the pool and its queue with a 503 at once, the others (held by a
            # worker, or queued until one is free) closed silently after the idle timeout
            closed = _read_to_eof(sockets, len(sockets), threads)
            busy = [data for data in closed.values() if data]
            # the queue always had room for QUEUE of them; the workers took up to WORKERS more off it in time
            assert 50 - WORKERS - QUEUE <= len(busy) == server.refused <= 50 - QUEUE
            assert all(data.startswith(b"HTTP/1.1 503 ") for data in busy)
            assert max(threads) <= before, "a thread was started for a connection"
        finally:
            for s in sockets:
                s.close()
        with urllib.request.urlopen(url, timeout=HANG_GUARD_S) as response:  # the pool serves again
            assert response.status == 200


def test_a_keep_alive_connection_is_closed_after_the_idle_timeout_between_requests(tmp_path: Path) -> None:
    with pooled(tmp_path) as server:
        conn = socket.create_connection(("127.0.0.1", server.port))
        try:
            conn.sendall(f"GET /static/app.css HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())
            data = _read_to_eof([conn], 1)[conn]
        finally:
            conn.close()
        assert data.startswith(b"HTTP/1.1 200 ")  # served, then closed once it stayed silent
