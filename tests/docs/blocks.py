"""Code blocks of the docs, found by the file name on their first line (``# shop_engine.py``).

The tests write these blocks to disk and run them, so a documented example that stops working
fails a test instead of misleading a reader.
"""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"

_BLOCK = re.compile(r"```[a-z]*\n(.*?)```", re.S)


def doc_text(name: str) -> str:
    """The text of ``docs/<name>``."""
    return (DOCS / name).read_text(encoding="utf-8")


def named_block(doc: str, filename: str) -> str:
    """The code block of ``docs/<doc>`` whose first line is ``# <filename>``."""
    for body in _BLOCK.findall(doc_text(doc)):
        if body.splitlines()[0].strip() == f"# {filename}":
            return body
    raise LookupError(f"docs/{doc} has no code block starting with '# {filename}'")
