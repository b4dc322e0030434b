"""A validator verdict in the verdict store is keyed on the datasource's schema by the schema's
digest, computed once per schema (by content) rather than written out as JSON for every verdict
looked up: a 2,000-column schema took ~0.4 ms per look-up. The key still tells every schema
apart, and a verdict is still read back by the next run."""

from __future__ import annotations

import pytest

from pytest_nl2sql.datasources.memo import STORE
from pytest_nl2sql.engine import validator
from pytest_nl2sql.engine import validatorrules as rules

SCHEMA = {"singer": ["singer_id", "name", "age"], "concert": ["concert_id", "singer_id", "year"]}
WIDE = {f"table_{i}": [f"column_{j}" for j in range(20)] for i in range(100)}


def _key(schema: dict, sql: str = "select name from singer") -> str | None:
    return validator._store_key(validator._verdict_key(sql, "sqlite", "music", schema, validator.UNRESTRICTED))


@pytest.fixture
def store(tmp_path):
    STORE.enable(tmp_path)
    validator._SCHEMA_DIGESTS.clear()
    try:
        yield tmp_path
    finally:
        STORE.enable(None)


def test_equal_schemas_share_a_key_and_every_change_gives_another(store) -> None:
    first = _key(SCHEMA)
    assert first is not None
    assert _key({t: list(cols) for t, cols in SCHEMA.items()}) == first  # another object, equal content
    changed = [
        {**SCHEMA, "singer": ["singer_id", "name"]},  # a column gone
        {**SCHEMA, "singer": ["singer_id", "name", "age", "email"]},  # a column more
        {**SCHEMA, "singer": ["singer_id", "nam", "age"]},  # a column renamed
        {"singer": SCHEMA["singer"]},  # a table gone
        {**SCHEMA, "venue": ["venue_id"]},  # a table more
        {"singers": SCHEMA["singer"], "concert": SCHEMA["concert"]},  # a table renamed
        {"singer": ["singer_id", "name", "age", "concert_id"], "concert": ["singer_id", "year"]},  # a column moved
    ]
    keys = {_key(s) for s in changed}
    assert first not in keys and len(keys) == len(changed)
    assert _key(SCHEMA, "select age from singer") != first  # the SQL still counts


def test_a_wide_schema_is_digested_once_and_its_verdicts_are_read_back_by_the_next_run(
    store, monkeypatch: pytest.MonkeyPatch
) -> None:
    digests: list[int] = []
    real = validator.canonical
    monkeypatch.setattr(validator, "canonical", lambda v: digests.append(1) or real(v))
    queries = [f"select column_{j} from table_{i}" for i in range(0, 100, 10) for j in (0, 19)]
    verdicts = [validator.validate_sql(q, dialect="sqlite", datasource="wide", schema=WIDE, policy=validator.UNRESTRICTED) for q in queries]
    assert all(v.ok for v in verdicts)
    assert len(digests) == 1  # twenty verdicts stored under one digest of the schema
    STORE.flush()

    validator.VERDICTS.clear()
    STORE.enable(store)  # the next run reads the file afresh
    computed: list[str] = []
    real_now = rules.validate_now
    monkeypatch.setattr(rules, "validate_now", lambda sql, *a: computed.append(sql) or real_now(sql, *a))
    again = [validator.validate_sql(q, dialect="sqlite", datasource="wide", schema=dict(WIDE), policy=validator.UNRESTRICTED) for q in queries]
    assert again == verdicts and computed == []
    missing = validator.validate_sql("select column_20 from table_0", dialect="sqlite", datasource="wide", schema=WIDE, policy=validator.UNRESTRICTED)
    assert missing.status == "unknown_reference" and computed == ["select column_20 from table_0"]


def test_a_frozen_schema_keys_its_verdicts_once_and_shares_them_with_an_equal_plain_one(
    store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engines keep each datasource's schema as a ``FrozenSchema``: its memo key is made once
    (a wide schema's key was rebuilt and rehashed on every look-up), it equals the key of an equal
    plain mapping, so both read the same verdicts, in this process and in the store, and it
    cannot be changed behind a key made from it."""
    from pytest_nl2sql.engine.validatorbase import FrozenSchema, schema_key

    frozen = FrozenSchema(WIDE)
    assert schema_key(frozen) is frozen.key is schema_key(frozen)
    assert schema_key(WIDE) == frozen.key and hash(schema_key(WIDE)) == hash(frozen.key)
    assert schema_key({**WIDE, "table_0": ["column_0"]}) != frozen.key
    assert dict(frozen) == {t: tuple(cols) for t, cols in WIDE.items()} and frozen["table_3"][1] == "column_1"
    with pytest.raises(TypeError):
        frozen["table_0"] = ("other",)  # type: ignore[index]

    computed: list[str] = []
    real_now = rules.validate_now
    monkeypatch.setattr(rules, "validate_now", lambda sql, *a: computed.append(sql) or real_now(sql, *a))
    plain = validator.validate_sql("select column_3 from table_7", dialect="sqlite", datasource="wide", schema=WIDE, policy=validator.UNRESTRICTED)
    again = validator.validate_sql("select column_3 from table_7", dialect="sqlite", datasource="wide", schema=frozen, policy=validator.UNRESTRICTED)
    assert again == plain and plain.ok and len(computed) == 1  # one verdict, read back under the frozen key
    assert _key(WIDE) == _key(frozen)  # the same name in the verdict store
    wrong = validator.validate_sql("select column_20 from table_7", dialect="sqlite", datasource="wide", schema=frozen, policy=validator.UNRESTRICTED)
    assert wrong.status == "unknown_reference" and len(computed) == 2


def test_the_string_fallback_reads_a_frozen_schemas_names_once_and_answers_as_with_a_list(
    store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The replay engine hands SQLite's string fallback the datasource's ``FrozenSchema``: its
    column names are sorted and digested once (a wide schema's were on every call), the answers
    are those the list of names gets, and they are remembered in the process and by the next run."""
    from pytest_nl2sql.engine import stringfallback
    from pytest_nl2sql.engine.validatorbase import FrozenSchema

    frozen = FrozenSchema(WIDE)
    columns = [c for cols in WIDE.values() for c in cols]
    sqls = ['SELECT column_1 FROM table_2 WHERE column_3 = "x"', 'SELECT "column_4" FROM table_2',
            'SELECT "COLUMN_5" FROM table_1', 'SELECT "nowhere" FROM table_1', "SELECT ("]
    stringfallback.FALLBACKS.clear()
    stringfallback._NAMES.clear()
    computed: list[str] = []
    real = stringfallback._fallback
    monkeypatch.setattr(stringfallback, "_fallback", lambda sql, names: computed.append(sql) or real(sql, names))
    with_list = [stringfallback.sqlite_string_fallback(sql, columns) for sql in sqls]
    assert with_list[0] == "SELECT column_1 FROM table_2 WHERE column_3 = 'x'" and with_list[1] is None
    assert with_list[3] == "SELECT 'nowhere' FROM table_1"
    assert [stringfallback.sqlite_string_fallback(sql, frozen) for sql in sqls] * 3 == with_list * 3
    assert computed == sqls  # the frozen schema's look-ups found the list's answers: the same names
    assert list(stringfallback._NAMES) == [frozen.key]  # its names sorted and digested once
    STORE.flush()

    stringfallback.FALLBACKS.clear()
    STORE.enable(store)  # the next run reads the file afresh
    computed.clear()
    assert [stringfallback.sqlite_string_fallback(sql, FrozenSchema(WIDE)) for sql in sqls] == with_list
    assert computed == []
