"""Every output of a run is written on its own.

An output that cannot be written (a read-only folder, a full disk, past ``ulimit -f``, a path
naming a folder or a symlink loop, a lock that never came) is one line naming the option, the
path and the OS's reason; the other outputs are still written, the summary is still printed,
and pytest exits ``OUTPUT_ERROR`` (docs/plugin.md#exit-codes).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pytest_nl2sql.errors import Nl2sqlError

__all__ = ["OUTPUT_ERROR", "SERIES_BREAK", "write_output"]

#: pytest's exit code when an output (JSON, HTML, JUnit, the baseline) could not be written
OUTPUT_ERROR = 6
#: pytest's exit code when ``--nl2sql-compare BASE.json`` found a series break (a datasource's
#: schema fingerprint changed) and ``--nl2sql-allow-series-break`` was not given
SERIES_BREAK = 7


def write_output(what: str, path: Any, write: Callable[[], Any], errors: list[str]) -> bool:
    """Run ``write``; an OS error becomes one line in ``errors`` (module doc)."""
    try:
        write()
    except (OSError, RuntimeError, Nl2sqlError) as exc:  # RuntimeError: a symlink loop (Path.resolve)
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        errors.append(f"nl2sql: cannot write {what} {path}: {reason}")
        return False
    return True
