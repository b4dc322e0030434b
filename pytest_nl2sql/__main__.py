"""``python -m pytest_nl2sql``: the ``pytest-nl2sql`` command, for environments where another
package's ``nl2sql`` script (nl2sql-engine's) is on PATH, or no script folder is."""

import sys

from pytest_nl2sql.cli import main

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
