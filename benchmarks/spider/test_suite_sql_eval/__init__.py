"""test-suite-sql-eval's execution match, vendored unchanged but for one import (PROVENANCE.md)."""
