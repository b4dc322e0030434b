"""Gold findings of a --nl2sql-test-suite run reach the gold's owner: the terminal summary
lists them, and ``pytest-nl2sql eval audit --mutants --report REPORT.json`` reports each as a
``gold-fragile`` warning at the case's line, with its counterexample."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

SUITE = """version: 1
cases:
  - id: pets_per_owner
    question: How many pets does each owner have?
    datasources: [pets]
    status: approved
    origin: hand
    outcome: {admin: allowed}
    sql: SELECT p.name, COUNT(*) AS n FROM person AS p JOIN pet AS t ON t.owner_id = p.id GROUP BY p.name
"""
# the answer groups by the key, the gold by the name: equal on the real data (four names, none
# twice), apart where a neighbour repeats a name -- the gold's weakness, not the answer's
ANSWER = "SELECT p.name, COUNT(*) AS n FROM person AS p JOIN pet AS t ON t.owner_id = p.id GROUP BY p.id"


def _project(root: Path) -> Path:
    root.mkdir()
    con = sqlite3.connect(root / "pets.sqlite")
    con.executescript("""
        CREATE TABLE person (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
        CREATE TABLE pet (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, owner_id INTEGER NOT NULL REFERENCES person(id));
        INSERT INTO person VALUES (1, 'Ann'), (2, 'Bob'), (3, 'Cy'), (4, 'Dee');
        INSERT INTO pet VALUES (1, 'cat', 1), (2, 'dog', 1), (3, 'dog', 2), (4, 'fish', 3), (5, 'cat', 4), (6, 'dog', 4);
    """)
    con.commit()
    con.close()
    (root / "nl2sql.yaml").write_text('version: 1\ndatasources:\n  pets:\n    url: sqlite:///pets.sqlite\nroles:\n  admin:\n    datasources: "*"\n')
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "evals").mkdir()
    (root / "evals" / "pets.yaml").write_text(SUITE)
    (root / "p.jsonl").write_text(json.dumps({"id": "pets_per_owner", "sql": ANSWER}) + "\n")
    return root


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=root, capture_output=True, text=True, timeout=300)


def test_audit_lists_the_gold_findings_of_a_report(tmp_path: Path) -> None:
    root = _project(tmp_path / "proj")
    cli = ["-m", "pytest_nl2sql.cli", "eval"]
    assert _run(root, *cli, "regenerate", "evals/pets.yaml", "--config", "nl2sql.yaml").returncode == 0
    run = _run(root, "-m", "pytest", "--nl2sql-suite", "evals/pets.yaml", "--nl2sql-config", "nl2sql.yaml",
               "--nl2sql-predictions", "p.jsonl", "--nl2sql-test-suite", "5", "--nl2sql-out", "r.json", "-p", "no:randomly")
    assert run.returncode == 0, run.stdout + run.stderr  # a gold finding passes the item
    assert "gold findings                1 passes where the gold is fragile on a neighbour" in run.stdout
    report = json.loads((root / "r.json").read_text())
    (finding,) = report["summary"]["test_suite"]["gold_findings"]
    assert finding["case_id"] == "pets_per_owner" and "groups by the non-key column name" in finding["why"]

    audit = _run(root, *cli, "audit", "--mutants", "evals/pets.yaml", "--config", "nl2sql.yaml", "--report", "r.json")
    assert audit.returncode == 0, audit.stdout + audit.stderr  # a warning
    (line,) = [ln for ln in audit.stdout.splitlines() if "[gold-fragile]" in ln]
    assert line.startswith("evals/pets.yaml:3: case 'pets_per_owner': [gold-fragile] gold is fragile on neighbour ")
    assert "the gold gives [(" in line and "the answer [(" in line and ANSWER in line
    assert "audit: 0 error(s), 1 warning(s)" in audit.stdout
    # without the report the audit has no answer to compare: no gold-fragile
    plain = _run(root, *cli, "audit", "evals/pets.yaml", "--config", "nl2sql.yaml")
    assert "gold-fragile" not in plain.stdout
    # a report that is not one: a one-line error naming the file
    (root / "bad.json").write_text("{")
    bad = _run(root, *cli, "audit", "evals/pets.yaml", "--config", "nl2sql.yaml", "--report", "bad.json")
    assert bad.returncode != 0 and "bad.json: not a JSON report" in bad.stderr


FLAGGED = "SELECT p.name, COUNT(*) AS n FROM person AS p JOIN pet AS t ON t.owner_id = p.id WHERE p.id < 100 GROUP BY p.name"


def test_a_reviewed_flag_does_not_come_back(tmp_path: Path) -> None:
    root = _project(tmp_path / "proj")
    (root / "p.jsonl").write_text(json.dumps({"id": "pets_per_owner", "sql": FLAGGED}) + "\n")
    cli = ["-m", "pytest_nl2sql.cli", "eval"]
    assert _run(root, *cli, "regenerate", "evals/pets.yaml", "--config", "nl2sql.yaml").returncode == 0
    suite = root / "evals" / "pets.yaml"
    suite.write_text(suite.read_text().replace("    status: approved\n", "    status: approved   # by hand\n"))
    pytest_args = ["-m", "pytest", "--nl2sql-suite", "evals/pets.yaml", "--nl2sql-config", "nl2sql.yaml", "--nl2sql-predictions",
                   "p.jsonl", "--nl2sql-test-suite", "5", "-p", "no:randomly"]
    flagged = _run(root, *pytest_args, "--nl2sql-out", "r.json")
    assert flagged.returncode == 1 and "but not on neighbour database" in flagged.stdout
    before = suite.read_text()

    mark = _run(root, *cli, "audit", "evals/pets.yaml", "--config", "nl2sql.yaml", "--report", "r.json",
                "--mark-reviewed", "pets_per_owner", "--note", "ids stop at 4: the filter always holds")
    assert mark.returncode == 0, mark.stdout + mark.stderr
    assert "evals/pets.yaml:3: case 'pets_per_owner': reviewed: equivalent: " + FLAGGED in mark.stdout
    after = suite.read_text()
    assert after.startswith(before) and "# by hand" in after  # appended; every byte before kept
    assert after[len(before):] == (
        "    reviewed:\n"
        f'      - sql: "{FLAGGED}"\n'
        "        verdict: equivalent\n"
        '        note: "ids stop at 4: the filter always holds"\n'
    )
    again = _run(root, *pytest_args, "--nl2sql-out", "r2.json")
    assert again.returncode == 0, again.stdout
    record = json.loads((root / "r2.json").read_text())["items"][0]
    assert record["test_suite"]["reviewed"]["note"] == "ids stop at 4: the filter always holds"
    assert _run(root, "-m", "pytest_nl2sql.cli", "suite", "check", "evals/pets.yaml", "--config", "nl2sql.yaml").returncode == 0
    # marking again changes nothing; a case the report did not flag is refused, saying why
    assert "already reviewed equivalent" in _run(root, *cli, "audit", "evals/pets.yaml", "--config", "nl2sql.yaml", "--report",
                                                  "r.json", "--mark-reviewed", "pets_per_owner").stdout
    assert suite.read_text() == after
    other = _run(root, *cli, "audit", "evals/pets.yaml", "--config", "nl2sql.yaml", "--report", "r2.json", "--mark-reviewed", "pets_per_owner")
    assert other.returncode == 1 and "the report has no answer the test-suite check flagged" in other.stdout
    # a malformed entry: one line at path:line:col naming the fix
    suite.write_text(after.replace("verdict: equivalent", "verdict: fine"))
    bad = _run(root, "-m", "pytest_nl2sql.cli", "suite", "check", "evals/pets.yaml", "--config", "nl2sql.yaml")
    line = after.splitlines().index("        verdict: equivalent") + 1
    assert bad.returncode != 0 and f"evals/pets.yaml:{line}:18: case 'pets_per_owner': reviewed verdict must be one of equivalent, got 'fine'" in bad.stdout + bad.stderr
