"""Where drafts may be written (spec: "Drafts").

A machine-written case (seeded from a schema, exported from feedback) starts as a draft, and
drafts never replace reviewed cases. So seeding and export share one rule about the file they
write: never a suite the package ships, never a suite ``evals.yaml`` names, never a file that
holds an approved case (or that does not load, since then nobody can tell). A file of drafts
only may be written again. The check and the write happen under the file's lock, so a reviewer
who approves a case in the meantime is not overwritten.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from pytest_nl2sql.config import Config
from pytest_nl2sql.errors import Nl2sqlError, SuiteError
from pytest_nl2sql.suitefile.loader import load_suite
from pytest_nl2sql.suitefile.lock import lock_for, write_atomic
from pytest_nl2sql.suitefile.model import EvalCase, Status
from pytest_nl2sql.suitefile.yamltext import dump_suite
from pytest_nl2sql.upkeep.regenerate import is_packaged

__all__ = ["PROMOTION_STEPS", "DraftTargetRefused", "check_draft_target", "write_draft_suite"]

#: The spec's four steps, and the plan mode plans needs, as written into every drafts file's header.
PROMOTION_STEPS = (
    "Check that the SQL answers the question.",
    "Fill in difficulty, tags, tables, columns and the outcome for each role.",
    "Set status: approved.",
    "Run regenerate to write its rows (pytest-nl2sql eval regenerate PATH).",
    "Mode plans runs a case's plan: the drafts came with one derived from their SQL and checked "
    "against its rows; after you change the SQL, run pytest-nl2sql suite plan PATH --force.",
)


class DraftTargetRefused(Nl2sqlError):
    """Drafts were not written to a path, and why (one line naming the path and the reason)."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{path}: refusing to write drafts here: {reason}")


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def check_draft_target(path: str | os.PathLike[str], *, config: Config | None = None) -> None:
    """Raise ``DraftTargetRefused`` unless drafts may be written to ``path``.

    Refused: a suite the package ships, a suite ``config``'s ``evals.yaml`` names, and any
    existing file that holds an approved case or does not load as a suite.
    """
    target = Path(path)
    if is_packaged(target):
        raise DraftTargetRefused(
            path, "it is a suite the package ships (write drafts to a file of their own in your project)"
        )
    if config is not None:
        for named in config.evals_suites:
            if _same_file(target, Path(named)):
                raise DraftTargetRefused(
                    path,
                    "evals.yaml names this suite, so it holds reviewed cases "
                    "(write drafts to a file of their own, e.g. evals/drafts.yaml)",
                )
    if not target.exists():
        return
    try:
        suite = load_suite(target, strict=False, use_cache=False)
    except SuiteError as exc:
        raise DraftTargetRefused(
            path, f"the existing file is not a suite of drafts ({exc.first}); move it away or pick another path"
        ) from None
    approved = [case.id for case in suite.cases if case.status is Status.APPROVED]
    if approved:
        shown = ", ".join(approved[:3]) + (" ..." if len(approved) > 3 else "")
        raise DraftTargetRefused(
            path,
            f"it holds {len(approved)} approved case(s) ({shown}); drafts never replace reviewed "
            "cases (write them to a file of their own)",
        )


def drafts_header(title: str) -> str:
    """A drafts file's leading comment: what wrote it, that drafts never run, how to promote."""
    lines = [title, "These are drafts: a draft never runs. To promote one:"]
    lines += [f"  {n}. {step}" for n, step in enumerate(PROMOTION_STEPS, 1)]
    lines.append("This file may be rewritten by the tool that wrote it as long as it holds only drafts.")
    return "\n".join(lines)


def write_draft_suite(
    path: str | os.PathLike[str],
    cases: Iterable[EvalCase],
    *,
    title: str,
    config: Config | None = None,
) -> None:
    """Write ``cases`` (all drafts) as a new suite at ``path``, if the refusal rules allow it.

    The check and the write happen under the suite's lock; nothing is written when refused.
    """
    cases = list(cases)
    not_drafts = [c.id for c in cases if c.status is not Status.DRAFT]
    if not_drafts:
        raise ValueError(f"only drafts are written here, but these are not: {', '.join(not_drafts)}")
    text = dump_suite(cases, header=drafts_header(title))
    target = Path(path)
    with lock_for(target):
        check_draft_target(target, config=config)
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, text)
