"""How a database's error reads for a restricted role: whether it is the database refusing a
read (``access_denied``), and its text cut where the database starts suggesting names
(``without_suggestions``). Re-exported by ``engine/validator.py``."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["access_denied", "without_suggestions"]

_DENIED_WORDS = ("not authorized", "prohibited", "permission denied")


def access_denied(error: Any) -> bool:
    """Whether a query error is the database refusing a read for a role.

    SQLite's authorizer fails a statement with "not authorized" or "access to T.C is
    prohibited"; PostgreSQL's GRANTs with "permission denied for ...". An engine answers such
    an error for a restricted role with :data:`REFUSAL_MESSAGE`, never with the message
    (which may name the table and column).
    """
    text = str(getattr(error, "message", None) or error).lower()
    return any(word in text for word in _DENIED_WORDS)


# Where a database starts to suggest names it knows ("Did you mean "Secret"?", PostgreSQL's
# HINT, DuckDB's candidate bindings): such text would tell a restricted role what exists.
_SUGGESTION_RE = re.compile(
    r"did you mean|candidate bindings|perhaps you meant|maybe you meant|\bhint\b|similar names?",
    re.IGNORECASE,
)


def without_suggestions(text: str) -> str:
    """A database error for a restricted role: its first line, cut where the database starts
    suggesting names (``Did you mean``, ``HINT``, candidate bindings); never empty."""
    lines = [line for line in str(text).strip().splitlines() if line.strip()]
    first = lines[0] if lines else ""
    match = _SUGGESTION_RE.search(first)
    if match is not None:
        first = first[: match.start()].rstrip(" .:;,!?\n")
    return first or "the query failed on the database"
