"""A profile file that stops answering (a FIFO stands in for a hung NFS file) or is oversized never stalls the
agent's thread: the store's probes and the context snapshot skip it at once with one warning naming it
(spec 06 OBS-15 fail-open, BOOK-22 memory rows, BOOK-29 context snapshot; fault review D3).

Each case runs the real host API in a child process with a generous bound: a hang is a timeout, not a stuck run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

CHILD = textwrap.dedent("""\
    import logging, os, sys, time
    from pathlib import Path
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(message)s")
    from hermes_pipeline.profile import open_profile
    variant, home = sys.argv[1], Path(sys.argv[2])
    home.mkdir(parents=True)
    (home / "config.yaml").write_text("observability:\\n  audit: {enabled: true}\\n", encoding="utf-8")
    skill = home / "skills" / "pdf-tools"
    (skill / "references").mkdir(parents=True)
    (skill / "SKILL.md").write_text("# pdf\\n", encoding="utf-8")
    (skill / "references" / "big.md").write_text("ref\\n", encoding="utf-8")
    (home / "memories").mkdir()
    (home / "memories" / "MEMORY.md").write_text("a fact\\n", encoding="utf-8")
    profile = open_profile(home)
    host = profile.host(platform="cli", model="m", provider="p")
    profile.consumers["observability_store"].flush(5)
    kind, where = variant.split(":")
    target = home / where
    target.unlink()
    if kind == "fifo":
        os.mkfifo(target)
    else:  # sparse: 9 MiB on no disk
        with open(target, "wb") as fh:
            fh.truncate(9 * 1024 * 1024 if where != "config.yaml" else 2 * 1024 * 1024)
    start = time.monotonic()
    if where == "memories/MEMORY.md":
        name, args = "memory", {"action": "add", "target": "memory", "content": "new fact"}
    else:
        name, args = "skill_manage", {"action": "patch", "name": "pdf-tools", "old_text": "# pdf", "new_text": "x"}
    with host.session() as session, session.turn("go") as turn:
        turn.call_tool(name, args, lambda **kw: '{"success": true}', tool_call_id="call-1")
        turn.complete("done")
    snapshot = host.context_snapshot(home)
    print(f"RETURNED {time.monotonic() - start:.3f} skills={len(snapshot.get('skills', []))}", flush=True)
    os._exit(0)
""")

CASES = ["fifo:config.yaml", "fifo:memories/MEMORY.md", "big:config.yaml", "big:memories/MEMORY.md",
         "big:skills/pdf-tools/references/big.md", "big:skills/pdf-tools/SKILL.md"]


@pytest.mark.parametrize("variant", CASES)
def test_a_profile_file_that_hangs_or_is_huge_is_skipped_at_once_with_a_warning(tmp_path: Path, variant: str) -> None:
    """OBS-15 / BOOK-29: ``turn.call_tool`` (the store's probe on ``pre_tool_call``) and ``Host.context_snapshot``
    return promptly when ``variant``'s file is a FIFO or larger than the cap, and a warning names the file."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OTEL_"))}
    env.update(HOME=str(tmp_path / "user"), XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    try:
        proc = subprocess.run([sys.executable, "-c", CHILD, variant, str(tmp_path / "home")], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{variant}: the host call hung (killed after 60 s)")
    returned = [line for line in proc.stdout.splitlines() if line.startswith("RETURNED")]
    assert returned, proc.stderr[-2000:]
    assert float(returned[0].split()[1]) < 10.0
    name = variant.split(":")[1].rsplit("/", 1)[-1]
    warnings = [line for line in proc.stderr.splitlines() if name in line and ("FIFO" in line or "too large" in line)]
    assert warnings, proc.stderr[-2000:]
    if variant == "big:skills/pdf-tools/SKILL.md":
        assert "skills=0" in returned[0]  # a skill whose SKILL.md is not read is left out of the snapshot
