"""Editing YAML text in place: a batch of non-overlapping replacements at node positions,
and where a node's text really starts and ends (libyaml's marks, adjusted).

The writer's row updates and the legacy migration both edit text this way, so that every byte
they do not mean to change stays as it was.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Edits", "column", "content_end", "line_end", "line_start", "newline"]


def newline(text: str) -> str:
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


def content_end(node: Any, text: str) -> int:
    """Where a node's own text ends (libyaml's end mark of a block collection runs on)."""
    while True:
        if hasattr(node, "flow_style") and not node.flow_style and node.value:
            last = node.value[-1]
            node = last[1] if isinstance(last, tuple) else last
            continue
        start, end = node.start_mark.index, node.end_mark.index
        if getattr(node, "style", None) in ("|", ">"):
            return start + len(text[start:end].rstrip())
        return end


def line_end(text: str, index: int) -> int:
    end = text.find("\n", index)
    if end < 0:
        return len(text)
    return end - 1 if end > 0 and text[end - 1] == "\r" else end


def column(text: str, index: int) -> int:
    return index - (text.rfind("\n", 0, index) + 1)


class Edits:
    def __init__(self) -> None:
        self.items: list[tuple[int, int, str]] = []

    def add(self, start: int, end: int, new: str) -> None:
        self.items.append((start, end, new))

    def apply(self, text: str) -> str:
        out: list[str] = []
        pos = 0
        for start, end, new in sorted(self.items, key=lambda e: (e[0], e[1])):
            out.append(text[pos:start])
            out.append(new)
            pos = end
        out.append(text[pos:])
        return "".join(out)


def line_start(text: str, index: int) -> int:
    """Where the line holding ``index`` starts."""
    return text.rfind("\n", 0, index) + 1
