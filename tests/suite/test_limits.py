"""Limits of the loader (a nesting bound with path:line) and the suite cache's format (JSON:
reading an entry can never run code, and reads back exactly what the loader built)."""

from __future__ import annotations

import hashlib
import json
import math
import os
import pickle
import time
from pathlib import Path

import pytest

from pytest_nl2sql.errors import SuiteError
from pytest_nl2sql.suitefile import cache
from pytest_nl2sql.suitefile.loader import load_suite
from pytest_nl2sql.suitefile.yamlnodes import MAX_NESTING
from tests.suite.corpus import GOLDEN

HEAD = (
    "version: 1\ncases:\n- id: c1\n  question: q?\n  datasources: [d]\n  status: draft\n"
    "  outcome: {a: allowed}\n  sql: SELECT 1\n  plan:\n"
)


def _block_plan(levels: int) -> str:
    """A plan map holding ``levels`` maps more, one inside the other, in block style."""
    lines, pad = [], "    "
    for i in range(levels):
        lines.append(f"{pad}k{i}:")
        pad += "  "
    lines.append(f"{pad}leaf: 1")
    return HEAD + "\n".join(lines) + "\n"


def _flow_plan(levels: int) -> str:
    return HEAD + "    x: " + "[" * levels + "1" + "]" * levels + "\n"


def _refusal(path: Path) -> SuiteError:
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    return info.value


@pytest.mark.parametrize("levels", [900, MAX_NESTING])
def test_a_plan_nested_too_deep_in_block_yaml_is_refused_at_its_line(tmp_path: Path, levels: int) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text(_block_plan(levels))  # the plan map itself is level 1
    error = _refusal(path)
    too_deep_line = 9 + MAX_NESTING + 1  # HEAD is 9 lines; level n opens on line 9 + n
    assert str(error).startswith(f"{path}:{too_deep_line}:")
    assert f"nested deeper than {MAX_NESTING} levels" in str(error)
    assert "case 'c1'" in str(error)


def test_a_plan_exactly_at_the_limit_loads(tmp_path: Path) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text(_block_plan(MAX_NESTING - 1))
    suite = load_suite(path)
    value = suite.cases[0].plan
    depth = 0
    while isinstance(value, dict) and value:
        value = next(iter(value.values()))
        depth += 1
    assert depth == MAX_NESTING
    assert load_suite(path) == suite  # and comes back from the cache the same


def test_flow_nesting_past_the_limit_is_refused_too(tmp_path: Path) -> None:
    path = tmp_path / "flow.yaml"
    path.write_text(_flow_plan(150))  # under the parser's bracket bound, over the value bound
    assert f"nested deeper than {MAX_NESTING} levels" in str(_refusal(path))


# -- the cache --------------------------------------------------------------------------------


def _entries() -> list[Path]:
    folder = cache.cache_dir()
    assert folder is not None
    return sorted(p for p in folder.iterdir() if not p.name.startswith(".")) if folder.exists() else []


@pytest.mark.parametrize("name", sorted(p.name for p in GOLDEN.glob("*.yaml")))
def test_a_cached_suite_is_what_the_loader_built(name: str) -> None:
    fresh = load_suite(GOLDEN / name, use_cache=False)
    load_suite(GOLDEN / name)  # fills the cache
    cached = load_suite(GOLDEN / name)
    assert cached == fresh and cached.cases == fresh.cases and cached.sha256 == fresh.sha256
    assert [c.location for c in cached.cases] == [c.location for c in fresh.cases]
    for a, b in zip(cached.cases, fresh.cases, strict=True):
        assert repr(a.rows) == repr(b.rows)  # the same value types too (1, 1.0, True)


def test_entries_are_json_and_values_keep_their_types(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "version: 1\nmatch: {float_tolerance: 0.5}\ncases:\n- id: c1\n  question: Ünïcödé ✓?\n  datasources: [d]\n"
        "  status: approved\n  difficulty: hard\n  outcome: {a: allowed, b: refused}\n  sql: SELECT 1\n"
        "  rows:\n  - {i: 1, f: 1.0, b: true, n: null, nan: .nan, inf: -.inf, z: -0.0, s: '1'}\n"
        "  plan: {select: [1, 2.5, {x: [true, null]}]}\n"
    )
    fresh = load_suite(path, use_cache=False)
    load_suite(path)
    [entry] = _entries()
    assert entry.suffix == ".json"
    json.loads(entry.read_text(encoding="utf-8").split("\n", 1)[1])  # a sum line, then plain JSON
    cached = load_suite(path)
    [row] = cached.cases[0].rows
    assert [type(v) for v in row.values()] == [int, float, bool, type(None), float, float, float, str]
    assert math.isnan(row["nan"]) and row["inf"] == -math.inf and math.copysign(1, row["z"]) == -1
    assert cached.cases[0].plan == fresh.cases[0].plan and cached.match == fresh.match == {"float_tolerance": 0.5}
    assert cached.cases[0].difficulty is fresh.cases[0].difficulty


def test_reading_a_small_entry_does_not_reserve_the_whole_cap(tmp_path: Path) -> None:
    import tracemalloc

    path = tmp_path / "s.yaml"
    path.write_text("version: 1\ncases:\n- id: c1\n  question: q?\n  datasources: [d]\n  status: approved\n  outcome: {a: allowed}\n  sql: SELECT 1\n")
    load_suite(path)  # fills the cache
    tracemalloc.start()
    try:
        assert load_suite(path).cases[0].id == "c1"
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < cache.MAX_ENTRY_BYTES // 16  # a read of the cap would reserve 256 MB at once


def test_reading_a_large_entry_runs_no_cyclic_collection(tmp_path: Path) -> None:
    """A large entry's values hold no cycles: the collections reading it triggered walked them
    again and again (a full one at Spider dev's size); the collector is paused, then left on."""
    import gc

    from pytest_nl2sql.suitefile import loader

    path = tmp_path / "s.yaml"
    case = "- id: c{i}\n  question: q{i}?\n  datasources: [d]\n  status: approved\n  outcome: {{a: allowed}}\n  sql: SELECT {i}\n  rows:\n  - {{n: {i}, s: x}}\n"
    path.write_text("version: 1\ncases:\n" + "".join(case.format(i=i) for i in range(3000)))
    load_suite(path)  # fills the cache
    loader._LOADED.clear()  # read the entry back from the disk, not from this process's memo
    collections: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    assert gc.isenabled()
    gc.collect()  # the counts start from zero: what follows is the read's own allocations
    gc.callbacks.append(seen)
    try:
        suite = load_suite(path)
    finally:
        gc.callbacks.remove(seen)
    assert len(suite.cases) == 3000 and suite.cases[-1].rows == ({"n": 2999, "s": "x"},)
    assert collections in ([], [0])  # at most the young one as the collector resumes (72 without the pause)
    assert gc.isenabled()


def test_a_plan_with_keys_json_would_change_is_not_cached(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(HEAD + "    2: two\n    null: none\n")
    fresh = load_suite(path)
    assert fresh.cases[0].plan == {2: "two", None: "none"}
    assert _entries() == []
    assert load_suite(path) == fresh


@pytest.mark.parametrize(
    "planted",
    [b"not json", b"[" * 100_000, b'{"format": 2, "cases": [[1, 2]]}', b'{"format": 1}', b"\xff\xfe"],
    ids=["text", "nested", "short-case", "old-format", "binary"],
)
def test_a_broken_or_tampered_entry_is_a_miss(tmp_path: Path, planted: bytes) -> None:
    path = tmp_path / "s.yaml"
    path.write_bytes((GOLDEN / "kinds.yaml").read_bytes())
    fresh = load_suite(path)
    [entry] = _entries()
    entry.write_bytes(planted)
    assert load_suite(path) == fresh


def test_an_entry_edited_in_place_is_a_miss(tmp_path: Path) -> None:
    """A well-formed entry whose JSON was changed after it was written (here: a gold SQL) is
    not served: its header's sha256 no longer matches."""
    path = tmp_path / "s.yaml"
    path.write_bytes((GOLDEN / "kinds.yaml").read_bytes())
    fresh = load_suite(path)
    [entry] = _entries()
    header, body = entry.read_bytes().split(b"\n", 1)
    assert header.startswith(b"pytest-nl2sql suite cache sha256=")
    gold = next(case.sql for case in fresh.cases if case.sql).encode()
    assert gold in body
    entry.write_bytes(header + b"\n" + body.replace(gold, b"SELECT 'tampered'", 1))
    assert load_suite(path) == fresh
    assert all(case.sql != "SELECT 'tampered'" for case in load_suite(path).cases)


def test_a_planted_pickle_is_never_unpickled(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_bytes((GOLDEN / "kinds.yaml").read_bytes())
    load_suite(path)
    [entry] = _entries()
    marker = tmp_path / "ran"

    class Boom:
        def __reduce__(self):  # unpickling this would create the marker file
            return (os.mkdir, (str(marker),))

    payload = pickle.dumps(Boom())
    entry.write_bytes(payload)
    entry.with_suffix(".pickle").write_bytes(payload)  # where the old format kept it
    load_suite(path)
    assert not marker.exists()


def test_a_temporary_entry_left_by_a_killed_process_is_removed_on_the_next_write(tmp_path: Path) -> None:
    from pytest_nl2sql.suitefile import lock as writer

    path = tmp_path / "s.yaml"
    path.write_bytes((GOLDEN / "kinds.yaml").read_bytes())
    load_suite(path)
    [entry] = _entries()
    stale = entry.with_name(f".{entry.name}.{2**22 + 777}@{writer._HOST}.abc.tmp")  # no such pid
    stale.write_text("partial")
    entry.unlink()
    load_suite(path)
    assert not stale.exists() and [p.name for p in _entries()] == [entry.name]
    assert [p for p in entry.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_a_cached_suite_takes_the_path_it_was_loaded_through(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "s.yaml").write_bytes((GOLDEN / "kinds.yaml").read_bytes())
    monkeypatch.chdir(tmp_path)
    first = load_suite("s.yaml")
    again = load_suite("./s.yaml")  # the same file and entry, another spelling
    assert len(_entries()) == 1
    assert first.path == "s.yaml" and again.path == "./s.yaml"
    assert {c.location.path for c in again.cases if c.location} == {"./s.yaml"}
    assert again == load_suite("./s.yaml", use_cache=False)


@pytest.mark.parametrize("name", sorted(p.name for p in GOLDEN.glob("*.yaml")))
def test_a_case_read_from_its_cache_entry_brings_its_digests_and_none_is_hashed_again(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The provenance's case digest and each role's gold digest of a case read back from its
    entry are the ones its YAML gives, and reading them hashes nothing (a warm run)."""
    from pytest_nl2sql.suitefile import digest

    fresh = load_suite(GOLDEN / name, use_cache=False)
    text = cache.encode_suite(fresh)
    assert text is not None
    want = [(digest._case_digest(c), {r: digest.role_digest(c, r) for r in c.outcome}) for c in fresh.cases]

    def hashed(*_: object) -> str:
        raise AssertionError("a digest was computed again")

    monkeypatch.setattr(digest, "_case_digest", hashed)
    monkeypatch.setattr(digest, "role_digest", hashed)
    cached = cache.decode_suite(text)
    assert [(digest.case_digest(c), {r: digest.gold_digest_of(c, r) for r in c.outcome}) for c in cached.cases] == want


@pytest.mark.parametrize(
    "digests",
    [None, [], ["abc"], [1, {"admin": "x"}], ["0" * 64, {"admin": 1}], ["0" * 64, {"other": "0" * 16}], ["0" * 64, ["admin", "0" * 16]],
     ["0" * 64, {"admin": "0" * 15}], ["z" * 64, {"admin": "0" * 16}], ["0" * 64, {"admin": "0" * 16, "other": "0" * 16}]],
    ids=["none", "empty", "short", "number", "role-number", "other-role", "list", "role-short", "not-hex", "extra-role"],
)
def test_an_entry_whose_digests_are_not_the_case_s_is_a_miss(tmp_path: Path, digests: object) -> None:
    """An entry with a matching sum but digests of the wrong shape (or for roles the case does
    not name) is not served: the suite is read from its YAML again."""
    import hashlib

    path = tmp_path / "s.yaml"
    path.write_text("version: 1\ncases:\n- id: c1\n  question: q?\n  datasources: [d]\n  status: approved\n  outcome: {admin: allowed}\n  sql: SELECT 1\n")
    fresh = load_suite(path, use_cache=False)
    data = json.loads(cache.encode_suite(fresh) or "")
    data["cases"][0][-1] = digests
    with pytest.raises((ValueError, TypeError)):
        cache.decode_suite(json.dumps(data))
    load_suite(path)  # writes the entry
    [entry] = _entries()
    body = json.dumps(data).encode()
    entry.write_bytes(b"pytest-nl2sql suite cache sha256=" + hashlib.sha256(body).hexdigest().encode() + b"\n" + body)
    name = entry.stem
    assert cache.get(name) is None


def test_an_edited_suite_leaves_one_entry_and_other_suites_and_ways_keep_theirs(tmp_path: Path) -> None:
    """The folder stays bounded as suites are edited (each commit of a CI cache): writing an
    entry removes the earlier entries of the same suite loaded the same way; another suite's
    entry, the same suite's non-strict entry and files that are no entry stay."""
    one, two = tmp_path / "one.yaml", tmp_path / "two.yaml"
    two.write_bytes((GOLDEN / "kinds.yaml").read_bytes())
    load_suite(two)
    text = "version: 1\ncases:\n- id: c1\n  question: q?\n  datasources: [d]\n  status: approved\n  outcome: {a: allowed}\n  sql: SELECT N\n"
    one.write_text(text.replace("N", "1"))
    load_suite(one)
    load_suite(one, strict=False)
    folder = cache.cache_dir()
    assert folder is not None
    (folder / "notes.txt").write_text("mine")
    (folder / ("0" * 64 + ".txt")).write_text("not an entry")
    assert len(_entries()) == 5
    for n in range(2, 6):  # five edits
        one.write_text(text.replace("N", str(n)))
        assert load_suite(one).cases[0].sql == f"SELECT {n}"
    names = [p.name for p in _entries()]
    assert len(names) == 5 and "notes.txt" in names  # one entry of one.yaml (strict), its non-strict one, two.yaml's
    assert load_suite(one, strict=False).cases[0].sql == "SELECT 5"  # read afresh: its old entry replaced
    assert len(_entries()) == 5
    assert load_suite(two) == load_suite(two, use_cache=False)


def test_an_entry_nobody_used_for_thirty_days_goes_with_the_next_write_and_a_used_one_stays(tmp_path: Path) -> None:
    """Entries of another package version or of a suite since renamed or deleted are never
    written again: the next write removes them once unused for ``CACHE_MAX_AGE_S``. A hit
    refreshes an old entry's time, so a suite in use keeps its entry."""
    from pytest_nl2sql.suitefile.lock import CACHE_MAX_AGE_S

    folder = cache.cache_dir()
    assert folder is not None
    used, gone = tmp_path / "used.yaml", tmp_path / "gone.yaml"
    for path in (used, gone):
        path.write_bytes((GOLDEN / "kinds.yaml").read_bytes())
        load_suite(path)
    old_format = folder / ("a" * 64 + ".json")  # an entry named as before the slots
    old_format.write_text("{}")
    old = time.time() - CACHE_MAX_AGE_S - 3600
    for entry in _entries():
        os.utime(entry, (old, old))
    from pytest_nl2sql.suitefile import loader

    loader._LOADED.clear()  # this process's memo: read the entry again, as the next run would
    assert load_suite(used) == load_suite(used, use_cache=False)  # a hit: its entry refreshed
    gone.unlink()
    fresh = tmp_path / "fresh.yaml"
    fresh.write_text("version: 1\ncases:\n- id: c1\n  question: q?\n  datasources: [d]\n  status: approved\n  outcome: {a: allowed}\n  sql: SELECT 1\n")
    load_suite(fresh)  # a write: the unused entries go
    names = {p.name for p in _entries()}
    assert len(names) == 2 and not old_format.exists()
    assert {cache.key(str(p), hashlib.sha256(p.read_bytes()).hexdigest(), True) + ".json" for p in (used, fresh)} == names
