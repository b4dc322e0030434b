"""Concurrency: up to N engine calls in flight per process, items still in pytest's order.

pytest runs a process's items one after the other; an LLM call mostly waits on the network.
So the scheduler *prefetches*: when an item runs, it submits the engine calls (``asking.ask``)
of the upcoming items of this process -- the rest of ``session.items`` in a serial run, the
worker's queue under xdist -- to a pool of N threads, up to N calls ahead, and the item waits
for its own call. Scoring, records and reports stay on pytest's thread, in pytest's order, so
verdicts and the JSON report are those of a serial run.

* The very first call of a process runs alone: the engine, the LLM client and their lazy state
  are built once, on one thread. While calls fail to connect (or authenticate), the next one
  runs alone too, so a dead server is found by M calls (fail fast), not M x N.
* ``concurrency_safe = False`` on the engine (or N = 1) means no threads at all: every call is
  made on pytest's thread when its item runs, as without this module.
* Under xdist, an item another worker steals after it was prefetched was asked for nothing;
  its answer is dropped (the other worker asks again).
* At the end of the session, calls not started are cancelled and running ones are waited for.

**Checked in batches.** An engine with ``prepare_cases(pairs)`` (the replay engine) is handed the
``(case, role)`` of an item and of the next ``PREPARE_BATCH - 1`` items of the process (the same
upcoming items as above) when the first of them runs, and checks their SQL then, one after the
other, on pytest's thread: the guard's and the validator's verdicts land in their memos, and each
item's answer reads its own there. The verdicts are the same (the same functions, the same
keys); only the order changes. In a run, a SQL parse wedged between items' other work costs
1.5-2.5x what it costs in a loop (docs/benchmarks.md, issue 28), so checking a batch in one
loop saves ~0.2 s of a 2.7 s serial Spider dev run whose verdicts are computed. A batch is at
most ``PREPARE_BATCH`` items, well under the memos' 8,192 verdicts, so nothing is computed twice.
Not in mode retrieval without predictions (the engine is asked to route, not to answer). The
batch's time counts in the duration of the item that handed it over (``--durations``). An engine
may ask for more at once with ``prepare_ahead`` (a whole number): in a serial run the replay
engine asks for the rest of the run, which a forked helper checks on a second core ahead of the
items (``--nl2sql-second-core``, engine/forkhelper.py).
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import pytest

from pytest_nl2sql.plugin.asking import Asked, ask

if TYPE_CHECKING:
    from pytest_nl2sql.plugin.collect import CaseItem

__all__ = ["PREPARE_BATCH", "Scheduler"]

#: How many upcoming items an engine's ``prepare_cases`` is handed at once (module doc).
PREPARE_BATCH = 256


def _worker_queue(config: pytest.Config) -> Any:
    """xdist's WorkerInteractor of this worker process, or None."""
    if not hasattr(config, "workerinput"):
        return None
    for plugin in config.pluginmanager.get_plugins():
        if type(plugin).__name__ == "WorkerInteractor" and hasattr(plugin, "torun"):
            return plugin
    return None


class Scheduler:
    """Prefetches engine calls for a process (see the module docstring)."""

    def __init__(self, run: Any) -> None:
        self.run = run
        self._pool: ThreadPoolExecutor | None = None
        self._futures: dict[tuple[str, int], Future[Asked]] = {}
        self._submitted: set[tuple[str, int]] = set()
        self._positions: dict[str, int] | None = None
        self._warm = False
        self._lock = threading.Lock()
        self._prepared: set[str] = set()  # the node ids of the last batch handed to prepare_cases

    @property
    def width(self) -> int:
        """Engine calls in flight at most: --nl2sql-concurrency, 1 for an unsafe engine."""
        n = int(self.run.settings.concurrency)
        if n > 1 and self.run._engine is not None and getattr(self.run._engine, "concurrency_safe", True) is False:
            return 1
        return n

    def answer(self, item: CaseItem) -> tuple[Asked, ...]:
        """Every attempt of ``item``, in order: each prefetched, or asked now (the module docstring).

        One way: the item's calls are taken or submitted, the upcoming items' calls are put in
        flight, then the item waits for its own answers."""
        repeat = int(self.run.settings.repeat)
        self._prepare(item)
        if self.width <= 1 and not self._futures:
            return tuple(ask(self.run, item, attempt) for attempt in range(repeat))  # no threads
        asked: list[Asked] = []
        while not self._warm and len(asked) < repeat:  # the first calls of a process run alone, on this thread
            attempt = len(asked)
            asked.append(ask(self.run, item, attempt))
            self._submitted.add((item.nodeid, attempt))
            self._warm = self.run.failfast.count == 0  # after a failed connection: one at a time
        if not self._warm:
            return tuple(asked)
        futures = []
        for attempt in range(len(asked), repeat):
            with self._lock:
                future = self._futures.pop((item.nodeid, attempt), None)
            futures.append(future if future is not None else self._submit(item, attempt, keep=False))
        self._fill(item)
        return (*asked, *(future.result() for future in futures))

    def _prepare(self, item: CaseItem) -> None:
        """Hand the engine this item and the next ones to check in one loop, unless this item
        was in the last batch (module doc, "Checked in batches")."""
        if item.nodeid in self._prepared:
            return
        if self.run.settings.routes_only:
            return
        try:
            prepare = getattr(self.run.engine, "prepare_cases", None)
        except Exception:  # noqa: BLE001 -- no engine: the item's own call reports why
            return
        if prepare is None:
            return
        ahead = getattr(self.run.engine, "prepare_ahead", None)
        size = ahead if type(ahead) is int and ahead >= 1 else PREPARE_BATCH
        batch = self._upcoming(item, size - 1)
        self._prepared = {it.nodeid for it in batch}
        try:
            prepare([(it.case, it.role) for it in batch])
        except Exception:  # noqa: BLE001,S110 -- each item asks (and checks) for itself anyway
            pass

    # -- prefetching -------------------------------------------------------------------
    def _submit(self, item: CaseItem, attempt: int, *, keep: bool = True) -> Future[Asked]:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=max(1, self.width), thread_name_prefix="nl2sql-ask")
        key = (item.nodeid, attempt)
        future = self._pool.submit(ask, self.run, item, attempt)
        with self._lock:
            self._submitted.add(key)
            if keep:
                self._futures[key] = future
        return future

    def _fill(self, item: CaseItem) -> None:
        width = self.width
        if width <= 1:
            return
        for upcoming in self._upcoming(item, width):
            for attempt in range(int(self.run.settings.repeat)):
                with self._lock:
                    if len(self._futures) >= width:
                        return
                    if (upcoming.nodeid, attempt) in self._submitted:
                        continue
                self._submit(upcoming, attempt)

    def _upcoming(self, item: CaseItem, count: int) -> list[CaseItem]:
        """This item and the next ``count`` items this process will run (ours only)."""
        from pytest_nl2sql.plugin.collect import CaseItem

        items = item.session.items
        interactor = _worker_queue(item.config)
        if interactor is not None:
            with interactor.torun.lock() as queue:
                pending = list(queue)[:count]
            indices = [interactor.nextitem_index, *pending]
            chosen = [item] + [items[i] for i in indices if isinstance(i, int) and 0 <= i < len(items)]
        else:
            if self._positions is None or item.nodeid not in self._positions:
                self._positions = {it.nodeid: i for i, it in enumerate(items)}
            pos = self._positions.get(item.nodeid)
            chosen = [item] + (list(items[pos + 1 : pos + 1 + count]) if pos is not None else [])
        return [it for it in chosen if isinstance(it, CaseItem)]

    def close(self) -> None:
        """Cancel calls not started, wait for running ones, drop what was prefetched."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        with self._lock:
            self._futures.clear()

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        self.close()
