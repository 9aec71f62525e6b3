"""The benches' figures in one file, ``bench/RESULTS.md``: one section per bench, each dated.

Figures are never pasted into the README or the docs; a bench run with ``--write-results`` replaces its own
section of ``RESULTS.md`` with what it printed, stamped with the date and the machine, and leaves every other
section byte for byte as it was (so that sections added by hand, or by another bench meanwhile, merge
cleanly). A section is ``## <bench module name>`` (``## bench_exporters``) up to the next such heading;
headings inside fenced code blocks do not count.

    python bench/bench_tool_path.py --quick --write-results

In a bench: ``sys.exit(run_with_results("bench_tool_path", main))`` in place of ``sys.exit(main())``.
"""

from __future__ import annotations

import datetime as _dt
import io
import os
import platform
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
"""Where the figures are kept."""

FLAG = "--write-results"
"""The command-line flag that makes a bench write its section (removed before the bench parses its arguments)."""

HEADER = """\
# Benchmark results

The figures measured by the benches in `bench/` (what each one measures and how to read it:
[docs/benchmarks.md](../docs/benchmarks.md)). One section per bench, named for its module; each section says
when and on what machine it was measured. `python bench/<bench>.py --write-results` replaces that bench's
section with the figures of the run (`bench/_results.py`); a section added by hand keeps the same form.
"""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HEADING = re.compile(r"^## (\S+)\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def machine() -> str:
    """What the figures were measured on: CPU count, architecture, system, Python (no host name) and the load
    average of the last minute when the system reports one (on a shared machine it says how far to trust them)."""
    try:
        load = f", load average {os.getloadavg()[0]:.1f}"
    except (AttributeError, OSError):
        load = ""
    return (f"{os.cpu_count() or '?'} CPUs {platform.machine() or '?'}, {platform.system()} {platform.release()}, "
            f"{platform.python_implementation()} {platform.python_version()}{load}")


def split_sections(text: str) -> tuple[str, dict[str, str]]:
    """``text`` as its preamble and its sections (name → the section's text, heading included), in order.

    A heading is a line ``## <name>`` outside a fenced code block. Raises ``ValueError`` naming the section
    when a name appears twice (the file would be ambiguous to rewrite).
    """
    preamble: list[str] = []
    sections: dict[str, list[str]] = {}
    current: list[str] = preamble
    fenced = False
    for line in text.splitlines(keepends=True):
        if _FENCE.match(line):
            fenced = not fenced
        match = None if fenced else _HEADING.match(line.rstrip("\n"))
        if match:
            name = match.group(1)
            if name in sections:
                raise ValueError(f"{RESULTS.name}: section '## {name}' appears twice")
            current = sections[name] = []
        current.append(line)
    return "".join(preamble), {name: "".join(lines) for name, lines in sections.items()}


def render_section(name: str, markdown: str, *, when: _dt.date, on: str) -> str:
    """The text of section ``name``: its heading, the date and machine line, then ``markdown``.

    Raises ``ValueError`` when ``name`` is not a module name, or when ``markdown`` holds a ``## `` heading of
    its own outside a code block (it would split the section in two when the file is read back).
    """
    if not _NAME.fullmatch(name):
        raise ValueError(f"bench section name {name!r} is not a module name")
    body = markdown.strip("\n")
    if split_sections(body)[1]:
        raise ValueError(f"the figures of {name} contain a '## ' heading; use '###' inside a section")
    return f"## {name}\n\n_Measured {when.isoformat()} on {on}._\n\n{body}\n\n"


def write_section(name: str, markdown: str, *, path: Path | None = None, when: _dt.date | None = None,
                  on: str | None = None) -> Path:
    """Replace bench ``name``'s section of ``path`` with ``markdown``, stamped with the date and machine.

    A bench without a section gets one, placed in the alphabetical order of the names; the preamble and
    every other section are kept as they were. The file is created with its header when missing, and
    replaced atomically (a reader never sees half of it). ``path`` defaults to :data:`RESULTS`.
    """
    path = RESULTS if path is None else path
    section = render_section(name, markdown, when=when or _dt.date.today(), on=on or machine())
    text = path.read_text(encoding="utf-8") if path.exists() else HEADER
    preamble, sections = split_sections(text)
    if not preamble.endswith("\n\n"):
        preamble = preamble.rstrip("\n") + "\n\n"
    sections = {key: value if value.endswith("\n\n") else value.rstrip("\n") + "\n\n"
                for key, value in sections.items()}
    if name in sections:
        sections[name] = section
    else:
        sections = dict(sorted({**sections, name: section}.items()))
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text((preamble + "".join(sections.values())).rstrip("\n") + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


class _Tee(io.TextIOBase):
    """Writes to the terminal and keeps a copy."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.copy = io.StringIO()

    def write(self, text: str) -> int:
        self.copy.write(text)
        return self.out.write(text)

    def flush(self) -> None:
        self.out.flush()


def run_with_results(name: str, main: Callable[[], int | None], argv: list[str] | None = None) -> int:
    """Run a bench's ``main()``; with ``--write-results`` among its arguments, also write what it printed
    as its section of ``RESULTS.md`` (the flag is removed before ``main`` parses the arguments).

    Nothing is written when the bench fails (a non-zero exit or an exception), so a section always holds
    the figures of a whole run.
    """
    args = sys.argv if argv is None else argv
    if FLAG not in args[1:]:
        return int(main() or 0)
    args[:] = [arg for arg in args if arg != FLAG]
    tee = _Tee(sys.stdout)
    sys.stdout = tee  # type: ignore[assignment]
    try:
        code = int(main() or 0)
    finally:
        sys.stdout = tee.out
    if code == 0:
        command = " ".join(["python", f"bench/{name}.py", *args[1:]])
        printed = tee.copy.getvalue().rstrip("\n").replace("```", "'''")
        path = write_section(name, f"`{command}`\n\n```\n{printed}\n```")
        print(f"{name}: figures written to {path}", file=sys.stderr)
    return code
