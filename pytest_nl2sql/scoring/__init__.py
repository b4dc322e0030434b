"""Scoring: how an answer is judged against a case.

Owns the result-match rule (``matching``), the built-in scorers (``scorers``: outcome,
result_match, routing, retrieval_recall), the neighbour databases of test-suite accuracy
(``neighbours``; rows drawn by ``neighbourgen``; PostgreSQL ones by ``pgneighbours``) and the
gold SQL's mutants (``mutants``). A new scorer goes here as a module with a
``pytest_nl2sql_score`` hook implementation, registered by the plugin.

May import: ``pytest_nl2sql.suitefile`` (the case model, values), ``pytest_nl2sql.engine.protocol``
(the answer), ``pytest_nl2sql.errors``, ``pytest_nl2sql.datasources`` (the read-only adapter that
queries PostgreSQL neighbours) and ``pytest_nl2sql.config`` (``redact_url``; ``urls``, which reads
a SQLite URL without SQLAlchemy). Never the plugin or upkeep.
"""
