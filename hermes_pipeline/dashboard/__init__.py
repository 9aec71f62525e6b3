"""The local dashboard (spec 06 §10): what the agent did today, its sessions, skill health, memory
changes and recorded runs, served read-only on loopback by the standard library alone.

- :mod:`.queries`, :mod:`.queries_lists` (the paged lists) and :mod:`.queries_pages` (skills, memory) hold
  every SQL statement and filesystem read (:mod:`.sources` the paths and the read-only connections,
  :mod:`.params` the strict query parameters of the lists, :mod:`.stats` the arithmetic over fetched rows,
  :mod:`.timeline` a run's real durations);
- :mod:`.views` renders HTML from plain data (:mod:`.views_lists` the lists, :mod:`.views_pages` a skill and
  a memory file, :mod:`.views_runs` the run tree and the diff, :mod:`.charts` the inline SVG charts,
  :mod:`.html` escaping and the page frame);
- :mod:`.server` routes requests, one handler per route, with the security headers and refusals.
"""

from .server import Dashboard, DashboardServer, make_server
from .sources import Sources, load_sources

__all__ = ["Dashboard", "DashboardServer", "Sources", "load_sources", "make_server"]
