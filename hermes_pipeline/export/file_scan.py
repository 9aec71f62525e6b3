"""Every match of a byte pattern in a file, read a chunk at a time (a recording may be large).

Used by the sweeps that keep what a file still refers to: the ATOF/trajectory ``definitions/`` sidecar
(:mod:`.definition_files`) and the kept skill/memory texts (the store's blob sweep). Their callers list regular
files only; the file is still opened without blocking and checked on the open descriptor, so a FIFO or a
device swapped in meanwhile is refused at once (:class:`~hermes_pipeline.host.profile_files.ProfileFileError`,
an :class:`OSError`: the sweep then deletes nothing) instead of stalling the sweeping thread.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Final

from ..host.profile_files import ProfileFileError, file_kind

_FLAGS: Final = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
                 | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))


def find_all_in_file(path: Path, pattern: re.Pattern[bytes], width: int, out: set[bytes], chunk: int) -> None:
    """Add every ``pattern.findall`` result of ``path`` to ``out``, reading ``chunk`` bytes at a time.

    ``width`` is the longest text a match spans: each chunk is searched with the last ``width - 1`` bytes
    of the one before in front, so a match across two chunks is found (and one inside a chunk may be found
    twice, which a set absorbs).

    Raises:
        OSError: the file cannot be read, or is not a regular file (:class:`ProfileFileError`).
    """
    keep = max(width - 1, 0)
    tail = b""
    fd = os.open(path, _FLAGS)  # never waits for a FIFO's writer
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ProfileFileError(path, f"{file_kind(mode)}; expected a regular file", kind="not_regular",
                                   mode=mode)
        while block := os.read(fd, chunk):
            data = tail + block
            out.update(pattern.findall(data))
            tail = data[-keep:] if keep else b""
    finally:
        os.close(fd)
