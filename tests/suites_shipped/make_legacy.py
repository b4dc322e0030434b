"""Write the 0.6 form of the Chinook gold suite (``legacy/chinook_gold*.yaml``), once.

0.6 kept the gold set in two files: the cases under the old key names, and each case's plan
in ``chinook_gold_plans.yaml`` keyed by case id. This script undoes the migration
``pytest_nl2sql.suitefile.legacy`` performs, line by line, on ``suites/chinook.yaml``: the case keys
get their 0.6 names, ``datasources: [chinook]`` becomes ``datasource: chinook`` and each
``plan:`` block moves to the plans file, verbatim. It relies on the suite's layout (case keys
at two spaces, ``plan`` the last key of a case), which ``suites/chinook.yaml`` keeps.

The files it writes are a frozen fixture: ``test_chinook_suite_holds_the_gold_data_unchanged``
checks that they and the v1 suite hold the same gold data. Run it again only when the gold
data changes on purpose (and update the pinned digest in the test with it)::

    python tests/suites_shipped/make_legacy.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from pytest_nl2sql.suitefile.legacy import RENAMES

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SUITE = REPO / "suites" / "chinook.yaml"
GOLD = HERE / "legacy" / "chinook_gold.yaml"
PLANS = HERE / "legacy" / "chinook_gold_plans.yaml"

OLD_NAMES = {new: old for old, new in RENAMES.items()}
CASE_KEY = re.compile(r"^  ([a-z_]+):(.*)$")

GOLD_HEADER = """\
# chinook_gold.yaml -- the Chinook gold set in pytest-nl2sql 0.6's form (key names datasource,
# expected, needed_tables, needed_columns, gold_sql, gold_result, alt_gold_sql, alt_gold_result;
# plans in chinook_gold_plans.yaml). A test fixture for the 0.6 -> v1 migration and for
# test_chinook_suite_holds_the_gold_data_unchanged; written by make_legacy.py, never by hand.
"""

PLANS_HEADER = """\
# chinook_gold_plans.yaml -- 0.6's plans for chinook_gold.yaml, keyed by case id.
# Written by make_legacy.py, never by hand.
"""


def legacy_texts(v1_text: str) -> tuple[str, str]:
    """``(gold_text, plans_text)``: the 0.6 files for the v1 suite text ``v1_text``."""
    lines = v1_text.splitlines()
    start = lines.index("cases:")
    gold = [GOLD_HEADER.rstrip("\n"), "cases:"]
    plans = [PLANS_HEADER.rstrip("\n")]
    case_id = None
    in_plan = False
    for line in lines[start + 1 :]:
        if line.startswith("- id: "):
            case_id = line[len("- id: ") :].strip()
            in_plan = False
            gold.append(line)
            continue
        m = CASE_KEY.match(line)
        if m:
            key, rest = m.groups()
            in_plan = key == "plan"
            if in_plan:
                if rest.strip():
                    raise ValueError(f"case {case_id}: write the plan as a block under 'plan:'")
                plans.append(f"{case_id}:")
                continue
            if key == "datasources":
                names = rest.strip().strip("[]").split(",")
                if len(names) != 1:
                    raise ValueError(f"case {case_id}: 0.6 had one datasource per case")
                line = f"  datasource: {names[0].strip()}"
            elif key in OLD_NAMES:
                line = f"  {OLD_NAMES[key]}:{rest}"
        if in_plan:
            if not line.startswith("    "):
                raise ValueError(f"case {case_id}: 'plan' must be the last key of a case")
            plans.append(line[2:])
        else:
            gold.append(line)
    return "\n".join(gold) + "\n", "\n".join(plans) + "\n"


def main() -> int:
    gold, plans = legacy_texts(SUITE.read_text(encoding="utf-8"))
    GOLD.parent.mkdir(parents=True, exist_ok=True)
    GOLD.write_text(gold, encoding="utf-8")
    PLANS.write_text(plans, encoding="utf-8")
    print(f"wrote {GOLD.relative_to(REPO)} and {PLANS.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
