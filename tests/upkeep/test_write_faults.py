"""Writes that cannot be lost: one lock per real file, symlinks written through, regenerate
locking only for its write, a bounded lock wait, and no temporary file left behind."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_nl2sql.cli import main as cli_main
from pytest_nl2sql.config import load_config
from pytest_nl2sql.datasources import DatasourceRegistry
from pytest_nl2sql.errors import LockTimeout
from pytest_nl2sql.suitefile.loader import load_suite
from pytest_nl2sql.suitefile.lock import lock_for, remove_stale_temps, write_atomic
from pytest_nl2sql.suitefile.writer import RowsUpdate, update_rows
from pytest_nl2sql.upkeep.regenerate import CHANGED_WHILE_RUNNING, regenerate

ROOT = Path(__file__).resolve().parents[2]
CASES = 6


def _suite(n: int = CASES) -> str:
    cases = "".join(
        f"- id: c_{i}\n  question: What is value {i}?\n  datasources: [shop]\n  status: approved\n"
        f"  outcome: {{admin: allowed}}\n  sql: SELECT v FROM t WHERE id = {i}\n  rows: []\n"
        for i in range(n)
    )
    return "# a comment that must survive\nversion: 1\ncases:\n" + cases


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """A project folder: shop.sqlite (t: id, v), nl2sql.yaml, evals/suite.yaml (no rows yet)."""
    con = sqlite3.connect(tmp_path / "shop.sqlite")
    con.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v INTEGER)")
    con.executemany("INSERT INTO t VALUES (?, ?)", [(i, i * 10) for i in range(CASES)])
    con.commit()
    con.close()
    (tmp_path / "nl2sql.yaml").write_text(
        "version: 1\ndatasources:\n  shop:\n    url: sqlite:///shop.sqlite\nroles:\n  admin: {datasources: \"*\"}\n"
    )
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "suite.yaml").write_text(_suite())
    return tmp_path


def _registry(project: Path) -> DatasourceRegistry:
    return DatasourceRegistry.from_config(load_config(project / "nl2sql.yaml"))


class _SlowRegistry:
    """A registry whose queries call ``during()`` first (what another process does meanwhile)."""

    def __init__(self, inner: DatasourceRegistry, during: Any) -> None:
        self.inner = inner
        self.during = during

    def get(self, name: str) -> Any:
        adapter = self.inner.get(name)
        outer = self

        class _Adapter:
            row_limit = adapter.row_limit

            def execute(self, sql: str) -> Any:
                outer.during(sql)
                return adapter.execute(sql)

        return _Adapter()


def _no_temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


# -- one lock per real file ---------------------------------------------------------------


def test_the_lock_is_keyed_on_the_real_path(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "s.yaml").write_text(_suite())
    (tmp_path / "via").symlink_to(real, target_is_directory=True)
    (tmp_path / "link.yaml").symlink_to(real / "s.yaml")
    files = {lock_for(p).lock_file for p in (real / "s.yaml", tmp_path / "via" / "s.yaml", tmp_path / "link.yaml", real / ".." / "real" / "s.yaml")}
    assert len(files) == 1


def test_the_lock_folder_is_the_users_own(tmp_path: Path) -> None:
    folder = Path(lock_for(tmp_path / "s.yaml").lock_file).parent
    st = folder.stat()
    assert st.st_uid == os.getuid() and st.st_mode & 0o077 == 0


_WRITER = textwrap.dedent(
    """
    import sys
    from pytest_nl2sql.suitefile.writer import RowsUpdate, update_rows
    path, first, count, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    for r in range(rounds):
        for i in range(first, first + count):
            update_rows(path, {f"c_{i}": RowsUpdate([{"v": r}])})
    """
)


def test_writers_through_a_symlinked_folder_and_the_real_one_lose_no_update(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "s.yaml").write_text(_suite(20))
    (tmp_path / "via").symlink_to(real, target_is_directory=True)
    rounds = 15
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(path), str(first), "10", str(rounds)], cwd=ROOT)
        for path, first in ((real / "s.yaml", 0), (tmp_path / "via" / "s.yaml", 10))
    ]
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    suite = load_suite(real / "s.yaml", use_cache=False)
    assert {c.id: c.rows for c in suite.cases} == {f"c_{i}": ({"v": rounds - 1},) for i in range(20)}
    assert _no_temps(real) == []


# -- symlinks are written through -----------------------------------------------------------


def test_a_symlinked_suite_stays_a_link_and_its_target_is_written(shop: Path) -> None:
    target = shop / "evals" / "suite.yaml"
    link = shop / "link.yaml"
    link.symlink_to(target)
    report = regenerate(link, _registry(shop))
    assert report.file_changed and not report.failed
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert load_suite(target, use_cache=False).get("c_3").rows == ({"v": 30},)
    assert target.read_text().startswith("# a comment that must survive\n")


def test_write_atomic_writes_through_a_symlinked_folder(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "f.txt").write_text("old")
    (tmp_path / "via").symlink_to(tmp_path / "real", target_is_directory=True)
    (tmp_path / "link.txt").symlink_to(tmp_path / "via" / "f.txt")
    write_atomic(tmp_path / "link.txt", "new")
    assert (tmp_path / "link.txt").is_symlink()
    assert (tmp_path / "real" / "f.txt").read_text() == "new"


# -- regenerate locks only for its write ------------------------------------------------------


def test_regenerate_runs_its_queries_without_the_lock(shop: Path) -> None:
    path = shop / "evals" / "suite.yaml"
    seen: list[bool] = []

    def during(sql: str) -> None:
        with lock_for(path, timeout=0):  # would time out if regenerate held it
            seen.append(True)

    report = regenerate(path, _SlowRegistry(_registry(shop), during))
    assert len(seen) == CASES and len(report.cases_written) == CASES


def test_a_change_made_while_queries_run_is_kept_and_the_rows_still_land(shop: Path) -> None:
    path = shop / "evals" / "suite.yaml"
    done: list[str] = []

    def during(sql: str) -> None:
        if not done:  # another process edits a question (and some rows) meanwhile
            done.append(sql)
            update_rows(path, {"c_5": RowsUpdate([{"v": -1}])})
            path.write_text(path.read_text().replace("What is value 0?", "What is value zero?"))

    report = regenerate(path, _SlowRegistry(_registry(shop), during))
    suite = load_suite(path, use_cache=False)
    assert not report.failed
    assert suite.get("c_0").question == "What is value zero?"  # the other change is kept ...
    assert [c.rows for c in suite.cases] == [({"v": i * 10},) for i in range(CASES)]  # ... and every row written


def test_a_case_whose_sql_changed_meanwhile_is_not_written_and_is_listed(shop: Path) -> None:
    path = shop / "evals" / "suite.yaml"
    done: list[str] = []

    def during(sql: str) -> None:
        if not done:
            done.append(sql)
            path.write_text(path.read_text().replace("WHERE id = 2\n", "WHERE id = 4\n"))

    report = regenerate(path, _SlowRegistry(_registry(shop), during))
    assert report.failed == (("c_2", CHANGED_WHILE_RUNNING),)
    assert "c_2" not in report.cases_written and report.written == CASES - 1
    suite = load_suite(path, use_cache=False)
    assert suite.get("c_2").rows == () and suite.get("c_2").sql.endswith("WHERE id = 4")
    assert suite.get("c_1").rows == ({"v": 10},)


# -- a bounded lock wait -----------------------------------------------------------------------


def test_a_lock_wait_that_runs_out_is_one_clear_error(shop: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = shop / "evals" / "suite.yaml"
    monkeypatch.setenv("NL2SQL_LOCK_TIMEOUT_S", "0.2")
    with lock_for(path):
        holder = subprocess.Popen(  # another process holds the lock, too, for the CLI below
            [sys.executable, "-c", "import sys, time; from pytest_nl2sql.suitefile.lock import lock_for\n"
             "with lock_for(sys.argv[1], timeout=5):\n    print('held', flush=True); time.sleep(30)", str(path)],
            cwd=ROOT, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(LockTimeout, match=r"another process is writing this file \(waited 0.2 s"):
            update_rows(path, {"c_0": RowsUpdate([{"v": 0}])})
        started = time.monotonic()
        with pytest.raises(LockTimeout):
            regenerate(path, _registry(shop))  # the queries ran; only the write waits
        assert time.monotonic() - started < 10
        cli = subprocess.run(
            [sys.executable, "-m", "pytest_nl2sql.cli", "eval", "regenerate", "evals/suite.yaml"],
            cwd=shop, capture_output=True, text=True, env={**os.environ, "NL2SQL_LOCK_TIMEOUT_S": "0.2"},
        )
        assert cli.returncode == 1
        assert "another process is writing this file" in cli.stderr
        assert "Traceback" not in cli.stderr and len(cli.stderr.strip().splitlines()) == 1
    finally:
        holder.kill()
        holder.wait()
    assert _no_temps(path.parent) == []


# -- no temporary file left behind ----------------------------------------------------------------


def test_a_failed_write_removes_its_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(_suite())

    def broken(src: Any, dst: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError, match="disk full"):
        update_rows(path, {"c_0": RowsUpdate([{"v": 0}])})
    monkeypatch.undo()
    assert _no_temps(tmp_path) == [] and path.read_text() == _suite()


_KILLED = textwrap.dedent(
    """
    import os, sys, time
    from pytest_nl2sql.suitefile.writer import RowsUpdate, update_rows
    real_fsync = os.fsync
    def fsync(fd):
        real_fsync(fd)
        print("temp written", flush=True)
        time.sleep(60)  # killed here: after the temporary file, before os.replace
    os.fsync = fsync
    update_rows(sys.argv[1], {"c_0": RowsUpdate([{"v": 0}])})
    """
)


def test_a_write_killed_with_sigkill_leaves_the_file_whole_and_the_next_write_cleans_up(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(_suite())
    proc = subprocess.Popen([sys.executable, "-c", _KILLED, str(path)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "temp written"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    left = _no_temps(tmp_path)
    assert len(left) == 1 and f".{proc.pid}@" in left[0]  # the dead process's temporary file
    assert path.read_text() == _suite()  # the file itself is whole
    assert update_rows(path, {"c_1": RowsUpdate([{"v": 10}])})  # the next write ...
    assert _no_temps(tmp_path) == []  # ... removes it
    assert load_suite(path, use_cache=False).get("c_1").rows == ({"v": 10},)


def test_a_temporary_file_of_a_live_writer_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("x")
    from pytest_nl2sql.suitefile import lock as writer

    live = tmp_path / f".s.yaml.{os.getppid()}@{writer._HOST}.abc123.tmp"  # our parent is alive
    dead = tmp_path / f".s.yaml.{2**22 + 12345}@{writer._HOST}.def456.tmp"  # above Linux's pid_max
    other = tmp_path / ".other.yaml.1@00000000.x.tmp"
    for p in (live, dead, other):
        p.write_text("partial")
    assert remove_stale_temps(path) == [str(dead)]
    assert live.exists() and other.exists()


def test_the_cli_regenerate_goes_through_a_symlinked_folder(shop: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    via = tmp_path_factory.mktemp("elsewhere") / "via"
    via.symlink_to(shop / "evals", target_is_directory=True)
    assert cli_main(["eval", "regenerate", "--config", str(shop / "nl2sql.yaml"), str(via / "suite.yaml")]) == 0
    assert (shop / "evals" / "suite.yaml").is_file() and not (shop / "evals" / "suite.yaml").is_symlink()
    assert load_suite(shop / "evals" / "suite.yaml", use_cache=False).get("c_4").rows == ({"v": 40},)
