"""Records and failure reports keep at most MAX_TEXT_CHARS of one value, with a marker (issue 21)."""

from __future__ import annotations

from pytest_nl2sql.reporting.report import MAX_TEXT_CHARS, clip


def test_clip_cuts_long_text_with_a_marker_and_leaves_the_rest() -> None:
    long = "x" * (MAX_TEXT_CHARS * 10)
    cut = clip(long)
    assert len(cut) < MAX_TEXT_CHARS + 100
    assert cut.endswith(f"[truncated: {len(long):,} characters]")
    assert clip("SELECT 1") == "SELECT 1"
    assert clip(None) is None and clip(3) == 3
