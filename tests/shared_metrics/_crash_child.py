"""Child process for the crash tests: counts and packages in a loop until it is killed.

Each iteration submits counter events through the real subscriber, waits for them to be
acknowledged (committed), reports ``ACK <total>`` on stdout, then forces a packaging and export run
(schema validation, transaction, atomic file write). The parent kills it with SIGKILL at a random
iteration.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta

from hermes_pipeline.shared_metrics import MetricsStore
from hermes_pipeline.shared_metrics import events as ev
from hermes_pipeline.shared_metrics.packages import package_and_export
from hermes_pipeline.shared_metrics.resource import Resource
from hermes_pipeline.shared_metrics.subscriber import Subscriber

PER_ROUND = 40


def _hold(point: str) -> None:
    """Announce that the process reached ``point`` and wait there until the parent kills it."""
    sys.stdout.write(f"AT {point}\n")
    sys.stdout.flush()
    sys.stdin.read()
    raise SystemExit("the parent should have killed this process")


def install_crash_point(point: str) -> None:
    """Stop inside the real packaging/export path at ``point`` (the second time it is reached)."""
    import os

    from hermes_pipeline.shared_metrics import packages

    seen = {"n": 0}

    def reached() -> bool:
        seen["n"] += 1
        return seen["n"] >= 2

    if point == "mid-write":
        real_write = os.write

        def write(fd: int, data: bytes) -> int:  # half of the temporary file, then stop
            if reached():
                real_write(fd, bytes(data[: max(len(data) // 2, 1)]))
                _hold(point)
            return real_write(fd, data)

        os.write = write  # the packages' atomic writes go through it
    elif point == "before-rename":
        real_replace = os.replace

        def replace(src: object, dst: object) -> None:
            if reached():
                _hold(point)
            real_replace(src, dst)  # type: ignore[arg-type]

        os.replace = replace  # type: ignore[assignment]
    elif point == "after-rename":
        real_atomic = packages.atomic_replace

        def atomic_replace(path: object, data: bytes) -> None:
            real_atomic(path, data)  # type: ignore[arg-type]  # renamed and the directory synced
            if reached():
                _hold(point)

        packages.atomic_replace = atomic_replace  # type: ignore[assignment]
    elif point == "in-transaction":
        real_validate = packages.validate_package

        def validate(payload: object, **kwargs: object) -> None:
            real_validate(payload, **kwargs)  # type: ignore[arg-type]
            if reached():
                _hold(point)

        packages.validate_package = validate  # type: ignore[assignment]
    else:
        raise SystemExit(f"unknown crash point {point!r}")


def main(home: str, point: str | None = None) -> None:
    if point:
        install_crash_point(point)
    store = MetricsStore(home)
    subscriber = Subscriber(store, "crash-runtime", Resource("0.1.0", "linux", "x86_64", "pip"))
    when = datetime(2026, 9, 1, 10, tzinfo=UTC)
    total = 0
    round_no = 0
    while True:
        round_no += 1
        for index in range(PER_ROUND):
            data = {"model": f"model-{round_no % 7}-{index}", "provider": "p", "duration_ms": 5}
            subscriber.submit(ev.scope_event(ev.MODEL_CALL, "end", ev.new_uuid(), when, "crash-runtime", data=data))
        if not subscriber.flush(30):
            raise SystemExit("flush timed out")
        total += PER_ROUND
        sys.stdout.write(f"ACK {total}\n")
        sys.stdout.flush()
        package_and_export(store, when + timedelta(seconds=round_no), force=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
