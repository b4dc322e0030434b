"""validate_sql: what a query reads, resolved against the schema, checked against a policy."""

from __future__ import annotations

import pytest

from pytest_nl2sql.engine import REFUSAL_MESSAGE, PlanModel, compile_plan, validate_sql
from pytest_nl2sql.engine.validator import Validation
from tests.engine.chinook_mini import SCHEMA, Policy
from tests.engine.examples import EXAMPLES, Example


def check(sql: str, policy: Policy | None = None, *, dialect: str = "sqlite") -> Validation:
    return validate_sql(sql, dialect=dialect, datasource="chinook", schema=SCHEMA,
                        policy=policy or Policy())


def test_aliases_resolve_to_tables_and_columns() -> None:
    v = check("SELECT c.Country, SUM(i.Total) AS spent FROM Customer c "
              "JOIN Invoice AS i ON i.CustomerId = c.CustomerId GROUP BY c.Country "
              "ORDER BY spent DESC")
    assert (v.ok, v.status, v.message) == (True, "ok", "")
    assert v.tables == {"Customer", "Invoice"}
    assert v.columns == {"Customer.Country", "Customer.CustomerId", "Invoice.CustomerId",
                         "Invoice.Total"}


def test_names_resolve_case_insensitively_and_report_the_schema_spelling() -> None:
    v = check('SELECT country FROM CUSTOMER WHERE "customerid" > 2')
    assert v.ok
    assert v.tables == {"Customer"}
    assert v.columns == {"Customer.Country", "Customer.CustomerId"}


def test_star_reads_every_column_of_the_table() -> None:
    assert check("SELECT * FROM Genre").columns == {"Genre.GenreId", "Genre.Name"}
    v = check("SELECT g.*, a.Name FROM Genre g CROSS JOIN Artist a")
    assert v.columns == {"Genre.GenreId", "Genre.Name", "Artist.Name"}


def test_count_star_reads_the_table_but_no_column() -> None:
    v = check("SELECT COUNT(*) FROM Invoice")
    assert v.ok and v.tables == {"Invoice"} and v.columns == frozenset()


def test_columns_read_through_a_subquery_in_from() -> None:
    v = check("SELECT t.c FROM (SELECT Country AS c FROM Customer WHERE City = 'Stuttgart') t")
    assert v.columns == {"Customer.Country", "Customer.City"}


def test_columns_read_through_a_cte() -> None:
    v = check("WITH spend AS (SELECT CustomerId, SUM(Total) AS total FROM Invoice GROUP BY 1) "
              "SELECT c.LastName, s.total FROM spend s JOIN Customer c USING (CustomerId)")
    assert v.ok
    assert v.tables == {"Invoice", "Customer"}
    assert v.columns == {"Invoice.CustomerId", "Invoice.Total", "Customer.LastName",
                         "Customer.CustomerId"}


def test_union_reads_both_sides() -> None:
    v = check("SELECT Name FROM Artist UNION SELECT Title FROM Album")
    assert v.tables == {"Artist", "Album"}
    assert v.columns == {"Artist.Name", "Album.Title"}


def test_correlated_subquery_resolves_the_outer_alias() -> None:
    v = check("SELECT c.LastName FROM Customer c WHERE EXISTS "
              "(SELECT 1 FROM Invoice i WHERE i.CustomerId = c.CustomerId AND i.Total > 5)")
    assert v.columns == {"Customer.LastName", "Customer.CustomerId", "Invoice.CustomerId",
                         "Invoice.Total"}


def test_scalar_and_in_subqueries() -> None:
    v = check("SELECT Name FROM Track WHERE GenreId IN (SELECT GenreId FROM Genre WHERE Name = 'Jazz')"
              " AND Milliseconds > (SELECT AVG(Milliseconds) FROM Track)")
    assert v.columns == {"Track.Name", "Track.GenreId", "Track.Milliseconds", "Genre.GenreId",
                         "Genre.Name"}


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql", "duckdb"])
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.id)
def test_every_compiled_example_validates(example: Example, dialect: str) -> None:
    sql = compile_plan(PlanModel.from_dict(example.data()), dialect)
    v = check(sql, dialect=dialect)
    assert v.status == "ok", (v.message, sql)


# -- refusals ----------------------------------------------------------------------------------


def test_a_denied_table_is_refused() -> None:
    v = check("SELECT LastName FROM Employee", Policy(deny_tables=["Employee"]))
    assert (v.ok, v.status, v.message) == (False, "refused", REFUSAL_MESSAGE)


def test_a_denied_table_reached_through_a_cte_is_refused() -> None:
    v = check("WITH e AS (SELECT * FROM Employee) SELECT COUNT(*) FROM e",
              Policy(deny_tables=["Employee"]))
    assert v.status == "refused"


def test_a_denied_column_is_refused_wherever_it_is_read() -> None:
    policy = Policy(deny_columns=["Customer.Email"])
    assert check("SELECT Email FROM Customer", policy).status == "refused"
    assert check("SELECT Country FROM Customer WHERE Email LIKE '%gmail%'", policy).status == "refused"
    assert check("SELECT * FROM Customer", policy).status == "refused"
    assert check("SELECT c.* FROM Customer c", policy).status == "refused"
    assert check("SELECT Country FROM Customer", policy).ok


def test_a_denied_datasource_is_refused_before_the_sql_is_read() -> None:
    v = check("this is not SQL", Policy(datasources=["support"]))
    assert v.status == "refused"


def test_a_refusal_names_nothing() -> None:
    policy = Policy(deny_tables=["Employee"], deny_columns=["Customer.Email"])
    for sql in ["SELECT LastName, Title FROM Employee",
                "SELECT c.Email FROM Customer c JOIN Employee e ON e.EmployeeId = c.SupportRepId",
                "SELECT Email FROM Customer"]:
        v = check(sql, policy)
        assert v.status == "refused"
        assert v.message == REFUSAL_MESSAGE
        shown = f"{v.message} {v.unknown} {sorted(v.tables)} {sorted(v.columns)}".lower()
        for name in ("employee", "lastname", "title", "email", "customer", "supportrepid"):
            assert name not in shown, (name, shown)


# -- unknown references and invalid SQL --------------------------------------------------------


@pytest.mark.parametrize(("sql", "unknown"), [
    ("SELECT * FROM Playlist", ("Playlist",)),
    ("SELECT Name FROM Artist a JOIN Songs s ON s.ArtistId = a.ArtistId", ("Songs",)),
    ("SELECT c.Phone FROM Customer c", ("Customer.Phone",)),
    ("SELECT Phone FROM Customer", ("Phone",)),
    ("SELECT x.Country FROM Customer c", ("x.Country",)),
    ("SELECT t.y FROM (SELECT Country AS x FROM Customer) t", ("t.y",)),
    ("SELECT c.Phone, c.Fax FROM Customer c", ("Customer.Phone", "Customer.Fax")),
])
def test_unknown_references_are_listed(sql: str, unknown: tuple[str, ...]) -> None:
    v = check(sql)
    assert (v.ok, v.status) == (False, "unknown_reference")
    assert v.unknown == unknown
    for name in unknown:
        assert name in v.message


def test_unknown_is_refused_like_a_denied_name_for_a_restricted_role() -> None:
    # A restricted role gets one answer for missing and denied names: no existence oracle
    # (issue 10). An unrestricted role still gets the names listed (above).
    v = check("SELECT Phone FROM Employee", Policy(deny_tables=["Employee"]))
    assert (v.status, v.message, v.unknown) == ("refused", REFUSAL_MESSAGE, ())


@pytest.mark.parametrize(("sql", "message"), [
    ("SELECT FROM WHERE (", "The SQL does not parse as sqlite"),
    ("SELECT 1; SELECT 2", "Expected exactly one SQL statement, got 2"),
    ("DELETE FROM Customer", "Only a read-only query (SELECT) may run, got DELETE"),
    ("DROP TABLE Customer", "Only a read-only query (SELECT) may run, got DROP"),
    ("SELECT CustomerId FROM Customer c JOIN Invoice i ON i.CustomerId = c.CustomerId",
     "Column 'CustomerId' is ambiguous; qualify it with its table or alias"),
])
def test_invalid_sql(sql: str, message: str) -> None:
    v = check(sql)
    assert (v.ok, v.status) == (False, "invalid")
    assert v.message.startswith(message), v.message


def test_table_functions_are_invalid() -> None:
    v = check("SELECT * FROM read_csv('/etc/passwd')", dialect="duckdb")
    assert v.status == "invalid"
    assert "Table functions are not allowed" in v.message


def test_unknown_dialect_is_invalid() -> None:
    v = check("SELECT 1", dialect="oracle")
    assert v.status == "invalid" and "unsupported dialect 'oracle'" in v.message


def test_the_policy_is_asked_with_the_schema_spelling() -> None:
    policy = Policy(deny_columns=["Customer.Email"])
    assert check("SELECT EMAIL FROM customer", policy).status == "refused"
    assert ("chinook", "Customer", "Email") in policy.asked


def test_a_cte_named_like_a_denied_table_reads_nothing_from_it() -> None:
    v = check("WITH Employee AS (SELECT 1 AS x) SELECT x FROM Employee",
              Policy(deny_tables=["Employee"]))
    assert v.ok and v.tables == frozenset()


def test_database_suggestions_are_cut_from_errors_for_a_restricted_role() -> None:
    from pytest_nl2sql.engine.validator import without_suggestions

    duck = 'Binder Error: Referenced column "Secrte" not found in FROM clause!\nCandidate bindings: "Secret"'
    assert without_suggestions(duck) == 'Binder Error: Referenced column "Secrte" not found in FROM clause!'
    assert "Secret" not in without_suggestions(duck.replace(chr(10), ' '))
    table = 'Catalog Error: Table with name Payrol does not exist! Did you mean "Payroll"?'
    assert "Payroll" not in without_suggestions(table) and without_suggestions(table).startswith("Catalog Error")
    pg = 'column "secrte" does not exist\nLINE 1: SELECT secrte\nHINT:  Perhaps you meant to reference the column "c.Secret".'
    assert without_suggestions(pg) == 'column "secrte" does not exist'
    assert without_suggestions("") == "the query failed on the database"
