"""The bridge's entry point never waits on ``config.yaml`` (spec 06 OBS-15 fail-open; fault review D5): a FIFO
(a hung NFS file), an oversized or a too-deep file gives one warning naming the file at once, and Hermes runs on."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

CHILD = textwrap.dedent("""\
    import logging, sys, time
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(message)s")

    class Ctx:
        def __getattr__(self, name):
            return lambda *a, **k: None

    import hermes_pipeline.hermes as bridge
    start = time.monotonic()
    bridge.register(Ctx())
    print(f"RETURNED {time.monotonic() - start:.3f}", flush=True)
""")


@pytest.mark.parametrize(("shape", "said"), [("fifo", "is a named pipe (FIFO); expected a regular file"),
                                             ("huge", "is too large"), ("deep", "nesting too deep")])
def test_register_warns_at_once_about_an_unreadable_config_yaml(tmp_path: Path, shape: str, said: str) -> None:
    """OBS-15: ``register(ctx)`` returns within the bound and a warning names ``config.yaml`` and why."""
    home = tmp_path / "home"
    home.mkdir()
    config = home / "config.yaml"
    if shape == "fifo":
        os.mkfifo(config)
    elif shape == "huge":
        with open(config, "wb") as fh:
            fh.truncate(2 * 1024 * 1024)
    else:
        config.write_text("plugins: " + "[" * 50_000 + "]" * 50_000 + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OTEL_"))}
    env.update(HERMES_HOME=str(home), HOME=str(tmp_path / "user"), XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    try:
        proc = subprocess.run([sys.executable, "-c", CHILD], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("register(ctx) hung on config.yaml (killed after 60 s)")
    assert proc.returncode == 0, proc.stderr[-1500:]
    returned = [line for line in proc.stdout.splitlines() if line.startswith("RETURNED")]
    assert returned and float(returned[0].split()[1]) < 10.0
    assert any(str(config) in line and said in line for line in proc.stderr.splitlines()), proc.stderr[-1500:]
