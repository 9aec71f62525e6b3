"""Is the host's clock NTP-synchronised? (spec 06 BOOK-49).

Timelines across machines are correlated by IDs, never by timestamps, but a clock that drifts still
scrambles what people read; at startup one WARNING (``event = "clock_not_synchronized"``) says so when
the host reports that its clock is not synchronised. Only a definite "no" warns: a host that cannot
tell (no ``timedatectl``, a container) says nothing.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import threading
from typing import Final

logger: Final = logging.getLogger("hermes_pipeline.clock")
_warned = threading.Event()


def clock_synchronized() -> bool | None:
    """``True`` / ``False`` as ``timedatectl`` reports NTP synchronisation; ``None`` when unknown."""
    tool = shutil.which("timedatectl")
    if tool is None:
        return None
    try:
        done = subprocess.run([tool, "show", "-p", "NTPSynchronized", "--value"], capture_output=True, text=True,
                              timeout=2, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    value = done.stdout.strip().lower()
    if done.returncode != 0 or value not in ("yes", "no"):
        return None
    return value == "yes"


def warn_if_unsynchronized() -> bool:
    """Log the BOOK-49 warning once per process when the clock is reported unsynchronised; whether it warned."""
    if _warned.is_set():
        return False
    _warned.set()
    if clock_synchronized() is False:
        logger.warning("hermes_pipeline: the system clock is not NTP-synchronised; timestamps from this machine may "
                       "disagree with other machines (correlate by IDs, and run NTP)",
                       extra={"event": "clock_not_synchronized"})
        return True
    return False
