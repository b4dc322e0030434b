"""The SQLite URL reader (config/urls.py) reads every SQLite URL as SQLAlchemy's make_url does,
and hands everything else to make_url."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from pytest_nl2sql.config import redact_url
from pytest_nl2sql.config.urls import NotAURL, SqliteURL, file_url, read_sqlite_url, read_url

EDGE_CASES = [
    "sqlite://",
    "sqlite:///",
    "sqlite:////",
    "sqlite:///relative.db",
    "sqlite:///data/chinook.sqlite",
    "sqlite:////abs/path.db",
    "sqlite:////abs//double/slash.db",
    "sqlite:///:memory:",
    "sqlite://?",
    "sqlite://?mode=ro",
    "sqlite:///?mode=ro",
    "sqlite+pysqlite://",
    "sqlite+pysqlite:///x.db",
    "sqlite+pysqlite:////tmp/x.db?timeout=5",
    "sqlite:///x.db?",
    "sqlite:///x.db?a=1&b=2",
    "sqlite:///x.db?b=2&a=1",
    "sqlite:///x.db?a=1&a=2&a=3",
    "sqlite:///x.db?a=1&b=&c",
    "sqlite:///x.db?a=&a=",
    "sqlite:///x.db?=1",
    "sqlite:///x.db?a=1;b=2",
    "sqlite:///x.db?a=b=c",
    "sqlite:///x.db?a=x+y&b=%2B%26",
    "sqlite:///x.db?uri=true&check_same_thread=false",
    "sqlite:///x.db?a=1?b=2",
    "sqlite:///x.db?password=secret&token=t",
    "sqlite:///a b/c d.db",
    "sqlite:///a+b.db",
    "sqlite:///a%20b.db",
    "sqlite:///a%2Fb.db",
    "sqlite:///a%zz.db",
    "sqlite:///a%.db",
    "sqlite:///100%25.db",
    "sqlite:///a@b.db",
    "sqlite:///a:b@c.db",
    "sqlite:///a#b.db",
    "sqlite:///C:/data/x.db",
    "sqlite:///file:x.db?mode=ro&uri=true",
    "sqlite:////tmp/ünïcode/数据.db",
    "sqlite:///~/x.db",
    "sqlite:///x.db?k=%E2%82%AC",
    "sqlite:///x.db?k=%ZZ",
    "sqlite:///x.db?%61=1",
]
NOT_MINE = [
    "sqlite://user:pw@host/x.db",
    "sqlite://host/x.db",
    "sqlite://:5432/x.db",
    "sqlite://[::1]/x.db",
    "sqlite://@/x.db",
    "sqlite://?@=",
    "sqlite://?a=1:x@y",
    "sqlite+aiosqlite:///x.db",
    "SQLite:///x.db",
    "sqlite:///x\n.db",
    "sqlite:///x.db?a=1\nb=2",
    "sqlite:///x\x00.db",
    "postgresql+psycopg://u:p@localhost/db",
    "duckdb:///x.duckdb",
    "not a url",
    "",
    "sqlite:/x.db",
]


def assert_agrees(text: str) -> None:
    mine = read_sqlite_url(text)
    assert mine is not None, text
    theirs = make_url(text)
    assert mine.drivername == theirs.drivername
    assert mine.get_backend_name() == theirs.get_backend_name() == "sqlite"
    assert mine.get_driver_name() == theirs.get_driver_name()
    assert mine.database == theirs.database
    assert dict(mine.query) == dict(theirs.query)
    assert mine.render_as_string(hide_password=False) == theirs.render_as_string(hide_password=False)
    assert mine.render_as_string() == theirs.render_as_string()
    assert read_url(text) == mine
    assert redact_url(text) == _sqlalchemy_redact(text)
    again = read_sqlite_url(mine.render_as_string(hide_password=False))
    assert again is not None and again.render_as_string() == mine.render_as_string()
    if theirs.database is not None:
        moved = theirs.set(database=theirs.database + "/moved ~:x.db")
        assert mine.set(database=mine.database + "/moved ~:x.db").render_as_string() == moved.render_as_string()


def _sqlalchemy_redact(text: str) -> str:
    """redact_url as it was, on make_url."""
    parsed = make_url(text)
    secret = [k for k in parsed.query if k.lower() in ("password", "passwd", "pwd", "secret", "token", "access_token", "api_key", "apikey")]
    if secret:
        parsed = parsed.update_query_dict({k: "***" for k in secret})
    return parsed.render_as_string(hide_password=True).replace("%2A%2A%2A", "***")


@pytest.mark.parametrize("text", EDGE_CASES)
def test_a_sqlite_url_reads_as_make_url_reads_it(text: str) -> None:
    assert_agrees(text)


@pytest.mark.parametrize("text", NOT_MINE)
def test_anything_else_is_left_to_sqlalchemy(text: str) -> None:
    assert read_sqlite_url(text) is None
    try:
        expected = make_url(text)
    except ArgumentError:
        with pytest.raises(NotAURL, match="Could not parse SQLAlchemy URL"):
            read_url(text)
        assert isinstance(NotAURL("x"), ValueError)
        return
    parsed = read_url(text)
    assert isinstance(parsed, URL)
    assert parsed.render_as_string(hide_password=False) == expected.render_as_string(hide_password=False)


def test_a_non_string_is_left_to_sqlalchemy() -> None:
    assert read_sqlite_url(None) is None
    with pytest.raises(NotAURL):
        read_url(42)


def test_file_url_writes_what_url_create_writes() -> None:
    for database in ("/tmp/x.db", "/a b/c:d+e%f#g?h.db", ":memory:", "rel/x.db", "/tmp/数据.db"):
        for driver in ("sqlite", "duckdb"):
            assert file_url(driver, database) == URL.create(driver, database=database).render_as_string(
                hide_password=False
            )


def test_a_sqlite_url_has_no_password() -> None:
    parsed = read_sqlite_url("sqlite:///x.db")
    assert isinstance(parsed, SqliteURL)
    assert (parsed.username, parsed.password, parsed.host, parsed.port) == (None, None, None, None)


_PATH_CHARS = st.sampled_from(list("abcXYZ019/._-~ +:@#;,=&!$'()*[]{}|\\\"<>^`") + ["%", "%20", "%2F", "%3A", "%E2%82%AC", "%zz", "é", "数", "\u2028"])
_QUERY_CHARS = st.sampled_from(list("abcXYZ019._-~ +:/@#;,!$'()*%?") + ["%20", "%26", "%3D", "%2B", "%E2%82%AC", "%zz", "é"])
_token = st.lists(_QUERY_CHARS, max_size=6).map("".join)
_pair = st.one_of(
    st.tuples(_token, _token).map(lambda kv: f"{kv[0]}={kv[1]}"),
    _token,
    st.tuples(_token, _token, _token).map(lambda kv: f"{kv[0]}={kv[1]}={kv[2]}"),
)
_query = st.lists(_pair, max_size=5).map("&".join)
_path = st.lists(_PATH_CHARS, max_size=12).map("".join)


@st.composite
def sqlite_urls(draw: st.DrawFn) -> str:
    scheme = draw(st.sampled_from(["sqlite", "sqlite+pysqlite"]))
    lead = draw(st.sampled_from(["", "/", "//", "///"]))
    path = draw(_path) if lead else ""
    text = f"{scheme}://{lead}{path}"
    if draw(st.booleans()):
        text += "?" + draw(_query)
    return text


@settings(max_examples=600, deadline=None)
@given(sqlite_urls())
def test_generated_sqlite_urls_read_as_make_url_reads_them(text: str) -> None:
    rest = text.partition("://")[2]
    if rest.startswith("?") and "@" in rest:  # make_url reads "?...@" as a user name
        assert read_sqlite_url(text) is None
        try:
            expected = make_url(text)
        except ValueError:  # e.g. an empty port
            with pytest.raises(ValueError):
                read_url(text)
            return
        assert read_url(text) == expected
        return
    assert_agrees(text)
