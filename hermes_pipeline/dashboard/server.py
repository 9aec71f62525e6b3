"""The dashboard's HTTP side: routing (one handler per route), the security headers and the refusals.

Over 400 lines on purpose: the routes, the request checks and the worker pool stay in one file, so every
refusal a request can meet reads in one place.

- Read-only: only ``GET`` and ``HEAD`` are served; every other method is answered 405.
- The ``Host`` header must name the address the server is bound to (or ``localhost`` for a loopback
  bind) and its port, otherwise 421: a page of another origin that rebinds its DNS name to
  127.0.0.1 cannot read the dashboard.
- Every response forbids remote loads, inline script and inline style (``Content-Security-Policy``);
  the pages need no script at all and take their stylesheet from ``/static/app.css``.
- Ids in the URL are matched against strict patterns before any lookup; static files come from a
  fixed table, never from a path in the URL.
- Connections are served by a fixed pool of worker threads from a bounded queue, never a thread per
  connection; a connection idle for ``idle_timeout`` seconds (waiting for its first or next request)
  is closed, and when the queue is full a new one is answered 503 at once and closed. Fifty idle
  sockets therefore cost no more threads than one, and free themselves after the idle timeout.
"""

from __future__ import annotations

import ipaddress
import logging
import queue
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, HTTPServer
from importlib import resources
from typing import Any, Final
from urllib.parse import unquote, urlsplit

from . import queries, queries_lists, queries_pages, views, views_lists, views_pages
from .params import BadParameter, parse_query
from .sources import SESSION_ID, TRAJECTORY_REF, Sources

__all__ = ["CSP", "Dashboard", "DashboardServer", "Response", "host_allowed", "make_server"]

log = logging.getLogger("hermes_pipeline.dashboard")

CSP: Final = ("default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; "
              "frame-ancestors 'none'")
"""Nothing but same-origin stylesheets and images: no script, no inline style, no remote load."""
HEADERS: Final = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
                  "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY", "Cache-Control": "no-store",
                  "Cross-Origin-Resource-Policy": "same-origin"}
STATIC: Final = {"app.css": "text/css; charset=utf-8", "favicon.svg": "image/svg+xml"}
_SID = SESSION_ID.pattern
_TID = TRAJECTORY_REF.pattern


@dataclass
class Response:
    """A rendered response."""

    status: int
    body: bytes
    content_type: str = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)


class Dashboard:
    """The routes of the dashboard over one profile's :class:`~.sources.Sources` (no HTTP here, so the
    bench and the tests can time and call a route directly)."""

    def __init__(self, sources: Sources) -> None:
        self.sources = sources
        self.home = str(sources.home)
        self._static = {name: resources.files(__package__).joinpath("static", name).read_bytes() for name in STATIC}
        self.routes: list[tuple[re.Pattern[str], Callable[..., Response]]] = [
            (re.compile(r"/"), self.today),
            (re.compile(r"/sessions/?"), self.sessions),
            (re.compile(r"/runs/?"), self.runs),
            (re.compile(r"/failures/?"), self.failures),
            (re.compile(r"/compare/?"), self.compare),
            (re.compile(r"/skills/([^/]{1,200})"), self.skill),
            (re.compile(r"/memory/(.{1,500})"), self.memory_file),
            (re.compile(rf"/sessions/({_SID})"), self.session),
            (re.compile(r"/skills/?"), self.skills),
            (re.compile(r"/memory/?"), self.memory),
            (re.compile(rf"/trajectories/({_TID})"), self.trajectory),
            (re.compile(rf"/trajectories/({_TID})/diff/({_TID})"), self.diff),
            (re.compile(r"/static/([a-z]+\.[a-z]+)"), self.static),
            (re.compile(r"/favicon\.ico"), lambda: self.static("favicon.svg")),
        ]

    def respond(self, target: str) -> Response:
        """The response to ``GET target`` (a request target: path and optional query)."""
        parts = urlsplit(target)
        decoded = unquote(parts.path)
        if "\\" in decoded or "\0" in decoded or "/../" in decoded + "/" or "//" in decoded:
            return self.not_found()
        for pattern, handler in self.routes:
            match = pattern.fullmatch(decoded)
            if match:
                try:
                    if handler.__name__ in self.QUERIED:  # the others take no query string
                        return handler(*match.groups(), raw=parts.query)
                    return handler(*match.groups())
                except BadParameter as exc:
                    return self.html(views.error_view(400, f"Bad query parameter {exc.name}: {exc.reason}."), 400)
        return self.not_found()

    QUERIED: Final = frozenset({"sessions", "runs", "failures", "skill", "memory", "memory_file", "compare",
                                "session"})
    """Handlers that read the query string (each checks it strictly; the other routes ignore it)."""

    @staticmethod
    def _list_query(raw: str, allowed: tuple[str, ...], **defaults: str) -> Any:
        """The checked query ``raw`` (see :mod:`.params`); raises :class:`BadParameter`."""
        from urllib.parse import parse_qsl

        try:
            given = {name for name, _ in parse_qsl(raw, keep_blank_values=True, max_num_fields=40)}
        except ValueError:
            given = set()  # parse_query names the problem
        for name, value in defaults.items():  # a default range is part of the URL the page links to
            if name not in given:
                raw = f"{raw}&{name}={value}" if raw else f"{name}={value}"
        return parse_query(raw, allowed)

    @staticmethod
    def html(body: str, status: int = 200) -> Response:
        """An HTML response."""
        return Response(status, body.encode("utf-8"))

    def not_found(self, what: str = "There is no such page.") -> Response:
        """404."""
        return self.html(views.error_view(404, what), 404)

    def today(self) -> Response:
        """``/``: today's overview."""
        return self.html(views.overview_view(queries.overview(self.sources), self.home))

    def sessions(self, raw: str = "") -> Response:
        """``/sessions``: one page of sessions, filtered by the query string."""
        query = self._list_query(raw, ("since", "until", "outcome", "model", "skill", "tool", "error", "q"))
        return self.html(views_lists.sessions_view(queries_lists.sessions_page(self.sources, query), self.home, query))

    def runs(self, raw: str = "") -> Response:
        """``/runs``: one page of runs, filtered by the query string."""
        query = self._list_query(raw, ("since", "until", "outcome", "model", "skill", "tool", "error", "q"))
        return self.html(views_lists.runs_view(queries_lists.runs(self.sources, query), query, self.home))

    def failures(self, raw: str = "") -> Response:
        """``/failures``: what failed over a time range (the last 7 days unless the URL names one)."""
        query = self._list_query(raw, ("since", "until", "error"), since=queries_lists.DEFAULT_FAILURE_WINDOW)
        return self.html(views_lists.failures_view(queries_lists.failures(self.sources, query), query, self.home))

    def compare(self, raw: str = "") -> Response:
        """``/compare?a=<run>&b=<run>``: the diff of two runs named by id or prefix (the run page's form)."""
        from urllib.parse import parse_qsl

        try:
            pairs = parse_qsl(raw, keep_blank_values=True, strict_parsing=bool(raw), max_num_fields=4)
        except ValueError as exc:
            raise BadParameter("(query string)", "malformed") from exc
        given = {}
        for name, value in pairs:
            if name not in ("a", "b") or name in given:
                raise BadParameter(name[:40] or "(empty name)", "expected a and b, once each")
            given[name] = value.strip()
        for name in ("a", "b"):
            if not TRAJECTORY_REF.fullmatch(given.get(name, "")):
                raise BadParameter(name, "expected a run id or a prefix of at least 4 of its characters")
        return self.diff(given["a"], given["b"])

    def skill(self, name: str, raw: str = "") -> Response:
        """``/skills/<name>``: one skill's versions, runs per version and trend (404 for an unknown skill)."""
        a, b = views_pages.versions_param(raw)
        data = queries_pages.skill(self.sources, name, a, b)
        if data is None:
            return self.not_found("No skill of this name in this profile.")
        return self.html(views_pages.skill_view(data, self.home))

    def memory_file(self, path: str, raw: str = "") -> Response:
        """``/memory/<file>``: every recorded change to one memory file (404 when none is recorded)."""
        query = self._list_query(raw, ())
        data = queries_pages.memory_file(self.sources, path, query)
        if data is None:
            return self.not_found("No recorded change to this memory file.")
        return self.html(views_pages.memory_file_view(data, query, self.home))

    def session(self, session_id: str, raw: str = "") -> Response:
        """``/sessions/<id>``: one page of a session's message stream (``?page=N``; 404 for an unknown id)."""
        query = self._list_query(raw, ())
        data = queries.session(self.sources, session_id, query.page)
        if data is None:
            return self.not_found("No session with this id in this profile.")
        return self.html(views.session_view(data, self.home))

    def skills(self) -> Response:
        """``/skills``: skill health."""
        return self.html(views.skills_view(queries_pages.skills(self.sources), self.home))

    def memory(self, raw: str = "") -> Response:
        """``/memory``: memory files and one page of recorded changes."""
        query = self._list_query(raw, ("since", "until", "q"))
        return self.html(views.memory_view(queries_pages.memory(self.sources, query=query), self.home, query))

    def ambiguous(self, exc: Any) -> Response:
        """409 for an id prefix of several runs: the page lists them, each a link."""
        return self.html(views.ambiguous_view(exc.ref, exc.candidates, self.home), 409)

    def trajectory(self, trajectory_id: str) -> Response:
        """``/trajectories/<id or unique prefix>``: one run as a tree (404 for an unknown id, 409 for an
        ambiguous prefix)."""
        from ..sinks.trajectory_store import TrajectoryLookupError

        try:
            data = queries.trajectory(self.sources, trajectory_id)
        except TrajectoryLookupError as exc:
            return self.ambiguous(exc)
        if data is None:
            return self.not_found("No trajectory with this id in this profile.")
        if "problem" in data:
            return self.unshowable(data)
        return self.html(views.trajectory_view(data, self.home))

    def unshowable(self, data: dict[str, Any]) -> Response:
        """422: the run's file exists but is too large or damaged (never a 404 for a run a page links to)."""
        return self.html(views.unshowable_view(data["id"], data["problem"]), 422)

    def diff(self, old: str, new: str) -> Response:
        """``/trajectories/<a>/diff/<b>``: two runs side by side (404 unless both exist; ids or unique prefixes)."""
        from ..sinks.trajectory_store import TrajectoryLookupError

        try:
            data = queries.trajectory_diff(self.sources, old, new)
        except TrajectoryLookupError as exc:
            return self.ambiguous(exc)
        if data is None:
            return self.not_found("Both trajectories must exist in this profile.")
        if "problem" in data:
            return self.unshowable(data)
        return self.html(views.diff_view(data, self.home))

    def static(self, name: str) -> Response:
        """A file of the fixed static table (404 for any other name)."""
        if name not in self._static:
            return self.not_found()
        return Response(200, self._static[name], STATIC[name], {"Cache-Control": "max-age=300"})


def _is_wildcard(host: str) -> bool:
    return host in ("0.0.0.0", "::", "")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_allowed(header: str | None, bound: str, port: int) -> bool:
    """Whether a request's ``Host`` header names this server: its port, and the bound address (an IP
    literal of any of the machine's addresses when bound to all of them), or ``localhost`` when bound
    to loopback. A DNS name other than the bound one is refused (DNS rebinding)."""
    if not header:
        return False
    try:
        parts = urlsplit("//" + header.strip())
        name, given = (parts.hostname or "").lower(), parts.port
    except ValueError:
        return False
    if given != port:
        return False
    try:
        literal: Any = ipaddress.ip_address(name)
    except ValueError:
        literal = None
    if literal is not None:
        return _is_wildcard(bound) or _same_ip(literal, bound) or (bound == "localhost" and literal.is_loopback)
    return name == bound.lower() or (name == "localhost" and _is_loopback(bound))


def _same_ip(literal: Any, bound: str) -> bool:
    try:
        return bool(literal == ipaddress.ip_address(bound))
    except ValueError:
        return False


class _Handler(BaseHTTPRequestHandler):
    """One request: Host check, then the route; other methods 405."""

    server: DashboardServer
    protocol_version = "HTTP/1.1"
    server_version = "hermes-pipeline-dashboard"
    sys_version = ""

    def setup(self) -> None:
        """Every read and write of the connection waits at most the server's idle timeout: an idle
        keep-alive connection, or one that never sends its request, is closed then."""
        self.request.settimeout(self.server.idle_timeout)  # kept by StreamRequestHandler.setup (timeout None)
        super().setup()

    def _send(self, response: Response, *, body: bool = True) -> None:
        self.send_response(response.status)
        headers = {**HEADERS, "Content-Type": response.content_type, "Content-Length": str(len(response.body)),
                   **response.headers}
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        if body:
            self.wfile.write(response.body)

    def _serve(self, body: bool) -> None:
        started = time.perf_counter()
        if not host_allowed(self.headers.get("Host"), self.server.bound_host, self.server.port):
            response = Response(421, b"421 Misdirected Request: this dashboard answers only to its own address\n",
                                "text/plain; charset=utf-8")
        else:
            try:
                response = self.server.app.respond(self.path)
            except Exception:  # a bug in a page must not take the server down; the log says which
                log.exception("dashboard: %s failed", self.path)
                response = Response(500, b"500 Internal Server Error\n", "text/plain; charset=utf-8")
        response.headers.setdefault("Server-Timing", f"app;dur={(time.perf_counter() - started) * 1000:.1f}")
        self._send(response, body=body)

    def do_GET(self) -> None:  # noqa: N802 (the name http.server looks up)
        """Serve a page."""
        self._serve(True)

    def do_HEAD(self) -> None:  # noqa: N802
        """Serve a page's headers."""
        self._serve(False)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The standard library's own refusals (400 bad request line, 414 URI too long, 431 headers too
        large, …) with the same security headers as every page, and the connection closed."""
        self.close_connection = True
        if self.request_version == "HTTP/0.9":  # an unparsable request line: answer with headers all the same
            self.request_version = "HTTP/1.0"
        phrase = message or self.responses.get(code, ("Error",))[0]
        body = f"{code} {phrase}\n".encode("utf-8", "replace")
        self._send(Response(code, body, "text/plain; charset=utf-8", {"Connection": "close"}),
                   body=self.command != "HEAD" and code >= 200 and code not in (204, 304))

    def refuse_method(self) -> None:
        """405 for every method but GET and HEAD: the dashboard has no write path."""
        self.close_connection = True
        self._send(Response(405, b"405 Method Not Allowed: the dashboard is read-only\n", "text/plain; charset=utf-8",
                            {"Allow": "GET, HEAD", "Connection": "close"}))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("do_"):
            return self.refuse_method
        raise AttributeError(name)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (http.server's signature)
        """Requests are logged at DEBUG only (the terminal stays quiet)."""
        log.debug("dashboard: " + format, *args)


WORKERS: Final = 8
"""Worker threads serving connections (a browser opens about six at once)."""
QUEUE_SIZE: Final = 32
"""Accepted connections waiting for a worker; beyond it a new connection gets 503 and is closed."""
IDLE_TIMEOUT_S: Final = 15.0
"""Seconds a connection may stay silent (before its first request or between two) before it is closed."""
_BUSY_TEXT: Final = b"503 the dashboard is busy; try it again\n"
_BUSY: Final = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
                b"Content-Length: " + str(len(_BUSY_TEXT)).encode() + b"\r\nRetry-After: 1\r\nConnection: close\r\n\r\n"
                + _BUSY_TEXT)


class DashboardServer(HTTPServer):
    """An HTTP server holding the :class:`Dashboard` and the address it is bound to, serving from a
    bounded pool (see the module docstring).

    Args:
        workers: worker threads (:data:`WORKERS`).
        queue_size: accepted connections that may wait for a worker (:data:`QUEUE_SIZE`).
        idle_timeout: seconds before a silent connection is closed (:data:`IDLE_TIMEOUT_S`).
    """

    allow_reuse_address = True
    request_queue_size = 128
    """The kernel's accept backlog (``listen``): connections are taken off it at once, into the pool's queue."""

    def __init__(self, app: Dashboard, host: str, port: int, *, workers: int = WORKERS,
                 queue_size: int = QUEUE_SIZE, idle_timeout: float = IDLE_TIMEOUT_S) -> None:
        if workers < 1 or queue_size < 1 or not idle_timeout > 0:
            raise ValueError("workers and queue_size must be >= 1 and idle_timeout > 0")
        self.app = app
        self.bound_host = host
        self.idle_timeout = float(idle_timeout)
        self.refused = 0
        """Connections answered 503 because every worker was busy and the queue full."""
        self._pending: queue.Queue[tuple[socket.socket, Any] | None] = queue.Queue(maxsize=queue_size)
        if ":" in host:
            self.address_family = socket.AF_INET6
        super().__init__((host, port), _Handler)
        self.port = int(self.server_address[1])
        self._workers = [threading.Thread(target=self._work, name=f"hermes-dashboard-{i}", daemon=True)
                         for i in range(workers)]
        for worker in self._workers:
            worker.start()

    def process_request(self, request: Any, client_address: Any) -> None:
        """Hand an accepted connection to the pool, or answer 503 when its queue is full (on the
        accepting thread, bounded by a short send timeout)."""
        try:
            self._pending.put_nowait((request, client_address))
        except queue.Full:
            self.refused += 1
            try:
                request.settimeout(1.0)
                request.sendall(_BUSY)
            except OSError:
                pass
            self.shutdown_request(request)

    def _work(self) -> None:
        while True:
            item = self._pending.get()
            if item is None:
                return
            request, client_address = item
            try:
                self.finish_request(request, client_address)
            except Exception:
                self.handle_error(request, client_address)
            finally:
                self.shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A broken connection is the client's business: logged at DEBUG, never printed."""
        log.debug("dashboard: connection from %s failed", client_address, exc_info=True)

    def server_close(self) -> None:
        """Close the listening socket, the connections still queued, and stop the workers."""
        super().server_close()
        while True:
            try:
                item = self._pending.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                self.shutdown_request(item[0])
        for _ in self._workers:
            try:
                self._pending.put_nowait(None)
            except queue.Full:
                break

    @property
    def url(self) -> str:
        """The base URL to open (loopback for a wildcard bind)."""
        host = "127.0.0.1" if self.bound_host == "0.0.0.0" else "[::1]" if self.bound_host == "::" else \
            f"[{self.bound_host}]" if ":" in self.bound_host else self.bound_host
        return f"http://{host}:{self.port}/"


def make_server(sources: Sources, host: str = "127.0.0.1", port: int = 3001, *, workers: int = WORKERS,
                queue_size: int = QUEUE_SIZE, idle_timeout: float = IDLE_TIMEOUT_S) -> DashboardServer:
    """A server for ``sources`` bound to ``host:port`` (port 0 picks a free port), not yet serving; its
    pool and idle timeout as in :class:`DashboardServer`."""
    return DashboardServer(Dashboard(sources), host, port, workers=workers, queue_size=queue_size,
                           idle_timeout=idle_timeout)
