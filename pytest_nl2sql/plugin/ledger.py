"""The cost ledger: one budget for a whole run, shared by every xdist worker.

The controller creates the ledger file and hands its path to the workers; each item that may
cost money first asks ``may_spend()`` and afterwards ``add(cost)``, both under a file lock. Once
the budget is spent, remaining items skip. A call already in flight when the budget runs out
still counts, so the overspend is at most one call per worker.

With concurrency (``--nl2sql-concurrency N``) a call *reserves* before it starts:
``reserve()`` refuses once the money spent plus the money reserved by calls still in flight
reaches the cap, and otherwise books the average cost of a settled call so far;
``settle(reservation, cost)`` swaps the reservation for the real cost. So the calls in flight
can overspend by at most one call per slot (workers x concurrency). The file holds a third
integer, the micro-dollars reserved.

Money is counted in whole micro-dollars (``int``), never in floats: ten calls of $0.01 reach a
$0.10 cap exactly (as floats they add up to 0.09999999999999999 and let an eleventh through).
A cost is converted from its shortest decimal form, rounded *up* to the next micro-dollar (a
sub-micro-dollar cost still counts); the cap is rounded *down*. The file holds two integers,
``<spent micro-dollars>`` and ``<calls>``, one a line (and ``<reserved micro-dollars>``).
"""

from __future__ import annotations

import math
import os
import tempfile
import threading
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, InvalidOperation
from pathlib import Path

from pytest_nl2sql.errors import Nl2sqlError

__all__ = ["MICRO", "CostLedger", "to_micro"]

#: Micro-dollars in a dollar.
MICRO = 1_000_000
#: The most the ledger counts (a cost of inf, or beyond, is this much): $10^12.
MAX_MICRO = 10**18


def to_micro(usd: float | int | str | Decimal | None, *, up: bool = True) -> int:
    """Dollars as whole micro-dollars: rounded up (costs) or down (``up=False``, the cap).

    None, NaN, negative amounts and anything that is not a number count as 0; infinity and
    amounts past ``MAX_MICRO`` count as ``MAX_MICRO``.
    """
    if usd is None or isinstance(usd, bool):
        return 0
    try:
        value = usd if isinstance(usd, Decimal) else Decimal(repr(usd) if isinstance(usd, float) else str(usd))
    except (InvalidOperation, ValueError, TypeError):
        return 0
    if value.is_nan() or value <= 0:
        return 0
    if value.is_infinite() or value > Decimal(MAX_MICRO) / MICRO:
        return MAX_MICRO
    return int((value * MICRO).to_integral_value(rounding=ROUND_CEILING if up else ROUND_FLOOR))


class CostLedger:
    def __init__(self, path: str | os.PathLike[str], cap: float | None) -> None:
        self.path = Path(path)
        self.cap = cap
        self.cap_micro: int | None = None if cap is None else to_micro(cap, up=False)
        if cap is not None and isinstance(cap, float) and math.isinf(cap) and cap > 0:
            self.cap_micro = None  # an infinite budget is no budget
        from filelock import FileLock  # here: a run without a ledger never imports it (~13 ms)

        self._lock = FileLock(str(self.path) + ".lock", timeout=60)
        self._threads = threading.Lock()  # the threads of one process take turns, too

    @classmethod
    def create(cls, cap: float | None, folder: str | os.PathLike[str] | None = None) -> CostLedger:
        """A new ledger: ``ledger.txt`` in the run's folder (``reporting.spool``: a run killed
        by SIGKILL leaves it there, and the next run removes it), else a temporary file."""
        if folder is not None:
            path = Path(folder) / "ledger.txt"
            path.write_text("0\n0\n")
            return cls(path, cap)
        fd, name = tempfile.mkstemp(prefix="nl2sql-ledger-", suffix=".txt")
        with os.fdopen(fd, "w") as fh:
            fh.write("0\n0\n")
        return cls(name, cap)

    def __enter__(self) -> CostLedger:
        from filelock import Timeout

        self._threads.acquire()
        try:
            self._lock.acquire()
        except Timeout:
            self._threads.release()
            raise Nl2sqlError(f"{self.path}: the cost ledger stayed locked for 60 s (a worker hung?)") from None
        return self

    def __exit__(self, *exc: object) -> None:
        self._lock.release()
        self._threads.release()

    def _read(self) -> tuple[int, int]:
        return self._read3()[:2]

    def _read3(self) -> tuple[int, int, int]:
        try:
            fields = self.path.read_text().split()
            spent, calls = fields[:2]
            reserved = int(fields[2]) if len(fields) > 2 else 0
            return max(0, min(int(spent), MAX_MICRO)), max(0, int(calls)), max(0, min(reserved, MAX_MICRO))
        except (OSError, ValueError):
            return 0, 0, 0

    def _write(self, spent: int, calls: int, reserved: int) -> None:
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(f"{spent}\n{calls}\n" + (f"{reserved}\n" if reserved else ""))
        os.replace(tmp, self.path)

    def spent_micro(self) -> int:
        with self:
            return self._read()[0]

    def spent(self) -> float:
        """Dollars spent so far (for display; the cap is checked in micro-dollars)."""
        return self.spent_micro() / MICRO

    def calls(self) -> int:
        with self:
            return self._read()[1]

    def may_spend(self) -> bool:
        """False once the budget is used up (always True without a cap)."""
        if self.cap_micro is None:
            return True
        with self:
            return self._read()[0] < self.cap_micro

    def add(self, cost: float | int | Decimal | None) -> float:
        """Record one call's cost (dollars); return the run's total so far, in dollars."""
        return self.settle(0, cost)

    def reserve(self) -> int | None:
        """Book a call before it starts: None once spent + reserved reaches the cap (the call
        must not start), else the micro-dollars reserved (the average settled call so far; 0
        without a cap). Hand the result to ``settle`` when the call is done."""
        if self.cap_micro is None:
            return 0
        with self:
            spent, calls, reserved = self._read3()
            if spent + reserved >= self.cap_micro:
                return None
            estimate = spent // calls if calls else 0
            if estimate:
                self._write(spent, calls, min(reserved + estimate, MAX_MICRO))
            return estimate

    def settle(self, reservation: int, cost: float | int | Decimal | None) -> float:
        """Swap a reservation (micro-dollars, from ``reserve``) for the call's real cost
        (dollars); return the run's total so far, in dollars."""
        micro = to_micro(cost)
        with self:
            spent, calls, reserved = self._read3()
            spent = min(spent + micro, MAX_MICRO)
            self._write(spent, calls + 1, max(0, reserved - max(0, reservation)))
            return spent / MICRO

    def remove(self) -> None:
        """Remove the ledger, its lock and any temporary file a killed worker left."""
        for p in (self.path, Path(str(self.path) + ".lock"), *self.path.parent.glob(f"{self.path.name}.*.tmp")):
            try:
                p.unlink()
            except OSError:
                pass
