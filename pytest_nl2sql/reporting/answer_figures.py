"""What the answers say beyond the verdict (docs/report.md): where the SQL came from, how
many misses are presentation only, and whether the written answer says what the rows say.

* ``by_source`` -- accuracy of the answer items per ``source`` (``verified``: a curated query
  answered; ``generated``: the SQL was generated), when the engine says so.
* ``lenient`` -- the lenient reading (scoring/lenient.py) beside the verdict: how many
  ``result_match`` misses are presentation only, of which allowance, and the execution
  accuracy they would give. The verdict is unchanged.
* ``faithfulness`` -- of the answers with a text, how many say only what their rows say.

Each reads the records only, so a merged report gives the same figures as one run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pytest_nl2sql.reporting import breakdowns

__all__ = ["answer_fields", "html_section", "markdown_rows", "summary_figures", "summary_lines"]

#: The longest answer text a record keeps.
MAX_TEXT_CHARS = 4_000


def answer_fields(answer: Any, scores: Sequence[Any] = ()) -> dict[str, Any]:
    """The record's fields of what the engine said beyond rows -- ``source``, ``text``,
    ``steps`` -- and of the readings beside the verdict: ``lenient`` (``{"matched", "kind"}``
    of a result_match miss) and ``unsupported`` (what the text says that the rows do not)."""
    extra: dict[str, Any] = {}
    for s in scores:
        if s.name == "lenient_match":
            extra["lenient"] = {"matched": s.data.get("matched"), "kind": s.data.get("kind")}
        elif s.name == "faithfulness" and s.data.get("unsupported"):
            extra["unsupported"] = [str(u)[:200] for u in s.data["unsupported"][:20]]
    if answer is None:
        return {"source": None, "text": None, "steps": [], **extra}
    text = getattr(answer, "text", None)
    if isinstance(text, str) and len(text) > MAX_TEXT_CHARS:
        text = f"{text[:MAX_TEXT_CHARS]} ... [truncated: {len(text):,} characters]"
    return {
        "source": getattr(answer, "source", None),
        "text": text,
        "steps": [s.to_dict() for s in getattr(answer, "steps", ()) or ()],
        **extra,
    }


def _lenient(answer: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    scored = [r for r in answer if "result_match" in (r.get("scores") or {})]
    if not scored:
        return {}
    strict = [bool(r["scores"]["result_match"].get("passed")) for r in scored]
    readings = [r.get("lenient") or {} for r in scored]
    kinds = Counter(str(le.get("kind")) for le in readings if le.get("matched"))
    presentation = [r["nodeid"] for r, le in zip(scored, readings, strict=True) if le.get("matched")]
    return {
        "lenient": {
            "execution_accuracy": breakdowns.stat([ok or bool(le.get("matched")) for ok, le in zip(strict, readings, strict=True)]),
            "misses": strict.count(False),
            "presentation_only": len(presentation),
            "by_kind": {k: kinds[k] for k in ("column_order", "extra_columns", "period_label") if kinds.get(k)},
            "items": sorted(presentation)[:200],
        }
    }


def _faithfulness(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    scored = [r for r in records if r.get("verdict") not in ("skipped", "error") and "faithfulness" in (r.get("scores") or {})]
    if not scored:
        return {}
    flags = [bool(r["scores"]["faithfulness"].get("passed")) for r in scored]
    return {
        "faithfulness": {
            **breakdowns.stat(flags),
            "unfaithful": sorted(r["nodeid"] for r, ok in zip(scored, flags, strict=True) if not ok)[:200],
        }
    }


def summary_figures(records: Sequence[Mapping[str, Any]], passed: Callable[[Mapping[str, Any]], bool]) -> dict[str, Any]:
    ran = [r for r in records if r.get("verdict") not in ("skipped", "error")]
    answer = [r for r in ran if r.get("kind") == "answer"]
    out: dict[str, Any] = {}
    with_source = [r for r in answer if r.get("source")]
    if with_source:
        out["by_source"] = breakdowns.group(with_source, "source", passed)
    out.update(_lenient(answer))
    out.update(_faithfulness(ran))
    return out


def summary_lines(s: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    if s.get("by_source"):
        out.append(" per source (answer items; verified: a curated query answered):")
        out.extend(breakdowns.stat_line(k, v) for k, v in s["by_source"].items())
    le = s.get("lenient")
    if le and le["misses"]:
        kinds = ", ".join(f"{k.replace('_', ' ')} {n}" for k, n in le["by_kind"].items())
        out.append(
            f" lenient reading: {le['presentation_only']} of {le['misses']} result_match misses are presentation only"
            + (f" ({kinds})" if kinds else "") + "; the verdict is unchanged"
        )
        out.append(breakdowns.stat_line("lenient execution accuracy", le["execution_accuracy"]))
    fa = s.get("faithfulness")
    if fa and fa["total"]:
        out.append(breakdowns.stat_line("faithful answer text", fa))
    return out


def markdown_rows(s: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    rows: list[tuple[str, Mapping[str, Any]]] = [(f"source: {k}", v) for k, v in (s.get("by_source") or {}).items()]
    if s.get("lenient"):
        rows.append(("lenient execution accuracy", s["lenient"]["execution_accuracy"]))
    if s.get("faithfulness"):
        rows.append(("faithful answer text", s["faithfulness"]))
    return rows


def html_section(s: Mapping[str, Any], esc: Any, card: Callable[[str, Any], str]) -> str:
    cards = [card(f"accuracy, source {k}", v) for k, v in (s.get("by_source") or {}).items()]
    le = s.get("lenient")
    note = ""
    if le:
        cards.append(card("lenient execution accuracy", le["execution_accuracy"]))
    if le and le["misses"]:
        kinds = ", ".join(f"{k.replace('_', ' ')} {n}" for k, n in le["by_kind"].items())
        note = (
            f'<p id="lenient">{le["presentation_only"]} of {le["misses"]} result_match misses are presentation only'
            f"{esc(' (' + kinds + ')') if kinds else ''}; the verdict is the configured rule.</p>"
        )
    fa = s.get("faithfulness")
    if fa:
        cards.append(card("faithful answer text", fa))
    cards = [c for c in cards if c]
    if not cards and not note:
        return ""
    return f'<h2>Answers</h2><div class="cards" id="answers">{"".join(cards)}</div>{note}'
