"""Every match of a byte pattern in a file, read a chunk at a time (a recording may be large).

Used by the sweeps that keep what a file still refers to: the ATOF/trajectory ``definitions/`` sidecar
(:mod:`.definition_files`) and the kept skill/memory texts (the store's blob sweep).
"""

from __future__ import annotations

import re
from pathlib import Path


def find_all_in_file(path: Path, pattern: re.Pattern[bytes], width: int, out: set[bytes], chunk: int) -> None:
    """Add every ``pattern.findall`` result of ``path`` to ``out``, reading ``chunk`` bytes at a time.

    ``width`` is the longest text a match spans: each chunk is searched with the last ``width - 1`` bytes
    of the one before in front, so a match across two chunks is found (and one inside a chunk may be found
    twice, which a set absorbs).

    Raises:
        OSError: the file cannot be read.
    """
    keep = max(width - 1, 0)
    tail = b""
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            data = tail + block
            out.update(pattern.findall(data))
            tail = data[-keep:] if keep else b""
