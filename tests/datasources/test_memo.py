"""The memos behind parse-once (datasources/memo.py): a remembered refusal is raised afresh
each time, the same for every caller; what is no verdict is never remembered."""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

import pytest

from pytest_nl2sql.datasources.guard import StatementRefused, check_statement
from pytest_nl2sql.datasources.memo import Memo


def test_a_remembered_refusal_is_raised_afresh_with_its_reason() -> None:
    sql = "DELETE FROM t WHERE memo_test = 1"
    seen = []
    for _ in range(3):
        with pytest.raises(StatementRefused) as info:
            check_statement(sql, "sqlite")
        seen.append(info.value)
    assert len({id(e) for e in seen}) == 3  # no traceback grows on one shared exception
    assert {e.reason for e in seen} == {seen[0].reason} and "DELETE" in seen[0].reason


def test_what_is_no_verdict_is_computed_again() -> None:
    memo: Memo[int] = Memo(4, remember=(ValueError,))
    calls = []

    def deep() -> int:
        calls.append(1)
        raise RecursionError("deep")

    for _ in range(2):
        with pytest.raises(RecursionError):
            memo.get("k", deep)
    assert len(calls) == 2


def test_the_least_recently_used_entry_goes_first() -> None:
    memo: Memo[str] = Memo(2)
    memo.get("a", lambda: "A")
    memo.get("b", lambda: "B")
    memo.get("a", lambda: "never")  # a is fresh again
    memo.get("c", lambda: "C")  # b goes
    assert memo.get("a", lambda: "again") == "A"
    assert memo.get("b", lambda: "B2") == "B2"


def test_a_store_key_names_the_policy_by_its_value(tmp_path) -> None:
    """A role's policy is part of a validator verdict's key: equal policies give one key, a
    changed one another, and a policy whose fields can change is read afresh each time."""
    import attrs

    from pytest_nl2sql.config.policy import RolePolicy
    from pytest_nl2sql.datasources.memo import VerdictStore

    store = VerdictStore()
    store.enable(tmp_path)
    reader = RolePolicy("reader", datasources=frozenset({"shop"}), deny_tables=frozenset({("shop", "customers")}))
    same = RolePolicy("reader", datasources=frozenset({"shop"}), deny_tables=frozenset({("shop", "customers")}))
    other = RolePolicy("reader", datasources=frozenset({"shop"}), deny_tables=frozenset({("shop", "orders")}))
    first = store.key("validator", "SELECT 1", reader)
    assert store.key("validator", "SELECT 1", reader) == store.key("validator", "SELECT 1", same) == first
    assert store.key("validator", "SELECT 1", other) != first

    @attrs.define(eq=False)
    class Loose:  # hashed by identity, fields that change
        tables: list[str]

    loose = Loose(["a"])
    before = store.key("validator", "SELECT 1", loose)
    loose.tables.append("b")
    assert store.key("validator", "SELECT 1", loose) != before



def _record_and_flush(folder: str, worker: int, start: Any) -> None:
    from pytest_nl2sql.datasources.memo import VerdictStore

    store = VerdictStore()
    store.enable(Path(folder))
    for i in range(300):
        key = store.key("guard", "sqlite", f"SELECT {worker} AS worker, {i} AS i")
        store.lookup(key)  # the file is read on the first look-up, as in a run
        store.record(key, None)
    start.wait()  # every process flushes at the same moment, as xdist's workers do as they end
    store.flush()


def test_processes_flushing_the_store_at_once_keep_every_verdict(tmp_path: Path) -> None:
    from pytest_nl2sql.datasources.memo import VerdictStore

    ctx = multiprocessing.get_context("fork")
    start = ctx.Barrier(4)
    workers = [ctx.Process(target=_record_and_flush, args=(str(tmp_path), w, start)) for w in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    assert [w.exitcode for w in workers] == [0, 0, 0, 0]
    store = VerdictStore()
    store.enable(tmp_path)
    store.key("guard")  # names the file
    assert len(store._read()) == 4 * 300


def test_verdicts_merged_from_a_helper_before_any_look_up_keep_the_remembered_ones(tmp_path: Path) -> None:
    """A serial run's helper (engine/forkhelper.py) may hand its verdicts over before this
    process has looked anything up: the store still reads its own file, not another's."""
    from pytest_nl2sql.datasources.memo import MISSING, VerdictStore

    earlier = VerdictStore()
    earlier.enable(tmp_path)
    old = earlier.key("guard", "sqlite", "SELECT 1")
    earlier.lookup(old)
    earlier.record(old, None)
    earlier.flush()
    store = VerdictStore()
    store.enable(tmp_path)
    store.merge({"k" * 64: ["StatementRefused", "no"]})  # the helper's, first
    assert store.lookup(old) is None and store.lookup(old) is not MISSING  # remembered: passed
    assert store.lookup("k" * 64) == ["StatementRefused", "no"]
    store.flush()
    assert sorted(p.name for p in tmp_path.glob("verdicts-*.json")) == [earlier.path.name]

class _CompiledError(Exception):
    """Behaves like an exception class compiled by mypyc (sqlglotc's ``ParseError``): an instance
    made by ``__new__`` alone has no ``__dict__`` until ``__init__`` has run."""

    def __init__(self, message: str, errors: list[dict[str, object]] | None = None) -> None:
        super().__init__(message)
        self.errors = errors or []
        self.initialised = True

    def __getattribute__(self, name: str) -> object:
        if name == "__dict__" and "initialised" not in object.__getattribute__(self, "__dict__"):
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '__dict__'")
        return object.__getattribute__(self, name)


def test_an_error_of_a_compiled_class_is_raised_afresh_with_its_attributes() -> None:
    memo: Memo[int] = Memo(4, remember=(_CompiledError,))

    def unparseable() -> int:
        raise _CompiledError("Expected table name", [{"line": 1, "col": 13}])

    seen = []
    for _ in range(3):
        with pytest.raises(_CompiledError) as info:
            memo.get("k", unparseable)
        seen.append(info.value)
    assert len({id(e) for e in seen}) == 3
    assert all(e.args == ("Expected table name",) and e.errors == [{"line": 1, "col": 13}] for e in seen)


def test_unparseable_sql_is_refused_each_time_with_the_compiled_parser() -> None:
    import sqlglot.parser

    if not sqlglot.parser.__file__.endswith((".so", ".pyd")):
        pytest.skip("sqlglot's compiled build (the speed extra: pip install -e '.[speed]') is not installed")
    from pytest_nl2sql.datasources.guard import StatementUnparseable
    from pytest_nl2sql.engine.validator import validate_sql

    for _ in range(2):  # the second answer comes from the memo of parses
        with pytest.raises(StatementUnparseable, match="could not be parsed"):
            check_statement("SELECT name FROM WHERE (", "sqlite")
    verdict = validate_sql("SELECT name FROM WHERE (", dialect="sqlite", datasource="d",
                           schema={"t": ["name"]}, policy=_everything())
    assert verdict.status == "invalid" and "does not parse" in verdict.message


def _everything():  # a role that may read everything
    from pytest_nl2sql.config.policy import RolePolicy

    return RolePolicy(name="any")


def test_the_verdict_files_of_other_codes_go_once_unused_and_nothing_else(tmp_path: Path) -> None:
    """Each version of the package or of sqlglot writes its own verdict file (at most 64 MiB):
    a flush removes the files (and lock files) of other codes nobody used for
    ``CACHE_MAX_AGE_S``; a recent one of another code (another venv sharing the folder), the
    suite cache's entries and other files stay. Reading an old file of this code refreshes it."""
    import os
    import time

    from pytest_nl2sql.datasources.memo import VerdictStore
    from pytest_nl2sql.suitefile.lock import CACHE_MAX_AGE_S

    old = time.time() - CACHE_MAX_AGE_S - 3600
    stale = [tmp_path / "verdicts-aaaaaaaaaaaaaaaaaaaaaaaa.json", tmp_path / "verdicts-aaaaaaaaaaaaaaaaaaaaaaaa.json.lock"]
    kept = [tmp_path / "verdicts-bbbbbbbbbbbbbbbbbbbbbbbb.json", tmp_path / ("c" * 16 + "-" + "d" * 64 + ".json"), tmp_path / "verdicts-notes.json"]
    for path in stale + kept:
        path.write_text("{}")
    for path in stale + kept[1:]:
        os.utime(path, (old, old))
    store = VerdictStore()
    store.enable(tmp_path)
    mine = store.path
    assert mine is not None
    store.lookup(store.key("guard", "sqlite", "SELECT 1"))  # reads the (empty) store: a miss
    store.record(store.key("guard", "sqlite", "SELECT 1"), {"ok": True})
    store.flush()
    assert mine.exists() and all(p.exists() for p in kept) and not any(p.exists() for p in stale)
    os.utime(mine, (old, old))
    again = VerdictStore()
    again.enable(tmp_path)
    assert again.lookup(again.key("guard", "sqlite", "SELECT 1")) == {"ok": True}
    assert mine.stat().st_mtime > old + 3600  # in use: refreshed
