"""``hermes-pipeline dashboard``: serve the local dashboard of a profile (spec 06 §10)."""

from __future__ import annotations

import argparse
import sys
import threading
from typing import Any

from .._stop_signal import StopSignal

DESCRIPTION = ("Serve a read-only dashboard of one profile in the browser: today's tasks, success rate, cost and "
               "tokens; the latest sessions and their messages (Hermes' state.db, else the observability store); "
               "skill health; memory files and changes; recorded runs as trees and side-by-side diffs. Standard "
               "library only, no external assets; it only reads the profile. It listens on loopback unless "
               "--allow-remote is given.")
EPILOG = ("Sources under the profile: state.db, skills/, memories/ (observability.audit.memory_dirs), trajectories/ "
          "(observability.trajectories.dir), observability/observability.sqlite3; a missing one is reported on its "
          "panel. Defaults for --host and --port come from observability.dashboard.host/port; trace links use "
          "observability.dashboard.jaeger_url. Examples: hermes-pipeline dashboard --open; "
          "hermes-pipeline dashboard --home ~/.hermes/profiles/work --port 3002")


def add_parser(sub: Any) -> None:
    """Register ``dashboard`` on the top-level subparsers."""
    p = sub.add_parser("dashboard", help="serve a local, read-only dashboard of a profile in the browser",
                       description=DESCRIPTION, epilog=EPILOG)
    p.add_argument("--home", metavar="DIR", help="the profile directory (default: $HERMES_HOME, else ~/.hermes)")
    p.add_argument("--host", help="address to listen on (default 127.0.0.1; a non-loopback address needs "
                                  "--allow-remote)")
    p.add_argument("--port", type=int, help="port to listen on (default 3001; 0 picks a free port)")
    p.add_argument("--open", action="store_true", help="open the dashboard in the default web browser")
    p.add_argument("--allow-remote", action="store_true",
                   help="allow listening on a non-loopback address (anyone who can reach it reads the profile)")
    p.set_defaults(func=run)


def _loopback(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C or SIGTERM."""
    from ..config.profile_config import load_profile_settings
    from ..dashboard import load_sources, make_server
    from .trajectory_files import profile_home

    home = profile_home(args.home)
    settings = load_profile_settings(home, log=False).dashboard
    host = args.host or settings.host
    port = settings.port if args.port is None else args.port
    if not _loopback(host) and not args.allow_remote:
        print(f"hermes-pipeline dashboard: error: {host} is not a loopback address; the dashboard shows the "
              "profile's conversations to anyone who can reach it. Pass --allow-remote to listen there anyway.",
              file=sys.stderr)
        return 2
    if not 0 <= port <= 65535:
        print(f"hermes-pipeline dashboard: error: --port {port} is not a port number (0..65535)", file=sys.stderr)
        return 2
    try:
        server = make_server(load_sources(home), host, port)
    except OSError as exc:
        print(f"hermes-pipeline dashboard: error: cannot listen on {host}:{port}: {exc.strerror or exc} "
              "(choose another --port)", file=sys.stderr)
        return 1
    print(f"dashboard: {server.url}  (profile {home}; read-only; Ctrl-C stops it)", flush=True)

    serving = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2},
                               name="hermes-pipeline-dashboard", daemon=True)
    with StopSignal() as stop:  # SIGTERM or Ctrl-C; the handler takes no lock, so no signal can hang it
        serving.start()
        if args.open:
            import webbrowser

            threading.Thread(target=webbrowser.open, args=(server.url,), daemon=True).start()
        try:
            stop.wait()
        finally:
            server.shutdown()
            serving.join()
            server.server_close()
    return 0
