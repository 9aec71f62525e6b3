"""Regenerate what is derived from other files of this checkout, in one command:

    python scripts/regenerate.py          # write
    python scripts/regenerate.py --check  # exit 1 (and list the files) when anything is out of date

- ``hermes_pipeline/config/templates/``: the examples of ``pipelines/`` (except ``demo.toml``, which is
  the demo's own ``hermes_pipeline/demo/pipeline.toml``), packaged so that ``hermes-pipeline config init
  --template NAME`` works from an installed wheel;
- ``docs/configuration.md``: the configuration reference (``python -m hermes_pipeline.cli.docgen``).

Tests fail while either is out of date.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PIPELINES = ROOT / "pipelines"
TEMPLATES = ROOT / "hermes_pipeline" / "config" / "templates"
DOC = ROOT / "docs" / "configuration.md"
SUFFIXES = (".toml", ".yaml", ".yml")


def wanted() -> dict[Path, str]:
    """Every derived file → the text it should have (``""`` for a file that should not exist)."""
    sys.path.insert(0, str(ROOT))
    from hermes_pipeline.cli import docgen

    problems = docgen.undocumented()
    if problems:
        raise SystemExit("docs/configuration.md cannot be generated:\n" + "\n".join(problems))
    out = {DOC: docgen.render()}
    sources = {p.name: p for p in PIPELINES.iterdir() if p.suffix in SUFFIXES and p.name != "demo.toml"}
    for name, path in sources.items():
        out[TEMPLATES / name] = path.read_text(encoding="utf-8")
    for copy in TEMPLATES.iterdir():
        if copy.suffix in SUFFIXES and copy.name not in sources:
            out[copy] = ""
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only report out-of-date files (exit 1)")
    args = parser.parse_args(argv)
    stale = []
    for path, text in wanted().items():
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if current == text:
            continue
        stale.append(path)
        if args.check:
            continue
        if text:
            path.write_text(text, encoding="utf-8")
        else:
            path.unlink()
    for path in stale:
        print(f"{'out of date' if args.check else 'wrote'}: {path.relative_to(ROOT)}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
