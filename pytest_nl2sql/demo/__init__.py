"""The demo's three databases: chinook (real rows), support and webanalytics (generated).

See docs/demo-data.md for what each holds and where the data comes from.
"""

from pytest_nl2sql.demo.build import (
    DEMO_NAMES,
    TargetNotEmpty,
    UnknownDemoDatabase,
    build_demo_databases,
    build_sqlite,
    demo_metadata,
    demo_rows,
    load_into,
)
from pytest_nl2sql.demo.catalog import DEMO_DATASOURCES, DemoDatasource

__all__ = [
    "DEMO_DATASOURCES",
    "DEMO_NAMES",
    "DemoDatasource",
    "TargetNotEmpty",
    "UnknownDemoDatabase",
    "build_demo_databases",
    "build_sqlite",
    "demo_metadata",
    "demo_rows",
    "load_into",
]
