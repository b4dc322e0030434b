"""The HTML report of a run with --nl2sql-clarify, in a real headless Chromium: the
clarification card and a failing item's conversation."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.report.test_html import _browser


def test_the_clarification_card_and_the_conversation_show(tmp_path: Path, demo_dir: Path) -> None:  # noqa: F811
    driver = _browser()
    from selenium.webdriver.common.by import By

    root = tmp_path / "demo"
    shutil.copytree(demo_dir, root)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--nl2sql-suite", "evals/chinook.yaml", "--nl2sql-clarify",
         "--nl2sql-save-predictions", "p.jsonl", "-k", "chinook_063 or chinook_064"],
        cwd=root, capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 0, run.stdout[-2000:]
    lines = [json.loads(x) for x in (root / "p.jsonl").read_text().splitlines()]
    for p in lines:
        if p["id"] == "chinook_064":
            p["follow_up"] = {"sql": "SELECT Name AS track FROM Track WHERE TrackId = 1"}
    (root / "p.jsonl").write_text("".join(json.dumps(p) + "\n" for p in lines))
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--nl2sql-suite", "evals/chinook.yaml", "--nl2sql-clarify",
         "--nl2sql-predictions", "p.jsonl", "-k", "chinook_063 or chinook_064", "--nl2sql-html", "r.html"],
        cwd=root, capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 1, run.stdout[-2000:]
    try:
        driver.get((root / "r.html").as_uri())
        assert [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")] == []
        card = driver.find_element(By.ID, "clarification")
        assert card.is_displayed()
        assert "3/6" in card.text and "6 asked, 6 recognised, 0 unnecessary" in card.text
        assert "bad" in card.get_attribute("class")
        first = driver.find_element(By.CSS_SELECTOR, "#failures ol a")
        assert "chinook_064" in first.text
        first.click()
        conversation = driver.find_element(By.CSS_SELECTOR, "tr.item details .conversation") if driver.find_elements(By.CSS_SELECTOR, "tr.item details .conversation") else None
        assert conversation is not None
        driver.execute_script("for (const d of document.querySelectorAll('details')) d.open = true;")
        shown = [li.text for li in conversation.find_elements(By.TAG_NAME, "li")]
        assert shown[0] == "user: What are the most popular tracks?"
        assert shown[2].startswith("user: By the revenue each track brought in") and shown[2].endswith("(reading: revenue)")
        assert shown[3] == "engine: SELECT Name AS track FROM Track WHERE TrackId = 1"
    finally:
        driver.quit()
