"""The cost ledger: one budget for a whole run, shared by every xdist worker.

The controller creates the ledger file and hands its path to the workers; each LLM call
first asks ``may_spend()`` and afterwards ``add(cost)``, both under a file lock. Once the
budget is spent, remaining items skip. A call already in flight when the budget runs out
still counts, so the overspend is at most one call per worker.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from filelock import FileLock

__all__ = ["CostLedger"]


class CostLedger:
    def __init__(self, path: str | os.PathLike[str], cap: float | None) -> None:
        self.path = Path(path)
        self.cap = cap
        self._lock = FileLock(str(self.path) + ".lock", timeout=60)

    @classmethod
    def create(cls, cap: float | None) -> CostLedger:
        fd, path = tempfile.mkstemp(prefix="nl2sql-ledger-", suffix=".txt")
        with os.fdopen(fd, "w") as fh:
            fh.write("0\n0\n")
        return cls(path, cap)

    def _read(self) -> tuple[float, int]:
        try:
            spent, calls = self.path.read_text().split()[:2]
            return float(spent), int(calls)
        except (OSError, ValueError):
            return 0.0, 0

    def spent(self) -> float:
        with self._lock:
            return self._read()[0]

    def calls(self) -> int:
        with self._lock:
            return self._read()[1]

    def may_spend(self) -> bool:
        """False once the budget is used up (always True without a cap)."""
        if self.cap is None:
            return True
        with self._lock:
            return self._read()[0] < self.cap

    def add(self, cost: float) -> float:
        """Record one call's cost; return the run's total so far."""
        with self._lock:
            spent, calls = self._read()
            spent += float(cost or 0.0)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(f"{spent!r}\n{calls + 1}\n")
            os.replace(tmp, self.path)
            return spent

    def remove(self) -> None:
        for p in (self.path, Path(str(self.path) + ".lock")):
            try:
                p.unlink()
            except OSError:
                pass
