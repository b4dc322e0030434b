"""Routing: which datasources, tables and columns a question is about, before any LLM runs.

Mode ``retrieval`` runs only this, so it is deterministic (ties broken by name) and cheap:
one BM25 index (``rank_bm25``) is built once over every datasource's *about* text, its sample
questions and one document per table; a question is scored against it, table scores are
aggregated per datasource and blended with the about and sample-question scores. Columns are
ranked with a small BM25 index per datasource. See docs/routing.md for the rules and numbers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

import attrs
from rank_bm25 import BM25Okapi

__all__ = ["DatasourceDoc", "Router", "Routing", "doc_from_schema", "tokenize"]

Reranker = Callable[[str, list[str]], list[float]]
"""``reranker(question, texts) -> scores``: one similarity per text, higher is closer."""

# -------------------------------------------------------------------------------------------
# Words

_STOP_WORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each either else
    ever every few for from further had has have having he her here hers him his how i if in
    into is it its itself just me might more most much must my no nor not now of off on once
    only or other our ours out over own per same she should so some such than that the their
    theirs them then there these they this those through to too under until up upon very via
    was we were what when where which while who whom whose why will with within without would
    you your yours
    many average avg sum mean top least highest lowest largest smallest
    biggest list show give find get tell return display name names id ids ever
    """.split()
)
_ACRONYM_PLURAL = re.compile(r"\b([A-Z]{2,})s\b")
_CAMEL_1 = re.compile(r"([a-z0-9])([A-Z])")
_CAMEL_2 = re.compile(r"([A-Z]+)([A-Z][a-z])")
_SPLIT = re.compile(r"[^a-z0-9]+")


def _stem(word: str) -> str:
    """A light plural stemmer: customers -> customer, categories -> category, boxes -> box,
    statuses -> status; words of three letters or fewer are left alone."""
    if len(word) <= 3:
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes", "zes")) or (
        word.endswith("uses") and not word.endswith(("auses", "ouses"))
    ):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _words(text: str) -> list[str]:
    """Lower-case words of ``text`` with CamelCase and snake_case split, stems not applied."""
    text = _ACRONYM_PLURAL.sub(r"\1", text)
    text = _CAMEL_2.sub(r"\1 \2", _CAMEL_1.sub(r"\1 \2", text))
    return [word for word in _SPLIT.split(text.lower()) if word]


def tokenize(text: str) -> list[str]:
    """The terms the router indexes and searches: split identifiers, stop words and pure
    numbers dropped, plurals stemmed. ``tokenize("InvoiceLines of customers")`` is
    ``['invoice', 'line', 'customer']``."""
    return [
        _stem(word)
        for word in _words(text)
        if word not in _STOP_WORDS and not word.isdigit() and len(word) > 1
    ]


def _key_entity(column: str) -> str | None:
    """The entity a key column points at (``CustomerId`` and ``customer_id`` -> ``customer``)."""
    words = _words(column)
    if len(words) >= 2 and words[-1] in ("id", "key", "code", "no"):
        return "".join(_stem(word) for word in words[:-1])
    if len(words) == 1 and len(words[0]) > 2 and words[0].endswith("id"):
        return _stem(words[0][:-2])
    return None


def _entity(table: str) -> str:
    """A table's name as one stemmed key (``InvoiceLine``, ``invoice_lines`` -> ``invoiceline``)."""
    return "".join(_stem(word) for word in _words(table))


# -------------------------------------------------------------------------------------------
# Values


def _tuple_of_str(values: Iterable[Any]) -> tuple[str, ...]:
    return tuple(str(value) for value in values)


def _table_map(value: Mapping[str, Iterable[Any]]) -> dict[str, tuple[str, ...]]:
    return {str(key): _tuple_of_str(items) for key, items in dict(value).items()}


def _check_name(instance: Any, attribute: Any, value: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"a datasource's name must be a non-empty string (got {value!r})")


@attrs.frozen
class DatasourceDoc:
    """What the router knows of one datasource: words a question can be matched against.

    ``tables`` maps each table to its column names; ``samples`` maps ``"Table.Column"`` to a few
    sampled text values; ``links`` (optional) maps a table to the tables its declared foreign
    keys reference, used with name-matching key columns to add join tables.
    """

    name: str = attrs.field(validator=_check_name)
    description: str = ""
    sample_questions: tuple[str, ...] = attrs.field(default=(), converter=_tuple_of_str)
    tables: Mapping[str, Sequence[str]] = attrs.field(factory=dict, converter=_table_map)
    samples: Mapping[str, Sequence[str]] = attrs.field(factory=dict, converter=_table_map)
    table_descriptions: Mapping[str, str] = attrs.field(factory=dict, converter=dict)
    links: Mapping[str, Sequence[str]] = attrs.field(factory=dict, converter=_table_map)


@attrs.frozen
class Routing:
    """Where a question goes.

    ``ranked`` holds every candidate datasource, best first, with its blended score (0 means no
    word of the question matched); ``shortlist`` the datasources the engine will use;
    ``tables`` (``"datasource.Table"``) and ``columns`` (``"datasource.Table.Column"``) the
    schema within the shortlist, best first.
    """

    ranked: tuple[tuple[str, float], ...]
    shortlist: tuple[str, ...]
    tables: tuple[str, ...]
    columns: tuple[str, ...]

    @property
    def top(self) -> str | None:
        """The best datasource, or None when no datasource was allowed."""
        return self.ranked[0][0] if self.ranked else None


def doc_from_schema(
    schema: Any, *, description: str = "", sample_questions: Sequence[str] = ()
) -> DatasourceDoc:
    """A :class:`DatasourceDoc` from an introspected ``SchemaInfo`` (tables, columns, text
    samples and foreign keys), plus the datasource's description and sample questions."""
    tables: dict[str, list[str]] = {}
    samples: dict[str, list[str]] = {}
    links: dict[str, list[str]] = {}
    for name, table in schema.tables.items():
        tables[name] = [column.name for column in table.columns]
        for column in table.columns:
            texts = [value for value in column.samples if isinstance(value, str)]
            if texts:
                samples[f"{name}.{column.name}"] = texts
        refs = [fk.ref_table for fk in getattr(table, "foreign_keys", ())]
        if refs:
            links[name] = refs
    return DatasourceDoc(
        name=schema.datasource,
        description=description,
        sample_questions=tuple(sample_questions),
        tables=tables,
        samples=samples,
        links=links,
    )


# -------------------------------------------------------------------------------------------
# The router

ABOUT_WEIGHT = 1.0
"""Weight of the datasource's about document (name and description) in its score."""
QUESTION_WEIGHT = 0.6
"""Weight of its best-matching sample question."""
TABLE_WEIGHTS = (1.0, 0.5, 0.25)
"""Weights of its three best-matching tables, best first."""
SOURCE_DOC_WEIGHT = 0.5
"""Share of the whole-datasource document's score; the rest is the per-table evidence."""
KEEP_RATIO = 0.8
"""A runner-up joins the shortlist when its score is at least this share of the top score."""
RERANK_WEIGHT = 0.5
"""Share of a datasource's score that a re-ranker's similarity replaces."""


@attrs.frozen
class _Doc:
    datasource: str
    kind: str  # "about", "question" or "table"
    table: str = ""


class Router:
    """Routes questions among ``docs``; build once (it indexes), then call :meth:`route`.

    ``candidates`` datasources are considered for the shortlist, at most ``max_datasources``
    kept (see :data:`KEEP_RATIO`); ``max_tables`` and ``max_columns`` bound the schema handed
    on. ``reranker``, when given, re-scores the ``candidates`` best datasources by similarity
    of the question to each one's text (e.g. sentence embeddings); without it routing is BM25
    only.
    """

    def __init__(
        self,
        docs: Sequence[DatasourceDoc],
        *,
        candidates: int = 3,
        max_datasources: int = 2,
        max_tables: int = 12,
        max_columns: int = 40,
        keep_ratio: float = KEEP_RATIO,
        reranker: Reranker | None = None,
    ) -> None:
        for label, value in (
            ("candidates", candidates),
            ("max_datasources", max_datasources),
            ("max_tables", max_tables),
            ("max_columns", max_columns),
        ):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"Router: {label} must be a whole number >= 1 (got {value!r})")
        if not 0.0 < keep_ratio <= 1.0:
            raise ValueError(f"Router: keep_ratio must be in (0, 1] (got {keep_ratio!r})")
        if not docs:
            raise ValueError("Router: needs at least one DatasourceDoc to route among")
        seen: set[str] = set()
        for doc in docs:
            if not isinstance(doc, DatasourceDoc):
                raise TypeError(f"Router: expected DatasourceDoc objects, got {type(doc).__name__}")
            if doc.name in seen:
                raise ValueError(
                    f"Router: datasource {doc.name!r} is given twice; names must be unique"
                )
            seen.add(doc.name)
        self.candidates = candidates
        self.max_datasources = max_datasources
        self.max_tables = max_tables
        self.max_columns = max_columns
        self.keep_ratio = keep_ratio
        self.reranker = reranker
        self._docs = {doc.name: doc for doc in sorted(docs, key=lambda d: d.name)}
        self._build()

    # -- index

    def _build(self) -> None:
        corpus: list[list[str]] = []
        meta: list[_Doc] = []
        self._texts: dict[str, str] = {}
        self._columns: dict[str, tuple[BM25Okapi, list[tuple[str, str]]]] = {}
        self._entities: dict[str, dict[str, str]] = {}
        self._keys: dict[str, dict[str, dict[str, str | None]]] = {}
        source_corpus: list[list[str]] = []
        for name, doc in self._docs.items():
            about = tokenize(name) * 2 + tokenize(doc.description)
            schema_words: dict[str, None] = {}
            corpus.append(about)
            meta.append(_Doc(name, "about"))
            for question in doc.sample_questions:
                corpus.append(tokenize(question))
                meta.append(_Doc(name, "question"))
            column_corpus: list[list[str]] = []
            column_meta: list[tuple[str, str]] = []
            for table, columns in doc.tables.items():
                table_words = tokenize(table)
                words = table_words * 2 + tokenize(doc.table_descriptions.get(table, ""))
                seen: set[str] = set(words)
                for column in columns:
                    column_words = tokenize(column)
                    value_words = _unique(
                        word
                        for value in doc.samples.get(f"{table}.{column}", ())
                        for word in tokenize(value)
                    )
                    column_corpus.append(column_words * 2 + value_words)
                    column_meta.append((table, column))
                    for word in (*column_words, *value_words):
                        schema_words[word] = None
                        if word not in seen:
                            seen.add(word)
                            words.append(word)
                corpus.append(words)
                meta.append(_Doc(name, "table", table))
                schema_words.update(dict.fromkeys(table_words))
            source_corpus.append(
                about + [w for q in doc.sample_questions for w in tokenize(q)] + list(schema_words)
            )
            column_index = _index(column_corpus)
            if column_index is not None:
                self._columns[name] = (column_index, column_meta)
            self._entities[name] = {_entity(table): table for table in doc.tables}
            self._keys[name] = {
                table: {column: _key_entity(column) for column in columns}
                for table, columns in doc.tables.items()
            }
            self._texts[name] = " ".join(
                [name, doc.description, *doc.sample_questions, *doc.tables]
            )
        self._bm25 = _index(corpus)
        # A whole-datasource index only discriminates among three or more datasources (with
        # fewer, BM25's idf of a word found in one of them is zero or less).
        self._source_bm25 = _index(source_corpus) if len(source_corpus) >= 3 else None
        self._meta = meta
        self._vocabulary = frozenset(self._bm25.idf if self._bm25 is not None else ())
        self._table_index = {
            (m.datasource, m.table): i for i, m in enumerate(meta) if m.kind == "table"
        }

    @property
    def datasources(self) -> tuple[str, ...]:
        """The names routed among, sorted."""
        return tuple(self._docs)

    def terms(self, question: str) -> list[str]:
        """The question's terms that occur somewhere in the index (the rest cannot score)."""
        return [word for word in _unique(tokenize(question)) if word in self._vocabulary]

    # -- routing

    def route(self, question: str, *, allowed: Collection[str] | None = None) -> Routing:
        """Rank the (allowed) datasources for ``question``, shortlist, and pick tables/columns.

        ``allowed`` restricts routing to the datasources a role may use; a name not known to
        the router is an error.
        """
        if not isinstance(question, str) or not question.strip():
            raise ValueError(f"route: the question must be a non-empty string (got {question!r})")
        names = self._allowed(allowed)
        if not names:
            return Routing((), (), (), ())
        terms = self.terms(question)
        scores = self._bm25.get_scores(terms) if terms and self._bm25 is not None else None
        by_source = self._source_scores(scores, terms, names)
        ranked = sorted(by_source.items(), key=lambda item: (-item[1], item[0]))
        ranked = self._rerank(question, ranked)
        shortlist = self._shortlist(ranked)
        tables = self._tables(scores, shortlist, dict(ranked))
        columns = self._columns_for(terms, tables)
        return Routing(
            ranked=tuple((name, round(score, 6)) for name, score in ranked),
            shortlist=shortlist,
            tables=tuple(f"{source}.{table}" for source, table in tables),
            columns=tuple(f"{source}.{table}.{column}" for source, table, column in columns),
        )

    def _allowed(self, allowed: Collection[str] | None) -> list[str]:
        if allowed is None:
            return list(self._docs)
        if isinstance(allowed, str):
            raise TypeError("route: allowed must be a collection of datasource names, not a str")
        unknown = sorted(set(allowed) - set(self._docs))
        if unknown:
            known = ", ".join(self._docs)
            raise ValueError(
                f"route: allowed names unknown datasource(s) {', '.join(map(repr, unknown))} "
                f"(known: {known})"
            )
        return [name for name in self._docs if name in set(allowed)]

    def _source_scores(self, scores: Any, terms: list[str], names: list[str]) -> dict[str, float]:
        about = dict.fromkeys(names, 0.0)
        best_question = dict.fromkeys(names, 0.0)
        tables: dict[str, list[float]] = {name: [] for name in names}
        if scores is not None:
            for meta, score in zip(self._meta, scores.tolist(), strict=True):
                if score <= 0.0 or meta.datasource not in about:
                    continue
                if meta.kind == "about":
                    about[meta.datasource] = score
                elif meta.kind == "question":
                    best_question[meta.datasource] = max(best_question[meta.datasource], score)
                else:
                    tables[meta.datasource].append(score)
        parts = {}
        for name in names:
            best = sorted(tables[name], reverse=True)
            table_part = sum(w * s for w, s in zip(TABLE_WEIGHTS, best, strict=False))
            parts[name] = (
                ABOUT_WEIGHT * about[name] + QUESTION_WEIGHT * best_question[name] + table_part
            )
        if self._source_bm25 is None or scores is None:
            return _normalized(parts)
        whole = dict(zip(self._docs, self._source_bm25.get_scores(terms).tolist(), strict=True))
        whole = _normalized({name: max(0.0, whole[name]) for name in names})
        parts = _normalized(parts)
        return {
            name: SOURCE_DOC_WEIGHT * whole[name] + (1 - SOURCE_DOC_WEIGHT) * parts[name]
            for name in names
        }

    def _rerank(self, question: str, ranked: list[tuple[str, float]]) -> list[tuple[str, float]]:
        if self.reranker is None or len(ranked) < 2:
            return ranked
        head = ranked[: self.candidates]
        similarities = list(self.reranker(question, [self._texts[name] for name, _ in head]))
        if len(similarities) != len(head):
            raise ValueError(
                f"reranker returned {len(similarities)} scores for {len(head)} texts; "
                "it must return one score per text"
            )
        top = max(score for _, score in head) or 1.0
        best = max(similarities) or 1.0
        blended = [
            (name, top * ((1 - RERANK_WEIGHT) * score / top + RERANK_WEIGHT * sim / best))
            for (name, score), sim in zip(head, similarities, strict=True)
        ]
        blended.sort(key=lambda item: (-item[1], item[0]))
        return blended + ranked[self.candidates :]

    def _shortlist(self, ranked: list[tuple[str, float]]) -> tuple[str, ...]:
        if not ranked:
            return ()
        top_name, top_score = ranked[0]
        keep = [top_name]
        for name, score in ranked[1 : self.candidates]:
            if len(keep) >= self.max_datasources:
                break
            if top_score > 0.0 and score >= self.keep_ratio * top_score:
                keep.append(name)
        return tuple(keep)

    def _tables(
        self, scores: Any, shortlist: tuple[str, ...], source_scores: dict[str, float]
    ) -> list[tuple[str, str]]:
        top = max((source_scores[name] for name in shortlist), default=0.0) or 1.0
        scored: list[tuple[float, str, str]] = []
        for source in shortlist:
            weight = 0.5 + 0.5 * source_scores[source] / top
            for table in self._docs[source].tables:
                index = self._table_index[(source, table)]
                score = float(scores[index]) if scores is not None else 0.0
                if score > 0.0:
                    scored.append((score * weight, source, table))
        scored.sort(key=lambda item: (-item[0], item[1], item[2]))
        ranked = [(source, table) for _, source, table in scored]
        head = ranked[: max(1, (self.max_tables + 1) // 2)]
        joined = self._joined(head)
        result = _unique([*head, *joined, *ranked])
        if not result:
            # No word matched a table: hand on the first tables of the top datasource.
            result = [(shortlist[0], table) for table in self._docs[shortlist[0]].tables]
        return result[: self.max_tables]

    def _joined(self, head: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """Tables the head tables join to by a name-matching key column or a declared link,
        then link tables that hold keys of two or more head tables."""
        found: list[tuple[str, str]] = []
        head_set = set(head)
        for source, table in head:
            doc = self._docs[source]
            entities = self._entities[source]
            for entity in self._keys[source][table].values():
                target = entities.get(entity) if entity else None
                if target and target != table:
                    found.append((source, target))
            found.extend(
                (source, target) for target in doc.links.get(table, ()) if target in doc.tables
            )
        head_entities: dict[str, set[str]] = {}
        for source, table in head:
            head_entities.setdefault(source, set()).add(_entity(table))
        for source, entities in head_entities.items():
            if len(entities) < 2:
                continue
            for table, keys_of in self._keys[source].items():
                if (source, table) in head_set:
                    continue
                keys = set(keys_of.values()) & entities
                if len(keys) >= 2:
                    found.append((source, table))
        return [item for item in _unique(found) if item not in head_set]

    def _columns_for(
        self, terms: list[str], tables: list[tuple[str, str]]
    ) -> list[tuple[str, str, str]]:
        rank = {item: position for position, item in enumerate(tables)}
        matched: list[tuple[float, int, str, str, str]] = []
        for source in _unique(source for source, _ in tables):
            if source not in self._columns or not terms:
                continue
            index, meta = self._columns[source]
            wanted = [i for i, (table, _) in enumerate(meta) if (source, table) in rank]
            scores = index.get_batch_scores(terms, wanted)
            for i, score in zip(wanted, scores, strict=True):
                if score > 0.0:
                    table, column = meta[i]
                    weight = 1.0 / (1.0 + 0.1 * rank[(source, table)])
                    matched.append((score * weight, rank[(source, table)], source, table, column))
        matched.sort(key=lambda item: (-item[0], item[1], item[3], item[4]))
        result = [(source, table, column) for _, _, source, table, column in matched]
        keys: list[tuple[str, str, str]] = []
        rest: list[tuple[str, str, str]] = []
        for source, table in tables:
            for column, entity in self._keys[source][table].items():
                if entity is not None or column.lower() == "id":
                    keys.append((source, table, column))
                else:
                    rest.append((source, table, column))
        return _unique([*result, *keys, *rest])[: self.max_columns]


def _index(corpus: list[list[str]]) -> BM25Okapi | None:
    """A BM25 index over ``corpus``, or None when it holds no word at all (rank_bm25 cannot
    index an empty vocabulary)."""
    return BM25Okapi(corpus) if any(corpus) else None


def _normalized(scores: dict[str, float]) -> dict[str, float]:
    """Scores divided by the largest (all zero stays all zero)."""
    top = max(scores.values(), default=0.0)
    return {name: (score / top if top > 0 else 0.0) for name, score in scores.items()}


def _unique(items: Iterable[Any]) -> list[Any]:
    """Items in first-seen order, each once."""
    return list(dict.fromkeys(items))
