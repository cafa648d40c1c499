"""The helps' examples work in an installed copy too: they name the user's files, never ``resources/...``, which
only a source checkout has (issue 25)."""

from __future__ import annotations

from dpdesk.cli.parser import build_parser, parsers


def test_no_help_example_points_into_the_source_tree() -> None:
    walked = parsers(build_parser())
    assert len(walked) > 20
    for path, parser in walked:
        text = parser.format_help()
        examples = text.split("Example", 1)[1].split("Exit codes:", 1)[0]
        assert "dpdesk " in examples, path
        assert "resources/" not in examples and "samples/" not in examples, (path, examples)
