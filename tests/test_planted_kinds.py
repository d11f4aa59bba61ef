"""Every taxonomy is a type: a planted seventh card kind, a card class of its own and a fifth answer kind are
type errors (mypy, strict as in pyproject) at every site that must handle them, the review screen included.

One copy of the package gets all three plants and one mypy run (about 10 s of CPU: mypy reads the whole
package; a cache would not help, since every module depends on the planted ones). Each error must be an
``assert_never`` that now receives the planted member: a plant that type-checks somewhere it is handled
wrongly would be missing from the sites below, and a plant that breaks anything else would show here too.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from mypy import api

REPO = Path(__file__).resolve().parent.parent

PLANTS = {  # file -> (the text it has, the text that replaces it)
    "core/kinds.py": ('    PRACTICE = "practice"  # the lesson\'s coding exercise\n',
                      '    PRACTICE = "practice"  # the lesson\'s coding exercise\n    QUIZ = "quiz"\n'),
    "core/scheduling/state.py": ('    PRACTICE = "practice"  # a practice exercise checked by ``bertdrill practice``\n',
                                 '    PRACTICE = "practice"  # a practice exercise checked by ``bertdrill practice``\n'
                                 '    LOOKUP = "lookup"\n'),
    "core/cards.py": ("\nCard = FactCard | ChoiceCard | BlankCard | NumericCard | MatchCard | PracticeCard\n",
                      "\n@dataclass(frozen=True, kw_only=True)\nclass QuizCard(CardBase):\n    @property\n"
                      "    def kind(self) -> Literal[Kind.QUIZ]:\n        return Kind.QUIZ\n\n\n"
                      "Card = FactCard | ChoiceCard | BlankCard | NumericCard | MatchCard | PracticeCard | QuizCard\n"),
}

# Where each planted member must be reported (at least once per file): the decisions that depend on it.
EXPECTED = {
    "Kind.QUIZ": {"core/kinds.py", "core/lesson/items.py", "adapters/export/anki.py",
                  "adapters/export/sheets/model.py", "adapters/export/sheets/html.py",
                  "adapters/export/sheets/markdown.py", "adapters/export/sheets/gift.py",
                  "adapters/export/sheets/moodle.py", "cli/review.py"},
    "QuizCard": {"core/cards.py", "core/grading.py", "core/leaks.py", "adapters/export/anki.py", "cli/review.py",
                 "cli/lessons.py"},
    "AnswerKind.LOOKUP": {"core/scheduling/state.py", "ports/__init__.py", "cli/review.py"},
}
REVIEW_SCREEN = {"Kind.QUIZ": {"kind_name"}, "QuizCard": {"phrased", "options", "graded_by_the_learner"},
                 "AnswerKind.LOOKUP": {"entry_word"}}

ERROR = re.compile(r"^src/bertdrill/(?P<file>[\w/]+\.py):(?P<line>\d+): error: (?P<message>.*)$")
NEVER = re.compile(r'Argument 1 to "assert_never" has incompatible type "(?:Literal\[)?(?P<member>[\w.]+)\]?"; '
                   r'expected "Never"')


def _planted_copy(root: Path) -> Path:
    shutil.copytree(REPO / "src" / "bertdrill", root / "src" / "bertdrill", symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__", "decks", "locale"))
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    for name, (old, new) in PLANTS.items():
        path = root / "src" / "bertdrill" / name
        text = path.read_text(encoding="utf-8")
        assert text.count(old) == 1, f"{name} changed: the plant no longer finds {old!r}"
        path.write_text(text.replace(old, new), encoding="utf-8")
    return root


def _function_at(path: Path, line: int) -> str:
    """The name of the function that holds ``line``."""
    lines = path.read_text(encoding="utf-8").splitlines()[:line]
    for text in reversed(lines):
        if found := re.match(r"\s*def (\w+)\(", text):
            return found.group(1)
    return "<module>"


def test_a_planted_kind_is_a_type_error_at_every_site_that_handles_kinds(tmp_path, monkeypatch):
    root = _planted_copy(tmp_path)
    monkeypatch.chdir(root)
    # the package alone (pyproject's files name the tests, benchmarks and scripts too, which the copy has not)
    report, _errors, status = api.run(["--config-file", "pyproject.toml", "--cache-dir", str(tmp_path / "cache"),
                                       "src/bertdrill"])
    assert status == 1, report
    found: dict[str, set[str]] = {member: set() for member in EXPECTED}
    in_review: dict[str, set[str]] = {member: set() for member in EXPECTED}
    for line in report.splitlines():
        if (error := ERROR.match(line)) is None:
            continue
        never = NEVER.search(error["message"])
        assert never is not None and never["member"] in found, f"not an unhandled plant: {line}"
        found[never["member"]].add(error["file"])
        if error["file"] == "cli/review.py":
            in_review[never["member"]].add(_function_at(root / "src" / "bertdrill" / error["file"], int(error["line"])))
    for member, files in EXPECTED.items():
        assert files <= found[member], f"{member} is not an error in {sorted(files - found[member])}"
    assert in_review == REVIEW_SCREEN
