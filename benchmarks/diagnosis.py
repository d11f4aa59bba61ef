"""What diagnosing a wrong number costs (issue 12), beside the same answers graded without it.

    python benchmarks/diagnosis.py [--runs 7] [--answers 1000]

1. In this process: ``grading.grade`` on wrong numbers (an expression, a digit slip, nothing the
   lesson knows) and on a wrong blank, with the lesson's Diagnoser and without it (the baseline);
   and building the Diagnoser's index, which happens once per lesson, on the first wrong answer.
2. The answer benchmark of ``run.py`` (row 3: a real ``bertdrill review`` answering 1,000 cards
   of a generated lesson, every line "4", so every numeric card is answered wrong and diagnosed),
   beside raw sqlite3 transactions, as run.py prints it.

Prints figures and always exits 0: a benchmark reports, the tests judge.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from lessons import generated_lesson  # noqa: E402
from run import raw_transactions, scripted_review  # noqa: E402

WRONG = [  # (card, typed): wrong answers the diagnosis names, and one it cannot
    ("embedding-params@bert-base", "4*(768*768+768)"),  # one attention block
    ("attention-params@bert-base", "4*d*d"),  # biases left out
    ("embedding-params@bert-base", "2383718"),  # a power of ten
    ("total-params@bert-large", "109482240"),  # the other model's value
    ("embedding-params@bert-base", "123"),  # nothing the lesson knows: the whole search, then digit slips
    ("attention-projections", "4*d*d"),  # a blank: its value on every parameter set
]


def per_call(function, repeat: int) -> float:
    began = time.perf_counter()
    for _ in range(repeat):
        function()
    return (time.perf_counter() - began) / repeat


def in_process(runs: int) -> None:
    from bertdrill.adapters.lessons import load_lessons
    from bertdrill.core.cards import compile_lesson
    from bertdrill.core.diagnosis import Diagnoser
    from bertdrill.core.grading import grade

    lesson = load_lessons()[0]
    cards = {card.key: card for card in compile_lesson(lesson)}
    builds = []
    for _ in range(runs):
        fresh = Diagnoser.for_lesson(lesson)
        builds.append(per_call(fresh.index, 1))
    diagnoser = Diagnoser.for_lesson(lesson)
    print(f"index of the shipped lesson ({diagnoser.index() and diagnoser.size} values): built once per lesson, "
          f"{statistics.median(builds) * 1000:.2f} ms (median of {runs})")
    print(f"{'wrong answer':<48} {'without':>9} {'with diagnosis':>15} {'cost':>9}")
    for key, typed in WRONG:
        card = cards[key]
        plain = statistics.median(per_call(lambda card=card, typed=typed: grade(card, typed, "en"), 200)
                                  for _ in range(runs))
        named = statistics.median(per_call(lambda card=card, typed=typed: grade(card, typed, "en",
                                                                                diagnoser=diagnoser), 200)
                                  for _ in range(runs))
        print(f"{key + ' ' + typed:<48} {plain * 1e6:>7.0f} µs {named * 1e6:>12.0f} µs {(named - plain) * 1e6:>6.0f} µs")


def answer_benchmark(runs: int, answers: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="bertdrill-diagnosis-"))
    try:
        lesson = folder / "answers.toml"
        lesson.write_text(generated_lesson(answers, "answers"), encoding="utf-8")
        per_answer = statistics.median(scripted_review(lesson, folder / f"answers-{run}.db", answers)
                                       for run in range(runs))
        per_transaction = statistics.median(raw_transactions(folder / f"raw-{run}.db", answers)
                                            for run in range(runs))
        print(f"answer {answers:,} cards, scripted review (numeric cards answered wrong, diagnosed): "
              f"{per_answer * 1000:.2f} ms per answer; raw sqlite3 transaction {per_transaction * 1000:.2f} ms; "
              f"ratio {per_answer / per_transaction:.1f}; target <= 20 ms per answer")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--answers", type=int, default=1_000)
    args = parser.parse_args()
    in_process(args.runs)
    answer_benchmark(max(3, args.runs // 2), args.answers)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
