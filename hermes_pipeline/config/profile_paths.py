"""Paths in a profile's ``config.yaml`` that must stay inside the profile directory.

``observability.trajectories.dir``, ``observability.audit.memory_dirs`` / ``skills_dir`` and
``observability.logs.path`` name places under ``$HERMES_HOME``: the profile owns what is written
there, and ``doctor``, retention and the dashboard look only there. An absolute path, a home-relative
``~`` path, a Windows drive or a ``..`` component would write (or read) outside the profile, so each
of them is refused: ``config set`` / ``validate`` give the typed error naming the file and key, and
``open_profile`` keeps the default with that warning (a host never stops on its config, CFG-69).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any, Final

_DRIVE: Final = re.compile(r"^[A-Za-z]:")


def profile_path_problem(value: Any, what: str = "a path") -> str | None:
    """Why ``value`` is not a usable path inside the profile, or ``None``. ``what``: "a directory path" etc.

    Checked on the text as written, with both ``/`` and ``\\`` as separators, so that neither the
    platform nor a later ``resolve()`` can turn an accepted value into one outside the profile.
    """
    expected = f"expected {what} relative to $HERMES_HOME"
    if not isinstance(value, str) or not value.strip() or "\0" in value:
        return expected
    text = value.strip()
    if (text.startswith(("/", "\\", "~")) or _DRIVE.match(text) or PurePosixPath(text).is_absolute()
            or PureWindowsPath(text).is_absolute()):
        return f"{expected}, not an absolute or home path (it must stay inside the profile)"
    if ".." in re.split(r"[\\/]+", text):
        return f"{expected} without '..' (it must stay inside the profile)"
    return None
