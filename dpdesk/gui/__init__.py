"""The desktop app: thin Qt views over the engine in :mod:`dpdesk.core`."""
