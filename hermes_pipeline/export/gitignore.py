"""Keeping the stores out of git (spec 06 BOOK-34), for the trajectory store and the observability store alike.

When ``$HERMES_HOME`` is inside a git work tree, ``$HERMES_HOME/.gitignore`` gets the store's line
(``trajectories/``, ``observability/``; appended once, other lines never rewritten), and :func:`tracked_store_files` lists store files
git already tracks (which ``doctor`` reports as errors).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

__all__ = ["ensure_gitignore", "git_work_tree", "tracked_store_files"]


def git_work_tree(path: Path) -> Path | None:
    """The top of the git work tree containing ``path``, or ``None`` (no git, or not in a work tree)."""
    current = path.resolve()
    for candidate in (current, *current.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def ensure_gitignore(home: Path, entry: str = "trajectories/") -> bool:
    """Append ``entry`` to ``home/.gitignore`` when ``home`` is inside a git work tree and the line is
    not there yet. Returns whether the file was changed."""
    if git_work_tree(home) is None:
        return False
    path = home / ".gitignore"
    try:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
    except OSError:
        return False
    wanted = entry.rstrip("/")
    if any(line.strip().rstrip("/") in (wanted, "/" + wanted) for line in text.splitlines()):
        return False
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(("" if not text or text.endswith("\n") else "\n") + entry + "\n")
    return True


def tracked_store_files(home: Path, directory: Path) -> list[str]:
    """Files under ``directory`` that git tracks in the work tree of ``home`` (empty without git)."""
    top = git_work_tree(home)
    git = shutil.which("git")
    if top is None or git is None or not directory.exists():
        return []
    try:
        done = subprocess.run([git, "-C", str(top), "ls-files", "--", str(directory.resolve())],
                              capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return []
    return [line for line in done.stdout.splitlines() if line.strip()]
