"""The suite file: everything about reading, checking and writing a suite YAML.

Owns the case model (``model``), the loader and its rules (``loader``, ``yamlnodes``), the
byte-exact writer and its lock (``writer``), the 0.6 migration (``legacy``), the gold digest
(``digest``), the value rules rows are compared under (``values``) and the suite cache
(``cache``).

May import: ``pytest_nl2sql.errors``, ``pytest_nl2sql.collector`` and third-party libraries only. Every other stage
imports from here; nothing here imports from another stage.
"""
