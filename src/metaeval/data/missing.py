"""The cell texts that mean a missing score, shared by the row-wise and the column-wise readers."""
from __future__ import annotations

MISSING_TOKENS = frozenset({"", "nan", "none", "null", "na", "n/a"})
"""Cell texts (compared case-insensitively, surrounding blanks ignored) that mean a missing score."""
