"""A file sink's batch goes out with vectored writes, whole and in order, and a failed one is rolled back (FMT-34,
FMT-37): partial writes, chunks of ``IOV_MAX`` lines, items that are not bytes, and a real file-size limit."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_pipeline.export import files
from hermes_pipeline.export.files import JsonlFileDestination, write_lines

REAL_WRITEV = os.writev
LINES = st.lists(st.binary(max_size=300).map(lambda b: b.replace(b"\n", b"") + b"\n"), max_size=40)


def _short_writev(cuts: st.DataObject) -> Any:
    """An ``os.writev`` that writes a prefix of what it is given, of a length the test draws (at least one byte)."""
    real_write = os.write

    def writev(fd: int, buffers: list[Any]) -> int:
        data = b"".join(bytes(b) for b in buffers)  # raises TypeError for a str, as os.writev does
        if not data:
            return 0
        n = cuts.draw(st.integers(1, len(data)), label="bytes written")
        return real_write(fd, data[:n])

    return writev


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=LINES, iov=st.integers(1, 5), cuts=st.data())
def test_fmt_34_partial_vectored_writes_write_every_line_once_in_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lines: list[bytes], iov: int, cuts: st.DataObject) -> None:
    """FMT-34: whatever prefix each call writes, the file ends up with exactly the lines, and the batch is unchanged."""
    monkeypatch.setattr(files, "_IOV_MAX", iov)
    monkeypatch.setattr(os, "writev", _short_writev(cuts))
    path = tmp_path / f"out-{os.urandom(4).hex()}.jsonl"
    before = list(lines)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        write_lines(fd, lines)
    finally:
        os.close(fd)
    assert path.read_bytes() == b"".join(before)
    assert lines == before and all(type(line) is bytes for line in lines)


ITEMS = st.one_of(st.binary(max_size=50), st.text(max_size=50), st.binary(max_size=50).map(bytearray),
                  st.binary(max_size=60).map(lambda b: memoryview(b)[::2]))  # a view writev refuses (not contiguous)


def _text_of(item: Any) -> bytes:
    return bytes(item) if isinstance(item, (bytes, bytearray, memoryview)) else str(item).encode()


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(ITEMS, max_size=20), iov=st.integers(1, 4), cuts=st.data(), short=st.booleans())
def test_items_that_are_not_bytes_are_written_as_their_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            lines: list[Any], iov: int, cuts: st.DataObject,
                                                            short: bool) -> None:
    """Something other than an encoder's bytes in a batch (text, a bytearray, a view) is written as its bytes or its
    UTF-8 text, in its place, with partial writes too."""
    monkeypatch.setattr(files, "_IOV_MAX", iov)
    if short:
        short_writev = _short_writev(cuts)

        def writev(fd: int, buffers: list[Any]) -> int:
            for buffer in buffers:  # what os.writev refuses: text (TypeError), a view that is not contiguous
                if not memoryview(buffer).c_contiguous:
                    raise BufferError("memoryview: underlying buffer is not C-contiguous")
            return short_writev(fd, buffers)

        monkeypatch.setattr(os, "writev", writev)
    else:  # the function-scoped monkeypatch spans examples: the real call again
        monkeypatch.setattr(os, "writev", REAL_WRITEV)
    path = tmp_path / f"mixed-{os.urandom(4).hex()}.jsonl"
    expected = b"".join(_text_of(x) for x in lines)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        write_lines(fd, lines)
    finally:
        os.close(fd)
    assert path.read_bytes() == expected


def test_a_writev_that_writes_nothing_raises_instead_of_spinning(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A call that writes no byte of a non-empty batch is an error (counted by the writer), never a busy loop."""
    monkeypatch.setattr(os, "writev", lambda fd, buffers: 0)
    fd = os.open(tmp_path / "never.jsonl", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        with pytest.raises(OSError):
            write_lines(fd, [b"{}\n"])
    finally:
        os.close(fd)


def test_fmt_37_file_size_limit_rolls_the_batch_back(tmp_path: Path) -> None:
    """FMT-37 with a real fault: under ``RLIMIT_FSIZE`` the kernel writes part of a batch, then refuses (EFBIG);
    the destination raises and the file holds exactly the batches written before it; the next batch that fits goes
    out after them."""
    script = textwrap.dedent("""
        import json, os, resource, signal, sys
        from pathlib import Path
        from hermes_pipeline.export.files import JsonlFileDestination
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (3000, resource.RLIM_INFINITY))
        dest = JsonlFileDestination(Path(sys.argv[1]), "events.jsonl")
        dest.open()
        line = lambda i, n: json.dumps({"i": i, "pad": "x" * n}).encode() + b"\\n"
        dest.write([line(i, 40) for i in range(10)])
        error = None
        try:
            dest.write([line(100 + i, 90) for i in range(40)])
        except OSError as exc:
            error = exc.errno
        dest.write([line(200 + i, 40) for i in range(5)])
        dest.close()
        print(json.dumps({"errno": error}))
    """)
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=60,
                         check=True)
    assert json.loads(out.stdout)["errno"] == errno.EFBIG
    kept = [json.loads(line)["i"] for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert kept == list(range(10)) + [200 + i for i in range(5)]


def test_destination_writes_a_batch_larger_than_iov_max(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """More lines than one vectored call takes go out in several calls, in order (FMT-34)."""
    monkeypatch.setattr(files, "_IOV_MAX", 7)
    dest = JsonlFileDestination(tmp_path, "events.jsonl")
    dest.open()
    batch = [f'{{"n":{i}}}\n'.encode() for i in range(100)]
    dest.write(batch)
    dest.close()
    assert (tmp_path / "events.jsonl").read_bytes() == b"".join(batch)
