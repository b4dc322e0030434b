"""Confidence intervals for pass rates (the Wilson score interval), shared by the reports."""

from __future__ import annotations

import math

__all__ = ["wilson"]


def wilson(passed: int, total: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score 95% interval for a pass rate."""
    if total == 0:
        return (0.0, 0.0)
    p = passed / total
    denom = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denom
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))
