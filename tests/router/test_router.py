"""The router as a user of mode retrieval sees it: where a question goes, which tables and
columns come with it, and what a role's allowed datasources change."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from pytest_nl2sql.engine.router import DatasourceDoc, Router, doc_from_schema, tokenize

from .conftest import demo_doc


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What were total invoice sales per billing country?", "chinook"),
        ("Which artists have the most albums?", "chinook"),
        ("How many support tickets are still open, by priority?", "support"),
        ("Which agents resolved the most tickets through chat?", "support"),
        ("What is the bounce rate of website sessions per device type?", "webanalytics"),
        ("Which marketing campaign brought in the most conversion revenue?", "webanalytics"),
    ],
)
def test_questions_go_to_the_datasource_they_are_about(demo_docs, question, expected):
    routing = Router(demo_docs).route(question)
    assert routing.top == expected
    assert routing.shortlist[0] == expected
    assert [name for name, _ in routing.ranked] == sorted(
        [name for name, _ in routing.ranked], key=lambda n: -dict(routing.ranked)[n]
    )


def test_schema_words_alone_route_when_there_is_no_description(schema_only_docs):
    router = Router(schema_only_docs)
    assert router.route("Which invoice lines bought tracks of the Jazz genre?").top == "chinook"
    assert router.route("How many tickets missed their SLA resolution target?").top == "support"
    assert router.route("Average time on page of page views").top == "webanalytics"


def test_sampled_values_route_a_question_that_names_only_a_value(schema_only_docs):
    # "Metal" is nowhere in any name, only among Genre.Name's sampled values.
    assert Router(schema_only_docs).route("How much Metal did we sell?").top == "chinook"


def test_allowed_restricts_routing_to_a_roles_datasources(demo_docs):
    router = Router(demo_docs)
    question = "What were total invoice sales per billing country?"
    routing = router.route(question, allowed={"support", "webanalytics"})
    assert {name for name, _ in routing.ranked} == {"support", "webanalytics"}
    assert "chinook" not in routing.shortlist
    assert not any(table.startswith("chinook.") for table in routing.tables)
    assert router.route(question, allowed=[]).shortlist == ()


def test_allowed_naming_an_unknown_datasource_is_an_error_listing_the_known(demo_docs):
    with pytest.raises(ValueError, match=r"'warehouse'.*known: chinook, support, webanalytics"):
        Router(demo_docs).route("any tickets?", allowed={"support", "warehouse"})
    with pytest.raises(TypeError, match="collection of datasource names"):
        Router(demo_docs).route("any tickets?", allowed="support")


def _twins() -> list[DatasourceDoc]:
    tables = {
        "customers": ["customer_id", "name", "country"],
        "orders": ["order_id", "customer_id", "total"],
    }
    return [
        DatasourceDoc("shop_b", tables=tables),
        DatasourceDoc("shop_a", tables=tables),
        DatasourceDoc(
            "zoo",
            tables={
                "animals": ["animal_id", "species", "enclosure"],
                "keepers": ["keeper_id", "name"],
            },
        ),
    ]


def test_close_runner_ups_join_the_shortlist_up_to_max_datasources():
    question = "Which customers placed the largest orders?"
    routing = Router(_twins()).route(question)
    # Identical schemas tie: both are kept, the tie broken by name, the unrelated one is not.
    assert routing.shortlist == ("shop_a", "shop_b")
    assert routing.ranked[0][1] == routing.ranked[1][1]
    assert Router(_twins(), max_datasources=1).route(question).shortlist == ("shop_a",)
    assert Router(_twins(), candidates=1).route(question).shortlist == ("shop_a",)


def test_a_clear_question_shortlists_one_datasource(demo_docs):
    routing = Router(demo_docs).route("Which playlists hold the most tracks?")
    assert routing.shortlist == ("chinook",)
    top, runner_up = routing.ranked[0][1], routing.ranked[1][1]
    assert runner_up < 0.8 * top


def test_keep_ratio_decides_how_close_a_runner_up_must_be(demo_docs):
    question = "How many customers in each country?"  # chinook and support both hold customers
    loose = Router(demo_docs, keep_ratio=0.01).route(question)
    strict = Router(demo_docs, keep_ratio=1.0).route(question)
    assert len(loose.shortlist) == 2
    assert strict.shortlist == (loose.shortlist[0],)


def test_routing_is_deterministic_whatever_the_order_of_the_docs(demo_docs):
    questions = [
        "How many customers in each country?",
        "Which agents resolved the most tickets?",
        "nothing here matches at all xyzzy",
    ]
    forward, backward = Router(demo_docs), Router(list(reversed(demo_docs)))
    for question in questions:
        first = forward.route(question)
        assert first == forward.route(question) == backward.route(question)


def test_a_question_matching_nothing_still_goes_somewhere_by_name(demo_docs):
    routing = Router(demo_docs).route("xyzzy plugh")
    assert routing.ranked == (("chinook", 0.0), ("support", 0.0), ("webanalytics", 0.0))
    assert routing.shortlist == ("chinook",)
    assert routing.tables  # the top datasource's tables, so a later step has a schema


def test_datasources_with_no_words_at_all_still_route():
    router = Router(
        [DatasourceDoc("b"), DatasourceDoc("a"), DatasourceDoc("c", tables={"t": ["id"]})]
    )
    routing = router.route("anything at all?")
    assert routing.shortlist == ("a",)
    assert routing.ranked == (("a", 0.0), ("b", 0.0), ("c", 0.0))


def test_tables_and_columns_the_answer_needs_come_first(demo_docs):
    routing = Router(demo_docs).route("What were total invoice sales per billing country?")
    assert routing.tables[0] == "chinook.Invoice"
    assert {"chinook.Invoice.BillingCountry", "chinook.Invoice.Total"} <= set(routing.columns[:4])


def test_join_tables_come_along_by_their_key_columns(demo_docs):
    routing = Router(demo_docs).route("Which artists have tracks on the most playlists?")
    tables = set(routing.tables)
    # Track -> Album -> Artist, and the PlaylistTrack link table between Playlist and Track.
    assert {
        "chinook.Artist",
        "chinook.Track",
        "chinook.Playlist",
        "chinook.PlaylistTrack",
        "chinook.Album",
    } <= tables
    assert "chinook.Album.ArtistId" in routing.columns
    assert "chinook.Track.AlbumId" in routing.columns


def test_tables_and_columns_are_bounded(demo_docs):
    router = Router(demo_docs, max_tables=2, max_columns=3)
    routing = router.route("Which artists have tracks on the most playlists?")
    assert len(routing.tables) == 2
    assert len(routing.columns) == 3
    assert all(column.rsplit(".", 1)[0] in routing.tables for column in routing.columns)


def test_recall_of_the_tables_questions_need(demo_docs):
    cases = [
        (
            "Which employee's customers spent the most on invoices?",
            {"chinook.Employee", "chinook.Customer", "chinook.Invoice"},
        ),
        ("Which genre has the longest average track length?", {"chinook.Genre", "chinook.Track"}),
        (
            "What is the average satisfaction rating for each support team?",
            {"support.satisfaction_ratings", "support.teams", "support.tickets"},
        ),
        (
            "What is the bounce rate of sessions for each device type?",
            {"webanalytics.sessions", "webanalytics.devices"},
        ),
    ]
    router = Router(demo_docs)
    found = sum(len(needed & set(router.route(q).tables)) for q, needed in cases)
    total = sum(len(needed) for _, needed in cases)
    assert found / total >= 0.9


def test_a_reranker_can_reorder_the_candidates(demo_docs):
    seen = []

    def prefer_support(question: str, texts: list[str]) -> list[float]:
        seen.append(len(texts))
        return [1.0 if text.startswith("support") else 0.0 for text in texts]

    question = "How many customers in each country?"
    plain = Router(demo_docs).route(question)
    reranked = Router(demo_docs, reranker=prefer_support).route(question)
    assert reranked.top == "support"
    assert seen == [3]
    assert plain.ranked != reranked.ranked

    with pytest.raises(ValueError, match="one score per text"):
        Router(demo_docs, reranker=lambda q, texts: [1.0]).route(question)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"candidates": 0}, "candidates must be a whole number >= 1"),
        ({"max_tables": -1}, "max_tables must be a whole number >= 1"),
        ({"keep_ratio": 1.5}, r"keep_ratio must be in \(0, 1\]"),
    ],
)
def test_bad_settings_say_what_would_be_right(demo_docs, kwargs, message):
    with pytest.raises(ValueError, match=message):
        Router(demo_docs, **kwargs)


def test_bad_docs_and_questions_are_refused_clearly(demo_docs):
    with pytest.raises(ValueError, match="given twice"):
        Router([demo_doc("support"), demo_doc("support")])
    with pytest.raises(ValueError, match="at least one DatasourceDoc"):
        Router([])
    with pytest.raises(ValueError, match="non-empty string"):
        DatasourceDoc(name=" ")
    with pytest.raises(ValueError, match="question must be a non-empty string"):
        Router(demo_docs).route("   ")


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("InvoiceLines", ["invoice", "line"]),
        ("customer_id", ["customer"]),
        ("Which categories have the most boxes?", ["category", "box"]),
        ("addresses and statuses", ["address", "status"]),
        ("Which NDAs expire in 2024?", ["nda", "expire"]),
        ("HTTPServer", ["http", "server"]),
    ],
)
def test_tokenize_splits_names_drops_stop_words_and_stems_plurals(text, terms):
    assert tokenize(text) == terms


def test_a_doc_from_an_introspected_sqlite_file_routes_on_its_values_and_keys(tmp_path: Path):
    from pytest_nl2sql.datasources import Adapter, introspect

    path = tmp_path / "music.sqlite"
    connection = sqlite3.connect(path)
    connection.executescript(
        """
        CREATE TABLE genre (id INTEGER PRIMARY KEY, label TEXT);
        CREATE TABLE song (id INTEGER PRIMARY KEY, title TEXT, style INTEGER REFERENCES genre(id));
        INSERT INTO genre VALUES (1, 'Bossa Nova'), (2, 'Zydeco');
        INSERT INTO song VALUES (1, 'Desafinado', 1), (2, 'Jolie Blonde', 2);
        """
    )
    connection.commit()
    connection.close()
    adapter = Adapter("music", f"sqlite:///{path}")
    try:
        doc = doc_from_schema(introspect(adapter), description="A record shop's catalogue.")
    finally:
        adapter.close()
    assert doc.samples["genre.label"] == ("Bossa Nova", "Zydeco")
    assert doc.links == {"song": ("genre",)}
    router = Router([doc, demo_doc("support"), demo_doc("webanalytics")])
    routing = router.route("How many zydeco songs are there?")
    assert routing.top == "music"
    # song's declared foreign key brings genre along although "style" names no table.
    assert {"music.song", "music.genre"} <= set(routing.tables)
