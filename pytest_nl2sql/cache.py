"""An on-disk cache of loaded suites, keyed on the suite's path and bytes.

Loading a large suite is the slowest part of collection, and under xdist every worker
collects the same files. A suite whose bytes did not change is read back from a pickle
instead. Entries are written to a temporary file and moved into place (``os.replace``), so a
concurrent reader sees a whole entry or none; a broken entry is ignored and rewritten.

The folder is ``$NL2SQL_CACHE_DIR``, else ``$XDG_CACHE_HOME/pytest-nl2sql``, else
``~/.cache/pytest-nl2sql``; ``NL2SQL_CACHE_DIR=off`` disables the cache.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from pathlib import Path
from typing import Any

from . import __version__

__all__ = ["cache_dir", "get", "key", "put"]

_FORMAT = 1


def cache_dir() -> Path | None:
    value = os.environ.get("NL2SQL_CACHE_DIR")
    if value == "off":
        return None
    if value:
        return Path(value)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pytest-nl2sql"


def key(path: str, digest: str, *extra: Any) -> str:
    raw = "\0".join([__version__, str(_FORMAT), os.path.abspath(path), digest, *map(str, extra)])
    return hashlib.sha256(raw.encode()).hexdigest()


def get(name: str) -> Any:
    folder = cache_dir()
    if folder is None:
        return None
    try:
        with open(folder / f"{name}.pickle", "rb") as fh:
            return pickle.load(fh)
    except Exception:  # a missing, partial or stale entry is only a miss
        return None


def put(name: str, value: Any) -> None:
    folder = cache_dir()
    if folder is None:
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".pickle")
        try:
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, folder / f"{name}.pickle")
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError:
        return  # a read-only home is not an error: the cache is an optimisation
