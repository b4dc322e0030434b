"""How fast is result_match? Two 1,000,000-row results, compared four ways in one run.

    python benchmarks/bench_match.py [--rows N] [--repeat R]

Rows: ``collections.Counter(a) == Counter(b)`` (the floor: a multiset compare in Python),
``match_rows`` with the default rule (goal: <= 1.5x the floor), the Spider ``result_eq``
rule (benchmarks/spider/official.py), and a pandas comparison (sort both frames, compare)
when pandas is installed -- it is not a dependency; the row says so when it is absent.
Each is timed on equal results (the worst case: every row must be looked at) as the best of
R runs; ratios are to the Counter floor. BIRD's rule, ``set(a) == set(b)`` (no multiset
semantics), is timed on the same data: ``match_rows``'s fast path for equal results (hash
each side once; counters only on a mismatch) should be at or below it.

Then the column-alignment cases of issue 14, each of which must decide in under 50 ms:
one-row pivots of 9 to 12 columns with the columns reversed and one wrong cell, and ten
0/1 flag columns reversed and renamed (matching, and with one flipped row).
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
    c = list(b)
    c[len(c) // 2] = (-1, *c[len(c) // 2][1:])
    assert not match_rows(cols, a, cols, c, rule).matched
    miss = best(lambda: match_rows(cols, a, cols, c, rule), args.repeat)
    print(f"  {'match_rows, one id differs':<34} {miss:7.3f} s  {miss / floor:5.2f}x")
    bird = best(lambda: set(a) == set(b), args.repeat)
    print(f"  {'BIRD set(a) == set(b)':<34} {bird:7.3f} s  {bird / floor:5.2f}x")
    print(f"match_rows / Counter = {ratio:.2f} (goal <= 1.5); match_rows / BIRD set = {rows[1][1] / bird:.2f} (goal <= 1.0)")
    slow = 0
    print("column alignment (goal: each < 50 ms)")
    for name, fn, want in alignment_cases():
        assert fn().matched is want, name
        secs = best(fn, args.repeat)
        slow += secs >= 0.05
        print(f"  {name:<46} {'match' if want else 'mismatch':<8} {secs * 1000:8.2f} ms")
    return 1 if slow else 0


def alignment_cases() -> list[tuple[str, Callable[[], object], bool]]:
    """(name, comparison, expected verdict) for the pivot and flag cases."""
    cases: list[tuple[str, Callable[[], object], bool]] = []
    for width in (9, 10, 11, 12):
        gold = [tuple(range(width))]
        pred = [tuple(reversed(range(width)))]
        wrong = list(pred[0])
        wrong[3] = 999
        gc, pc = tuple(f"g{i}" for i in range(width)), tuple(f"p{i}" for i in range(width))
        cases.append((f"{width}-column pivot, 1 row, one wrong cell", lambda g=gold, w=[tuple(wrong)], gc=gc, pc=pc: match_rows(gc, g, pc, w), False))
    width = 12
    gold12 = [tuple(range(width))]
    cases.append(("12-column pivot, 1 row, reversed", lambda: match_rows((), gold12, (), [tuple(reversed(gold12[0]))]), True))
    # 300 of the 1,024 flag combinations: reversing the columns changes the set of rows
    flags = [tuple((r >> c) & 1 for c in range(10)) for r in random.Random(5).sample(range(1024), 300)]
    rev = [tuple(reversed(r)) for r in flags]
    fcols, rcols = tuple(f"flag_{i}" for i in range(10)), tuple(f"f{9 - i}" for i in range(10))
    cases.append(("10 flags x 300 rows, reversed and renamed", lambda: match_rows(fcols, flags, rcols, rev), True))
    flipped = list(rev)
    flipped[100] = tuple(1 - v for v in flipped[100])
    cases.append(("10 flags x 300 rows, reversed, one row flipped", lambda: match_rows(fcols, flags, rcols, flipped), False))
    few = flags[:40]
    few_rev = [tuple(reversed(r)) for r in few]
    cases.append(("10 flags x 40 rows, reversed and renamed", lambda: match_rows(fcols, few, rcols, few_rev), True))
    return cases


if __name__ == "__main__":
    raise SystemExit(main())
