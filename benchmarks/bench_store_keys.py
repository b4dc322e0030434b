"""What a validator verdict's key in the verdict store costs, by the width of the schema.

    python benchmarks/bench_store_keys.py [--repeat 5]

A warm run looks up each item's validator verdict in the verdict store once per process; the
key names the SQL, the datasource, the role's policy and the datasource's schema. For schemas of
20, 200 and 2,000 columns (10 columns a table), in this process, best of ``--repeat`` passes of
1,000 keys each:

* ``written out``: the schema's canonical JSON hashed into every key (how keys were made
  before: the floor this compares against, measured here in the same run);
* ``digest``: the key as the validator makes it now (``validator._store_key``), the schema named
  by its digest, computed once per schema by content.

Prints the microseconds per key of each and ``digest/written out X.XXx`` per width.

Then the look-up of a verdict this process already holds (``validate_sql``, warm), by the same
widths: under a plain ``dict`` schema (the key rebuilt and hashed on every call: the baseline)
and under the ``FrozenSchema`` the engines keep (its key made once); ``frozen/dict X.XXx``.
"""

from __future__ import annotations

import argparse
import functools
import gc
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from pytest_nl2sql.datasources.memo import STORE  # noqa: E402
from pytest_nl2sql.engine import validator  # noqa: E402
from pytest_nl2sql.engine.validatorbase import FrozenSchema  # noqa: E402

KEYS = 1000


def _best(fn, repeat: int) -> float:
    """Microseconds per key of ``fn`` (``KEYS`` keys), best of ``repeat``; the garbage collector
    off while it runs, as ``timeit`` does (a run of the plugin freezes its heap: plugin/memory.py)."""
    best = float("inf")
    for _ in range(repeat):
        gc.disable()
        try:
            started = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - started)
        finally:
            gc.enable()
    return best / KEYS * 1e6


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        STORE.enable(Path(folder))
        try:
            for columns in (20, 200, 2000):
                schema = {f"table_{t}": [f"column_{c}" for c in range(10)] for t in range(columns // 10)}
                sqls = [f"select column_{i % 10} from table_{i % (columns // 10)} where {i} > 0" for i in range(KEYS)]
                keys = [validator._verdict_key(s, "sqlite", "wide", schema, validator.UNRESTRICTED) for s in sqls]

                def written_out(keys=keys) -> None:
                    for k in keys:
                        STORE.key("validator", k[0], k[1].hex(), k[2], k[3].items, k[4])

                def digest(keys=keys) -> None:
                    validator._SCHEMA_DIGESTS.clear()  # the first key of the pass computes it
                    for k in keys:
                        validator._store_key(k)

                old, new = _best(written_out, args.repeat), _best(digest, args.repeat)
                print(f"{columns:>5} columns: written out {old:8.1f} us/key, digest {new:6.1f} us/key; digest/written out {new / old:.2f}x")
            for columns in (20, 200, 2000):
                schema = {f"table_{t}": [f"column_{c}" for c in range(10)] for t in range(columns // 10)}
                frozen = FrozenSchema(schema)
                sql = "select column_1 from table_0"

                def looked_up(schema: Any, sql: str = sql) -> None:
                    for _ in range(KEYS):
                        validator.validate_sql(sql, dialect="sqlite", datasource="wide", schema=schema, policy=validator.UNRESTRICTED)

                validator.validate_sql(sql, dialect="sqlite", datasource="wide", schema=schema, policy=validator.UNRESTRICTED)
                plain = _best(functools.partial(looked_up, schema), args.repeat)
                kept = _best(functools.partial(looked_up, frozen), args.repeat)
                print(f"{columns:>5} columns: warm look-up, dict {plain:6.1f} us, FrozenSchema {kept:5.1f} us; frozen/dict {kept / plain:.2f}x")
        finally:
            STORE.enable(None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
