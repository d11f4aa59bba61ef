"""Values read back are checked (issue 23): what a command prints from a database row is valid, whatever
the row holds."""

from __future__ import annotations

import json


def test_json_output_is_always_valid_json(capsys):
    from bertdrill.cli.base import print_json

    print_json({"retention": float("nan"), "rows": [{"ef": float("inf")}, (1.5, float("-inf"))], "name": "ann"})
    assert json.loads(capsys.readouterr().out) == {"retention": None, "rows": [{"ef": None}, [1.5, None]],
                                                    "name": "ann"}
