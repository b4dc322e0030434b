"""pytest entry point (wired up in the plugin issue)."""
