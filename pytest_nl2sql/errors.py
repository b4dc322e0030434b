"""Errors a user sees. Each says where, which case, what is wrong and what would be right."""

from __future__ import annotations

import attrs

__all__ = ["LockTimeout", "Nl2sqlError", "Problem", "SuiteError", "UnknownRole"]


class Nl2sqlError(Exception):
    """Base class of every error this package raises on purpose."""


class UnknownRole(Nl2sqlError, KeyError):
    """A role ``nl2sql.yaml`` does not define; the message names the known ones. (A KeyError
    too, for callers that catch one, but shown as its message, not a repr.)"""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown role"


class LockTimeout(Nl2sqlError):
    """Another process held a file's write lock for longer than we were willing to wait."""


@attrs.frozen
class Problem:
    """One thing wrong in a suite file. ``line``/``column`` are 1-based; 0 means unknown."""

    path: str
    line: int
    column: int
    message: str
    case_id: str | None = None

    def __str__(self) -> str:
        where = self.path
        if self.line:
            where += f":{self.line}:{self.column or 1}"
        case = f"case '{self.case_id}': " if self.case_id else ""
        return f"{where}: {case}{self.message}"


class SuiteError(Nl2sqlError):
    """A suite file that cannot be used; carries every problem found in it, in file order."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = sorted(problems, key=lambda p: (p.line, p.column))
        super().__init__("\n".join(str(p) for p in self.problems))

    @property
    def first(self) -> Problem:
        return self.problems[0]
