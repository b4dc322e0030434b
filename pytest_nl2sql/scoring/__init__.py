"""Scoring: how an answer is judged against a case.

Owns the result-match rule (``matching``) and the built-in scorers (``scorers``: outcome,
result_match, routing, retrieval_recall). A new scorer goes here as a module with a
``pytest_nl2sql_score`` hook implementation, registered by the plugin.

May import: ``pytest_nl2sql.suitefile`` (the case model, values), ``pytest_nl2sql.engine.protocol``
(the answer), ``pytest_nl2sql.errors``. Never the plugin or upkeep.
"""
