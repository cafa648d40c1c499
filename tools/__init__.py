"""Tools for developers, not shipped and not collected by pytest."""
