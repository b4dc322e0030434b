"""Regenerate expected rows from the database (spec: "Regenerating rows").

For each approved case with SQL (optionally only the given ids), run ``sql`` and every
``alt_sql`` through the case's datasource adapter -- the same read-only adapter questions run
on, within its ``row_limit`` and ``timeout_s`` -- and write ``rows``/``alt_rows`` in the order
the SQL returns them, through the one writer. A clarify case's readings (``clarifications``)
get their ``rows`` from their ``sql`` the same way. Cases that cannot be regenerated are left
unchanged and listed with the reason; the others are still written.

The queries run *before* the file's write lock is taken: the file is read, the SQL runs, then
the lock is taken only for the write. If another process changed the file in the meantime, it
is read again and each computed update is applied to the new text as long as the case is still
there with the same ``sql``, ``alt_sql`` and datasource; a case whose SQL changed keeps what the
other process wrote and is listed as failed ("run regenerate again"). So a slow regenerate
never makes another writer wait, and never writes rows for SQL that is no longer in the file.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from importlib import resources
from pathlib import Path
from typing import Any

import attrs

from pytest_nl2sql.datasources import DatasourceRegistry, QueryError
from pytest_nl2sql.errors import Nl2sqlError
from pytest_nl2sql.safetext import line_safe
from pytest_nl2sql.suitefile.model import EvalCase, Kind, Status
from pytest_nl2sql.suitefile.writer import RowsUpdate, SuiteEdit, open_suite

__all__ = ["PackagedSuiteError", "RegenerateReport", "is_packaged", "regenerate"]


class PackagedSuiteError(Nl2sqlError):
    pass


@attrs.frozen
class RegenerateReport:
    path: str
    written: int  # result sets written (rows + each alt_rows)
    cases_written: tuple[str, ...]
    unchanged: tuple[str, ...]  # cases whose rows were already what the SQL returns
    failed: tuple[tuple[str, str], ...]  # (case id, why)
    file_changed: bool

    def lines(self) -> list[str]:
        if not (self.cases_written or self.unchanged or self.failed):
            return [
                f"{self.path}: nothing to regenerate: no approved case has sql to run "
                "(drafts and retired cases are left as they are)"
            ]
        out = [
            f"{self.path}: regenerated {len(self.cases_written)} cases ({self.written} result sets), "
            f"{len(self.unchanged)} already up to date, {len(self.failed)} failed"
        ]
        out += [f"  failed: case '{cid}': {line_safe(why)}" for cid, why in self.failed]  # database text: neutralised
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())


def is_packaged(path: str | os.PathLike[str]) -> bool:
    """Is this one of the suites the installed package ships?"""
    try:
        shipped = Path(str(resources.files("pytest_nl2sql.suites"))).resolve()
    except (ModuleNotFoundError, TypeError):
        return False
    return Path(path).resolve().parent == shipped


def _rows(result: Any) -> list[dict[str, Any]]:
    cols = list(result.columns)
    return [dict(zip(cols, row, strict=True)) for row in result.rows]


def regenerate(
    path: str | os.PathLike[str],
    registry: DatasourceRegistry,
    *,
    allow_packaged: bool = False,
    case_ids: Collection[str] | None = None,
) -> RegenerateReport:
    """Rewrite the rows of ``path``'s approved cases from their SQL; see the module docstring."""
    if is_packaged(path) and not allow_packaged:
        raise PackagedSuiteError(
            f"{path}: a suite the package ships is not yours to rewrite; copy it into your project "
            "(pytest-nl2sql init --demo does), or pass --allow-packaged (pytest-nl2sql eval regenerate), --nl2sql-allow-packaged (pytest) or allow_packaged=True"
        )
    with open_suite(path) as edit:  # read and parsed once; locked only for the write
        return _regenerate(edit, path, registry, case_ids)


#: Why an update computed from the file as read was not written.
CHANGED_WHILE_RUNNING = "its SQL changed in the file while regenerate ran its queries (the other change is kept); run regenerate again"


def _same_sql(old: EvalCase, new: EvalCase) -> bool:
    return (old.sql, old.alt_sql, old.datasources, old.kind, [c.sql for c in old.clarifications]) == (
        new.sql, new.alt_sql, new.datasources, new.kind, [c.sql for c in new.clarifications]
    )


def _regenerate(edit: SuiteEdit, path: str | os.PathLike[str], registry: DatasourceRegistry, case_ids: Collection[str] | None) -> RegenerateReport:
    suite = edit.suite
    updates: dict[str, RowsUpdate] = {}
    failed: list[tuple[str, str]] = []
    unchanged: list[str] = []
    unreachable: dict[str, str] = {}  # datasource -> the case that said it cannot be opened
    written = 0
    for case in suite.cases:
        readings = [c for c in case.clarifications if c.sql is not None]
        if case.status is not Status.APPROVED or case.kind is Kind.ROUTING or (case.sql is None and not readings):
            continue
        if case_ids is not None and case.id not in case_ids:
            continue
        if len(case.datasources) != 1:
            failed.append((case.id, f"a case with SQL names one datasource, this names {len(case.datasources)}"))
            continue
        name = case.datasources[0]
        try:
            adapter = registry.get(name)
        except KeyError as exc:  # the registry's message names the known ones, with a did-you-mean
            failed.append((case.id, str(exc)))
            continue
        if name in unreachable:  # said once, for the first case of the datasource
            failed.append((case.id, f"datasource {name!r} cannot be opened (see case '{unreachable[name]}')"))
            continue
        results = []
        why = None
        queries = [("sql", case.sql)] if case.sql is not None else []
        queries += [(f"alt_sql[{i + 1}]", s) for i, s in enumerate(case.alt_sql)]
        queries += [(f"clarification {c.about!r}", c.sql) for c in readings]  # issue 24: each reading's rows
        for label, sql in queries:
            try:
                res = adapter.execute(sql)
            except QueryError as exc:
                why = f"{label} failed: {exc.message}"
                if exc.kind == "unreachable":
                    unreachable[name] = case.id
                    why = exc.message
                break
            dupes = sorted({c for c in res.columns if list(res.columns).count(c) > 1})
            if dupes:
                why = f"{label}: the result names column {', '.join(map(repr, dupes))} twice (give each column its own alias)"
                break
            if res.truncated:
                why = f"{label}: the result was cut at the datasource's row limit ({adapter.row_limit} rows)"
                break
            results.append(_rows(res))
        if why is not None:
            failed.append((case.id, why))
            continue
        by_reading = dict(zip((c.about for c in readings), results[len(results) - len(readings):], strict=True))
        results_case = results[: len(results) - len(readings)]
        rows, alts = (results_case[0], results_case[1:]) if case.sql is not None else (None, None)
        clar_rows = [by_reading.get(c.about) for c in case.clarifications] if readings else None
        same_clar = clar_rows is None or all(
            new is None or (c.rows is not None and tuple(c.rows) == tuple(new)) for c, new in zip(case.clarifications, clar_rows, strict=True)
        )
        same_case = rows is None or (
            tuple(rows) == tuple(case.rows or ()) and case.rows is not None and [tuple(a) for a in alts] == [tuple(a) for a in case.alt_rows]
        )
        if same_case and same_clar:
            unchanged.append(case.id)
            continue
        updates[case.id] = RowsUpdate(rows, alts, clar_rows)
        written += len(results)
    changed, dropped = edit.commit(updates, keep=_same_sql) if updates else (False, ())
    for cid in dropped:
        dropped_update = updates.pop(cid)
        written -= (dropped_update.rows is not None) + len(dropped_update.alt_rows or ()) + sum(r is not None for r in dropped_update.clarification_rows or ())
        failed.append((cid, CHANGED_WHILE_RUNNING))
    return RegenerateReport(
        path=str(path),
        written=written,
        cases_written=tuple(updates),
        unchanged=tuple(unchanged),
        failed=tuple(failed),
        file_changed=changed,
    )
