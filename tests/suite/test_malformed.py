"""The malformed corpus: every broken suite is refused with a ``SuiteError`` that says where
(``path:line:col``), which case, what is wrong and what would be right -- all problems at once.

The files and their expected messages are in ``malformed/`` (see ``corpus.py`` for the header
format). Inputs that cannot be committed as small files (a folder, a missing file, huge files,
other encodings) are made here in ``tmp_path``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_nl2sql.errors import SuiteError
from pytest_nl2sql.suitefile.loader import MAX_SUITE_BYTES, load_suite, parse_suite
from tests.suite.corpus import (
    GOLDEN,
    MALFORMED,
    contains_expected_lines,
    malformed_files,
    mismatches,
    read_expectation,
)

VALID = (GOLDEN / "writer_layout.yaml").read_bytes()


def _corpus_params() -> list:
    params = []
    for path in malformed_files():
        expectation = read_expectation(path)
        marks = (
            [pytest.mark.xfail(strict=True, reason=f"BUG: {expectation.bug}")]
            if expectation.bug
            else []
        )
        params.append(pytest.param(path, id=path.stem, marks=marks))
    return params


def _refusal(path: Path | str, **kwargs) -> SuiteError:
    with pytest.raises(SuiteError) as info:
        load_suite(path, **kwargs)
    return info.value


def test_corpus_covers_at_least_sixty_files_each_with_an_expectation() -> None:
    files = malformed_files()
    assert len(files) >= 60
    for path in files:
        expectation = read_expectation(path)
        assert expectation.lines or expectation.texts or expectation.absent, path.name
        for line in expectation.lines:
            assert line.startswith(path.name + ":"), (
                f"{path.name}: expect line names another file: {line}"
            )


@pytest.mark.parametrize("path", _corpus_params())
def test_malformed_file_is_refused_with_every_problem(path: Path) -> None:
    expectation = read_expectation(path)
    error = _refusal(path, use_cache=False)
    problems = mismatches(str(error), expectation, MALFORMED)
    assert not problems, f"{path.name} ({expectation.description}):\n" + "\n".join(problems)


@pytest.mark.parametrize(
    "name", ["many_problems_one_case.yaml", "duplicate_ids.yaml", "version_2.yaml"]
)
def test_cached_loading_refuses_the_same_way(name: str) -> None:
    path = MALFORMED / name
    first = _refusal(path)
    again = _refusal(path)  # nothing broken was put in the cache
    assert str(first) == str(again) == str(_refusal(path, use_cache=False))


def test_problems_carry_their_position_and_case() -> None:
    error = _refusal(MALFORMED / "many_problems_one_case.yaml", use_cache=False)
    assert len(error.problems) == 4
    assert {p.case_id for p in error.problems} == {"c1"}
    positions = [(p.line, p.column) for p in error.problems]
    assert positions == sorted(positions)
    assert error.first is error.problems[0]
    assert str(error.first) == str(error).splitlines()[0]
    assert error.first.message == "status must be one of draft, approved, retired, got 'aproved'"


def test_parse_suite_names_the_path_it_is_given() -> None:
    text = (MALFORMED / "status_misspelled.yaml").read_text(encoding="utf-8")
    with pytest.raises(SuiteError) as info:
        parse_suite(text, "evals/mine.yaml")
    assert str(info.value) == (
        "evals/mine.yaml:8:11: case 'c1': status must be one of draft, approved, retired, got 'aproved'"
    )


def test_a_byte_order_mark_is_accepted_and_does_not_shift_columns(tmp_path: Path) -> None:
    good = tmp_path / "bom.yaml"
    good.write_bytes(b"\xef\xbb\xbf" + VALID)
    assert (
        load_suite(good, use_cache=False).cases == load_suite(GOLDEN / "writer_layout.yaml").cases
    )
    bad = tmp_path / "bom_v2.yaml"
    bad.write_bytes(b"\xef\xbb\xbfversion: 2\ncases: []\n")
    assert (
        str(_refusal(bad))
        == f"{bad}:1:10: unsupported suite version 2 (this tool reads version: 1)"
    )


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(b"  \n\n   \n", "whitespace_only.yaml:1:1: empty file", id="whitespace only"),
        pytest.param(
            "version: 1\ncases: []\n".encode("utf-16"),
            "not a text file (it holds NUL bytes)",
            id="UTF-16",
        ),
        pytest.param(
            b"version: 1\ncases: []\n# caf\xc3", "3:6: not UTF-8 text (byte 0xc3)", id="cut UTF-8"
        ),
        pytest.param(
            b"version: 1\n# \xed\xa0\x80\ncases: []\n",
            "2:3: not UTF-8 text (byte 0xed)",
            id="surrogate",
        ),
        pytest.param(VALID + b"\x00", "not a text file (it holds NUL bytes)", id="NUL at the end"),
        pytest.param(bytes(range(256)) * 4, "not a text file", id="binary"),
        pytest.param(
            b"\x1f\x8b\x08\x08" + b"\xff" * 40, "1:2: not UTF-8 text (byte 0x8b)", id="gzip"
        ),
    ],
)
def test_bytes_that_are_not_utf8_text_are_refused(
    tmp_path: Path, data: bytes, expected: str
) -> None:
    path = tmp_path / "whitespace_only.yaml"
    path.write_bytes(data)
    message = str(_refusal(path))
    assert expected in message
    assert message.startswith(str(path))


def test_a_missing_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    assert str(_refusal(path)) == f"{path}: no such suite file"


def test_a_folder_is_refused(tmp_path: Path) -> None:
    assert str(_refusal(tmp_path)) == f"{tmp_path}: is a folder, not a suite file"


def test_a_symlink_loop_is_refused(tmp_path: Path) -> None:
    loop = tmp_path / "loop.yaml"
    os.symlink(loop, loop)
    assert str(_refusal(loop)).startswith(f"{loop}: ")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "secret.yaml"
    path.write_bytes(VALID)
    path.chmod(0)
    assert str(_refusal(path)) == f"{path}: cannot read: Permission denied"


def test_the_size_limit_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "suite.yaml"
    path.write_bytes(VALID)
    monkeypatch.setenv("NL2SQL_MAX_SUITE_BYTES", str(len(VALID)))
    assert len(load_suite(path, use_cache=False)) == 5  # exactly at the limit: fine
    monkeypatch.setenv("NL2SQL_MAX_SUITE_BYTES", str(len(VALID) - 1))
    message = str(_refusal(path, use_cache=False))
    assert message.startswith(f"{path}: file is ")
    assert "split it into several suites" in message


def test_a_small_size_limit_is_shown_truthfully(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "suite.yaml"
    path.write_bytes(VALID)
    monkeypatch.setenv("NL2SQL_MAX_SUITE_BYTES", "1000")
    message = str(_refusal(path, use_cache=False))
    assert "0 MiB limit" not in message and "0.0 MiB" not in message, message


def test_a_fifty_megabyte_suite_is_refused_by_the_default_limit(tmp_path: Path) -> None:
    case = (
        "- id: c{:07d}\n  question: How many customers are there?\n  datasources: [chinook]\n"
        "  status: approved\n  outcome: {{admin: allowed}}\n  sql: SELECT COUNT(*) AS n FROM Customer\n"
        "  rows:\n  - {{n: 59}}\n"
    )
    path = tmp_path / "huge.yaml"
    size = 50 * 2**20
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("version: 1\ncases:\n")
        written, n = 20, 0
        while written < size:
            chunk = "".join(case.format(i) for i in range(n, n + 1000))
            fh.write(chunk)
            written += len(chunk)
            n += 1000
    size = path.stat().st_size
    assert size > MAX_SUITE_BYTES
    try:
        message = str(_refusal(path, use_cache=False))
    finally:
        path.unlink()  # pytest keeps old tmp folders; do not leave 50 MB behind
    assert message == (
        f"{path}: file is {size / 2**20:.1f} MiB, over the 32.0 MiB limit for one suite "
        "(split it into several suites, or raise NL2SQL_MAX_SUITE_BYTES)"
    )


# -- the command line ----------------------------------------------------------------


def _nl2sql(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_nl2sql.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NL2SQL_CACHE_DIR": "off"},
    )


def test_suite_check_reports_every_malformed_file_and_exits_1() -> None:
    files = [p for p in malformed_files() if not read_expectation(p).bug]
    result = _nl2sql("suite", "check", *map(str, files))
    assert result.returncode == 1
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    for path in files:
        missing = contains_expected_lines(result.stderr, read_expectation(path), MALFORMED)
        assert not missing, f"{path.name}: not on stderr: {missing}"


@pytest.mark.parametrize(
    "name",
    [
        "status_misspelled.yaml",
        "many_problems_many_cases.yaml",
        "binary_nul_bytes.yaml",
        "alias_bomb.yaml",
    ],
)
def test_suite_check_prints_exactly_the_problems(name: str) -> None:
    path = MALFORMED / name
    result = _nl2sql("suite", "check", str(path))
    assert result.returncode == 1
    assert not mismatches(result.stderr, read_expectation(path), MALFORMED), result.stderr


def test_suite_check_passes_a_valid_suite() -> None:
    result = _nl2sql(
        "suite", "check", str(GOLDEN / "writer_layout.yaml"), str(GOLDEN / "kinds.yaml")
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout.splitlines() == [
        f"{GOLDEN / 'writer_layout.yaml'}: ok (5 cases, 5 approved; file only: no nl2sql.yaml found)",
        f"{GOLDEN / 'kinds.yaml'}: ok (8 cases, 6 approved; file only: no nl2sql.yaml found)",
    ]


def test_suite_check_of_good_and_bad_files_reports_both(tmp_path: Path) -> None:
    missing = tmp_path / "missing.yaml"
    result = _nl2sql("suite", "check", str(GOLDEN / "comments.yaml"), str(missing), str(tmp_path))
    assert result.returncode == 1
    assert result.stdout == f"{GOLDEN / 'comments.yaml'}: ok (3 cases, 2 approved; file only: no nl2sql.yaml found)\n"
    assert result.stderr.splitlines() == [
        f"{missing}: no such suite file",
        f"{tmp_path}: is a folder, not a suite file",
    ]
