"""The test corpora of the suite loader and writer, and how their expectations are read.

Each file in ``malformed/`` states what the loader must say about it in its leading comments::

    # what is wrong with this file (one line)
    # bug: why this is a known bug       (optional: the test is a strict xfail)
    # expect: name.yaml:7:11: case 'c1': status must be one of ..., got 'aproved'
    # expect-text: some words             (optional: must appear somewhere in the error)
    # expect-not: some words              (optional: must appear nowhere in the error)

The ``expect:`` lines are the error's lines, all of them and in order, with the file's folder
left out; ``*`` in one matches any text. Line numbers count the header lines too. A file that
cannot hold a header (the empty file) has its expectation in ``NO_HEADER``.
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs

HERE = Path(__file__).parent
MALFORMED = HERE / "malformed"
GOLDEN = HERE / "golden"
LEGACY = HERE / "legacy"


@attrs.frozen
class Expectation:
    """What the loader must report for one malformed file."""

    name: str
    description: str
    lines: tuple[str, ...] = ()
    texts: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    bug: str | None = None


NO_HEADER = {
    "empty.yaml": Expectation(
        name="empty.yaml",
        description="a file of zero bytes",
        lines=("empty.yaml:1:1: empty file (a suite starts with 'version: 1' and 'cases:')",),
    ),
}


def malformed_files() -> list[Path]:
    """Every file of the malformed corpus, by name."""
    return sorted(MALFORMED.glob("*.yaml"))


def golden_files() -> list[Path]:
    """Every file of the golden corpus, by name."""
    return sorted(GOLDEN.glob("*.yaml"))


def read_expectation(path: Path) -> Expectation:
    """The expectation stated in a malformed file's header (or in ``NO_HEADER``)."""
    if path.name in NO_HEADER:
        return NO_HEADER[path.name]
    text = path.read_bytes().decode("utf-8", errors="replace")
    header = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        header.append(line[1:].strip())
    if not header:
        raise AssertionError(f"{path.name} has no '# expect:' header")
    fields: dict[str, list[str]] = {"expect": [], "expect-text": [], "expect-not": [], "bug": []}
    for line in header[1:]:
        key, sep, value = line.partition(": ")
        if sep and key in fields:
            fields[key].append(value)
    return Expectation(
        name=path.name,
        description=header[0],
        lines=tuple(fields["expect"]),
        texts=tuple(fields["expect-text"]),
        absent=tuple(fields["expect-not"]),
        bug=fields["bug"][0] if fields["bug"] else None,
    )


def _pattern(expected: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in expected.split("*")) + r"\Z", re.S)


def shown(message: str, folder: Path) -> list[str]:
    """An error's lines with ``folder`` left out of the paths they start with."""
    prefix = str(folder) + "/"
    return [
        line.replace(prefix, "", 1) if line.startswith(prefix) else line
        for line in message.splitlines()
    ]


def mismatches(message: str, expectation: Expectation, folder: Path) -> list[str]:
    """What in ``message`` differs from ``expectation`` (empty when it matches)."""
    got = shown(message, folder)
    out: list[str] = []
    if expectation.lines:
        if len(got) != len(expectation.lines):
            out.append(f"expected {len(expectation.lines)} problem line(s), got {len(got)}")
        for want, line in zip(expectation.lines, got, strict=False):
            if not _pattern(want).match(line):
                out.append(f"expected: {want}\n     got: {line}")
    body = "\n".join(got).replace(expectation.name, "")  # the file's own name is no evidence
    for text in expectation.texts:
        if text not in body:
            out.append(f"expected the text {text!r} somewhere")
    for text in expectation.absent:
        if text in body:
            out.append(f"the text {text!r} should not appear")
    if out:
        out.append("whole error:\n" + "\n".join(got))
    return out


def contains_expected_lines(output: str, expectation: Expectation, folder: Path) -> list[str]:
    """The expected lines that no line of ``output`` (several files' errors) matches."""
    got = shown(output, folder)
    return [
        want for want in expectation.lines if not any(_pattern(want).match(line) for line in got)
    ]
