"""Previews and simulations: stand-in tables from the schema and numpy's generator, never on the release path."""
