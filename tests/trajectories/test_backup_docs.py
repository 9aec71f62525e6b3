"""BOOK-35: the operator documentation says that cloud backups of the trajectory directory must be encrypted, and
that trajectories leave the machine only through an explicitly configured ATIF ``storage`` destination."""

from __future__ import annotations

import re
from pathlib import Path

PRIVACY = Path(__file__).resolve().parents[2] / "docs" / "privacy.md"


def test_book_35_privacy_doc_states_backup_encryption_and_the_only_upload_path() -> None:
    """BOOK-35: both statements are in docs/privacy.md, in the trajectory store's section."""
    text = " ".join(PRIVACY.read_text(encoding="utf-8").split())
    assert re.search(r"back the trajectory directory up to a cloud service, the backup must be encrypted", text)
    assert re.search(r"uploads trajectories only through an explicitly configured ATIF `storage`", text)
