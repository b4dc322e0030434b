"""Fast, safe YAML composition for suite files.

Suites can hold ten thousand cases, so they are composed with libyaml (ruamel.yaml's C
parser) and turned into Python values by our own small node walk instead of ruamel's
constructor. The walk keeps every node's position, which both the loader's error messages
and the writer's in-place edits need.

Safety: the C composer recurses once per nesting level and crashes the process on very deep
input, so the text's nesting is bounded *before* it is parsed; anchors and aliases are
refused (a suite has no use for them, and they are how "billion laughs" files explode);
only the YAML 1.2 core schema's tags are accepted.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any

try:
    from ruamel.yaml.cyaml import CParser
except ImportError as exc:  # pragma: no cover - the C extension is a declared dependency
    raise ImportError(
        "pytest-nl2sql reads suites with ruamel.yaml's C extension (libyaml), which is missing: "
        "pip install 'ruamel.yaml[libyaml]'"
    ) from exc
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode
from ruamel.yaml.tag import Tag

__all__ = [
    "MAX_DEPTH",
    "MAX_NESTING",
    "MappingNode",
    "ScalarNode",
    "SequenceNode",
    "YamlSyntaxError",
    "compose",
    "scalar_value",
    "to_python",
]

#: Deepest flow nesting ([ and {) a suite may use (a real one needs about six levels).
MAX_DEPTH = 200
#: Longest run of indentation/dashes at a line start (bounds block nesting; SQL may indent).
MAX_INDENT = 2000
#: Deepest nesting of a free-form value (a plan), block or flow, counted from the value itself.
#: A real plan nests about ten levels; deeper input is refused with its line, so nothing
#: downstream (the suite cache, the engine, JSON) ever meets a value it cannot recurse through.
MAX_NESTING = 64

_P = "tag:yaml.org,2002:"
T_STR = Tag(suffix=_P + "str")
T_INT = Tag(suffix=_P + "int")
T_FLOAT = Tag(suffix=_P + "float")
T_BOOL = Tag(suffix=_P + "bool")
T_NULL = Tag(suffix=_P + "null")
T_SEQ = Tag(suffix=_P + "seq")
T_MAP = Tag(suffix=_P + "map")

# YAML 1.2 core schema (what ruamel.yaml resolves by default), with two deliberate
# differences: timestamps stay text (rows store dates as ISO text, see values.py) and the
# merge key ``<<`` is plain text (merges need anchors, which suites refuse).
_INT = re.compile(r"[-+]?(?:0b[01_]+|0o[0-7_]+|0x[0-9a-fA-F_]+|[0-9][0-9_]*)\Z")
_FLOAT = re.compile(
    r"[-+]?(?:(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?"
    r"|(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)"
    r"|\.[0-9_]+(?:[eE][-+]?[0-9]+)?"
    r"|\.(?:inf|Inf|INF))\Z"
    r"|\.(?:nan|NaN|NAN)\Z"
)
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_NULL = {"", "~", "null", "Null", "NULL"}


def _indent_hint(text: str, line: int, what: str) -> str:
    """A key indented unlike its neighbours makes the parser stop a line late (or at the key):
    name the line before too when the two are indented differently."""
    if "did not find expected key" not in what and "mapping values are not allowed" not in what:
        return ""
    lines = text.splitlines()
    if not 0 < line < len(lines) + 1:
        return ""
    prev = next((i for i in range(min(line, len(lines)) - 1, -1, -1) if lines[i].strip() and not lines[i].lstrip().startswith("#")), None)
    if prev is None or line >= len(lines):
        return ""
    here = len(lines[line]) - len(lines[line].lstrip(" "))
    before = len(lines[prev]) - len(lines[prev].lstrip(" "))
    if here == before:
        return ""
    return (f" (check the indentation of line {prev + 1} and line {line + 1}: {before} and {here} spaces; "
            "a key indented unlike its neighbours ends or breaks their mapping)")


class YamlSyntaxError(Exception):
    """Text that is not the YAML a suite may be; ``line``/``column`` are 1-based."""

    def __init__(self, message: str, line: int = 0, column: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


def resolve_plain(value: str) -> Tag:
    """The tag a plain (unquoted) scalar resolves to."""
    if value in _NULL:
        return T_NULL
    c = value[0]
    if c in "-+0123456789.":
        if _INT.match(value):
            return T_INT
        if _FLOAT.match(value):
            return T_FLOAT
        return T_STR
    if c in "tTfF" and value in _BOOL:
        return T_BOOL
    return T_STR


class _Composer(CParser):
    """libyaml's composer with our resolver (the C code calls these three methods)."""

    def __init__(self, text: str) -> None:
        CParser.__init__(self, text)
        self._cache: dict[str, Tag] = {}

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        return None

    def ascend_resolver(self) -> None:
        return None

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Tag:
        if kind is ScalarNode:
            if implicit[0]:
                tag = self._cache.get(value)
                if tag is None:
                    tag = self._cache[value] = resolve_plain(value)
                return tag
            return T_STR
        if kind is SequenceNode:
            return T_SEQ
        return T_MAP


_BRACKETS = re.compile(r"[\[\]{}]")
_DEEP_BLOCK = re.compile(r"^[ \t\-?:]{" + str(MAX_INDENT) + ",}", re.M)


def _check_depth(text: str) -> None:
    m = _DEEP_BLOCK.search(text)
    if m:
        line = text.count("\n", 0, m.start()) + 1
        raise YamlSyntaxError(
            f"a line starts with over {MAX_INDENT} spaces or dashes (nesting far deeper than a suite needs)", line, 1
        )
    if text.count("[") + text.count("{") < MAX_DEPTH:
        return
    depth = 0
    for m in _BRACKETS.finditer(text):
        if m.group() in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                line = text.count("\n", 0, m.start()) + 1
                col = m.start() - text.rfind("\n", 0, m.start())
                raise YamlSyntaxError(
                    f"nesting deeper than {MAX_DEPTH} levels (a suite needs about six)",
                    line,
                    col,
                )
        elif depth:
            depth -= 1


def compose(text: str) -> Any:
    """Compose one YAML document into nodes; raise YamlSyntaxError for anything unusable."""
    _check_depth(text)
    composer = _Composer(text)
    try:
        node = composer.get_single_node()
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = exc.problem or exc.context or "invalid YAML"
        if exc.context and exc.problem:
            what = f"{exc.context}, {exc.problem}"
        if exc.context_mark is not None and "quoted scalar" in (exc.context or ""):
            mark = exc.context_mark  # where the unclosed quote opens, not the end of the file
            what += " (an unclosed quote starts here)"
        if mark is not None:
            start = 0
            for _ in range(mark.line):
                start = text.find("\n", start) + 1
            if "\t" in text[start : start + mark.column + 1]:
                what += " (tabs are not allowed for indentation: use spaces)"
            what += _indent_hint(text, mark.line, what)
        if mark is None:
            raise YamlSyntaxError(f"YAML syntax error: {what}") from None
        raise YamlSyntaxError(f"YAML syntax error: {what}", mark.line + 1, mark.column + 1) from None
    except YAMLError as exc:
        raise YamlSyntaxError(f"YAML syntax error: {exc}") from None
    except (ValueError, UnicodeError, RecursionError, MemoryError) as exc:
        raise YamlSyntaxError(f"unreadable YAML: {exc}") from None
    finally:
        composer.dispose()
    if _MAYBE_ANCHOR.search(text):
        _refuse_anchors(text)
    return node


# An anchor or alias starts a node: after a line start, a space or a flow indicator.
_MAYBE_ANCHOR = re.compile(r"(?:^|[\s\[{,])[&*][^\s\[\]{},]")


def _refuse_anchors(text: str) -> None:
    """Walk libyaml's events (cheap, no recursion) and refuse the first anchor or alias."""
    parser = CParser(text)
    try:
        while True:
            event = parser.get_event()
            if getattr(event, "anchor", None) is not None:
                mark = event.start_mark
                raise YamlSyntaxError(
                    "anchors and aliases (&name, *name) are not supported in suites"
                    " (write the value out)",
                    mark.line + 1,
                    mark.column + 1,
                )
            if type(event).__name__ == "StreamEndEvent":
                return
    finally:
        parser.dispose()


_EXPLICIT = {
    _P + "str": T_STR,
    _P + "int": T_INT,
    _P + "float": T_FLOAT,
    _P + "bool": T_BOOL,
    _P + "null": T_NULL,
}


class BadScalar(ValueError):
    """A scalar whose text does not fit its tag, an unknown tag, or a value nested too deep.
    ``node`` is the node at fault when it is not the value itself (else None)."""

    def __init__(self, message: str, node: Any = None) -> None:
        super().__init__(message)
        self.node = node


def scalar_value(node: ScalarNode) -> Any:
    """The Python value of a scalar node (str, int, float, bool or None)."""
    try:
        return _scalar_value(node)
    except BadScalar:
        raise
    except ValueError as exc:  # e.g. '0x_', '._', an int longer than Python converts
        raise BadScalar(f"{node.value[:40]!r} is not a valid number ({exc})") from None


def check_tag(node: Any) -> None:
    """Refuse explicit tags on collections (``!!set [..]``, ``!!python/object {..}``)."""
    if type(node) is SequenceNode and node.ctag is not T_SEQ or type(node) is MappingNode and node.ctag is not T_MAP:
        tag = str(node.ctag)
        if tag not in (_P + "seq", _P + "map"):
            raise BadScalar(f"unsupported tag {tag!r} (suites use plain YAML values)")


def _scalar_value(node: ScalarNode) -> Any:
    tag = node.ctag
    value = node.value
    if tag is T_STR:
        return value
    if tag is T_INT:
        return _int(value)
    if tag is T_NULL:
        return None
    if tag is T_FLOAT:
        return _float(value)
    if tag is T_BOOL:
        return _BOOL[value]
    explicit = _EXPLICIT.get(str(tag))
    if explicit is None and str(tag) == DECIMAL_TAG:
        try:
            d = Decimal(value.strip())
        except InvalidOperation:
            raise BadScalar(f"{value!r} is not a valid decimal") from None
        if not d.is_finite():
            raise BadScalar(f"{value!r} is not a finite decimal")
        return d
    if explicit is None:
        raise BadScalar(f"unsupported tag {str(tag)!r} (suites use plain YAML values)")
    try:
        if explicit is T_STR:
            return value
        if explicit is T_NULL:
            if value not in _NULL:
                raise ValueError
            return None
        if explicit is T_BOOL:
            return _BOOL[value]
        if explicit is T_INT:
            return _int(value)
        return _float(value)
    except (KeyError, ValueError):
        raise BadScalar(f"{value!r} is not a valid {str(tag).rsplit(':', 1)[-1]}") from None


#: An exact decimal in a suite file (``!decimal 12000000.00``): what the writer stores for a
#: non-integral NUMERIC / Decimal value, read back as that Decimal (docs/scoring.md).
DECIMAL_TAG = "!decimal"


def _int(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        pass
    s = value.replace("_", "")
    sign = 1
    if s[:1] in "+-":
        sign = -1 if s[0] == "-" else 1
        s = s[1:]
    if s[:2] in ("0x", "0o", "0b"):
        return sign * int(s[2:], {"x": 16, "o": 8, "b": 2}[s[1]])
    return sign * int(s, 10)


def _float(value: str) -> float:
    s = value.replace("_", "").lower()
    if s.endswith(".inf"):
        return -math.inf if s.startswith("-") else math.inf
    if s == ".nan":
        return math.nan
    return float(s)


def to_python(node: Any, _depth: int = 1) -> Any:
    """Plain Python data for a node (used for free-form values such as ``plan``); a value
    nested deeper than ``MAX_NESTING`` levels raises ``BadScalar`` naming the deep node."""
    if isinstance(node, ScalarNode):
        return scalar_value(node)
    if _depth > MAX_NESTING:
        raise BadScalar(
            f"nested deeper than {MAX_NESTING} levels at line {node.start_mark.line + 1} "
            "(a plan needs about ten; flatten the value)",
            node,
        )
    check_tag(node)
    if isinstance(node, SequenceNode):
        return [to_python(n, _depth + 1) for n in node.value]
    out: dict[Any, Any] = {}
    for k, v in node.value:
        key = to_python(k, _depth + 1)
        if isinstance(key, (list, dict)):
            raise BadScalar("a mapping key must be a plain value")
        if key in out:
            raise BadScalar(f"duplicate key {key!r}")
        out[key] = to_python(v, _depth + 1)
    return out
