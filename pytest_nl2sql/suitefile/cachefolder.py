"""The cache folder: where the suite cache and the remembered verdicts live, and whether a run
can use it. Only the standard library here: the controller of an xdist run asks before it
imports the rest of the pipeline (plugin/under_xdist.py, "Starting")."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_dir", "cache_problem", "cache_warning"]


def cache_dir() -> Path | None:
    value = os.environ.get("NL2SQL_CACHE_DIR")
    if value == "off":
        return None
    if value:
        return Path(value)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pytest-nl2sql"


def cache_problem(folder: Path | None) -> str | None:
    """Why ``folder`` cannot hold the cache (not a folder, cannot be made, not writable), or
    None: it can (or the cache is off). Made here when missing, as a first write would."""
    if folder is None:
        return None
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:  # a file (or a link to one): mkdir(exist_ok=True) accepts only a folder
        return "is not a folder"
    except OSError as exc:
        return f"cannot be made ({exc.strerror or exc})"
    if not os.access(folder, os.W_OK | os.X_OK):
        return "is not writable"
    return None


def cache_warning(folder: Path | None) -> str | None:
    """The line a run that cannot use its cache folder says once, or None."""
    problem = cache_problem(folder)
    if problem is None:
        return None
    named = "NL2SQL_CACHE_DIR" if os.environ.get("NL2SQL_CACHE_DIR") else "the default cache folder; NL2SQL_CACHE_DIR moves it"
    return (
        f"pytest-nl2sql: the cache folder {folder} ({named}) {problem}: every run reads its suites' YAML "
        "and checks every SQL text again (cold); set NL2SQL_CACHE_DIR to a folder you can write, "
        "or NL2SQL_CACHE_DIR=off to run without a cache"
    )
