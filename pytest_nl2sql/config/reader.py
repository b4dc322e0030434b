"""Reading ``nl2sql.yaml``: the YAML document with its line numbers, typed values that report
``path:line: what is wrong (what would be right)``, and ``${NAME}`` from the environment."""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from pytest_nl2sql.config.model import ENV_NAME_RE, ENV_REF_RE

__all__ = ["MISSING", "Reader", "show", "suggest"]




class Missing:
    pass


MISSING = Missing()


class Reader:
    """Collects problems for one file, with line numbers taken from ruamel's node positions."""

    def __init__(self, path: Path, env: Mapping[str, str]) -> None:
        self.path = path
        self.env = env
        self._found: list[tuple[int, int, str]] = []

    @property
    def problems(self) -> list[str]:
        """Every problem found so far, as ``path:line: message``, in line order."""
        return [f"{self.path}:{line}: {message}" for line, _, message in sorted(self._found)]

    def problem(self, line: int, message: str) -> None:
        self._found.append((line, len(self._found), message))

    def read_document(self) -> Any:
        """The file's mapping of settings, or None (with a problem) when it is no mapping."""
        before = len(self._found)
        document = self.read_yaml()
        if len(self._found) > before:
            return None
        if not isinstance(document, CommentedMap):
            self.problem(1, "the file must be a YAML mapping of settings (see docs/config.md)")
            return None
        return document

    def read_yaml(self) -> Any:
        """The file's YAML document of any shape, or None with a problem (unreadable, not
        UTF-8, not YAML); an empty file is None without one."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            self.problem(1, "file not found (create it, see docs/config.md)")
            return None
        except UnicodeDecodeError:
            self.problem(1, "the file is not UTF-8 text (save it as UTF-8 YAML)")
            return None
        except OSError as error:
            self.problem(1, f"cannot read the file: {error.strerror} (check the path)")
            return None
        yaml = YAML(typ="rt")
        try:
            document = yaml.load(text)
        except MarkedYAMLError as error:
            mark = error.problem_mark or error.context_mark
            line = mark.line + 1 if mark is not None else 1
            what = error.problem or error.context or "invalid YAML"
            self.problem(line, f"YAML syntax error: {what} (fix the YAML there)")
            return None
        except (YAMLError, RecursionError, ValueError) as error:
            self.problem(1, f"YAML error: {error} (fix the YAML)")
            return None
        return document

    # -- positions

    @staticmethod
    def key_line(mapping: CommentedMap, key: Any) -> int:
        try:
            return mapping.lc.key(key)[0] + 1
        except (KeyError, TypeError, AttributeError):
            return mapping.lc.line + 1

    @staticmethod
    def value_line(mapping: CommentedMap, key: Any) -> int:
        try:
            return mapping.lc.value(key)[0] + 1
        except (KeyError, TypeError, AttributeError):
            return Reader.key_line(mapping, key)

    @staticmethod
    def item_line(seq: CommentedSeq, index: int, default: int) -> int:
        try:
            return seq.lc.item(index)[0] + 1
        except (KeyError, TypeError, AttributeError, IndexError):
            return default

    # -- checks

    def check_keys(self, mapping: CommentedMap, allowed: Iterable[str], where: str) -> None:
        allowed = list(allowed)
        for key in mapping:
            if isinstance(key, str) and key in allowed:
                continue
            hint = difflib.get_close_matches(str(key), allowed, n=1)
            right = f"did you mean '{hint[0]}'?" if hint else f"valid keys: {', '.join(allowed)}"
            self.problem(self.key_line(mapping, key), f"unknown key '{key}' in {where} ({right})")

    def interpolate(self, value: str, line: int, where: str) -> str | None:
        failed = False

        def substitute(match: re.Match[str]) -> str:
            nonlocal failed
            escaped, name = match.group(1), match.group(2)
            if escaped:
                return "${" + name + "}"
            if not ENV_NAME_RE.match(name):
                failed = True
                self.problem(
                    line,
                    f"{where}: '${{{name}}}' is not a valid environment variable reference "
                    "(write ${NAME} with letters, digits and _; $${...} for a literal)",
                )
                return ""
            if name not in self.env:
                failed = True
                self.problem(
                    line,
                    f"{where}: environment variable {name} is not set "
                    f"(set {name}, or write the value in place of ${{{name}}})",
                )
                return ""
            return self.env[name]

        result = ENV_REF_RE.sub(substitute, value)
        return None if failed else result

    def string(self, mapping: CommentedMap, key: str, where: str, default: Any = MISSING) -> Any:
        if key not in mapping:
            if isinstance(default, Missing):
                self.problem(mapping.lc.line + 1, f"{where}: '{key}' is missing (add {key}: ...)")
                return None
            return default
        value = mapping[key]
        line = self.value_line(mapping, key)
        if not isinstance(value, str) or not value.strip():
            self.problem(line, f"{where}.{key} must be a non-empty text value (got {show(value)})")
            return None
        return self.interpolate(str(value), line, f"{where}.{key}")

    def number(
        self,
        mapping: CommentedMap,
        key: str,
        where: str,
        default: Any,
        *,
        integer: bool,
        minimum: float,
        strict: bool = False,
        maximum: float | None = None,
    ) -> Any:
        if key not in mapping:
            return default
        value = mapping[key]
        line = self.value_line(mapping, key)
        if isinstance(value, str):
            text = self.interpolate(value, line, f"{where}.{key}")
            if text is None:
                return None
            try:
                value = int(text) if integer else float(text)
            except ValueError:
                value = text
        kind = "a whole number" if integer else "a number"
        bound = f"> {minimum:g}" if strict else f">= {minimum:g}"
        ok_type = isinstance(value, int) if integer else isinstance(value, (int, float))
        if isinstance(value, bool) or not ok_type:
            self.problem(line, f"{where}.{key} must be {kind} {bound} (got {show(value)})")
            return None
        if not integer and not math.isfinite(value):
            self.problem(line, f"{where}.{key} must be a finite number {bound} (got {value})")
            return None
        if (value <= minimum) if strict else (value < minimum):
            self.problem(line, f"{where}.{key} must be {bound} (got {value})")
            return None
        if maximum is not None and value > maximum:
            self.problem(line, f"{where}.{key} must be at most {maximum:g} (got {value:g})")
            return None
        return int(value) if integer else float(value)

    def boolean(self, mapping: CommentedMap, key: str, where: str, default: bool) -> bool | None:
        if key not in mapping:
            return default
        value = mapping[key]
        if not isinstance(value, bool):
            self.problem(
                self.value_line(mapping, key),
                f"{where}.{key} must be true or false (got {show(value)})",
            )
            return None
        return value

    def mapping(self, parent: CommentedMap, key: str, where: str) -> CommentedMap | None:
        value = parent.get(key)
        if value is None:
            return None
        if not isinstance(value, CommentedMap):
            self.problem(
                self.value_line(parent, key),
                f"{where} must be a mapping of keys to values (got {show(value)})",
            )
            return None
        return value

    def string_list(self, parent: CommentedMap, key: str, where: str) -> list[tuple[str, int]]:
        """A list of non-empty strings (interpolated), each with its line."""
        value = parent.get(key)
        line = self.value_line(parent, key)
        if value is None:
            return []
        if isinstance(value, str):
            value = [value]
            items = [(value[0], line)]
        elif isinstance(value, CommentedSeq):
            items = [(item, self.item_line(value, i, line)) for i, item in enumerate(value)]
        else:
            self.problem(line, f"{where} must be a list of text values (got {show(value)})")
            return []
        result = []
        for item, item_line in items:
            if not isinstance(item, str) or not item.strip():
                self.problem(
                    item_line, f"{where}: each entry must be non-empty text (got {show(item)})"
                )
                continue
            text = self.interpolate(item, item_line, where)
            if text is not None:
                result.append((text.strip(), item_line))
        return result


def show(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return f"{str(value).lower()}"
    if isinstance(value, CommentedMap):
        return "a mapping"
    if isinstance(value, CommentedSeq):
        return "a list"
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def suggest(name: str, known: Iterable[str]) -> str:
    known = sorted(known)
    hint = difflib.get_close_matches(name, known, n=1)
    if hint:
        return f"did you mean '{hint[0]}'?"
    return f"known: {', '.join(known)}" if known else "none are defined"

