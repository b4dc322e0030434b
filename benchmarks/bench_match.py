"""How fast is result_match? Two 1,000,000-row results, compared four ways in one run.

    python benchmarks/bench_match.py [--rows N] [--repeat R]

Rows: ``collections.Counter(a) == Counter(b)`` (the floor: a multiset compare in Python),
``match_rows`` with the default rule (goal: <= 1.5x the floor), the Spider ``result_eq``
rule (benchmarks/spider/official.py), and a pandas comparison (sort both frames, compare)
when pandas is installed -- it is not a dependency; the row says so when it is absent.
Each is timed on equal results (the worst case: every row must be looked at) as the best of
R runs; ratios are to the Counter floor.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.spider.official import result_eq  # noqa: E402
from pytest_nl2sql.scoring.matching import MatchRule, match_rows  # noqa: E402


def make_rows(n: int, seed: int = 7) -> list[tuple]:
    """Rows like a query's: an id, a name, an amount (float), a count, a nullable code."""
    rnd = random.Random(seed)
    return [
        (i, f"name-{rnd.randrange(50_000)}", round(rnd.random() * 1000, 2), rnd.randrange(100), None if i % 17 == 0 else f"c{i % 23}")
        for i in range(n)
    ]


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="result_match speed")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    a = make_rows(args.rows)
    b = list(a)
    random.Random(1).shuffle(b)  # same multiset, another order
    cols = ("id", "name", "amount", "n", "code")
    rule = MatchRule()
    assert match_rows(cols, a, cols, b, rule).matched
    floor = best(lambda: Counter(a) == Counter(b), args.repeat)
    rows = [("Counter(a) == Counter(b)", floor)]
    rows.append(("match_rows (default rule)", best(lambda: match_rows(cols, a, cols, b, rule), args.repeat)))
    rows.append(("Spider result_eq (official rule)", best(lambda: result_eq(a, b, False), args.repeat)))
    try:
        import pandas as pd
    except ImportError:
        rows.append(("pandas (sort + equals)", None))
    else:
        def by_pandas() -> bool:
            fa, fb = pd.DataFrame(a, columns=cols), pd.DataFrame(b, columns=cols)
            key = list(cols)
            fa = fa.sort_values(key, na_position="first").reset_index(drop=True)
            fb = fb.sort_values(key, na_position="first").reset_index(drop=True)
            return bool(fa.equals(fb))

        rows.append(("pandas (sort + equals)", best(by_pandas, args.repeat)))
    print(f"{args.rows:,} rows x {len(cols)} columns, equal multisets in different order, best of {args.repeat}")
    for name, secs in rows:
        if secs is None:
            print(f"  {name:<34} skipped: pandas is not installed (not a dependency)")
        else:
            print(f"  {name:<34} {secs:7.3f} s  {secs / floor:5.2f}x")
    ratio = rows[1][1] / floor  # type: ignore[operator]
    print(f"match_rows / Counter = {ratio:.2f} (goal <= 1.5)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
