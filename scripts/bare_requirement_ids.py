#!/usr/bin/env python3
"""Find requirement ids that stand alone in the comments and docstrings of a source tree.

The specification is not in the repository, so a comment such as ``# MW-19`` or a docstring that
ends in ``(OBS-12)`` with nothing else tells a reader nothing: the rule must be said in words next
to the id. This script prints ``file:line: text`` for every comment, and every docstring line, in
which the words left after removing ids, section marks (``§8.2``), ``spec 05`` and punctuation are
fewer than ``--min-words`` (default 3). With ``--sections`` it also lists comments that cite a spec
section (``§`` or ``spec NN``).

    python scripts/bare_requirement_ids.py [hermes_pipeline] [--min-words 3] [--sections] [--count]

Standard library only; exit status 1 when something was found (0 otherwise).
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import sys
import tokenize
from collections.abc import Iterator, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ID = re.compile(r"(?<![A-Za-z0-9_])(?:OBS|MW|CFG|FMT|SM|BOOK)-\d+[a-z]?(?:\s*(?:\.\.|–|-)\s*(?:[A-Z]+-)?\d+[a-z]?)?")
SECTION = re.compile(r"(?:\bspec\s+\d+\b\s*)?§\s*\d+(?:\.\d+)*[a-z]?|\bspec\s+\d{2}\b|\b0\d\s+§?\d+(?:\.\d+)*\b")
WORD = re.compile(r"[A-Za-z][A-Za-z'_-]+")
NOISE = {"see", "and", "or", "per", "cf", "spec", "the", "also", "of", "in", "a", "an", "to", "rule", "rules",
         "choice", "alt", "alternative", "note", "only", "pragma", "no", "cover", "noqa", "type", "ignore"}


def remaining_words(text: str) -> list[str]:
    """The words of ``text`` once ids, section marks and filler words are removed."""
    stripped = SECTION.sub(" ", ID.sub(" ", text))
    return [w for w in WORD.findall(stripped) if w.lower() not in NOISE]


def comments(source: str) -> Iterator[tuple[int, str]]:
    """``(line, text)`` of every ``#`` comment."""
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                yield tok.start[0], tok.string.lstrip("#").strip()
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return


def docstring_lines(source: str) -> Iterator[tuple[int, str, str]]:
    """``(line, text, whole docstring)`` of every line of every module, class and function docstring."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = getattr(node, "body", [])
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                doc = body[0].value.value
                for offset, line in enumerate(doc.splitlines()):
                    yield body[0].lineno + offset, line.strip(), doc


def find(root: Path, min_words: int, sections: bool) -> Iterator[tuple[Path, int, str, str]]:
    """``(path, line, kind, text)`` of every bare id (and, with ``sections``, every section citation)."""
    for path in sorted(root.rglob("*.py")):
        source = path.read_text(encoding="utf-8", errors="replace")
        for line, text in comments(source):
            if ID.search(text) and len(remaining_words(text)) < min_words:
                yield path, line, "comment", text
            elif sections and SECTION.search(text):
                yield path, line, "section", text
        for line, text, doc in docstring_lines(source):
            if ID.search(text) and len(remaining_words(text)) < min_words and len(remaining_words(doc)) < min_words:
                yield path, line, "docstring", text


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("root", nargs="?", type=Path, default=REPO / "hermes_pipeline")
    parser.add_argument("--min-words", type=int, default=3, help="fewer words than this beside an id: bare")
    parser.add_argument("--sections", action="store_true", help="also list comments citing a spec section")
    parser.add_argument("--count", action="store_true", help="print only the number of findings per kind")
    args = parser.parse_args(argv)
    found = list(find(args.root, args.min_words, args.sections))
    if args.count:
        kinds: dict[str, int] = {}
        for *_, kind, _text in found:
            kinds[kind] = kinds.get(kind, 0) + 1
        print(" ".join(f"{k}={v}" for k, v in sorted(kinds.items())) or "none")
    else:
        for path, line, kind, text in found:
            rel = path.relative_to(REPO) if REPO in path.parents else path
            print(f"{rel}:{line}: [{kind}] {text}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
