"""Whether a run gave every collected item a verdict.

The run's meta in the JSON report holds ``collected`` (how many nl2sql items the run
collected), ``missing`` (``[{"nodeid", "why"}]``: each item that got no verdict, with why:
``crashed``, ``never scheduled``, ``interrupted``, ``not run``) and ``complete`` (no item
missing). Every reader of a report says when it is incomplete; ``report gate``, ``report
merge`` and ``report compare`` refuse one unless ``--allow-incomplete``. A report without
``complete`` (written before it existed) is read as complete.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from pytest_nl2sql.safetext import one_line

__all__ = ["incomplete_line", "is_complete", "missing_nodeids"]


def is_complete(run: Mapping[str, Any]) -> bool:
    return run.get("complete", True) is not False


def missing_nodeids(run: Mapping[str, Any]) -> list[str]:
    return [str(m.get("nodeid")) for m in run.get("missing") or [] if isinstance(m, Mapping)]


def incomplete_line(run: Mapping[str, Any]) -> str | None:
    """One line saying what the run lost, or None for a complete run."""
    if is_complete(run):
        return None
    missing = [m for m in run.get("missing") or [] if isinstance(m, Mapping)]
    whys = Counter(str(m.get("why") or "no verdict").split(":")[0] for m in missing)
    collected = run.get("collected")
    of = f" of {collected}" if isinstance(collected, int) else ""
    return one_line(
        f"INCOMPLETE RUN: {len(missing)}{of} items got no verdict ("
        + ", ".join(f"{n} {why}" for why, n in sorted(whys.items()))
        + "); the figures cover only the items that ran"
    )
