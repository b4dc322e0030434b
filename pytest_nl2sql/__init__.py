"""pytest-nl2sql: run reviewed natural-language-to-SQL suites as pytest items."""

__version__ = "0.1.0"
