"""PostgreSQL neighbour databases, on a real server: the schema and its constraints kept, seeded
and reproducible, cached by name, read-only, built only by a login that may (and no more),
and --nl2sql-test-suite failing a PostgreSQL answer that is right only on the real data."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from pytest_nl2sql.config import load_config
from pytest_nl2sql.datasources import DatasourceRegistry, QueryError
from pytest_nl2sql.scoring.matching import MatchRule
from pytest_nl2sql.scoring.neighbours import (
    Neighbourhood,
    NeighboursUnavailable,
    disagreement,
    from_project,
    run_query,
)
from pytest_nl2sql.scoring.pgneighbours import (
    NAME_PREFIX,
    NeighbourSetupError,
    PgSource,
    create_reader_role,
    drop_neighbours,
)
from pytest_nl2sql.upkeep.regenerate import regenerate
from tests.pg_server import PgServer, server_or_skip

SCHEMA = """
CREATE SCHEMA league;
CREATE TYPE league.position AS ENUM ('keeper', 'defender', 'forward');
CREATE DOMAIN league.shirt AS integer CHECK (VALUE BETWEEN 1 AND 99);
CREATE TABLE league.team (
  id integer PRIMARY KEY,
  name varchar(40) NOT NULL UNIQUE,
  founded date,
  budget numeric(12, 2) CHECK (budget >= 0)
);
CREATE TABLE league.player (
  id integer PRIMARY KEY,
  name text NOT NULL,
  age integer CHECK (age > 0),
  position league.position,
  shirt league.shirt,
  team_id integer NOT NULL REFERENCES league.team(id),
  tags jsonb,
  age_next integer GENERATED ALWAYS AS (age + 1) STORED
);
CREATE TABLE league.played (
  player_id integer REFERENCES league.player(id),
  season integer,
  goals integer NOT NULL DEFAULT 0,
  PRIMARY KEY (player_id, season)
);
CREATE UNIQUE INDEX player_shirt ON league.player (team_id, shirt);
CREATE VIEW league.scorers AS
  SELECT p.name, SUM(g.goals) AS goals FROM league.player p JOIN league.played g ON g.player_id = p.id GROUP BY p.name;
-- a value Python cannot hold (sampled as text instead), then a table using a type of the schema
CREATE TABLE league.season (id integer PRIMARY KEY, starts date);
CREATE TABLE league.zone (id integer PRIMARY KEY, kind league.position);
CREATE VIEW league.a_players AS SELECT name FROM league.player WHERE name LIKE 'A%' OR name = '100%';
INSERT INTO league.season VALUES (1, 'infinity'), (2, '2024-08-01');
INSERT INTO league.zone VALUES (1, 'keeper');
INSERT INTO league.team VALUES (1, 'Ajax', '1900-03-18', 1000000.50), (2, 'PSV', '1913-08-31', 900000.00);
INSERT INTO league.player (id, name, age, position, shirt, team_id, tags) VALUES
  (1, 'Anna', 21, 'keeper', 1, 1, '{"captain": true}'),
  (2, 'Bo', 30, 'forward', 9, 1, NULL),
  (3, 'Cas', 25, 'defender', 4, 2, '[1, 2]');
INSERT INTO league.played VALUES (1, 2023, 0), (2, 2023, 12), (3, 2023, 3), (2, 2024, 7);
"""
SEARCH_PATH = "league"
SCRATCH_LOGIN = "nl2sql_scratch"


@pytest.fixture(scope="module")
def pg() -> Iterator[PgServer]:
    with server_or_skip(prefix="nl2sql-neighbours-") as server:
        superuser = server.create_database("league")
        with psycopg.connect(server.dsn("league"), autocommit=True) as con:
            con.execute(SCHEMA)
            con.execute(f"CREATE ROLE {SCRATCH_LOGIN} LOGIN CREATEDB CREATEROLE")
            con.execute("CREATE ROLE nl2sql_nocreate LOGIN")
        assert superuser
        yield server


def _scratch(pg: PgServer, login: str = SCRATCH_LOGIN) -> str:
    return f"postgresql+psycopg://{login}@{pg.host}:{pg.port}/postgres"


@pytest.fixture
def source(pg: PgServer) -> Iterator[PgSource]:
    src = PgSource("league", pg.url("league", schema=SEARCH_PATH), _scratch(pg))
    yield src
    drop_neighbours(_scratch(pg))


def _fetch(pg: PgServer, dbname: str, sql: str) -> list[tuple]:
    with psycopg.connect(pg.dsn(dbname)) as con:
        return con.execute(sql).fetchall()


CATALOG = """
SELECT table_schema, table_name, column_name, data_type, udt_name, is_nullable, is_generated
FROM information_schema.columns WHERE table_schema = 'league' ORDER BY 1, 2, ordinal_position
"""
CONSTRAINTS = """
SELECT conrelid::regclass::text, contype, pg_get_constraintdef(oid) FROM pg_constraint
WHERE connamespace = 'league'::regnamespace ORDER BY 1, 2, 3
"""


def test_pg_neighbours_keep_the_schema_its_types_and_its_constraints(pg: PgServer, source: PgSource) -> None:
    built = source.build(4, 0)
    assert [n.dbname for n in built] == sorted(n.dbname for n in built)
    assert all(n.dbname.startswith(NAME_PREFIX) for n in built)
    real_catalog, real_constraints = _fetch(pg, "league", CATALOG), _fetch(pg, "league", CONSTRAINTS)
    rows = 0
    for n in built:
        assert _fetch(pg, n.dbname, CATALOG) == real_catalog
        assert _fetch(pg, n.dbname, CONSTRAINTS) == real_constraints
        assert _fetch(pg, n.dbname, "SELECT indexname FROM pg_indexes WHERE indexname = 'player_shirt'") == [("player_shirt",)]
        views = "SELECT viewname, definition FROM pg_views WHERE schemaname = 'league' ORDER BY 1"
        assert _fetch(pg, n.dbname, views) == _fetch(pg, "league", views)  # '%' in a definition kept
        # the constraints hold on the drawn rows, and the generated column is computed
        assert _fetch(pg, n.dbname, "SELECT COUNT(*) FROM league.player WHERE age_next IS DISTINCT FROM age + 1") == [(0,)]
        assert _fetch(pg, n.dbname, "SELECT COUNT(*) FROM league.player p LEFT JOIN league.team t ON t.id = p.team_id WHERE t.id IS NULL") == [(0,)]
        rows += _fetch(pg, n.dbname, "SELECT COUNT(*) FROM league.player")[0][0]
        cols, view = run_query(n, "SELECT name, goals FROM scorers ORDER BY name")  # the view, on its own search_path
        assert cols == ("name", "goals")
    assert rows > 0  # not every neighbour is empty


def test_pg_neighbours_draw_from_the_columns_own_values_and_boundaries(pg: PgServer, source: PgSource) -> None:
    built = source.build(6, 0)
    positions, budgets, founded = set(), set(), set()
    for n in built:
        positions |= {r[0] for r in _fetch(pg, n.dbname, "SELECT position::text FROM league.player")}
        budgets |= {r[0] for r in _fetch(pg, n.dbname, "SELECT budget FROM league.team")}
        founded |= {r[0] for r in _fetch(pg, n.dbname, "SELECT founded FROM league.team")}
    assert positions - {None} <= {"keeper", "defender", "forward"} and len(positions - {None}) >= 2
    # NULLs only where the real column has one (these have none): docs/scoring.md, rule nulls
    assert None not in positions and None not in budgets and None not in founded
    real_budgets = {r[0] for r in _fetch(pg, "league", "SELECT budget FROM league.team")}
    assert budgets - real_budgets - {None}  # perturbed money values beside the real ones
    assert all(b is None or b >= 0 for b in budgets)  # but never against the CHECK


def test_pg_neighbours_are_seeded_reproducible_and_found_again(pg: PgServer, source: PgSource) -> None:
    dump = "SELECT * FROM league.player ORDER BY id"
    first = source.build(3, 7)
    data = [_fetch(pg, n.dbname, dump) for n in first]
    oids = _fetch(pg, "postgres", f"SELECT datname, oid FROM pg_database WHERE datname LIKE '{NAME_PREFIX}%' ORDER BY 1")
    again = source.build(3, 7)
    assert again == first
    assert _fetch(pg, "postgres", f"SELECT datname, oid FROM pg_database WHERE datname LIKE '{NAME_PREFIX}%' ORDER BY 1") == oids
    drop_neighbours(_scratch(pg))
    rebuilt = source.build(3, 7)
    assert [_fetch(pg, n.dbname, dump) for n in rebuilt] == data  # the same rows from the same seed
    other = source.build(3, 8)
    assert [_fetch(pg, n.dbname, dump) for n in other] != data
    assert not _fetch(pg, "postgres", "SELECT datname FROM pg_database WHERE datname LIKE '%\\_t%' AND datname LIKE 'nl2sql%'")


def test_pg_neighbours_keep_the_real_databases_collation(pg: PgServer) -> None:
    with psycopg.connect(pg.dsn(), autocommit=True) as con:
        con.execute("DROP DATABASE IF EXISTS words")
        try:
            con.execute("CREATE DATABASE words TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'")
        except psycopg.errors.FeatureNotSupported as exc:
            pytest.skip(f"this PostgreSQL has no ICU: {exc}")
    with psycopg.connect(pg.dsn("words"), autocommit=True) as con:
        con.execute("CREATE TABLE w (x text); INSERT INTO w VALUES ('b'), ('B'), ('a'), ('A')")
    try:
        src = PgSource("words", pg.url("words"), _scratch(pg))
        (n,) = src.build(1, 0)
        info = "SELECT datlocprovider, daticulocale FROM pg_database WHERE datname = current_database()"
        assert _fetch(pg, n.dbname, info) == _fetch(pg, "words", info) == [("i", "en-US")]
    finally:
        drop_neighbours(_scratch(pg))


def test_pg_neighbours_are_read_only_behind_the_guard_and_the_server(pg: PgServer, source: PgSource) -> None:
    (n,) = source.build(1, 0)
    before = _fetch(pg, n.dbname, "SELECT COUNT(*) FROM league.player")
    for sql in ("DELETE FROM league.player", "SELECT pg_read_file('/etc/passwd')", "CREATE TABLE x (a int)",
                "SELECT 1; DROP TABLE league.player", "SELECT set_config('default_transaction_read_only', 'off', false)"):
        with pytest.raises(Exception) as caught:
            run_query(n, sql)
        assert type(caught.value).__name__ == "QueryError", sql
    # below the guard, the server itself refuses writes in the neighbour's sessions
    from pytest_nl2sql.scoring.pgneighbours import _adapter

    with _adapter(n).raw_connection() as con:
        cur = con.cursor()
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            cur.execute("DELETE FROM league.player")
    assert _fetch(pg, n.dbname, "SELECT COUNT(*) FROM league.player") == before
    # a session of its own login, opened with no options at all, is read-only by default too
    with psycopg.connect(host=pg.host, port=pg.port, user=SCRATCH_LOGIN, dbname=n.dbname) as con:
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            con.execute("DELETE FROM league.player")
    # and no other login may connect to it
    with pytest.raises(psycopg.OperationalError, match="permission denied"):
        psycopg.connect(host=pg.host, port=pg.port, user="nl2sql_nocreate", dbname=n.dbname)


def test_only_a_login_that_may_create_databases_and_no_superuser_builds(pg: PgServer) -> None:
    url = pg.url("league")
    with pytest.raises(NeighbourSetupError, match="may not create databases .*ALTER ROLE nl2sql_nocreate CREATEDB"):
        PgSource("league", url, _scratch(pg, "nl2sql_nocreate")).build(1, 0)
    with pytest.raises(NeighbourSetupError, match="is a superuser.*allow_privileged_login"):
        PgSource("league", url, _scratch(pg, pg.user)).build(1, 0)
    try:
        assert len(PgSource("league", url, _scratch(pg, pg.user), allow_privileged_login=True).build(1, 0)) == 1
    finally:
        assert len(drop_neighbours(_scratch(pg, pg.user), allow_privileged_login=True)) == 1
    with pytest.raises(NeighbourSetupError, match="cannot be reached"):
        PgSource("league", url, f"postgresql+psycopg://{SCRATCH_LOGIN}@127.0.0.1:1/postgres").build(1, 0)


def test_a_pg_answer_right_only_on_the_real_data_disagrees_on_a_neighbour(pg: PgServer, source: PgSource) -> None:
    hood = Neighbourhood(k=5, resolve=lambda name: source, cache_dir=Path("/nonexistent"))
    gold = "SELECT name FROM player WHERE age > 22"
    wrong = "SELECT name FROM player WHERE id IN (2, 3)"
    assert sorted(run_query(hood.of("league")[0], "SELECT 1")[1]) == [(1,)]
    found = disagreement(hood, "league", gold, wrong, MatchRule())
    assert found is not None and found["database"].rsplit("/", 1)[-1].startswith(NAME_PREFIX)
    assert "gold_rows" in found and "answer_rows" in found
    assert disagreement(hood, "league", gold, "SELECT p.name FROM player AS p WHERE NOT p.age <= 22", MatchRule()) is None
    failing = disagreement(hood, "league", gold, "SELECT nope FROM player", MatchRule())
    assert failing is not None and "fails there" in failing["reason"]


def test_a_scratch_server_that_fails_is_said_once_per_item_and_not_retried(pg: PgServer) -> None:
    calls = []

    def resolve(name: str) -> PgSource:
        calls.append(name)
        return PgSource("league", pg.url("league"), _scratch(pg, "nl2sql_nocreate"))

    hood = Neighbourhood(k=2, resolve=resolve, cache_dir=Path("/nonexistent"))
    for _ in range(3):
        with pytest.raises(NeighboursUnavailable, match="could not be built: .*may not create databases"):
            hood.of("league")
    assert calls == ["league"]


# -- the plugin, end to end -------------------------------------------------------------------

SUITE = """\
version: 1
cases:
- id: league_001
  question: Which players are older than 22?
  datasources: [league]
  status: approved
  origin: hand
  outcome: {admin: allowed}
  tables: [player]
  order_matters: false
  sql: SELECT name FROM player WHERE age > 22
- id: league_002
  question: How many goals did each player score?
  datasources: [league]
  status: approved
  origin: hand
  outcome: {admin: allowed}
  tables: [player, played]
  order_matters: false
  sql: SELECT p.name, SUM(g.goals) AS goals FROM player p JOIN played g ON g.player_id = p.id GROUP BY p.name
"""
PREDICTIONS = [
    {"id": "league_001", "sql": "SELECT name FROM player WHERE id IN (2, 3)"},  # right on the real data only
    {"id": "league_002", "sql": "SELECT name, goals FROM scorers"},  # right everywhere
]


def _project(root: Path, pg: PgServer, scratch: str | None) -> Path:
    from urllib.parse import quote

    url = pg.url("league") + "?options=" + quote(f"-c search_path={SEARCH_PATH}", safe="")
    test_suite = f"test_suite:\n  scratch_url: {scratch}\n" if scratch else ""
    (root / "nl2sql.yaml").write_text(
        f"version: 1\ndatasources:\n  league:\n    url: {url}\n"
        f"roles:\n  admin:\n    datasources: '*'\n{test_suite}"
    )
    (root / "evals").mkdir(exist_ok=True)
    (root / "evals" / "league.yaml").write_text(SUITE)
    (root / "p.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PREDICTIONS))
    report = regenerate(root / "evals" / "league.yaml", DatasourceRegistry.from_config(load_config(root / "nl2sql.yaml")))
    assert not report.failed, report
    return root


ARGS = ["--nl2sql-suite", "evals/league.yaml", "--nl2sql-predictions", "p.jsonl", "-p", "no:randomly"]


def test_the_plugin_fails_a_postgresql_answer_a_neighbour_tells_apart(pytester: pytest.Pytester, pg: PgServer) -> None:
    _project(pytester.path, pg, _scratch(pg))
    try:
        pytester.runpytest(*ARGS).assert_outcomes(passed=2)
        result = pytester.runpytest(*ARGS, "--nl2sql-test-suite", "4", "--nl2sql-out", "r.json")
        result.assert_outcomes(passed=1, failed=1)
        result.stdout.fnmatch_lines(["*FAILED result_match: the rows match on the real database, but not on neighbour database * of 4*"])
        items = {i["case_id"]: i for i in json.loads((pytester.path / "r.json").read_text())["items"]}
        disagreed = items["league_001"]["test_suite"]["disagreed"]
        assert NAME_PREFIX in disagreed["database"] and disagreed["answer_rows"] is not None
        assert items["league_002"]["test_suite"] == {"checked": True, "neighbours": 4}
        # two xdist workers building the same neighbours at once: the same verdicts, one copy each
        drop_neighbours(_scratch(pg))
        parallel = pytester.runpytest(*ARGS, "--nl2sql-test-suite", "4", "-n", "2", "--nl2sql-out", "x.json")
        parallel.assert_outcomes(passed=1, failed=1)
        again = {i["case_id"]: i for i in json.loads((pytester.path / "x.json").read_text())["items"]}
        assert again["league_001"]["test_suite"]["disagreed"]["database"] == disagreed["database"]
        names = drop_neighbours(_scratch(pg), dry_run=True)
        assert len(names) == len(set(names)) and not [n for n in names if "_t" in n.rsplit("_", 2)[-2]]
    finally:
        drop_neighbours(_scratch(pg))


def test_without_a_scratch_server_postgresql_items_say_why_they_were_not_checked(pytester: pytest.Pytester, pg: PgServer) -> None:
    _project(pytester.path, pg, None)
    result = pytester.runpytest(*ARGS, "--nl2sql-test-suite", "4", "--nl2sql-out", "r.json")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*2 items scored on the real database only: *test_suite.scratch_url*"])
    items = json.loads((pytester.path / "r.json").read_text())["items"]
    assert all(i["test_suite"]["checked"] is False and "scratch_url" in i["test_suite"]["why"] for i in items)


def test_from_project_builds_postgresql_neighbours_from_the_config(tmp_path: Path, pg: PgServer) -> None:
    config = load_config(_project(tmp_path, pg, _scratch(pg)) / "nl2sql.yaml")
    try:
        hood = from_project(config, 2, tmp_path / "cache")
        assert [n.dbname.startswith(NAME_PREFIX) for n in hood.of("league")] == [True, True]
    finally:
        drop_neighbours(_scratch(pg))


def test_eval_audit_mutants_counts_kills_on_postgresql_neighbours(tmp_path: Path, pg: PgServer) -> None:
    import subprocess
    import sys

    root = _project(tmp_path, pg, _scratch(pg))
    try:
        proc = subprocess.run([sys.executable, "-m", "pytest_nl2sql.cli", "eval", "audit", "--mutants", "evals/league.yaml"],
                              cwd=root, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        # age > 22 -> age >= 22 survives on the real data (nobody is 22) but not on every neighbour
        line = next(ln for ln in proc.stdout.splitlines() if "case 'league_001': mutants killed" in ln)
        assert "with 5 neighbour databases" in line, proc.stdout
        import re

        real, near = (int(m) for m in re.findall(r"(\d+)/\d+ \(", line))
        assert near > real, line
    finally:
        drop_neighbours(_scratch(pg))


def test_nl2sql_cache_neighbours_lists_and_drops_the_scratch_databases(tmp_path: Path, pg: PgServer) -> None:
    import subprocess
    import sys

    root = _project(tmp_path, pg, _scratch(pg))
    from_project(load_config(root / "nl2sql.yaml"), 3, root / ".nl2sql-cache" / "neighbours").of("league")

    def cli(*args: str) -> str:
        proc = subprocess.run([sys.executable, "-m", "pytest_nl2sql.cli", "cache", "neighbours", *args],
                              cwd=root, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc.stdout

    assert "holds 3 neighbour databases" in cli()
    assert "dropped 3 neighbour databases" in cli("--clear")
    assert "holds 0 neighbour databases" in cli()


def test_neighbour_queries_run_as_a_reader_role_that_may_only_select_there(pg: PgServer, source: PgSource) -> None:
    (n,) = source.build(1, 0)
    reader = f"{n.dbname}_r"
    with psycopg.connect(pg.dsn("postgres"), autocommit=True) as con:
        row = con.execute(
            "SELECT rolsuper, rolcanlogin, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = %s", (reader,)
        ).fetchone()
    assert row == (False, False, False, False)
    assert _fetch(pg, n.dbname, f"SELECT count(*) FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.member WHERE r.rolname = '{reader}'") == [(0,)]
    # what runs there runs as the reader, not as the scratch login that owns the tables:
    # take the reader's SELECT away and the same query is refused
    assert n.run("SELECT count(*) AS n FROM league.team", 10)[1][0][0] >= 0
    with psycopg.connect(pg.dsn(n.dbname), autocommit=True) as con:
        con.execute("SET default_transaction_read_only = off")
        con.execute(f'REVOKE SELECT ON league.team FROM "{reader}"')
    try:
        with pytest.raises(QueryError, match="permission denied"):
            n.run("SELECT count(*) AS n FROM league.team", 10)
    finally:
        with psycopg.connect(pg.dsn(n.dbname), autocommit=True) as con:
            con.execute("SET default_transaction_read_only = off")
            con.execute(f'GRANT SELECT ON league.team TO "{reader}"')


def test_a_neighbour_built_by_another_login_is_an_error_never_a_pass(pg: PgServer, source: PgSource) -> None:
    source.build(1, 0)
    with psycopg.connect(pg.dsn("postgres"), autocommit=True) as con:
        if con.execute("SELECT 1 FROM pg_roles WHERE rolname = 'nl2sql_other'").fetchone() is None:
            con.execute("CREATE ROLE nl2sql_other LOGIN CREATEDB CREATEROLE")
    other = PgSource("league", source.url, _scratch(pg, "nl2sql_other"))
    with pytest.raises(NeighbourSetupError, match="exists but cannot be read here"):
        other.build(1, 0)


def test_a_column_some_role_may_not_read_has_no_real_value_on_a_pg_neighbour(pg: PgServer, source: PgSource) -> None:
    hidden = lambda table, column: table.endswith("player") and column == "name"  # noqa: E731
    (n,) = source.build(1, 0, hidden=hidden)
    names = {r[0] for r in run_query(n, "SELECT name FROM league.player")[1]}
    assert not names & {"Anna", "Bo", "Cas"}
    teams = {r[0] for r in run_query(n, "SELECT name FROM league.team")[1]}
    assert teams <= {"Ajax", "PSV", "", "ajax", "psv", "AJAX", "Ajax ", "PSV "} or teams == set()


def _everything(pg: PgServer, dbname: str) -> list:
    """Every row of every user table of ``dbname`` (how a database is compared before and after)."""
    tables = _fetch(pg, dbname, "SELECT schemaname, tablename FROM pg_tables WHERE schemaname NOT IN "
                                "('pg_catalog', 'information_schema') ORDER BY 1, 2")
    return [(s, t, sorted(map(repr, _fetch(pg, dbname, f'SELECT r::text FROM "{s}"."{t}" AS r')))) for s, t in tables]


def test_a_postgresql_flag_shows_its_shrunk_counterexample_and_writes_no_database(pytester: pytest.Pytester, pg: PgServer) -> None:
    _project(pytester.path, pg, _scratch(pg))
    real = _everything(pg, "league")
    try:
        result = pytester.runpytest(*ARGS, "--nl2sql-test-suite", "4", "--nl2sql-out", "r.json")
        result.assert_outcomes(passed=1, failed=1)
        # the failure text: the few rows of the neighbour that tell gold and answer apart, both results
        result.stdout.fnmatch_lines([
            "*counterexample: neighbour * (seed 0, *nl2sql_nb_*), [1-3] of its * rows:",
            "*league.player (id, name, age, *",
            "*gold gives [[]('*",
            "*answer gives [[]*",
        ])
        items = {i["case_id"]: i for i in json.loads((pytester.path / "r.json").read_text())["items"]}
        cx = items["league_001"]["test_suite"]["disagreed"]["counterexample"]
        assert 1 <= cx["row_count"] <= 3 < cx["shrunk_from"] and cx["complete"] is True
        assert [t["table"] for t in cx["rows"]] in (["league.team", "league.player"], ["league.player"])
        assert cx["gold_rows"] != cx["answer_rows"] and cx["answer_error"] is None
        # nothing was written: not the datasource, not the neighbours (the same rows, the same verdict again)
        assert _everything(pg, "league") == real
        names = drop_neighbours(_scratch(pg), dry_run=True)
        built = {n: _everything(pg, n) for n in names}
        again = pytester.runpytest(*ARGS, "--nl2sql-test-suite", "4", "--nl2sql-out", "r2.json")
        again.assert_outcomes(passed=1, failed=1)
        items2 = {i["case_id"]: i for i in json.loads((pytester.path / "r2.json").read_text())["items"]}
        assert items2["league_001"]["test_suite"]["disagreed"]["counterexample"] == cx
        assert {n: _everything(pg, n) for n in names} == built and _everything(pg, "league") == real
        with psycopg.connect(pg.dsn("postgres")) as con:  # no shrinking transaction left open
            assert con.execute("SELECT count(*) FROM pg_stat_activity WHERE datname LIKE 'nl2sql_nb_%' "
                               "AND state LIKE 'idle in transaction%'").fetchone() == (0,)
    finally:
        drop_neighbours(_scratch(pg))


def test_shrinking_on_postgresql_runs_read_only_as_the_reader_and_only_what_the_guard_admits(pg: PgServer, source: PgSource) -> None:
    from pytest_nl2sql.scoring.counterexample import _PgRows, shrink

    (n,) = source.build(1, 0)
    before = _everything(pg, n.dbname)
    copy = _PgRows(n, deadline=time.monotonic() + 60)
    try:
        with copy.keeping(copy.items[:1]) as valid:
            assert valid
            con = copy.con  # below the guard, as a query that got past it would be
            assert con.execute("SELECT current_user, current_setting('transaction_read_only')").fetchone() == (f"{n.dbname}_r", "on")
            con.execute("SAVEPOINT probe")
            for escape in ("SET LOCAL transaction_read_only = off", "SELECT set_config('transaction_read_only', 'off', true)"):
                with pytest.raises(psycopg.Error, match="read-write mode inside a read-only transaction"):
                    con.execute(escape)
                con.execute("ROLLBACK TO SAVEPOINT probe")
            with pytest.raises(psycopg.Error, match="permission denied|read-only"):
                con.execute("DELETE FROM league.played")
            con.execute("ROLLBACK TO SAVEPOINT probe")
    finally:
        copy.close()
    assert _everything(pg, n.dbname) == before

    def differ(gold, answer) -> bool:
        return isinstance(answer, Exception) or gold != answer

    # an answer the statement guard refuses is never run on the neighbour: it "fails" with the guard's reason
    found = shrink(n, "SELECT name FROM player", "SELECT set_config('role', 'nl2sql_scratch', true) AS r", differ)
    assert found is not None and "set_config() is not allowed" in found["answer_error"]
    assert _everything(pg, n.dbname) == before


def test_a_shrinking_that_cannot_get_its_turn_shows_the_whole_neighbour_labelled_not_minimal(pg: PgServer, source: PgSource) -> None:
    from pytest_nl2sql.scoring.counterexample import shrink, turn_key
    from pytest_nl2sql.scoring.scorers import shown_counterexample

    (n,) = source.build(1, 0)

    def differ(gold, answer) -> bool:
        return isinstance(answer, Exception) or gold != answer

    gold, answer = "SELECT name FROM player", "SELECT name FROM player WHERE age > 1000"
    alone = shrink(n, gold, answer, differ)
    assert alone is not None and alone["complete"] and alone["row_count"] < alone["shrunk_from"]
    # another shrinker of the same neighbour holds its turn past the time bound
    with psycopg.connect(pg.dsn(n.dbname)) as other:
        other.execute("SELECT pg_advisory_xact_lock(%s, %s)", turn_key(n.dbname))
        found = shrink(n, gold, answer, differ, seconds=0.3)
    assert found is not None and found["complete"] is False and found["row_count"] == found["shrunk_from"]
    text = shown_counterexample({"neighbour": 0, "seed": 0, "database": n.dbname, "counterexample": found})
    assert "not minimal: shrinking stopped at its time bound" in text


def test_two_builders_creating_the_same_reader_role_at_once_both_go_on(pg: PgServer) -> None:
    """Two xdist workers building the same neighbour race on its reader role; PostgreSQL answers
    the loser DuplicateObject or, while both commit, UniqueViolation (a neighbour build that failed
    on it left its datasource's items scored on the real database only)."""
    failures: list[BaseException] = []
    for trial in range(20):
        start = threading.Barrier(2)

        def create(role: str = f"nl2sql_race_reader_{trial}", start: threading.Barrier = start) -> None:
            with psycopg.connect(pg.dsn("postgres"), autocommit=True) as admin:
                start.wait()
                try:
                    create_reader_role(admin, role)
                except BaseException as exc:  # noqa: BLE001 -- collected, asserted below
                    failures.append(exc)

        threads = [threading.Thread(target=create) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert failures == []
    with psycopg.connect(pg.dsn("postgres"), autocommit=True) as admin:
        count = admin.execute("SELECT count(*) FROM pg_roles WHERE rolname LIKE 'nl2sql_race_reader_%'").fetchone()
        assert count == (20,)
