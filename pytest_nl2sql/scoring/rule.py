"""The match rule (``MatchRule``) and the float tolerance (``Tolerance``).

A suite's top-level ``match:`` and a case's ``match:`` are layers of one rule, the later
layer winning key by key (``MatchRule.build``). The tolerance applies only when one of two
numbers is a float: two exact numbers (int, Decimal) always compare exactly.

Tolerance precedence, for one gold column: ``column_tolerance[column]`` > ``abs_tol`` /
``rel_tol`` > ``float_tolerance`` (the older spelling: ``abs_tol = rel_tol = t``) > the
default, which absorbs floating-point noise only (``rel_tol`` 1e-9, ``abs_tol`` 1e-12). A
layer that sets ``float_tolerance`` replaces the ``abs_tol`` / ``rel_tol`` of the layers
before it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import attrs

__all__ = [
    "CHOICES",
    "DEFAULT_ABS_TOL",
    "DEFAULT_REL_TOL",
    "DEFAULT_TOLERANCE",
    "TOLERANCE_KEYS",
    "MatchRule",
    "Tolerance",
]

DEFAULT_REL_TOL = 1e-9
DEFAULT_ABS_TOL = 1e-12
DEFAULT_TOLERANCE = DEFAULT_REL_TOL  # the old name

#: The settings that take one of a few words, and those words (the first is the default).
CHOICES = {
    "column_names": ("ignore", "require"),
    "duplicates": ("count", "ignore"),
    "extra_columns": ("forbid", "allow"),
    # "strict": the answer's columns in the gold's order (nl2sql-engine's result_match);
    # "any": any arrangement that gives the gold rows (the official Spider metric)
    "column_order": ("any", "strict"),
}
#: The keys of a tolerance (suite, case, or one column's).
TOLERANCE_KEYS = ("abs_tol", "rel_tol")


@attrs.frozen
class Tolerance:
    """How far apart two numbers may be when one of them is a float:
    ``|a - b| <= max(abs, rel * max(|a|, |b|))``."""

    rel: float = DEFAULT_REL_TOL
    abs: float = DEFAULT_ABS_TOL

    @property
    def window_factor(self) -> float:
        """``w`` such that every ``y`` close to ``x`` has ``|x - y| <= max(abs, w * |x|)``."""
        return math.inf if self.rel >= 1 else self.rel / (1 - self.rel) * (1 + 1e-9)


def _nonneg(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ValueError(f"match.{name} must be a number >= 0, got {value!r}")
    return float(value)


def _opt_tol(name: str):
    def convert(value: Any) -> float | None:
        return None if value is None else _nonneg(name, value)

    return convert


def _column_tolerance(value: Any) -> tuple[tuple[str, tuple[tuple[str, float], ...]], ...]:
    """``{column: {abs_tol: .., rel_tol: ..}}`` as a sorted tuple (the rule stays hashable)."""
    if value is None:
        return ()
    if isinstance(value, tuple):
        return value
    if not isinstance(value, Mapping):
        raise ValueError(f"match.column_tolerance must be a map of column -> {{abs_tol, rel_tol}}, got {value!r}")
    out = []
    for col, spec in value.items():
        if not isinstance(spec, Mapping) or not spec or any(k not in TOLERANCE_KEYS for k in spec):
            raise ValueError(f"match.column_tolerance.{col} must be a map with abs_tol and/or rel_tol, got {spec!r}")
        items = tuple(sorted((k, _nonneg(f"column_tolerance.{col}.{k}", v)) for k, v in spec.items()))
        out.append((str(col).lower(), items))
    return tuple(sorted(out))


@attrs.frozen
class MatchRule:
    column_names: str = "ignore"
    duplicates: str = "count"
    extra_columns: str = "forbid"
    column_order: str = "any"
    float_tolerance: float | None = attrs.field(default=None, converter=_opt_tol("float_tolerance"))
    abs_tol: float | None = attrs.field(default=None, converter=_opt_tol("abs_tol"))
    rel_tol: float | None = attrs.field(default=None, converter=_opt_tol("rel_tol"))
    column_tolerance: tuple = attrs.field(default=(), converter=_column_tolerance)
    order_matters: bool = False

    def __attrs_post_init__(self) -> None:
        for key, allowed in CHOICES.items():
            if getattr(self, key) not in allowed:
                raise ValueError(f"match.{key} must be one of {', '.join(allowed)}, got {getattr(self, key)!r}")

    @classmethod
    def build(cls, *layers: Mapping[str, Any] | None, order_matters: bool = False) -> MatchRule:
        """The rule from suite and case ``match:`` settings, later layers winning key by key
        (``column_tolerance`` merges column by column)."""
        merged: dict[str, Any] = {}
        known = {f.name for f in attrs.fields(cls)} - {"order_matters"}
        for layer in layers:
            if not layer:
                continue
            for key, value in layer.items():
                if key not in known:
                    raise ValueError(f"unknown match setting {key!r} (known: {', '.join(sorted(known))})")
                if key == "column_tolerance":
                    value = {**merged.get(key, {}), **{str(c).lower(): dict(s) for c, s in dict(value or {}).items()}}
                elif key == "float_tolerance":  # the older spelling replaces the earlier layers' tolerance
                    for k in TOLERANCE_KEYS:
                        if k not in layer:
                            merged.pop(k, None)
                merged[key] = value
        return cls(order_matters=order_matters, **merged)

    def tolerance(self, column: str | None = None) -> Tolerance:
        """The tolerance for one gold column (precedence in the module docstring)."""
        legacy = self.float_tolerance
        rel = self.rel_tol if self.rel_tol is not None else (legacy if legacy is not None else DEFAULT_REL_TOL)
        abs_ = self.abs_tol if self.abs_tol is not None else (legacy if legacy is not None else DEFAULT_ABS_TOL)
        if column is not None and self.column_tolerance:
            spec = dict(dict(self.column_tolerance).get(column.lower(), ()))
            rel = spec.get("rel_tol", rel)
            abs_ = spec.get("abs_tol", abs_)
        return Tolerance(rel, abs_)
