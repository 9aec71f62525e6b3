#!/usr/bin/env python3
"""Which requirement ids the tests cite, which are documented as not applicable, which are missing.

Reads three things and prints, per id family (OBS, MW, CFG, FMT, SM, BOOK), the total, the ids
cited by the tests, the ids listed in ``docs/requirements-not-applicable.md`` and the ids that are
in neither:

- the requirement ids, from the specification (``--spec DIR``, default ``$HERMES_PIPELINE_SPEC``,
  else ``shared/spec`` next to the repository or next to the local repository it was cloned from:
  every ``**XXX-n**`` definition in its ``*.md`` files) or, when that directory is absent, from the checked-in list ``docs/requirement-ids.txt`` (``--ids FILE``; regenerate it
  with ``--write-ids`` while the specification is present);
- the ids cited in ``tests/`` (any ``XXX-n`` in a ``.py`` file; a range such as ``SM-46..52``
  cites only its first id, so that ``grep -r SM-48 tests/`` always finds the proof);
- the ids listed in ``docs/requirements-not-applicable.md``: every list item that starts with an
  id, grouped by the ``##`` heading it sits under.

``--json`` prints the same as one JSON object. ``--family SM`` restricts the output. Exit status
is 0; with ``--check`` it is 1 when an id of a checked family (all but BOOK by default) is missing.
Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

FAMILIES = ("OBS", "MW", "CFG", "FMT", "SM", "BOOK")
CHECKED_FAMILIES = ("OBS", "MW", "CFG", "FMT", "SM")

REPO = Path(__file__).resolve().parent.parent
SPEC_ENV = "HERMES_PIPELINE_SPEC"


def spec_candidates(repo: Path = REPO) -> list[Path]:
    """Where the specification may be, in order: ``$HERMES_PIPELINE_SPEC``; ``shared/spec`` beside the
    checkout; for a clone of a local repository, ``shared/spec`` beside that repository (the specification is
    not in the repository, it is kept beside it)."""
    found = [Path(os.environ[SPEC_ENV])] if os.environ.get(SPEC_ENV) else []
    found.append(repo.parent / "shared" / "spec")
    origin = _local_origin(repo)
    if origin is not None:
        found.append(origin.parent / "shared" / "spec")
    return found


def _local_origin(repo: Path) -> Path | None:
    """The directory of the ``origin`` remote when it is a local path (``/x/y`` or ``file:///x/y``), else None."""
    try:
        config = (repo / ".git" / "config").read_text(encoding="utf-8")
    except OSError:
        return None  # not a clone (a worktree's .git is a file; its parent directory was tried already)
    match = re.search(r'\[remote "origin"\][^\[]*?^\s*url\s*=\s*(\S+)', config, re.M | re.S)
    if match is None:
        return None
    url = match.group(1).removeprefix("file://")
    if not url.startswith("/"):
        return None
    return Path(url).resolve()


def find_spec(repo: Path = REPO) -> Path:
    """The first candidate directory holding the specification's ``*.md`` files, else the first candidate."""
    candidates = spec_candidates(repo)
    for path in candidates:
        if path.is_dir() and any(path.glob("*.md")):
            return path
    return candidates[0]


DEFAULT_SPEC = find_spec()
DEFAULT_IDS = REPO / "docs" / "requirement-ids.txt"
DEFAULT_TESTS = REPO / "tests"
DEFAULT_NOT_APPLICABLE = REPO / "docs" / "requirements-not-applicable.md"

_FAMILY_RE = "|".join(FAMILIES)
# A definition in the specification: "- **OBS-12** (MUST) ...".
_DEFINITION = re.compile(rf"\*\*((?:{_FAMILY_RE})-\d+)\*\*")
# A citation anywhere: "OBS-12", not "XOBS-12" and not "OBS-123" when looking for OBS-12.
_CITATION = re.compile(rf"(?<![A-Za-z0-9_])((?:{_FAMILY_RE})-\d+)(?!\d)")
# A documented exclusion: a list item that starts with an id ("- OBS-30 ...", "- **OBS-30** ...").
_LISTED = re.compile(rf"^\s*[-*]\s+\**`?((?:{_FAMILY_RE})-\d+)")
_HEADING = re.compile(r"^#{2,}\s+(.*\S)\s*$")


def family_of(req_id: str) -> str:
    """The family of an id: ``"SM"`` for ``"SM-12"``."""
    return req_id.split("-", 1)[0]


def sort_key(req_id: str) -> tuple[int, int]:
    """Order ids by family (in ``FAMILIES`` order), then by number."""
    fam, _, num = req_id.partition("-")
    return (FAMILIES.index(fam) if fam in FAMILIES else len(FAMILIES), int(num))


def spec_ids(spec_dir: Path) -> dict[str, str]:
    """Every id defined in ``spec_dir/*.md``, mapped to the name of the file that defines it."""
    found: dict[str, str] = {}
    for path in sorted(spec_dir.glob("*.md")):
        for match in _DEFINITION.finditer(path.read_text(encoding="utf-8")):
            found.setdefault(match.group(1), path.name)
    return found


def spec_rules(spec_dir: Path) -> dict[str, str]:
    """The text of each definition line in ``spec_dir/*.md`` (for ``--show``)."""
    rules: dict[str, str] = {}
    for path in sorted(spec_dir.glob("*.md")):
        for line in path.read_text(encoding="utf-8").splitlines():
            match = _DEFINITION.search(line)
            if match and match.group(1) not in rules:
                rules[match.group(1)] = line.strip()
    return rules


def listed_ids_file(path: Path) -> dict[str, str]:
    """The checked-in id list: one id a line, optionally followed by the defining file's name."""
    found: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        req_id, _, source = line.partition(" ")
        found[req_id] = source.strip()
    return found


def cited_ids(tests_dir: Path) -> dict[str, list[str]]:
    """Every id cited in a ``.py`` file under ``tests_dir``, mapped to the files citing it."""
    found: dict[str, list[str]] = {}
    for path in sorted(tests_dir.rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        rel = path.relative_to(tests_dir.parent).as_posix() if tests_dir.parent in path.parents else str(path)
        for req_id in sorted(set(_CITATION.findall(text)), key=sort_key):
            found.setdefault(req_id, []).append(rel)
    return found


def not_applicable_ids(doc: Path) -> dict[str, str]:
    """Every id that starts a list item in ``doc``, mapped to the heading it is listed under."""
    found: dict[str, str] = {}
    if not doc.is_file():
        return found
    heading = ""
    for line in doc.read_text(encoding="utf-8").splitlines():
        head = _HEADING.match(line)
        if head:
            heading = head.group(1)
            continue
        match = _LISTED.match(line)
        if match:
            found.setdefault(match.group(1), heading)
    return found


@dataclass
class FamilyReport:
    """The figures of one family."""

    family: str
    total: list[str] = field(default_factory=list)
    cited: list[str] = field(default_factory=list)
    not_applicable: dict[str, list[str]] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    cited_and_listed: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, object]:
        listed = sorted({i for ids in self.not_applicable.values() for i in ids}, key=sort_key)
        return {
            "total": len(self.total),
            "cited": len(self.cited),
            "not_applicable": len(listed),
            "missing": len(self.missing),
            "missing_ids": self.missing,
            "not_applicable_ids": self.not_applicable,
            "cited_and_listed_ids": self.cited_and_listed,
        }


def build_report(
    ids: Iterable[str], cited: Iterable[str], listed: dict[str, str], families: Sequence[str] = FAMILIES
) -> dict[str, FamilyReport]:
    """Classify ``ids`` per family: cited by a test, else listed in the doc, else missing."""
    cited_set = set(cited)
    reports = {fam: FamilyReport(fam) for fam in families}
    for req_id in sorted(set(ids), key=sort_key):
        report = reports.get(family_of(req_id))
        if report is None:
            continue
        report.total.append(req_id)
        if req_id in cited_set:
            report.cited.append(req_id)
            if req_id in listed:
                report.cited_and_listed.append(req_id)
        elif req_id in listed:
            report.not_applicable.setdefault(listed[req_id] or "(no heading)", []).append(req_id)
        else:
            report.missing.append(req_id)
    return reports


def unknown_ids(ids: Iterable[str], cited: Iterable[str], listed: Iterable[str]) -> list[str]:
    """Ids cited by tests or listed in the doc that the specification does not define."""
    known = set(ids)
    return sorted((set(cited) | set(listed)) - known, key=sort_key)


def load_ids(spec: Path, ids_file: Path) -> tuple[dict[str, str], str]:
    """The requirement ids and where they came from: the specification if present, else the list."""
    if spec.is_dir() and any(spec.glob("*.md")):
        return spec_ids(spec), str(spec)
    if ids_file.is_file():
        return listed_ids_file(ids_file), str(ids_file)
    raise SystemExit(f"no specification at {spec} and no id list at {ids_file}; pass --spec or --ids")


def write_ids(spec: Path, ids_file: Path) -> int:
    """Write the checked-in id list from the specification."""
    found = spec_ids(spec)
    if not found:
        raise SystemExit(f"no requirement ids found under {spec}")
    lines = [
        "# Requirement ids of the specification, one a line, with the file that defines each.",
        "# Generated by scripts/requirements_coverage.py --write-ids; used when the spec is absent.",
    ]
    lines += [f"{req_id} {found[req_id]}" for req_id in sorted(found, key=sort_key)]
    ids_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(found)} ids to {ids_file}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--spec", type=Path, default=DEFAULT_SPEC, help="directory of the specification's *.md files")
    parser.add_argument("--ids", type=Path, default=DEFAULT_IDS, help="checked-in id list, used when --spec is absent")
    parser.add_argument("--tests", type=Path, default=DEFAULT_TESTS, help="directory of the tests")
    parser.add_argument(
        "--not-applicable", type=Path, default=DEFAULT_NOT_APPLICABLE, help="document listing excluded ids"
    )
    parser.add_argument("--family", action="append", choices=FAMILIES, help="only this family (repeatable)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--show", action="store_true", help="print the rule text of each missing id (needs --spec)")
    parser.add_argument("--check", action="store_true", help="exit 1 if an id of OBS, MW, CFG, FMT or SM is missing")
    parser.add_argument("--write-ids", action="store_true", help="regenerate the checked-in id list from --spec")
    args = parser.parse_args(argv)

    if args.write_ids:
        return write_ids(args.spec, args.ids)

    ids, source = load_ids(args.spec, args.ids)
    cited = cited_ids(args.tests)
    listed = not_applicable_ids(args.not_applicable)
    families = tuple(args.family) if args.family else FAMILIES
    reports = build_report(ids, cited, listed, families)
    unknown = unknown_ids(ids, cited, listed)
    rules = spec_rules(args.spec) if args.show and args.spec.is_dir() else {}

    if args.json:
        out = {
            "ids_from": source,
            "families": {fam: rep.as_json() for fam, rep in reports.items()},
            "unknown_ids": unknown,
        }
        print(json.dumps(out, indent=2))
    else:
        print(f"requirement ids from {source}")
        print(f"{'family':<7} {'total':>5} {'cited':>6} {'n/a':>5} {'missing':>8}")
        for fam, rep in reports.items():
            na = sum(len(v) for v in rep.not_applicable.values())
            print(f"{fam:<7} {len(rep.total):>5} {len(rep.cited):>6} {na:>5} {len(rep.missing):>8}")
        for fam, rep in reports.items():
            if rep.missing:
                print(f"\n{fam} missing ({len(rep.missing)}):")
                for req_id in rep.missing:
                    print(f"  {rules.get(req_id, req_id)}" if rules else f"  {req_id}")
            if rep.cited_and_listed:
                print(f"\n{fam} both cited and listed as not applicable: {', '.join(rep.cited_and_listed)}")
        if unknown:
            print(f"\nids not defined by the specification: {', '.join(unknown)}")

    if args.check:
        return int(any(reports[f].missing for f in CHECKED_FAMILIES if f in reports))
    return 0


if __name__ == "__main__":
    sys.exit(main())
