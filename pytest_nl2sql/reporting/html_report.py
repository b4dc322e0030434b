"""The HTML report (``--nl2sql-html FILE``): one self-contained page from the JSON report.

No network, nothing to install: the CSS and the few lines of JavaScript are inline, so the file
works from ``file://``, as a CI artifact, or mailed. Everything is rendered here, in Python,
and escaped; the script only filters the table (free text, verdict, role, tag). The page shows
the summary with 95% intervals, accuracy bars per tag/difficulty/role/datasource (and routing
per group), the outcome confusion matrix and leak rate, the failure taxonomy, cost and latency,
and a table of items where each failure opens onto its question, gold and generated SQL, and
row diff, with its baseline state (known, fixed, new) and flakiness.
"""

from __future__ import annotations

import difflib
import html
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_nl2sql.reporting import answer_figures, answerability, models, provenance, steps
from pytest_nl2sql.reporting.completeness import incomplete_line, missing_nodeids
from pytest_nl2sql.reporting.outcomes import ACTUAL
from pytest_nl2sql.safetext import shown

__all__ = ["html_pieces", "render_html", "write_html"]

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5rem;color:#1b1f24;background:#fff}
h1{font-size:1.4rem;margin:0 0 .3rem}h2{font-size:1.1rem;margin:1.6rem 0 .5rem;border-bottom:1px solid #d0d7de}
.meta{color:#57606a}.cards{display:flex;flex-wrap:wrap;gap:.8rem}.card{border:1px solid #d0d7de;border-radius:6px;padding:.6rem .9rem;min-width:11rem}
.card b{display:block;font-size:1.3rem}.card span{color:#57606a;font-size:.85rem}
.bars{display:grid;grid-template-columns:minmax(8rem,max-content) 1fr max-content;gap:.2rem .6rem;align-items:center;max-width:60rem}
.bar{background:#eaeef2;height:.9rem;border-radius:3px;position:relative}.bar i{display:block;height:100%;background:#2da44e;border-radius:3px}
.bar s{position:absolute;top:-2px;bottom:-2px;border-left:2px solid #1b1f24;border-right:2px solid #1b1f24;opacity:.35;text-decoration:none}
table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:.2rem .5rem;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.n{text-align:right}.v-failed{color:#cf222e;font-weight:600}.v-passed{color:#1a7f37}
.v-xfailed{color:#9a6700}.v-xfail-fixed{color:#0969da}.v-skipped{color:#57606a}
.filters{display:flex;gap:.6rem;flex-wrap:wrap;margin:.5rem 0}pre{background:#f6f8fa;padding:.4rem;margin:.2rem 0;white-space:pre-wrap}
.diff .missing{color:#cf222e}.diff .unexpected{color:#9a6700}.tag{background:#ddf4ff;border-radius:3px;padding:0 .3rem;margin-right:.2rem;font-size:.8rem}
.hidden{display:none}
.good{--c:#1a7f37}.warn{--c:#9a6700}.bad{--c:#cf222e}.card.good,.card.warn,.card.bad{border-left:6px solid var(--c)}
.card.good b,.card.warn b,.card.bad b{color:var(--c)}.bar i.good,.bar i.warn,.bar i.bad{background:var(--c)}
#failures{border:2px solid #cf222e;border-radius:6px;padding:.5rem 1rem;margin:.8rem 0;background:#fff8f8}
#failures h2{border:0;margin:.2rem 0;color:#cf222e}#failures.none{border-color:#1a7f37;background:#f6fff8}#failures.none h2{color:#1a7f37}
#failures ol{margin:.3rem 0;columns:2}#failures li{font-family:ui-monospace,monospace;font-size:.85rem}
td.failure{min-width:38rem;max-width:70vw}.scroll{overflow-x:auto;max-width:70vw}
pre.sql{white-space:pre;overflow-x:auto;font-size:.85rem}pre.sql del{background:#ffebe9;color:#82071e;text-decoration:none}
pre.sql ins{background:#dafbe1;color:#116329;text-decoration:none}
table.rowdiff td{font-family:ui-monospace,monospace;font-size:.85rem;white-space:pre}table.rowdiff tr.missing td{background:#ffebe9}
table.rowdiff tr.unexpected td{background:#fff8c5}table.rowdiff td.sign{font-weight:700}
.counterexample table td,.counterexample table th{font-family:ui-monospace,monospace;font-size:.85rem;border:1px solid #ddd;padding:0 .3rem}
tr.item:target{outline:3px solid #0969da}
"""

_JS = """
(function(){
  var text=document.getElementById('filter-text'),verdict=document.getElementById('filter-verdict'),
      role=document.getElementById('filter-role'),tag=document.getElementById('filter-tag'),
      count=document.getElementById('shown-count');
  function apply(){
    var q=text.value.toLowerCase(),v=verdict.value,r=role.value,t=tag.value,shown=0;
    var rows=document.querySelectorAll('#items tbody tr.item');
    for(var i=0;i<rows.length;i++){
      var row=rows[i],ok=(!q||row.getAttribute('data-text').indexOf(q)>=0)&&(!v||row.getAttribute('data-verdict')===v)
        &&(!r||row.getAttribute('data-role')===r)&&(!t||(' '+row.getAttribute('data-tags')+' ').indexOf(' '+t+' ')>=0);
      row.classList.toggle('hidden',!ok);if(ok){shown++;}
    }
    count.textContent=String(shown);
  }
  [text,verdict,role,tag].forEach(function(el){el.addEventListener('input',apply);el.addEventListener('change',apply);});
  apply();
})();
"""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


#: How far from the goal (every item right, no leak) a figure is drawn: green at or past GOOD,
#: amber at or past WARN, red below. A leak rate is judged as 1 - rate (any leak is red).
GOOD, WARN = 0.95, 0.80


def _grade(accuracy: float | None) -> str:
    if accuracy is None:
        return ""
    return "good" if accuracy >= GOOD else ("warn" if accuracy >= WARN else "bad")


def _card(title: str, stat: Mapping[str, Any] | None) -> str:
    if not stat or not stat.get("total"):
        return ""
    lo, hi = stat["ci95"]
    return (
        f'<div class="card {_grade(stat["accuracy"])}"><span>{_e(title)}</span><b>{_pct(stat["accuracy"])}</b>'
        f'<span>{stat["passed"]}/{stat["total"]}, 95% CI {lo:.1%}-{hi:.1%}</span></div>'
    )


def _clarification_card(c: Any) -> str:
    """--nl2sql-clarify: how many clarify items the engine resolved after the scripted reply."""
    if not isinstance(c, Mapping):
        return ""
    n = lambda k: int(c.get(k) or 0)  # noqa: E731
    good = n("resolved") == n("needed") and not n("unnecessary")
    more = f", {n('not_checked')} not checked (no follow_up)" if n("not_checked") else ""
    return (
        f'<div class="card {"good" if good else "bad"}" id="clarification"><span>clarification (resolved / needed)</span>'
        f'<b>{n("resolved")}/{n("needed")}</b><span>{n("asked")} asked, {n("recognised")} recognised, '
        f'{n("unnecessary")} unnecessary{_e(more)}</span></div>'
    )


def _bars(title: str, groups: Mapping[str, Mapping[str, Any]]) -> str:
    if not groups:
        return ""
    rows = []
    for name, st in groups.items():
        if not st.get("total"):
            continue
        lo, hi = st["ci95"]
        rows.append(
            f"<div>{_e(name)}</div>"
            f'<div class="bar" title="95% CI {lo:.1%}-{hi:.1%}"><i class="{_grade(st["accuracy"])}" style="width:{st["accuracy"] * 100:.1f}%"></i>'
            f'<s style="left:{lo * 100:.1f}%;width:{max(0.0, hi - lo) * 100:.1f}%"></s></div>'
            f'<div>{_pct(st["accuracy"])} ({st["passed"]}/{st["total"]}, CI {lo:.0%}-{hi:.0%})</div>'
        )
    return f'<h3>{_e(title)}</h3><div class="bars">{"".join(rows)}</div>' if rows else ""


def _matrix(title: str, matrix: Mapping[str, Mapping[str, int]]) -> str:
    cols = [c for c in ACTUAL if any(c in row for row in matrix.values())]
    head = "".join(f"<th>{_e(c)}</th>" for c in cols)
    body = "".join(
        f"<tr><th>{_e(exp)}</th>" + "".join(f'<td class="n">{row.get(c, 0)}</td>' for c in cols) + "</tr>"
        for exp, row in matrix.items()
    )
    return f'<h3>{_e(title)}</h3><table class="confusion"><tr><th>expected \\ got</th>{head}</tr>{body}</table>'


_TOKEN = re.compile(r"\s+|[A-Za-z_][\w$]*|\d+(?:\.\d+)?|'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|.", re.S)
#: SQL longer than this (in tokens) is shown without a word diff (the diff is quadratic at worst).
_DIFF_MAX_TOKENS = 2000


def _sql_diff(gold: str, answer: str) -> tuple[str, str]:
    """Both SQLs, escaped, with the words only one of them has marked (``del`` / ``ins``)."""
    a, b = _TOKEN.findall(gold), _TOKEN.findall(answer)
    if len(a) + len(b) > _DIFF_MAX_TOKENS:
        return _e(gold), _e(answer)
    left, right = [], []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        x, y = _e("".join(a[i1:i2])), _e("".join(b[j1:j2]))
        if op == "equal":
            left.append(x)
            right.append(y)
            continue
        if x:
            left.append(f"<del>{x}</del>")
        if y:
            right.append(f"<ins>{y}</ins>")
    return "".join(left), "".join(right)


def _detail(rec: Mapping[str, Any]) -> str:
    parts = [f"<p><b>question:</b> {_e(rec.get('question'))}</p>", f"<p><b>expected:</b> {_e(rec.get('expected'))}, <b>got:</b> {_e(rec.get('status'))}</p>"]
    for name, s in (rec.get("scores") or {}).items():
        mark = "FAILED" if s.get("passed") is False else ("ok" if s.get("passed") else "info")
        parts.append(f"<div>{mark} <b>{_e(name)}</b>{': ' + _e(s.get('detail')) if s.get('detail') else ''}</div>")
    if rec.get("gold_sql") and rec.get("sql"):
        gold, answer = _sql_diff(str(rec["gold_sql"]), str(rec["sql"]))
        parts.append('<p><b>SQL diff</b> (<del>only in the gold</del>, <ins>only in the answer</ins>)</p>'
                     f'<p>gold SQL</p><pre class="sql gold-sql">{gold}</pre><p>generated SQL</p><pre class="sql generated-sql">{answer}</pre>')
    elif rec.get("gold_sql"):
        parts.append(f'<p><b>gold SQL</b></p><pre class="sql gold-sql">{_e(rec["gold_sql"])}</pre>')
    elif rec.get("sql"):
        parts.append(f'<p><b>generated SQL</b></p><pre class="sql generated-sql">{_e(rec["sql"])}</pre>')
    diff = rec.get("row_diff")
    if diff:
        rows = [("missing", "-", r) for r in diff.get("missing") or []] + [("unexpected", "+", r) for r in diff.get("unexpected") or []]
        body = "".join(
            f'<tr class="{cls}"><td class="sign">{sign}</td>' + "".join(f"<td>{_e(shown(v))}</td>" for v in row) + "</tr>"
            for cls, sign, row in rows
        )
        parts.append(
            '<div class="diff"><p><b>row diff</b> (first 10; - missing, + unexpected)</p>'
            f'<div class="scroll"><table class="rowdiff">{body}</table></div></div>'
        )
    tax = rec.get("taxonomy")
    if tax:
        parts.append(
            f'<p class="taxonomy"><b>kind of miss:</b> {_e(", ".join(tax.get("kinds") or []))}; '
            f'BIRD set rule: {"pass" if tax.get("bird_set") else "fail"}, Spider rule: {_verdict(tax.get("spider"), tax.get("not_computed"))}</p>'
        )
    disagreed = (rec.get("test_suite") or {}).get("disagreed")
    if isinstance(disagreed, Mapping):
        parts.append(_counterexample(disagreed))
    turns = rec.get("turns")
    if isinstance(turns, list) and turns:  # --nl2sql-clarify: the conversation, in order
        said = "".join(
            f'<li class="turn {_e(t.get("speaker"))}"><b>{_e(t.get("speaker"))}:</b> '
            f'{_e(t.get("text") or t.get("sql") or t.get("status") or "")}'
            f'{" <i>(reading: " + _e(t["reading"]) + ")</i>" if t.get("reading") else ""}</li>'
            for t in turns[:12] if isinstance(t, Mapping)
        )
        parts.append(f'<div class="conversation"><p><b>conversation</b></p><ol>{said}</ol></div>')
    if rec.get("source"):
        parts.append(f'<p class="source"><b>source:</b> {_e(rec["source"])}</p>')
    if rec.get("text"):
        parts.append(f'<p><b>answer text</b></p><pre class="answer-text">{_e(rec["text"])}</pre>')
    if rec.get("unsupported"):
        parts.append(f'<p class="unsupported"><b>not in the rows:</b> {_e(", ".join(map(str, rec["unsupported"])))}</p>')
    lenient = rec.get("lenient")
    if isinstance(lenient, Mapping) and lenient.get("matched"):
        parts.append(f'<p class="lenient"><b>lenient reading:</b> matches ({_e(str(lenient.get("kind")).replace("_", " "))}): a presentation-only miss</p>')
    if rec.get("baseline_reason"):
        parts.append(f"<p><b>baseline:</b> {_e(rec.get('baseline'))}: {_e(rec['baseline_reason'])}</p>")
    if rec.get("error"):
        parts.append(f"<p><b>engine error:</b> {_e(rec['error'])}</p>")
    return "".join(parts)


def _neighbour(found: Mapping[str, Any]) -> str:
    n = found.get("neighbour")
    return str(n + 1) if isinstance(n, int) and not isinstance(n, bool) else "?"


def _cells(rows: Any) -> str:
    return "".join("<tr>" + "".join(f"<td>{_e(shown(v))}</td>" for v in r) + "</tr>" for r in _list(rows) if isinstance(r, list))


def _list(value: Any) -> list:
    """A report's list field, or nothing (a hand-edited or hostile report may hold anything)."""
    return value if isinstance(value, list) else []


def _result(label: str, cls: str, rows: Any) -> str:
    return f'<p>{label}{"" if rows else " no rows"}</p><table class="{cls}">{_cells(rows)}</table>'


def _counterexample(found: Mapping[str, Any]) -> str:
    """A test-suite flag's (or gold finding's) counterexample: the neighbour's seed, the shrunk
    rows table by table, and both results on them (docs/scoring.md)."""
    cx = found.get("counterexample")
    if not isinstance(cx, Mapping):
        return ""
    head = (f"<p><b>counterexample</b>: neighbour {_e(_neighbour(found))} (seed {_e(found.get('seed'))}), "
            f"{_e(cx.get('row_count'))} of its {_e(cx.get('shrunk_from'))} rows"
            + ("" if cx.get("complete", True) else " (not minimal: shrinking stopped at its time bound)") + "</p>")
    tables = "".join(
        f'<p>{_e(t.get("table"))}</p><div class="scroll"><table class="cx-rows"><tr>{"".join(f"<th>{_e(c)}</th>" for c in _list(t.get("columns")))}</tr>'
        f"{_cells(t.get('rows'))}</table></div>"
        for t in _list(cx.get("rows")) if isinstance(t, Mapping)
    )
    answer = (f'<p>the answer fails: {_e(cx["answer_error"])}</p>' if cx.get("answer_error") else
              _result("answer gives", "cx-answer", cx.get("answer_rows")))
    return f'<div class="counterexample">{head}{tables}{_result("gold gives", "cx-gold", cx.get("gold_rows"))}{answer}</div>'


def _gold_findings(found: Sequence[tuple[int, Mapping[str, Any], Mapping[str, Any]]]) -> str:
    """Passes where the gold is fragile on a neighbour: for the gold's owner to read."""
    if not found:
        return ""
    body = "".join(
        f'<li><a href="#item-{i}">{_e(r.get("nodeid"))}</a>: gold is fragile on neighbour {_e(_neighbour(g))}: '
        f"read it ({_e(g.get('gold_finding'))})<details><summary>counterexample</summary>{_counterexample(g)}</details></li>"
        for i, r, g in found
    )
    return f'<h2>Gold findings</h2><div id="gold-findings"><p>{len(found)} passes where the gold, not the answer, is the weak side on a neighbour database:</p><ul>{body}</ul></div>'


def _verdict(value: Any, why: Any) -> str:
    if value is None:
        return _e(str(why or "not computed").removeprefix("spider: "))
    return "pass" if value else "fail"


def _item_row(rec: Mapping[str, Any], index: int) -> str:
    verdict = rec.get("verdict") or ""
    failed = ", ".join(rec.get("failed_scores") or [])
    tags = " ".join(str(t) for t in rec.get("tags") or [])
    text = " ".join(str(x) for x in (rec.get("nodeid"), rec.get("question"), failed, tags, rec.get("expected"), rec.get("status"))).lower()
    flaky = "flaky" if rec.get("flaky") else ""
    failing = verdict in ("failed", "xfailed") or bool(rec.get("failed_scores"))
    detail = f"<details><summary>{_e(failed or 'details')}</summary>{_detail(rec)}</details>" if failing else _e(failed)
    return (
        f'<tr class="item" id="item-{index}" data-verdict="{_e(verdict)}" data-role="{_e(rec.get("role"))}" data-tags="{_e(tags)}" data-text="{_e(text)}">'
        f"<td>{_e(rec.get('nodeid'))}</td><td class=\"v-{_e(verdict)}\">{_e(verdict)}</td><td>{_e(rec.get('role'))}</td>"
        f"<td>{_e(rec.get('expected'))}</td><td>{_e(rec.get('status'))}</td>"
        f"<td>{''.join(f'<span class=tag>{_e(t)}</span>' for t in rec.get('tags') or [])}</td>"
        f"<td>{_e(rec.get('baseline') or '')}</td><td>{flaky}</td>"
        f'<td class="n">{float(rec.get("cost_usd") or 0):.4f}</td><td class="n">{float(rec.get("latency_s") or 0):.3f}</td>'
        f'<td class="failure">{detail}</td></tr>'
    )


#: The failures summary links at most this many failing items (the table below has them all).
_LINKS = 30


def _failures(seen: _Seen, s: Mapping[str, Any]) -> str:
    """The first thing on the page: how many items failed, links to them, the worst groups."""
    failed, errors, items = seen.failed, seen.errors, seen.count
    if not failed and not errors:
        return f'<div id="failures" class="none"><h2>No failures</h2><p>{items} items, none failed.</p></div>'
    links = "".join(f'<li><a href="#item-{i}">{_e(node)}</a> -- {_e(why)}</li>' for i, node, why in seen.failing)
    more = f"<p>and {failed - _LINKS} more (filter the table by verdict)</p>" if failed > _LINKS else ""
    groups = []
    for key in ("by_tag", "by_role", "by_datasource", "by_difficulty", "by_outcome"):
        for name, st in (s.get(key) or {}).items():
            if st.get("total") and st.get("accuracy") is not None and st["accuracy"] < 1.0:
                groups.append((st["accuracy"], f"{key[3:]} {name}", st))
    worst = "".join(
        f'<li class="{_grade(acc)}">{_e(label)}: <b style="color:var(--c)">{_pct(acc)}</b> ({st["passed"]}/{st["total"]})</li>'
        for acc, label, st in sorted(groups, key=lambda g: (g[0], g[1]))[:5]
    )
    said = f"{failed} failed" + (f", {errors} suite errors" if errors else "")
    return (
        f'<div id="failures"><h2>{said} of {items} items</h2><ol>{links}</ol>{more}'
        + (f"<p><b>worst breakdowns</b></p><ul>{worst}</ul>" if worst else "")
        + "</div>"
    )


def _options(values: Sequence[str]) -> str:
    return '<option value="">all</option>' + "".join(f'<option value="{_e(v)}">{_e(v)}</option>' for v in values)


def render_html(report: Mapping[str, Any]) -> str:
    """The page for one JSON report (``RunReport.to_json()``, or a merged one), as one string."""
    return "".join(html_pieces(report))


def html_pieces(report: Mapping[str, Any]) -> Iterator[str]:
    """The page of ``render_html`` in pieces, in order: the head, then the sections, each item's
    table row one at a time. ``report["items"]`` may be a lazy sequence (a spool's or a report
    file's, ``reporting.spool.LazyRecords``): it is read twice, one record at a time -- once for
    what comes before the table (the failures list, gold findings, the filters' choices) and once
    for the rows -- and no more of it is held than those few fields."""
    run, s, items = report.get("run") or {}, report.get("summary") or {}, report.get("items") or []
    title = f"pytest-nl2sql: {', '.join(run.get('suites') or [])} ({run.get('mode')} mode)"
    seen = _Seen.of(items)
    yield (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>"
        f'<h1>{_e(title)}</h1><p class="meta">{_e(_meta(run, s))}</p>'
    )
    leak = s.get("leak") or {}
    cards = [
        _card("accuracy (all items)", s.get("accuracy")),
        _card("accuracy (answer cases: expected to answer)", (s.get("by_outcome") or {}).get("allowed")),
        _card("execution accuracy", s.get("execution_accuracy")),
        _card("routing accuracy", s.get("routing_accuracy")),
    ]
    if leak.get("should_refuse"):
        cards.append(
            f'<div class="card {"good" if not leak["leaked"] else "bad"}"><span>leak rate (answered, should be refused)</span><b>{_pct(leak["rate"])}</b>'
            f'<span>{leak["leaked"]}/{leak["should_refuse"]}, 95% upper bound {leak["upper95"]:.1%}</span></div>'
        )
    cards.append(_clarification_card(s.get("clarification")))
    cost = f"${float(s.get('cost_usd') or 0):.4f}"
    latency = ""
    if s.get("latency_p50_s") is not None:
        latency = f", latency p50 {s['latency_p50_s']:.3f} s, p95 {s['latency_p95_s']:.3f} s"
    cards.append(f'<div class="card"><span>cost and latency</span><b>{cost}</b><span>{_e(s.get("llm_calls") or 0)} LLM calls{_e(latency)}</span></div>')
    incomplete = incomplete_line(run)
    if incomplete:  # first thing on the page: these figures do not cover the whole suite
        lost = "".join(f"<li>{_e(m.get('nodeid'))}: {_e(m.get('why'))}</li>" for m in (run.get("missing") or [])[:200] if isinstance(m, Mapping))
        more = len(missing_nodeids(run)) - 200
        lost += f"<li>and {more} more (the JSON report lists them all)</li>" if more > 0 else ""
        yield f'<div class="card bad" id="incomplete"><b>{_e(incomplete)}</b><ul>{lost}</ul></div>'
    yield _failures(seen, s)
    yield f'<div class="cards" id="summary">{"".join(cards)}</div>'
    checked = ", ".join(s.get("checked") or [])
    bars = "".join(_bars(f"accuracy per {k[3:]} (answer items; checked: {checked})", s.get(k) or {}) for k in ("by_tag", "by_difficulty", "by_role", "by_datasource", "by_outcome"))
    bars += "".join(_bars(f"routing per {g}", s.get(f"routing_by_{g}") or {}) for g in ("tag", "difficulty", "role", "datasource"))
    if bars:
        yield f'<h2>Breakdowns</h2><div id="breakdowns">{bars}</div>'
    conf = s.get("confusion") or {}
    if conf.get("all"):
        body = _matrix("all roles", conf["all"]) + "".join(_matrix(f"role {r}", m) for r, m in (conf.get("by_role") or {}).items())
        yield f'<h2>Outcomes</h2><div id="confusion">{body}</div>'
    yield models.html_section(s, _e) + answerability.html_section(s, _e) + answer_figures.html_section(s, _e, _card) + steps.html_section(s, _e)
    tax = s.get("taxonomy") or {}
    if tax.get("misses"):
        rows = "".join(f'<tr><td>{_e(k)}</td><td class="n">{n}</td></tr>' for k, n in (tax.get("kinds") or {}).items())
        yield (
            f'<h2>result_match misses</h2><table id="taxonomy"><tr><th>kind</th><th>items</th></tr>{rows}</table>'
            f"<p>BIRD's set rule would pass {tax['bird_set_would_pass']} of {tax['misses']}, Spider's rule {tax['spider_would_pass']}.</p>"
        )
    yield _gold_findings(seen.gold_findings)
    head = "".join(f"<th>{h}</th>" for h in ("item", "verdict", "role", "expected", "got", "tags", "baseline", "flaky", "cost $", "latency s", "failure"))
    yield (
        '<h2>Items</h2><div class="filters">'
        '<label>search <input id="filter-text" type="search" placeholder="node id, question, scorer"></label>'
        f'<label>verdict <select id="filter-verdict">{_options(sorted(seen.verdicts))}</select></label>'
        f'<label>role <select id="filter-role">{_options(sorted(seen.roles))}</select></label>'
        f'<label>tag <select id="filter-tag">{_options(sorted(seen.tags))}</select></label>'
        f'<span><span id="shown-count">{seen.count}</span> of {seen.count} items shown</span></div>'
        f'<table id="items"><thead><tr>{head}</tr></thead><tbody>'
    )
    for i, r in enumerate(items):  # the second read: one row at a time
        yield _item_row(r, i)
    yield "</tbody></table>"
    yield provenance.html_section(run, _e)
    yield f"<script>{_JS}</script></body></html>\n"


def _meta(run: Mapping[str, Any], s: Mapping[str, Any]) -> str:
    meta = (
        f"{s.get('items', 0)} items: {s.get('passed', 0)} passed, {s.get('failed', 0)} failed, "
        f"{s.get('xfailed', 0)} known failures (baseline), {s.get('skipped', 0)} skipped; "
        f"started {run.get('started')}, {run.get('duration_s')} s; pytest-nl2sql {run.get('plugin_version')}"
    )
    fixed = run.get("fixed") or []
    if fixed:
        meta += f"; fixed known failures: {', '.join(fixed)}"
    return meta


class _Seen:
    """What the page shows before its table, from one read of the items: the count, the
    failures (the first ``_LINKS`` linked), the gold findings, the filters' choices."""

    def __init__(self) -> None:
        self.count = self.failed = self.errors = 0
        self.failing: list[tuple[int, Any, Any]] = []  # (index, node id, why) of the first _LINKS failures
        self.gold_findings: list[tuple[int, Mapping[str, Any], Mapping[str, Any]]] = []
        self.verdicts: set[str] = set()
        self.roles: set[str] = set()
        self.tags: set[str] = set()

    @classmethod
    def of(cls, items: Iterable[Mapping[str, Any]]) -> _Seen:
        seen = cls()
        for i, r in enumerate(items):
            seen.count += 1
            if r.get("verdict") == "failed":
                seen.failed += 1
                if len(seen.failing) < _LINKS:
                    seen.failing.append((i, r.get("nodeid"), ", ".join(r.get("failed_scores") or []) or r.get("status") or "failed"))
            elif r.get("verdict") == "error":
                seen.errors += 1
            g = (r.get("test_suite") or {}).get("gold_finding")
            if isinstance(g, Mapping):
                seen.gold_findings.append((i, {"nodeid": r.get("nodeid")}, g))
            if r.get("verdict"):
                seen.verdicts.add(str(r.get("verdict")))
            if r.get("role"):
                seen.roles.add(str(r.get("role")))
            seen.tags.update(str(t) for t in r.get("tags") or [])
        return seen


def write_html(path: Path, report: Mapping[str, Any]) -> None:
    """Write the page for ``report`` to ``path`` (replaced whole), piece by piece: the page is
    never one string, and a lazy report's items are never all in memory (``html_pieces``)."""
    from pytest_nl2sql.suitefile.lock import write_atomic_with

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic_with(path, lambda fh: fh.writelines(html_pieces(report)))
