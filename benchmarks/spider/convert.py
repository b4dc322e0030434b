"""Convert the Spider dev split into one v1 suite and the nl2sql.yaml that runs it.

``convert(spider_dir, out_dir)`` writes ``out_dir/nl2sql.yaml`` (one read-only SQLite
datasource per database present, row_limit 100000) and ``out_dir/spider_dev.yaml``: one case
per dev question whose database is present (wta_1 is absent from the shared data: its 62
questions are skipped), with

* ``id`` ``spider_dev_NNNN`` (NNNN: the 0-based line of ``dev_gold.sql``/``dev.json``);
* ``order_matters`` true exactly when the gold SQL has a top-level ORDER BY (sqlglot);
* ``difficulty`` Spider's hardness (hardness.py); ``extra`` is written ``hard`` with the tag
  ``spider-extra``; tags: the database id and ``spider-<level>``;
* ``outcome: {admin: allowed}``; ``rows`` written by ``pytest_nl2sql.upkeep.regenerate``.

A gold query whose result names a column twice is given unique output aliases (the suite's
rows are ``{column: value}`` maps), tagged ``gold-renamed-columns``. A gold query that fails or
is cut at the row limit is kept as ``status: draft`` with the tag ``gold-fails`` and a comment
saying why -- regenerate's own report is the source of that list.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import attrs
import sqlglot
from sqlglot import exp

from pytest_nl2sql.config import load_config
from pytest_nl2sql.datasources import DatasourceRegistry
from pytest_nl2sql.upkeep.regenerate import regenerate

from .hardness import spider_hardness

__all__ = ["SpiderItem", "ConvertResult", "convert", "default_spider_dir", "load_items", "top_level_order_by", "write_predictions"]

ROOT = Path(__file__).resolve().parents[2]


def default_spider_dir() -> Path:
    """``$NL2SQL_SPIDER_DIR``, else ``../shared/data/spider`` beside the repository."""
    env = os.environ.get("NL2SQL_SPIDER_DIR")
    return Path(env) if env else ROOT.parent / "shared" / "data" / "spider"


@attrs.frozen
class SpiderItem:
    index: int
    db_id: str
    question: str
    gold: str
    hardness: str

    @property
    def case_id(self) -> str:
        return f"spider_dev_{self.index:04d}"


@attrs.frozen
class ConvertResult:
    suite: Path
    config: Path
    items: tuple[SpiderItem, ...]
    skipped_dbs: dict[str, int]
    drafts: dict[str, str]
    renamed: tuple[str, ...]


def db_path(spider_dir: Path, db_id: str) -> Path:
    return spider_dir / "database" / db_id / f"{db_id}.sqlite"


def load_items(spider_dir: Path) -> tuple[list[SpiderItem], dict[str, int]]:
    """The dev pairs whose database is present, and the count skipped per absent database."""
    dev = json.loads((spider_dir / "dev.json").read_text(encoding="utf-8"))
    gold_lines = (spider_dir / "dev_gold.sql").read_text(encoding="utf-8").splitlines()
    if len(gold_lines) != len(dev):
        raise ValueError(f"{spider_dir}: dev_gold.sql has {len(gold_lines)} lines, dev.json {len(dev)} questions")
    items, skipped = [], {}
    for i, (entry, line) in enumerate(zip(dev, gold_lines, strict=True)):
        gold, _, db_id = line.rpartition("\t")
        if db_id != entry["db_id"]:
            raise ValueError(f"dev_gold.sql:{i + 1}: database {db_id!r}, dev.json says {entry['db_id']!r}")
        if not db_path(spider_dir, db_id).is_file():
            skipped[db_id] = skipped.get(db_id, 0) + 1
            continue
        items.append(SpiderItem(i, db_id, " ".join(entry["question"].split()), gold.strip(), spider_hardness(entry["sql"])))
    return items, skipped


def top_level_order_by(sql: str) -> bool:
    """Does the outermost query (a SELECT or a set operation) end with ORDER BY?"""
    try:
        tree = sqlglot.parse_one(sql, read="sqlite")
    except sqlglot.errors.SqlglotError:
        return "order by" in sql.lower()
    return bool(tree.args.get("order"))


def unique_output_names(sql: str, columns: list[str]) -> str | None:
    """``sql`` with repeated output column names aliased ``name_2``, ``name_3``; None if unique."""
    if len(set(columns)) == len(columns):
        return None
    tree = sqlglot.parse_one(sql, read="sqlite")
    select = tree
    while isinstance(select, exp.SetOperation):
        select = select.this
    if not isinstance(select, exp.Select) or len(select.expressions) != len(columns):
        return None
    seen: dict[str, int] = {}
    for node, name in zip(list(select.expressions), columns, strict=True):
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            inner = node.this if isinstance(node, exp.Alias) else node
            node.replace(exp.alias_(inner.copy(), f"{name}_{seen[name]}"))
    return tree.sql(dialect="sqlite")


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _case_yaml(item: SpiderItem, sql: str, *, draft: str | None, renamed: bool) -> str:
    level = "hard" if item.hardness == "extra" else item.hardness
    tags = [item.db_id, f"spider-{item.hardness}"]
    if renamed:
        tags.append("gold-renamed-columns")
    lines = []
    if draft:
        tags.append("gold-fails")
        lines.append(f"# draft: the gold SQL cannot give rows here: {' '.join(draft.split())[:300]}")
    lines += [
        f"- id: {item.case_id}",
        f"  question: {_q(item.question)}",
        f"  datasources: [{item.db_id}]",
        f"  status: {'draft' if draft else 'approved'}",
        "  origin: hand",
        f"  difficulty: {level}",
        f"  tags: [{', '.join(tags)}]",
        "  outcome: {admin: allowed}",
        f"  order_matters: {'true' if top_level_order_by(sql) else 'false'}",
        f"  sql: {_q(sql)}",
    ]
    return "\n".join(lines) + "\n"


def write_config(out_dir: Path, spider_dir: Path, db_ids: list[str]) -> Path:
    lines = ["version: 1", "datasources:"]
    for db in db_ids:
        lines += [f"  {db}:", f"    url: sqlite:///{db_path(spider_dir, db).resolve()}", "    row_limit: 100000", "    timeout_s: 60"]
    lines += ["roles:", '  admin: {datasources: "*"}']
    path = out_dir / "nl2sql.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _write_suite(path: Path, items: list[SpiderItem], sqls: dict[str, str], drafts: dict[str, str], renamed: set[str], skipped: dict[str, int]) -> None:
    head = [
        "# The Spider dev split (Yu et al., 2018; CC BY-SA 4.0), converted by benchmarks/spider/convert.py.",
        "# Do not edit: regenerate it with `python benchmarks/spider/run.py`.",
    ]
    head += [f"# Skipped: {n} questions of {db} (the database is not in the shared data)." for db, n in sorted(skipped.items())]
    body = "".join(
        _case_yaml(it, sqls[it.case_id], draft=drafts.get(it.case_id), renamed=it.case_id in renamed) for it in items
    )
    path.write_text("\n".join(head) + "\nversion: 1\ncases:\n" + body, encoding="utf-8")


def convert(spider_dir: Path, out_dir: Path, *, db_ids: list[str] | None = None, limit: int | None = None) -> ConvertResult:
    """Write the suite and its nl2sql.yaml into ``out_dir`` (see the module docstring)."""
    items, skipped = load_items(spider_dir)
    if db_ids is not None:
        items = [it for it in items if it.db_id in db_ids]
    if limit is not None:
        items = items[:limit]
    out_dir.mkdir(parents=True, exist_ok=True)
    dbs = sorted({it.db_id for it in items})
    config_path = write_config(out_dir, spider_dir, dbs)
    registry = DatasourceRegistry.from_config(load_config(config_path))
    sqls = {it.case_id: it.gold for it in items}
    renamed: set[str] = set()
    drafts: dict[str, str] = {}
    try:
        for it in items:  # duplicated output names would collapse in {column: value} rows
            try:
                cols = list(registry.get(it.db_id).execute(it.gold, row_limit=0).columns)
            except Exception:  # noqa: BLE001 - regenerate reports the failure below
                continue
            fixed = unique_output_names(it.gold, cols)
            if fixed is not None:
                sqls[it.case_id] = fixed
                renamed.add(it.case_id)
        suite_path = out_dir / "spider_dev.yaml"
        _write_suite(suite_path, items, sqls, drafts, renamed, skipped)
        report = regenerate(suite_path, registry)
        if report.failed:
            drafts = dict(report.failed)
            _write_suite(suite_path, items, sqls, drafts, renamed, skipped)
            regenerate(suite_path, registry)
    finally:
        registry.close()
    return ConvertResult(suite_path, config_path, tuple(items), skipped, drafts, tuple(sorted(renamed)))


def write_predictions(items: list[SpiderItem] | tuple[SpiderItem, ...], predicted: list[str], path: Path) -> Path:
    """A JSONL predictions file: ``predicted[i]`` is the SQL for dev line ``i``."""
    with path.open("w", encoding="utf-8") as fh:
        for it in items:
            sql = predicted[it.index].strip() if it.index < len(predicted) else ""
            fh.write(json.dumps({"id": it.case_id, "question": it.question, "datasource": it.db_id, "sql": sql}) + "\n")
    return path
