"""Reporting: what a run's records become. It owns the record of an item and its failure text
(``report``), the run report (terminal, JSON, GitHub step summary), the breakdowns, outcome
matrix and leak rate (``breakdowns``, ``outcomes``), the failure taxonomy (``taxonomy``), the
HTML report (``html_report``), the comparison of two runs (``compare``, ``stats``,
``intervals``), shard merging (``shards``), repeats (``repeats``), mode full's usage figures
(``figures``), the known-failures baseline and its gate (``baseline``, ``gate``), the saved
predictions file (``predictions_out``) and the end of a run (``finish``). A new report format
goes here.

May import ``errors``, ``suitefile``, ``config``, ``datasources``, ``llm``, ``engine`` and
``scoring``; never the pytest plugin (``plugin/`` and ``cli.py`` import it).
"""
