"""The command is ``pytest-nl2sql`` (and ``python -m pytest_nl2sql``), never ``nl2sql``:
nl2sql-engine on PyPI owns that console script, and two distributions declaring one script
overwrite each other silently, whichever is installed last."""

import subprocess
import sys
from importlib.metadata import distribution


def test_installed_entry_points_declare_no_nl2sql_script():
    scripts = {ep.name: ep.value for ep in distribution("pytest-nl2sql").entry_points if ep.group == "console_scripts"}
    assert "nl2sql" not in scripts
    assert scripts == {"pytest-nl2sql": "pytest_nl2sql.cli:main"}


def test_python_dash_m_is_the_same_command():
    proc = subprocess.run([sys.executable, "-m", "pytest_nl2sql", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: pytest-nl2sql ")
    for sub in ("suite", "init", "eval", "feedback", "report", "cache", "demo"):
        assert sub in proc.stdout


def test_a_usage_error_names_this_command():
    proc = subprocess.run([sys.executable, "-m", "pytest_nl2sql", "eval", "audit", "no-such.yaml"],
                          capture_output=True, text=True)
    assert proc.returncode != 0
    assert "nl2sql.yaml" in proc.stderr
    assert proc.stderr.startswith("pytest-nl2sql: ")
