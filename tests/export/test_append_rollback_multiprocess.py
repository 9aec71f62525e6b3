"""Several processes append to one ATOF file; a failed batch's rollback removes only its own bytes
(FMT-34, FMT-35 ``mode = "append"``, FMT-37, FMT-81: nothing acknowledged is lost, every loss is counted).

Every Hermes process of a profile appends to the same ``events-{date}.jsonl``. A batch that fails part-way
(ENOSPC) is rolled back; the rollback must never cut lines another process appended meanwhile, and no torn
line may be left for another process's line to be glued to. Real processes, real ``flock``; the steps are
ordered by pipes, never by sleeps.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from hermes_pipeline.export.files import JsonlFileDestination
from hermes_pipeline.export.locks import FileLockTimeout
from hermes_pipeline.export.writer import BoundedWriter

STALLED_WRITER = r'''
import errno, json, os, sys
from pathlib import Path
from hermes_pipeline.export.files import JsonlFileDestination

state = {"n": 0}
def writev(fd, bufs):  # half the batch reaches the disk, the disk stalls (the parent goes on), then ENOSPC
    if state["n"] == 0:
        state["n"] = 1
        data = b"".join(bytes(b) for b in bufs)
        done = os.write(fd, data[: len(data) // 2])
        print("in-write", flush=True)
        sys.stdin.readline()
        return done
    raise OSError(errno.ENOSPC, "No space left on device")
os.writev = writev
dest = JsonlFileDestination(Path(sys.argv[1]), sys.argv[2])
dest.open()
try:
    dest.write([json.dumps({"p": "A", "i": i}).encode() + b"\n" for i in range(20)])
except OSError as exc:
    print("failed", exc.errno, flush=True)
else:
    print("written", flush=True)
dest.close()
'''

LOCK_HOLDER = r'''
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.readline()
'''

FLAKY_APPENDER = r'''
import errno, json, os, sys
from pathlib import Path
from hermes_pipeline.export.files import JsonlFileDestination
from hermes_pipeline.export.locks import FileLockTimeout

name, batches = sys.argv[3], int(sys.argv[4])
real = os.writev
state = {"batch": 0}
def writev(fd, bufs):  # every third batch fails part-way: a piece of it written, then ENOSPC
    if state["batch"] % 3 == 2:
        data = b"".join(bytes(b) for b in bufs)
        os.write(fd, data[: len(data) // 3])
        raise OSError(errno.ENOSPC, "No space left on device")
    return real(fd, bufs)
os.writev = writev
dest = JsonlFileDestination(Path(sys.argv[1]), sys.argv[2])
dest.open()
sys.stdin.readline()  # all appenders start together
acked = []
for b in range(batches):
    state["batch"] = b
    lines = [json.dumps({"p": name, "b": b, "i": i, "pad": "x" * 300}).encode() + b"\n" for i in range(8)]
    while True:
        try:
            dest.write(lines)
        except FileLockTimeout:
            continue
        except OSError:
            break
        acked.extend(f"{name}:{b}:{i}" for i in range(8))
        break
dest.close()
print(json.dumps(acked), flush=True)
'''


def _child(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", code, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _lines(path: Path) -> list[dict[str, object]]:
    data = path.read_bytes()
    assert not data or data.endswith(b"\n"), "a torn line is left at the end of the file"
    return [json.loads(line) for line in data.split(b"\n") if line]  # a glued or torn line does not parse


def _line(process: str, index: int) -> bytes:
    return json.dumps({"p": process, "i": index}).encode() + b"\n"


def test_rollback_never_removes_lines_another_process_appended(tmp_path: Path) -> None:
    """FMT-35/FMT-37: process A's batch fails part-way while B appends; B's acknowledged lines survive A's
    rollback and A leaves no torn half-line (fails without the append lock: A's ``ftruncate`` cut B's lines)."""
    a = _child(STALLED_WRITER, str(tmp_path), "events.jsonl")
    try:
        assert a.stdout is not None and a.stdin is not None
        assert a.stdout.readline().strip() == "in-write"  # half of A's batch is on disk; A holds the file
        b = JsonlFileDestination(tmp_path, "events.jsonl")
        b.lock_timeout = 0.2
        acked: list[bytes] = []
        first = [_line("B", i) for i in range(10)]
        try:
            b.write(first)
            acked += first
        except FileLockTimeout:  # waited for A, bounded: nothing written, the writer retries or counts it
            pass
        a.stdin.write("go\n")
        a.stdin.flush()
        assert a.stdout.readline().split()[0] == "failed"
        assert a.wait(timeout=30) == 0
        second = [_line("B", i) for i in range(10, 20)]
        b.write(second)
        acked += second
        b.close()
    finally:
        a.kill()
        a.wait()
    lines = _lines(tmp_path / "events.jsonl")
    assert [line for line in lines if line["p"] == "A"] == []  # A's failed batch was rolled back whole
    assert [json.dumps(line).encode() + b"\n" for line in lines] == acked


def test_a_peer_holding_the_file_lock_delays_a_batch_boundedly_and_the_loss_is_counted(tmp_path: Path) -> None:
    """FMT-81/FMT-84: a peer that hangs while holding the file's lock never hangs the writer: each attempt waits
    at most ``lock_timeout``, the batch is retried and then counted in ``dropped_after_errors``; once the peer is
    gone the next batches are written."""
    holder = _child(LOCK_HOLDER, str(tmp_path / "events.jsonl"))
    destination = JsonlFileDestination(tmp_path, "events.jsonl")
    destination.lock_timeout = 0.1
    writer = BoundedWriter(destination, name="atof.sinks[0]", max_attempts=2, backoff_initial=0.01,
                           backoff_max=0.01).start()
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        for i in range(5):
            writer.submit(_line("B", i))
        assert writer.flush(20)
        assert time.monotonic() - started < 10
        stats = writer.stats()
        assert stats["dropped_after_errors"] == 5 and stats["written"] == 0 and stats["retries"] == 1
        holder.stdin.write("release\n")
        holder.stdin.flush()
        assert holder.wait(timeout=30) == 0
        for i in range(5, 8):
            writer.submit(_line("B", i))
        assert writer.flush(20)
        assert writer.stats()["written"] == 3
    finally:
        writer.close(5)
        holder.kill()
        holder.wait()
    assert [line["i"] for line in _lines(tmp_path / "events.jsonl")] == [5, 6, 7]


def test_concurrent_appenders_with_failing_batches_keep_every_acknowledged_line_once(tmp_path: Path) -> None:
    """FMT-35/FMT-37: three processes append concurrently, each failing every third batch part-way; the file
    holds exactly the lines each process acknowledged, each once, and nothing torn or glued."""
    children = [_child(FLAKY_APPENDER, str(tmp_path), "events.jsonl", name, "30") for name in ("P", "Q", "R")]
    try:
        for child in children:
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        acked: list[str] = []
        for child in children:
            out, err = child.communicate(timeout=120)
            assert child.returncode == 0, err
            acked += json.loads(out.strip().splitlines()[-1])
    finally:
        for child in children:
            child.kill()
            child.wait()
    found = [f"{line['p']}:{line['b']}:{line['i']}" for line in _lines(tmp_path / "events.jsonl")]
    assert len(acked) == 3 * 20 * 8  # 20 of each process's 30 batches succeed
    assert sorted(found) == sorted(acked)
