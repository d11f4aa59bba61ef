"""How each command's time grows with its input: no text or formula makes it grow faster than the input.

    python benchmarks/growth.py [--runs 3] [--scale 1]

Every command that reads author text or formulas (check, cards, params, sheet in each format, export
anki, status, stats, review with a wrong answer, practice start) runs on lessons of several shapes, each at
three sizes spanning 100x (the size is the number of items, or of formulas for the chained ones):

- ``generated``: benchmarks/lessons.py's lesson, whose items repeat each other's answers, so they leak
  into each other in cliques (a sheet must leave most of them out);
- ``number-words``: Turkish prompts that are long runs of number words (``onon…on``, ``yüz on yüz …``),
  the size being the length of a run (12 to 1,200 letters);
- ``chained``: formulas built each on the two before (``g_k = g_{k-1} - g_{k-2}``), asked on the last;
- ``long-numbers``: prompts and answers holding 5,000-digit numbers.

Each command runs in this process (typer's runner, after a warm-up that pays the imports), so the
figure is the command's own work, not Python's start-up; and it is CPU time, which eight engineers
sharing two cores do not inflate as they do the wall clock. Each figure is the median of ``--runs``
runs. Two slopes per row, both of log(time) against log(size): ``slope``, the least-squares fit over
the three sizes; and ``net top``, between the two largest sizes after taking away the command's time
on a one-item lesson of the same shape (its fixed cost: opening the database, writing the file), so
a cost that grows faster than the input cannot hide behind one that does not grow. Linear work has
slope 1; a row where either is above 1.2 is a MISS. Exits 1 on any MISS (how a command grows is a
property of the code, unlike its speed on one machine, so this benchmark judges).

PDF sheets (WeasyPrint's layout, about 60 ms a question) run at a tenth of each size where that still
leaves three sizes spanning 100x.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from lessons import generated_lesson  # noqa: E402

MAX_SLOPE = 1.2
NOISE = 0.02
"""CPU seconds below which two runs of one command differ by chance: a net time is at least this."""
NOW = "2025-03-01T09:00:00+00:00"

HEAD = '''[lesson]
id = "{lesson_id}"
languages = ["en", "tr"]
title = {{ en = "Growth", tr = "Büyüme" }}

[params.s]
title = "S"
a = 3
b = 5
d = 8
'''


# --------------------------------------------------------------------------- the shapes


def number_words(letters: int) -> str:
    """Forty facts with number answers whose Turkish prompts are runs of ``letters`` letters of number
    words, written together (``onon…on``; 1,200 is the longest a number may be written) and apart
    (``yüz on yüz on …``): ``check`` reads every number in a prompt whose answer is a number, to see
    if it gives it away. The size is the length of a run, not the number of items: the cost of a
    word must grow with the word."""
    items = 40
    run = "on" * (letters // 2)
    spaced = " ".join(["yüz on"] * (letters // 6))
    body = "".join(f'''
[[item]]
id = "words-{i}"
kind = "fact"
question = {{ en = "Question: what is this?", tr = "Soru: {run} {spaced} {run}x {run} nedir?" }}
answer = {{ en = "{1000 + i}", tr = "{1000 + i}" }}
''' for i in range(items))
    return HEAD.format(lesson_id="number-words") + "\n[formulas]\nsum = \"a + b\"\n" + body


def chained(formulas: int) -> str:
    """``formulas`` formulas (three at least) each built on the two before it, written last first, and
    items asking them."""
    formulas = max(formulas, 3)
    lines = [f'g{k} = "g{k - 1} - g{k - 2}"' for k in range(formulas - 1, 1, -1)] + ['g1 = "b"', 'g0 = "a"']
    last = f"g{formulas - 1}"
    items = f'''
[[item]]
id = "last"
kind = "numeric"
prompt = {{ en = "What is {last} of {{set}}?", tr = "{{set}} için {last} nedir?" }}
formula = "{last}"
params = ["s"]

[[item]]
id = "gap"
kind = "blank"
prompt = {{ en = "Fill it.", tr = "Doldur." }}
text = "g2 = ____ - g0"
answer = "g1"
checks = "g2"
'''
    return HEAD.format(lesson_id="chained") + "\n[formulas]\n" + "\n".join(lines) + "\n" + items


def long_numbers(items: int) -> str:
    """Facts holding 5,000-digit numbers in their prompts and answers (more than int() reads)."""
    digits = "7" * 5000
    body = "".join(f'''
[[item]]
id = "long-{i}"
kind = "fact"
question = {{ en = "Is {digits} number {i}?", tr = "{digits} sayısı {i} mi?" }}
answer = {{ en = "Yes, {digits}{i}.", tr = "Evet, {digits}{i}." }}
''' for i in range(items))
    return HEAD.format(lesson_id="long-numbers") + "\n[formulas]\nsum = \"a + b\"\n" + body


@dataclass(frozen=True)
class Shape:
    name: str
    make: Callable[[int], str]
    sizes: tuple[int, int, int]
    wrong: str  # a wrong answer to the first card review shows
    parameter_set: str


SHAPES = (
    Shape("generated", generated_lesson, (40, 400, 4000), "1\n", "bert-base"),
    Shape("number-words", number_words, (12, 120, 1200), "something else\n", "s"),
    Shape("chained", chained, (30, 300, 3000), "5\n", "s"),
    Shape("long-numbers", long_numbers, (2, 20, 200), "no\n", "s"),  # 20 KB an item; a lesson is at most 5 MB
)


# --------------------------------------------------------------------------- the commands


def commands(lesson: Path, out: Path, shape: Shape) -> dict[str, tuple[list[str], str | None]]:
    """Each command a person runs on the lesson, with what it reads on standard input."""
    file = ["--file", str(lesson)]
    found = {
        "check": (["check", str(lesson)], None),
        "cards --json": (["cards", "--json", *file], None),
        "params": (["params", shape.parameter_set, *file], None),
        "export anki": (["export", "anki", str(lesson), "-o", str(out / "deck.apkg")], None),
        "status": (["status", *file], None),
        "stats": (["stats", *file], None),
        "review, a wrong answer": (["review", *file, "--new", "1", "--limit", "1"], shape.wrong + "\n" * 4),
    }
    for fmt, suffix in (("html", "html"), ("md", "md"), ("gift", "gift"), ("moodle-xml", "xml"), ("pdf", "pdf")):
        found[f"sheet --format {fmt}"] = (["sheet", str(lesson), "--format", fmt, "--seed", "1",
                                           "-o", str(out / f"sheet.{suffix}")], None)
    return found


def run(arguments: list[str], stdin: str | None, env: dict[str, str]) -> float:
    from typer.testing import CliRunner

    from bertdrill.cli import app

    began = time.process_time()
    result = CliRunner().invoke(app, arguments, input=stdin, env=env, catch_exceptions=True)
    elapsed = time.process_time() - began
    if result.exit_code != 0:
        raise SystemExit(f"bertdrill {' '.join(arguments)} exited {result.exit_code}: "
                         f"{(result.stdout + result.stderr)[-2000:]} {result.exception!r}")
    return elapsed


def slope(sizes: tuple[int, ...], times: list[float]) -> float:
    xs = [math.log(size) for size in sizes]
    ys = [math.log(max(seconds, 1e-4)) for seconds in times]
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / sum((x - mean_x) ** 2 for x in xs)


@dataclass(frozen=True)
class Row:
    command: str
    sizes: tuple[int, ...]
    times: list[float]  # seconds at each size
    fixed: float  # seconds on a one-item lesson

    @property
    def slope(self) -> float:
        return slope(self.sizes, self.times)

    @property
    def net_top(self) -> float:
        net = [max(seconds - self.fixed, NOISE) for seconds in self.times[1:]]
        return slope(self.sizes[1:], net)


def sizes_of(shape: Shape, command: str, scale: float) -> tuple[int, ...]:
    # WeasyPrint's layout is slow: PDF at a tenth of each size, where a tenth still spans 100x.
    share = 0.1 if command == "sheet --format pdf" and min(shape.sizes) * scale >= 10 else 1.0
    return tuple(max(2, round(size * scale * share)) for size in shape.sizes)


def measure(shape: Shape, folder: Path, runs: int, scale: float, only: set[str]) -> list[Row]:
    names = [name for name in commands(folder, folder, shape) if not only or name in only]
    wanted = sorted({1, *(size for name in names for size in sizes_of(shape, name, scale))})
    times: dict[tuple[str, int], float] = {}
    for size in wanted:
        lesson = folder / f"{shape.name}-{size}.toml"
        lesson.write_text(shape.make(size), encoding="utf-8")
        for name, (arguments, stdin) in commands(lesson, folder, shape).items():
            if name not in names or (size != 1 and size not in sizes_of(shape, name, scale)):
                continue
            each = []
            for turn in range(runs):
                home = folder / f"home-{shape.name}-{size}-{turn}"
                # A home of its own, lesson cache included: every run reads and verifies the lesson.
                env = dict(BERTDRILL_HOME=str(home), BERTDRILL_DB=str(home / "bertdrill.db"),
                           BERTDRILL_CACHE=str(home / "cache"), BERTDRILL_NOW=NOW,
                           NO_COLOR="1", BERTDRILL_LANG="tr" if shape.name == "number-words" else "en")
                each.append(run(arguments, stdin, env))
                shutil.rmtree(home, ignore_errors=True)
            times[name, size] = statistics.median(each)
        print(f"  {shape.name} at {size:,}: " + ", ".join(f"{name} {times[name, size] * 1000:,.0f} ms"
                                                         for name in names if (name, size) in times), flush=True)
    rows = []
    for name in names:
        sizes = sizes_of(shape, name, scale)
        rows.append(Row(name, sizes, [times[name, size] for size in sizes], times[name, 1]))
    return rows


def growth(runs: int = 3, scale: float = 1.0, shapes: set[str] | None = None,
           only: set[str] | None = None) -> list[tuple[str, Row]]:
    """Every command on every shape (or the ones named), with its figures: (shape name, row)."""
    folder = Path(tempfile.mkdtemp(prefix="bertdrill-growth-"))
    saved = os.environ.pop("BERTDRILL_DB", None)
    try:
        warm = folder / "warm.toml"
        warm.write_text(generated_lesson(5), encoding="utf-8")  # pays the imports before anything is timed
        for arguments, stdin in commands(warm, folder, SHAPES[0]).values():
            run(arguments, stdin, dict(BERTDRILL_HOME=str(folder / "warm"), BERTDRILL_NOW=NOW, NO_COLOR="1"))
        return [(shape.name, row) for shape in SHAPES if not shapes or shape.name in shapes
                for row in measure(shape, folder, runs, scale, only or set())]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if saved is not None:
            os.environ["BERTDRILL_DB"] = saved


def passes(row: Row) -> bool:
    return row.slope <= MAX_SLOPE and row.net_top <= MAX_SLOPE


def print_table(found: list[tuple[str, Row]]) -> None:
    table = [(f"{row.command}, {shape}", " / ".join(f"{t * 1000:,.0f}" for t in row.times) + " ms",
              " / ".join(f"{size:,}" for size in row.sizes), f"{row.fixed * 1000:,.0f} ms",
              f"{row.slope:.2f}", f"{row.net_top:.2f}", "PASS" if passes(row) else "MISS") for shape, row in found]
    headers = ("command, lesson", "CPU time", "sizes", "one item", "slope", "net top", "")
    widths = [max(len(str(line[i])) for line in [headers, *table]) for i in range(len(headers))]
    print()
    for number, line in enumerate([headers, *table]):
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip())
        if number == 0:
            print("  ".join("-" * width for width in widths))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per figure (the median is shown)")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every size (0.1 for a quick look)")
    parser.add_argument("--shape", action="append", default=[], help="only these shapes (repeatable)")
    parser.add_argument("--command", action="append", default=[], help="only these commands (repeatable)")
    args = parser.parse_args()
    found = growth(args.runs, args.scale, set(args.shape), set(args.command))
    print_table(found)
    misses = sum(not passes(row) for _shape, row in found)
    print(f"\n{misses} of {len(found)} above a slope of {MAX_SLOPE}" if misses else
          f"\nevery command at most a slope of {MAX_SLOPE}")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
