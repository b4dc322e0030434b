"""Pairs of verdicts (ours, official), and why they disagree.

``classify`` re-asks each side with one difference switched off at a time -- the official
DISTINCT removal, its "``order by`` anywhere" test, our float tolerance, the way each side runs
the SQL -- and names the first difference that explains the disagreement. ``CAUSE_TEXT`` says,
for each cause, which verdict is right and why (docs/scoring.md has the examples).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import attrs

from pytest_nl2sql.config import load_config
from pytest_nl2sql.datasources import DatasourceRegistry, QueryError
from pytest_nl2sql.engine.replay import Prediction, ReplayEngine
from pytest_nl2sql.scoring.matching import MatchRule, match_rows

from .convert import db_path, top_level_order_by, write_config
from .official import OfficialVerdict, execute, official_exec_match, postprocess, result_eq

__all__ = ["CAUSE_TEXT", "Pair", "classify", "our_inprocess_verdicts", "read_multiturn", "summarize"]

CAUSE_TEXT: dict[str, tuple[str, str]] = {
    "distinct-removed": (
        "ours",
        "the official metric deletes every DISTINCT from both queries (its default, keep_distinct off), "
        "so duplicate rows and COUNT(DISTINCT x) vs COUNT(x) go unseen; DISTINCT changes the answer",
    ),
    "order-by-in-subquery": (
        "ours",
        "the official metric makes row order matter when 'order by' appears anywhere in the gold text, "
        "even inside a subquery (ORDER BY ... LIMIT 1 to find a maximum); only a top-level ORDER BY orders the result",
    ),
    "float-tolerance": (
        "ours",
        "the two answers differ only in the last digits of a float (summation order, AVG vs SUM/COUNT); "
        "the official rule compares floats exactly",
    ),
    "gold-fails": (
        "ours",
        "the gold SQL does not run on SQLite; the official metric silently rewrites it ('! =' -> '!='), "
        "we report a per-case error: a gold query that does not run is a suite bug to fix, not a verdict",
    ),
    "execution": (
        "see detail",
        "one side ran the prediction and the other did not (statement guard, validator, timeout, row limit)",
    ),
    "other": ("?", "not explained by a known difference; read the pair"),
}


@attrs.frozen
class Pair:
    key: str
    db_id: str
    gold: str
    pred: str
    ours: bool
    theirs: bool
    our_error: str | None = None
    official: OfficialVerdict | None = None
    spider_dir: Path | None = None


def summarize(pairs: list[Pair]) -> dict[str, Any]:
    n = len(pairs) or 1
    ours = sum(p.ours for p in pairs)
    theirs = sum(p.theirs for p in pairs)
    agree = sum(p.ours == p.theirs for p in pairs)
    return {"n": len(pairs), "ours_n": ours, "theirs_n": theirs, "agree_n": agree,
            "ours": ours / n, "theirs": theirs / n, "agree": agree / n}


def classify(p: Pair) -> str:
    """The first known difference that explains why ``p.ours != p.theirs``."""
    if p.official is not None and p.official.gold_failed or (p.our_error or "").startswith("gold SQL fails"):
        return "gold-fails"
    assert p.spider_dir is not None
    db = db_path(p.spider_dir, p.db_id)
    if p.our_error or (p.official is not None and p.official.error):
        return "execution"
    if official_exec_match(db, p.gold, p.pred, keep_distinct=True).matched == p.ours:
        return "distinct-removed"
    gold_rows = execute(db, postprocess(p.gold))
    pred_rows = execute(db, postprocess(p.pred))
    if result_eq(gold_rows, pred_rows, top_level_order_by(p.gold)) == p.ours:
        return "order-by-in-subquery"
    exact = MatchRule(order_matters=top_level_order_by(p.gold), float_tolerance=0.0)
    if match_rows((), gold_rows, (), pred_rows, exact).matched == p.theirs:
        return "float-tolerance"
    return "other"


def read_multiturn(gold_file: Path, pred_file: Path) -> list[tuple[str, str, str, str]]:
    """(key, db_id, gold, pred) for each turn of test-suite-sql-eval's blank-line separated files."""

    def turns(path: Path) -> list[list[str]]:
        out: list[list[str]] = [[]]
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                out[-1].append(line.strip())
            elif out[-1]:
                out.append([])
        return [t for t in out if t]

    golds, preds = turns(gold_file), turns(pred_file)
    if len(golds) != len(preds) or any(len(g) != len(p) for g, p in zip(golds, preds, strict=False)):
        raise ValueError(f"{gold_file} and {pred_file} do not have the same interactions and turns")
    pairs = []
    for i, (g_turns, p_turns) in enumerate(zip(golds, preds, strict=True)):
        for j, (g, p) in enumerate(zip(g_turns, p_turns, strict=True)):
            sql, _, db = g.rpartition("\t")
            pairs.append((f"ts_{i:03d}_{j}", db.strip(), sql.strip(), p))
    return pairs


class _Case:
    """What ``ReplayEngine.answer_case`` reads of a case."""

    def __init__(self, case_id: str, db_id: str) -> None:
        self.id = case_id
        self.datasources = (db_id,)


def our_inprocess_verdicts(spider_dir: Path, raw: list[tuple[str, str, str, str]]) -> list[Pair]:
    """Our verdict on each pair without the suite file: gold rows from the adapter (as
    regenerate gets them), the prediction through the replay engine, then ``match_rows``."""
    present = sorted({db for _, db, _, _ in raw if db_path(spider_dir, db).is_file()})
    with tempfile.TemporaryDirectory() as tmp:
        project = load_config(write_config(Path(tmp), spider_dir, present))
        registry = DatasourceRegistry.from_config(project)
        preds = [Prediction(id=k, sql=p, datasource=db) for k, db, _, p in raw if db in present]
        engine = ReplayEngine(preds, project, registry=registry)
        out = []
        try:
            for key, db, gold, pred in raw:
                if db not in present:
                    continue
                official = official_exec_match(db_path(spider_dir, db), gold, pred)
                try:
                    g = registry.get(db).execute(gold)
                except QueryError as exc:
                    out.append(Pair(key, db, gold, pred, False, official.matched,
                                    our_error=f"gold SQL fails on SQLite: {exc.message}", official=official, spider_dir=spider_dir))
                    continue
                answer = engine.answer_case(_Case(key, db), "admin")
                if answer.status != "ok":
                    out.append(Pair(key, db, gold, pred, False, official.matched, our_error=answer.error or answer.status,
                                    official=official, spider_dir=spider_dir))
                    continue
                rule = MatchRule(order_matters=top_level_order_by(gold))
                ok = match_rows(g.columns, g.rows, answer.columns, list(answer.rows or []), rule, truncated=answer.truncated).matched
                out.append(Pair(key, db, gold, pred, ok, official.matched, official=official, spider_dir=spider_dir))
        finally:
            registry.close()
    return out
