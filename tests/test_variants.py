"""Fresh parameter variants: the [variants] table, check's proof of every variant, and the seeded draw."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from bertdrill.adapters.lessons import read_lesson
from bertdrill.core.errors import LessonErrors
from bertdrill.core.lesson import parse, variant_errors
from bertdrill.core.variants import Stream, draw, draw_distinct, find

HERE = Path(__file__).parent
MINIMAL = (HERE / "lessons" / "minimal.toml").read_text()
DECK = HERE.parent / "decks" / "bert-basics.toml"

VARIANTS = """
[variants]
mode = "fresh"
d = [4, 8, 12, 16]
f = "4 * d"
n = { from = 2, to = 6 }
where = ["d divides 48", "n < d"]
"""


def lesson_with(table: str):
    """The minimal lesson with a [variants] table put before its first item, and the table's first line."""
    head, tail = MINIMAL.split("[[item]]", 1)
    text = f"{head}{table}\n[[item]]{tail}"
    return text, head.count("\n") + 1


def errors_of(table: str) -> list[str]:
    """What parse, then check's proof of the variants, report (as `line: message`)."""
    text, _start = lesson_with(table)
    try:
        lesson = parse(text, "x.toml")
    except LessonErrors as exc:
        return [f"{e.line}: {e.message}" for e in exc.errors]
    return [f"{e.line}: {e.message}" for e in variant_errors(lesson)]


def test_the_table_allows_exactly_the_variants_its_rules_and_constraints_describe():
    text, _start = lesson_with(VARIANTS)
    lesson = parse(text)
    allowed = lesson.allowed_variants()
    expected = {(d, n) for d in (4, 8, 12, 16) for n in range(2, 7) if 48 % d == 0 and n < d}
    assert {(v.values["d"], v.values["n"]) for v in allowed} == expected
    assert all(v.values["f"] == 4 * v.values["d"] for v in allowed)
    assert allowed[0].key == "d=4,f=16,n=2" and allowed[0].varying == ("d", "f", "n")
    assert variant_errors(lesson) == []


def test_the_shipped_lesson_varies_its_bert_numbers_within_its_constraints():
    lesson = read_lesson(DECK)
    allowed = lesson.allowed_variants()
    assert len(allowed) > 500
    for variant in allowed:
        values = variant.values
        assert values["d"] % values["h"] == 0 and values["d"] // values["h"] >= 32
        assert values["f"] == 4 * values["d"] and 2 <= values["n"] <= 48
        assert (values["V"], values["L"], values["T"]) == (30522, 512, 2)  # the same in both named sets
    assert variant_errors(lesson) == []


def test_a_variant_is_a_parameter_set_every_text_and_formula_works_on():
    lesson = read_lesson(DECK)
    variant = find(lesson, "d=512,f=2048,n=6,h=8")
    assert variant is not None
    varied, name = lesson.with_variant(variant)
    assert varied.params[name].titles == {"en": "BERT (d = 512, f = 2,048, n = 6, h = 8)",
                                          "tr": "BERT (d = 512, f = 2.048, n = 6, h = 8)"}
    d, f, n = 512, 2048, 6
    layer = 4 * (d * d + d) + 2 * d + (d * f + f + f * d + d) + 2 * d
    total = (30522 + 512 + 2) * d + 2 * d + n * layer + d * d + d
    assert varied.evaluate("total", name) == total
    assert varied.render("{set} has {total}", "en", name) == f"BERT (d = 512, f = 2,048, n = 6, h = 8) has {total:,}"
    assert name not in lesson.params  # the lesson itself is unchanged


@pytest.mark.parametrize("table, line, start", [
    ('[variants]\nd = [4, 8]\nwhere = ["d divides 3"]\nf = "d"\nn = [2]\n', 3, "[variants]: no variant satisfies 'd divides 3'"),
    ('[variants]\nd = [4, 8]\nn = [2, 3]\nwhere = ["n < 9", "d < n"]\nf = "d"\n', 4, "[variants]: no variant satisfies 'd < n'"),
    ('[variants]\nw = [4, 8]\n', 2, "[variants]: unknown parameter 'w'"),
    ('[variants]\nd = [4, 8]\n', 1, "[variants]: f differs between the parameter sets (32 in small, 64 in big)"),
    ('[variants]\nd = { from = 1, to = 100000 }\nf = "d"\nn = 2\n', 4, "[variants]: n must be a list of choices"),
    ('[variants]\nd = { from = 1, to = 100000 }\nf = "d"\nn = [2]\n', 1, "[variants] spans 100,000 combinations"),
    ('[variants]\nd = { from = 9, to = 2 }\nf = "d"\nn = [2]\n', 2, "[variants]: d: a range goes up"),
    ('[variants]\nd = { from = 2, upto = 9 }\nf = "d"\nn = [2]\n', 2, "[variants]: d: unknown key 'upto'"),
    ('[variants]\nd = [4, 4]\nf = "d"\nn = [2]\n', 2, "[variants]: d: a choice is listed twice"),
    ('[variants]\nd = [4]\nf = "4 * attention"\nn = [2]\n', 3, "[variants]: f: unknown name 'attention'"),
    ('[variants]\nd = [4]\nf = "d"\nn = [2]\nwhere = ["d + 1"]\n', 5, "[variants]: constraint 'd + 1' relates nothing"),
    ('[variants]\nd = [4]\nf = "d"\nn = [2]\nmode = "always"\n', 5, "[variants]: mode must be one of fixed, fresh"),
    ('[variants]\nd = [4]\nf = "d"\nn = [2]\nwhere = ["d / (d - 4) > 1"]\n', 5,
     "[variants]: constraint 'd / (d - 4) > 1': division by zero (with d=4,f=4,n=2)"),
    # within the engine's bounds: every allowed variant's numbers are computed, and the first that is not is named
    ('[variants]\nd = [4, 10000000000000000]\nf = "d ** 3"\nn = [2]\n', 1,
     "[variants]: with d=10000000000000000,f=1000000000000000000000000000000000000000000000000,n=2: formula "
     "'ffn': result too large (over 10^60)"),
    ('[variants]\nd = [4, 0]\nf = "d"\nn = [2]\n', 1, "[variants]: with d=0,f=0,n=2: formula 'share': division by zero"),
])
def test_check_names_the_line_and_what_is_wrong(table, line, start):
    errors = errors_of(table)
    _text, first = lesson_with(table)
    assert len(errors) == 1, errors
    where, message = errors[0].split(": ", 1)
    assert int(where) == first + line - 1, errors[0]
    assert message.startswith(start), errors[0]


def test_an_item_asked_with_variants_may_not_show_a_named_sets_numbers():
    text, _start = lesson_with(VARIANTS)
    text = text.replace('prompt = { en = "Count {set}.", tr = "{set} say." }',
                        'prompt = { en = "Count {set} ({d@small}).", tr = "{set} say." }')
    with pytest.raises(LessonErrors, match=r"item 'count': prompt \(en\) shows \{d@small\}, which a fresh variant"):
        parse(text)
    parse(text.replace('stated = { small = 1744 }', 'stated = { small = 1744 }\nvariants = false'))  # opted out


def test_check_exits_1_with_file_line_and_no_traceback(tmp_path):
    text, start = lesson_with('[variants]\nd = [4, 8]\nwhere = ["d divides 3"]\nf = "d"\nn = [2]\n')
    path = tmp_path / "lesson.toml"
    path.write_text(text)
    run = subprocess.run([sys.executable, "-m", "bertdrill", "check", str(path)], capture_output=True, text=True)
    assert run.returncode == 1
    assert f"lesson.toml:{start + 2}: [variants]: no variant satisfies 'd divides 3'" in run.stderr
    assert "Traceback" not in run.stderr


def test_a_lesson_that_was_not_checked_draws_only_variants_that_work():
    text, _start = lesson_with('[variants]\nd = [4, 0, 8]\nf = "d"\nn = [2]\n')
    lesson = parse(text)  # loading does not enumerate variants: that is check's work
    assert [v.values["d"] for v in lesson.allowed_variants()] == [4, 8]


def test_the_stream_is_splitmix64_and_reproducible():
    # SplitMix64's published first outputs for seed 0 (as in Vigna's splitmix64.c)
    stream = Stream(0)
    assert [stream.next() for _ in range(3)] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]
    assert [Stream(7).below(10) for _ in range(3)] == [Stream(7).below(10)] * 3
    stream = Stream(42)
    counts = Counter(stream.below(6) for _ in range(60_000))
    assert set(counts) == set(range(6)) and all(9_000 < c < 11_000 for c in counts.values())
    assert sorted(Stream(3).shuffled(50)) == list(range(50))


def test_a_seed_always_draws_the_same_variant_and_sheets_get_distinct_ones():
    lesson = read_lesson(DECK)
    assert draw(lesson, 12345) == draw(lesson, 12345)
    variants = [draw(lesson, seed) for seed in range(200)]
    drawn = {variant.key for variant in variants if variant is not None}
    assert None not in variants  # the lesson varies: every seed draws a variant
    assert len(drawn) > 150  # 846 allowed: 200 seeds rarely collide
    versions = draw_distinct(lesson, 9, 30)
    assert len({v.key for v in versions}) == 30 and versions == draw_distinct(lesson, 9, 30)
    text, _start = lesson_with(VARIANTS)
    small = parse(text)
    many = draw_distinct(small, 1, 20)  # only 7 allowed: each is used before any repeats
    assert len(many) == 20 and len({v.key for v in many[:7]}) == 7
    assert draw(parse(MINIMAL), 1) is None  # no [variants]: nothing to draw
