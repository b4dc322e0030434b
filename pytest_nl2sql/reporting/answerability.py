"""Answerability: how well the engine tells a question it cannot answer from one it can
(docs/report.md#answerability).

"Not answerable" is the positive class. Over the items whose ``outcome`` was checked:

* a **true refusal** -- expected ``unanswerable``, the engine said ``not_answerable``;
* a **missed unanswerable** -- expected ``unanswerable``, the engine did something else
  (answered, refused, asked back, failed);
* a **false refusal** -- any other expectation (an answerable question, one the role may not
  ask, one that needs narrowing) and the engine said ``not_answerable``.

**precision** = true / (true + false refusals): when the engine says "not answerable", how
often it is right. **recall** = true refusals / unanswerable items: how many of the
unanswerable questions it recognised. Each with its 95% Wilson interval, overall and per role.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_nl2sql.reporting.breakdowns import stat_text
from pytest_nl2sql.reporting.intervals import wilson

__all__ = ["answerability", "html_section", "markdown_rows", "summary_lines"]

NOT_ANSWERABLE = "not_answerable"
UNANSWERABLE = "unanswerable"


def _rate(hit: int, total: int) -> dict[str, Any]:
    lo, hi = wilson(hit, total)
    return {"passed": hit, "total": total, "accuracy": (hit / total) if total else None, "ci95": [round(lo, 4), round(hi, 4)]}


def _board(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    true = sum(1 for r in records if r.get("expected") == UNANSWERABLE and r.get("status") == NOT_ANSWERABLE)
    unanswerable = sum(1 for r in records if r.get("expected") == UNANSWERABLE)
    false = Counter(str(r.get("expected")) for r in records if r.get("expected") != UNANSWERABLE and r.get("status") == NOT_ANSWERABLE)
    return {
        "true_refusals": true,
        "false_refusals": sum(false.values()),
        "false_refusals_by_expected": dict(sorted(false.items())),
        "missed_unanswerable": unanswerable - true,
        "precision": _rate(true, true + sum(false.values())),
        "recall": _rate(true, unanswerable),
    }


def answerability(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``summary.answerability``: the board overall and ``by_role`` (empty when no item's
    outcome was checked, as in mode retrieval)."""
    checked = [
        r for r in records
        if r.get("verdict") not in ("skipped", "error") and "outcome" in (r.get("scores") or {}) and r.get("kind") == "answer"
    ]
    if not checked:
        return {}
    roles: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in checked:
        roles[str(r.get("role"))].append(r)
    return {"answerability": {**_board(checked), "items": len(checked), "by_role": {k: _board(v) for k, v in sorted(roles.items())}}}


def summary_lines(s: Mapping[str, Any]) -> list[str]:
    a = s.get("answerability")
    if not a:
        return []
    out = [
        f" answerability (\"not answerable\" said): precision {stat_text(a['precision'])}, recall {stat_text(a['recall'])}",
        f"  {a['true_refusals']} true refusals, {a['false_refusals']} false refusals, {a['missed_unanswerable']} unanswerable missed",
    ]
    if len(a.get("by_role") or {}) > 1:
        for role, b in a["by_role"].items():
            out.append(f"  {role:<28} precision {stat_text(b['precision'])}, recall {stat_text(b['recall'])}")
    return out


def markdown_rows(s: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    a = s.get("answerability")
    if not a:
        return []
    return [("answerability precision", a["precision"]), ("answerability recall", a["recall"])]


def html_section(s: Mapping[str, Any], esc: Any) -> str:
    a = s.get("answerability")
    if not a:
        return ""
    rows = [("all roles", a)] + [(f"role {k}", v) for k, v in (a.get("by_role") or {}).items()]
    body = "".join(
        f"<tr><th>{esc(name)}</th><td>{esc(stat_text(b['precision']))}</td><td>{esc(stat_text(b['recall']))}</td>"
        f'<td class="n">{b["true_refusals"]}</td><td class="n">{b["false_refusals"]}</td><td class="n">{b["missed_unanswerable"]}</td></tr>'
        for name, b in rows
    )
    return (
        '<h2>Answerability</h2><table id="answerability"><tr><th></th><th>precision</th><th>recall</th>'
        f"<th>true refusals</th><th>false refusals</th><th>unanswerable missed</th></tr>{body}</table>"
        "<p>precision: of the items the engine called not answerable, those that were; recall: of the unanswerable items, "
        "those it called not answerable (95% Wilson intervals).</p>"
    )
