"""nl2sql-engine's PlanModel shape, read as our plan: the shipped Chinook suite's 43 plans
convert, compile and return the suite's rows (and the rows of nl2sql-engine 0.7.0's own
generator, whose SQLite SQL for each plan is kept in ``specplan_nle_sqlite.json``); bad plans
are refused with the path of the problem; and mode ``plans`` runs the suite end to end."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_nl2sql.engine import compile_plan
from pytest_nl2sql.engine.plan import (
    Call,
    Column,
    DateFormat,
    InList,
    Join,
    Literal,
    OrderItem,
    PlanError,
    PlanModel,
    RawSQL,
    Table,
)
from pytest_nl2sql.engine.plan.specplan import is_spec_plan
from tests.nl2sql_engine_project import FIXTURE, make_engine_project

SUITE = yaml.safe_load((FIXTURE / "evals" / "chinook.yaml").read_text())
CASES = {c["id"]: c for c in SUITE["cases"] if c.get("plan") is not None}
NLE_SQL = json.loads((Path(__file__).parent / "specplan_nle_sqlite.json").read_text())


@pytest.fixture(scope="module")
def chinook(tmp_path_factory: pytest.TempPathFactory) -> sqlite3.Connection:
    root = tmp_path_factory.mktemp("nle")
    make_engine_project(root)
    con = sqlite3.connect(root / "data" / "chinook.sqlite")
    yield con
    con.close()


def _values(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [tuple(r.values()) for r in rows]


def test_the_suite_has_43_plans() -> None:
    assert len(CASES) == 43
    assert sorted(CASES) == sorted(NLE_SQL)


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_each_plan_gives_the_suites_rows_and_nl2sql_engines(case_id: str, chinook: sqlite3.Connection) -> None:
    case = CASES[case_id]
    assert is_spec_plan(case["plan"])
    plan = PlanModel.from_dict(case["plan"])
    assert plan.kind == "answer" and plan.datasource is None
    assert PlanModel.from_dict(plan.to_dict()) == plan  # written back in our format
    for dialect in ("postgresql", "duckdb"):
        compile_plan(plan, dialect)
    mine = chinook.execute(compile_plan(plan, "sqlite")).fetchall()
    # nl2sql-engine's generator adds every selected column as a tie-breaker: same rows, same order
    assert mine == chinook.execute(NLE_SQL[case_id]).fetchall()
    golds = [_values(case["rows"]), *(_values(a) for a in case.get("alt_rows") or [])]
    assert chinook.execute(case["sql"]).fetchall() == golds[0] or not case["order_matters"]
    if case["order_matters"]:
        assert mine in golds
    else:
        assert Counter(mine) in [Counter(g) for g in golds]


def test_is_spec_plan() -> None:
    assert is_spec_plan({"tables": [], "select_items": []})
    assert not is_spec_plan({"from": "Track", "select": ["Name"]})
    assert not is_spec_plan({"kind": "not_answerable"})
    assert not is_spec_plan(["tables"])


# -- what each part means ---------------------------------------------------------------------


def col(alias: str | None, name: str) -> dict[str, Any]:
    return {"kind": "column", "alias": alias, "column_name": name}


def lit(value: Any) -> dict[str, Any]:
    return {"kind": "literal", "value": value}


def func(name: str, *args: Any, **kw: Any) -> dict[str, Any]:
    return {"kind": "func", "func_name": name, "args": list(args), **kw}


def binary(op: str, left: Any, right: Any) -> dict[str, Any]:
    return {"kind": "binary", "op": op, "left": left, "right": right}


def spec(*items: Any, **kw: Any) -> dict[str, Any]:
    base = {"tables": [{"name": "Track", "alias": "t"}],
            "select_items": [i if "expr" in i else {"expr": i} for i in items]}
    return {**base, **kw}


def query(data: dict[str, Any]) -> Any:
    plan = PlanModel.from_dict(data)
    assert plan.query is not None
    return plan.query


def test_joins_attach_the_new_side_and_mirror_an_outer_join() -> None:
    q = query({
        "tables": [{"name": "Album", "alias": "al"}, {"name": "Artist", "alias": "ar"},
                   {"name": "Track", "alias": "t"}],
        "joins": [
            {"left_alias": "t", "right_alias": "al", "join_type": "left",
             "condition": binary("=", col("t", "AlbumId"), col("al", "AlbumId"))},
            {"left_alias": "al", "right_alias": "ar",
             "condition": binary("=", col("al", "ArtistId"), col("ar", "ArtistId"))},
        ],
        "select_items": [{"expr": col("t", "Name")}],
    })
    assert q.from_ == Table("Album", "al")
    assert [(j.source, j.type) for j in q.joins] == [(Table("Track", "t"), "right"), (Table("Artist", "ar"), "inner")]
    assert isinstance(q.joins[0], Join)


def test_tie_breakers_follow_the_plans_order_by() -> None:
    q = query(spec(
        {"expr": col("t", "Name"), "alias": "track"}, col("t", "Milliseconds"),
        {"expr": func("COUNT", col("t", "TrackId")), "alias": "n"}, lit(1),
        order_by=[{"expr": col("t", "Milliseconds"), "direction": "desc"}],
    ))
    assert q.order_by == (
        OrderItem(Column("Milliseconds", "t"), desc=True), OrderItem(Column("track")), OrderItem(Column("n")),
    )


def test_expressions_map_to_our_functions() -> None:
    q = query(spec(
        {"expr": binary("+", col("t", "Name"), lit(" (live)"))},
        {"expr": binary("+", col("t", "Milliseconds"), lit("1000"))},
        {"expr": binary("IN", col("t", "GenreId"), func("TUPLE", lit(1), lit(2)))},
        {"expr": binary("IS NOT", col("t", "Composer"), {"kind": "literal", "is_null": True})},
        {"expr": func("count", col("t", "AlbumId"), distinct=True, is_aggregate=True)},
        {"expr": func("IFNULL", col("t", "Composer"), lit("?"))},
        {"expr": {"kind": "unary", "op": "-", "expr": col("t", "Bytes")}},
        limit=0,
    ))
    exprs = [i.expr for i in q.select]
    name, ms, genre, composer = Column("Name", "t"), Column("Milliseconds", "t"), Column("GenreId", "t"), Column("Composer", "t")
    assert exprs == [
        Call("concat", (name, Literal(" (live)"))),
        Call("add", (ms, Literal("1000"))),  # a number written as text is added
        InList(genre, (1, 2)),
        Call("not", (Call("is_null", (composer,)),)),
        Call("count_distinct", (Column("AlbumId", "t"),)),
        Call("coalesce", (composer, Literal("?"))),
        Call("neg", (Column("Bytes", "t"),)),
    ]
    assert q.limit is None  # limit 0 is no limit, as in nl2sql-engine


def test_date_functions(chinook: sqlite3.Connection) -> None:
    d = col("i", "InvoiceDate")
    plan = PlanModel.from_dict({
        "tables": [{"name": "Invoice", "alias": "i"}],
        "select_items": [
            {"expr": func("YEAR", d), "alias": "y"},
            {"expr": func("DATE_PART", lit("quarter"), d), "alias": "q"},
            {"expr": func("EXTRACT", d, lit("Month")), "alias": "m"},
            {"expr": func("DATE_TRUNC", lit("quarter"), d), "alias": "tq"},
            {"expr": func("DATE_TRUNC", lit("month"), d), "alias": "tm"},
            {"expr": func("STRFTIME", lit("%Y/%m"), d), "alias": "f"},
        ],
        "where": binary("=", col("i", "InvoiceId"), lit(100)),
    })
    assert plan.query is not None and plan.query.select[4].expr == DateFormat(Column("InvoiceDate", "i"), "%Y-%m-01")
    date = chinook.execute("SELECT InvoiceDate FROM Invoice WHERE InvoiceId = 100").fetchone()[0]
    y, m = int(date[:4]), int(date[5:7])
    q = (m + 2) // 3
    row = chinook.execute(compile_plan(plan, "sqlite")).fetchone()
    assert row == (y, q, m, f"{y}-{3 * q - 2:02d}-01", f"{date[:7]}-01", f"{y}/{date[5:7]}")


def test_a_function_our_plans_lack_is_raw_sql_over_columns() -> None:
    q = query(spec(func("FLOOR", col("t", "Milliseconds")), func("power", col("t", "Bytes"), lit(2))))
    assert [i.expr for i in q.select] == [RawSQL('FLOOR("t"."Milliseconds")'), RawSQL("POWER(\"t\".\"Bytes\", 2)")]
    with pytest.raises(PlanError) as err:
        PlanModel.from_dict(spec(func("FLOOR", binary("/", col("t", "Bytes"), lit(2)))))
    assert err.value.path == "plan.select_items[0].expr.args[0]"


# -- refusals name their place ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("plan", "path", "words"),
    [
        (spec({"kind": "window", "func_name": "RANK"}), "plan.select_items[0].expr.kind", "unknown kind 'window'"),
        (spec(col("t", "Name"), ctes=[]), "plan", "unknown key 'ctes'"),
        (spec({**col("t", "Name"), "table": "t"}), "plan.select_items[0].expr", "unknown key 'table'"),
        (spec(col("t", "Name"), col("x", "Name")), "plan.select_items[1].expr.alias", "unknown table alias 'x' (declared: t)"),
        (spec({**col("t", "Name"), "func_name": "SUM"}), "plan.select_items[0].expr.func_name", "not read in an expression of kind column"),
        (spec(func("SUM", col("t", "Bytes"), distinct=True)), "plan.select_items[0].expr.distinct", "only COUNT(DISTINCT x)"),
        (spec(func("MEDIAN", col("t", "Bytes"))), "plan.select_items[0].expr.func_name", "unknown function 'MEDIAN'"),
        (spec(func("SUM", col("t", "Bytes"), col("t", "Milliseconds"))), "plan.select_items[0].expr.args", "SUM takes 1 argument, got 2"),
        (spec(func("DATE_TRUNC", lit("week"), col("t", "x"))), "plan.select_items[0].expr.args[0].value", "unknown date unit 'week'"),
        (spec(func("STRFTIME", lit("%j"), col("t", "x"))), "plan.select_items[0].expr.args[0].value", "unsupported STRFTIME code '%j'"),
        (spec(col("t", "Name"), where=binary("IS", col("t", "Name"), lit(True))), "plan.where.right", "only IS NULL"),
        (spec(col("t", "Name"), where=binary("NOT", col("t", "Name"), lit(1))), "plan.where.op", "unknown operator 'NOT'"),
        (spec(col("t", "Name"), offset=5), "plan.offset", "needs an order_by"),
        (spec(col("t", "Name"), limit=-1), "plan.limit", "non-negative integer"),
        (spec(col("t", "Name"), query_type="WRITE"), "plan.query_type", "expected READ"),
        (spec(), "plan.select_items", "at least one item"),
        (spec(col("t", "Name"), tables=[]), "plan.tables", "at least one table"),
        (spec(col("t", "Name"), tables=[{"name": "Track", "alias": "t", "schema_name": "music"}]),
         "plan.tables[0].schema_name", "another schema"),
        (spec(col("t", "Name"), tables=[{"name": "Track", "alias": "t"}, {"name": "Album", "alias": "t"}]),
         "plan.tables[1].alias", "declared twice"),
        (spec(col("t", "Name"), tables=[{"name": "Track", "alias": "t"}, {"name": "Album", "alias": "a"}]),
         "plan.tables[1]", "never joined"),
        (spec(col("t", "Name"), joins=[{"left_alias": "t", "right_alias": "z", "condition": lit(True)}]),
         "plan.joins[0].right_alias", "unknown table alias 'z'"),
        (spec(col("t", "Name"), joins=[{"left_alias": "t", "right_alias": "t", "condition": lit(True)}]),
         "plan.joins[0]", "two tables already in the query"),
        (spec(col("t", "Name"), joins=[{"left_alias": "t", "right_alias": "t", "join_type": "cross", "condition": lit(True)}]),
         "plan.joins[0].join_type", "unknown join type 'cross'"),
        (spec({"expr": col("t", "Name"), "desc": True}), "plan.select_items[0]", "unknown key 'desc'"),
        (spec(col("t", "Name"), order_by=[{"expr": col("t", "Name"), "direction": "down"}]),
         "plan.order_by[0].direction", "expected asc or desc"),
        (spec({"kind": "literal"}), "plan.select_items[0].expr", "needs 'value' or is_null"),
        (spec({"kind": "case", "whens": []}), "plan.select_items[0].expr.whens", "at least one WHEN"),
        (spec(func("TUPLE", lit(1))), "plan.select_items[0].expr.func_name", "right of IN"),
    ],
)
def test_a_bad_plan_is_refused_with_its_path(plan: dict[str, Any], path: str, words: str) -> None:
    with pytest.raises(PlanError) as err:
        PlanModel.from_dict(plan)
    assert err.value.path == path
    assert words in err.value.problem


# -- end to end ---------------------------------------------------------------------------------

OUR_CONFIG = """\
version: 1
datasources:
  chinook: {url: "sqlite:///data/chinook.sqlite"}
  support: {url: "sqlite:///data/support.sqlite"}
  webanalytics: {url: "sqlite:///data/webanalytics.sqlite"}
roles:  # the demo's policies.yaml
  admin: {datasources: "*"}
  analyst:
    datasources: [chinook, support, webanalytics]
    deny: {tables: [chinook.Employee, support.agents]}
  viewer:
    datasources: [chinook, webanalytics]
    allow:
      tables: [chinook.Album, chinook.Artist, chinook.Genre, chinook.MediaType, chinook.Playlist,
               chinook.PlaylistTrack, chinook.Track, webanalytics.devices, webanalytics.page_views,
               webanalytics.referrers]
"""


def test_mode_plans_runs_nl2sql_engines_suite_with_the_reference_engine(pytester: pytest.Pytester) -> None:
    make_engine_project(pytester.path)
    (pytester.path / "nl2sql.yaml").write_text(OUR_CONFIG)  # ours: version 2 is not read here yet
    result = pytester.runpytest("--nl2sql-suite", "evals/chinook.yaml", "--nl2sql-mode", "plans")
    result.assert_outcomes(passed=141)


def test_suite_check_reads_nl2sql_engines_plans(tmp_path: Path) -> None:
    from pytest_nl2sql.config import load_config
    from pytest_nl2sql.upkeep.check import check_against_project

    make_engine_project(tmp_path)
    (tmp_path / "nl2sql.yaml").write_text(OUR_CONFIG)
    config = load_config(tmp_path / "nl2sql.yaml")
    suite = tmp_path / "evals" / "chinook.yaml"
    assert check_against_project(suite, config) == []
    text = suite.read_text()
    text = text.replace("{kind: column, alias: t1, column_name: CustomerId}", "{kind: column, alias: t9, column_name: CustomerId}", 1)
    at = text.index("id: chinook_021")
    text = text[:at] + text[at:].replace("column_name: Country}", "column_name: Countryy}", 1)
    suite.write_text(text)
    assert [p.message for p in check_against_project(suite, config)] == [
        "plan.select_items[1].expr.args[0].alias: unknown table alias 't9' (declared: t1)",
        "plan reads names chinook does not have: Customer.Countryy (did you mean 'Country'?)",
    ]
