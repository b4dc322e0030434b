"""A run's figures over time: ``pytest-nl2sql report publish REPORT DIR`` (docs/report.md#history).

Each publish appends one small record to ``DIR/history.jsonl`` -- when the run started, its
digests (suites, schema fingerprints), version, commit, engine, and per series (a suite and a
model) the headline figures -- and renders ``DIR/index.html``: one self-contained page with a
chart per figure (accuracy, execution accuracy, cost per passed item, p95 latency) and a line
per series. A **series break** (a datasource's schema fingerprint changed since the series'
last record) starts a new line: the numbers before and after are about different databases.

A record is only appended: the history is never rewritten, and a line of the file that cannot
be read is skipped and counted on the page (never a reason to lose the rest).
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_nl2sql.suitefile.lock import write_atomic

__all__ = ["HISTORY_FILE", "PAGE_FILE", "append_record", "history_record", "load_history", "render_history", "series_lines"]

HISTORY_SCHEMA = "pytest-nl2sql/history"
HISTORY_FILE = "history.jsonl"
PAGE_FILE = "index.html"
#: The figures of a record's series and how the page shows them (label, format).
FIGURES = {
    "accuracy": ("accuracy (all items)", "pct"),
    "execution_accuracy": ("execution accuracy", "pct"),
    "cost_per_passed_usd": ("cost per passed item ($)", "usd"),
    "latency_p95_s": ("p95 latency (s)", "s"),
}
#: Records the page draws at most (the newest); the file keeps them all.
MAX_DRAWN = 2_000
_COLOURS = ("#0969da", "#cf222e", "#1a7f37", "#9a6700", "#8250df", "#bf3989", "#1b7c83", "#57606a")


def _rate(stat: Any) -> float | None:
    return stat.get("accuracy") if isinstance(stat, Mapping) else None


def _figures(summary: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "items": summary.get("items"),
        "passed": summary.get("passed"),
        "failed": summary.get("failed"),
        "accuracy": _rate(summary.get("accuracy")),
        "execution_accuracy": _rate(summary.get("execution_accuracy")),
        "cost_usd": summary.get("cost_usd"),
        "cost_per_passed_usd": summary.get("cost_per_passed_usd"),
        "latency_p95_s": summary.get("latency_p95_s"),
    }


def history_record(report: Mapping[str, Any]) -> dict[str, Any]:
    """The small record of one JSON report: digests, version, commit, headline figures per
    series. A report of several LLM configs (``summary.by_llm``) gives one series per config."""
    run, summary = report.get("run") or {}, report.get("summary") or {}
    prov = run.get("provenance") if isinstance(run.get("provenance"), Mapping) else {}
    suite = ", ".join(run.get("suites") or []) or "(no suite)"
    engine = prov.get("engine") or {}
    default_model = run.get("llm_model") or engine.get("name") or "engine"
    by_llm = summary.get("by_llm") if isinstance(summary.get("by_llm"), Mapping) else {}
    series = [{"suite": suite, "model": str(name), "figures": _figures(board)} for name, board in sorted(by_llm.items())]
    if not series:
        series = [{"suite": suite, "model": str(default_model), "figures": _figures(summary)}]
    return {
        "schema": HISTORY_SCHEMA,
        "version": 1,
        "started": run.get("started"),
        "mode": run.get("mode"),
        "plugin_version": run.get("plugin_version"),
        "suites": {k: (v or {}).get("sha256") for k, v in (prov.get("suites") or {}).items()},
        "datasources": {k: (v or {}).get("fingerprint") for k, v in (prov.get("datasources") or {}).items()},
        "git": prov.get("git"),
        "engine": engine,
        "series": series,
    }


def append_record(folder: Path, record: Mapping[str, Any]) -> Path:
    """Append ``record`` as one line of ``folder/history.jsonl`` (one write, ``O_APPEND``: two
    publishes at once each add their line whole)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / HISTORY_FILE
    line = (json.dumps(record, sort_keys=True, separators=(",", ":"), default=str) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)
    return path


def load_history(folder: Path) -> tuple[list[dict[str, Any]], int]:
    """The records of ``folder/history.jsonl`` in file order, and how many lines were unreadable."""
    path = folder / HISTORY_FILE
    if not path.is_file():
        return [], 0
    records, bad = [], 0
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            bad += 1
            continue
        if isinstance(rec, dict) and rec.get("schema") == HISTORY_SCHEMA and isinstance(rec.get("series"), list):
            records.append(rec)
        else:
            bad += 1
    return records, bad


def series_lines(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The lines of the page: one per (suite, model) and segment; a schema fingerprint that
    changed since the series' previous record starts a new segment. Each line is
    ``{"suite", "model", "segment", "points": [(record index, started, figures)]}``."""
    lines: list[dict[str, Any]] = []
    current: dict[tuple[str, str], dict[str, Any]] = {}
    last_schema: dict[tuple[str, str], Mapping[str, Any]] = {}
    for i, rec in enumerate(records):
        schema = rec.get("datasources") if isinstance(rec.get("datasources"), Mapping) else {}
        for s in rec.get("series") or []:
            if not isinstance(s, Mapping):
                continue
            key = (str(s.get("suite")), str(s.get("model")))
            before = last_schema.get(key)
            broke = before is not None and any(before.get(k) and schema.get(k) and before[k] != schema[k] for k in set(before) & set(schema))
            if key not in current or broke:
                line = {"suite": key[0], "model": key[1], "segment": (current[key]["segment"] + 1) if key in current else 1, "points": []}
                lines.append(line)
                current[key] = line
            current[key]["points"].append((i, rec.get("started"), s.get("figures") or {}))
            last_schema[key] = schema
    return lines


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _shown(value: Any, fmt: str) -> str:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return "-"
    return {"pct": f"{value:.1%}", "usd": f"${value:.6f}", "s": f"{value:.3f} s"}[fmt]


def _chart(key: str, label: str, fmt: str, lines: Sequence[Mapping[str, Any]], count: int) -> str:
    width, height, pad = 720, 220, 40
    values = [p[2].get(key) for ln in lines for p in ln["points"] if isinstance(p[2].get(key), (int, float))]
    if not values:
        return f'<h2>{_e(label)}</h2><p class="empty" data-figure="{_e(key)}">no run recorded this figure</p>'
    low, high = (0.0, 1.0) if fmt == "pct" else (0.0, max(values) * 1.1 or 1.0)

    def x(i: int) -> float:
        return pad + (width - 2 * pad) * (i / max(1, count - 1))

    def y(v: float) -> float:
        return height - pad - (height - 2 * pad) * ((v - low) / ((high - low) or 1.0))

    parts = [f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="#d0d7de"/>',
             f'<text x="4" y="{pad}" font-size="11">{_e(_shown(high, fmt))}</text>',
             f'<text x="4" y="{height - pad}" font-size="11">{_e(_shown(low, fmt))}</text>']
    for n, ln in enumerate(lines):
        colour = _COLOURS[n % len(_COLOURS)]
        pts = [(x(i), y(f[key]), started, f[key]) for i, started, f in ln["points"] if isinstance(f.get(key), (int, float))]
        if not pts:
            continue
        name = f"{ln['suite']} / {ln['model']}" + (f" (series {ln['segment']})" if ln["segment"] > 1 else "")
        dash = ' stroke-dasharray="6 3"' if ln["segment"] > 1 else ""
        parts.append(f'<polyline class="series" data-series="{_e(name)}" fill="none" stroke="{colour}" stroke-width="2"{dash} '
                     f'points="{" ".join(f"{px:.1f},{py:.1f}" for px, py, _, _ in pts)}"/>')
        parts += [f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3" fill="{colour}"><title>{_e(name)}: {_e(_shown(v, fmt))} ({_e(started)})</title></circle>'
                  for px, py, started, v in pts]
    legend = "".join(
        f'<li style="color:{_COLOURS[n % len(_COLOURS)]}">{_e(ln["suite"])} / {_e(ln["model"])}'
        + (f" (series {ln['segment']}: the schema changed)" if ln["segment"] > 1 else "") + "</li>"
        for n, ln in enumerate(lines)
    )
    return (f'<h2>{_e(label)}</h2><svg class="chart" data-figure="{_e(key)}" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
            f'role="img" aria-label="{_e(label)} over time">{"".join(parts)}</svg><ul class="legend">{legend}</ul>')


def render_history(records: Sequence[Mapping[str, Any]], unreadable: int = 0) -> str:
    """The page of the figures over time (no network, no script: inline CSS and SVG)."""
    drawn = list(records)[-MAX_DRAWN:]
    lines = series_lines(drawn)
    charts = "".join(_chart(k, label, fmt, lines, len(drawn)) for k, (label, fmt) in FIGURES.items())
    rows = "".join(
        f"<tr><td>{_e(r.get('started'))}</td><td>{_e(r.get('mode'))}</td><td>{_e(s.get('suite'))}</td><td>{_e(s.get('model'))}</td>"
        f"<td>{_e(_shown((s.get('figures') or {}).get('accuracy'), 'pct'))}</td>"
        f"<td><code>{_e(((r.get('git') or {}).get('commit') or '')[:12])}</code>{' dirty' if (r.get('git') or {}).get('dirty') else ''}</td>"
        f"<td>{_e((r.get('engine') or {}).get('version'))}</td></tr>"
        for r in reversed(drawn) for s in r.get("series") or [] if isinstance(s, Mapping)
    )
    note = f"<p class=\"warn\">{unreadable} unreadable lines of {HISTORY_FILE} were skipped.</p>" if unreadable else ""
    more = f"<p>The page draws the newest {MAX_DRAWN} of {len(records)} records.</p>" if len(records) > MAX_DRAWN else ""
    css = ("body{font:14px/1.45 system-ui,sans-serif;margin:1.5rem;color:#1b1f24}h2{font-size:1.05rem;margin:1.4rem 0 .3rem}"
           "table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:.2rem .5rem}.legend{margin:.2rem 0 0;padding-left:1.2rem}"
           ".warn{color:#9a6700}svg.chart{max-width:100%;height:auto;border:1px solid #eaeef2}")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">'
        f"<title>pytest-nl2sql history</title><style>{css}</style></head><body>"
        f'<h1>pytest-nl2sql: figures over time</h1><p class="meta">{len(records)} runs, {len(lines)} lines '
        f"(a line per suite and model; a schema change starts a new line)</p>{note}{more}{charts}"
        "<h2>Runs</h2><table id=\"runs\"><tr><th>started</th><th>mode</th><th>suite</th><th>model</th><th>accuracy</th><th>commit</th>"
        f"<th>engine version</th></tr>{rows}</table></body></html>\n"
    )


def publish(report: Mapping[str, Any], folder: Path) -> tuple[Path, Path, int]:
    """Append the report's record, render the page; (history file, page, records)."""
    history = append_record(folder, history_record(report))
    records, bad = load_history(folder)
    page = folder / PAGE_FILE
    write_atomic(page, render_history(records, bad))
    return history, page, len(records)
