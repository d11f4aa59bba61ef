"""How long `bertdrill sheet` takes per format, against loading the lesson in the same run.

Run: python benchmarks/sheets.py [ROUNDS]
Prints the median time of each step and its ratio to the baseline (reading,
parsing and verifying the shipped lesson, which every command does first).
"""

from __future__ import annotations

import statistics
import sys
import time
from io import BytesIO
from pathlib import Path

from bertdrill.adapters.export.files import as_bytes
from bertdrill.adapters.export.sheets import gift, html, markdown, model, moodle
from bertdrill.adapters.export.sheets.formats import SheetFormat
from bertdrill.adapters.export.sheets.output import documents
from bertdrill.adapters.lessons import load_lessons


def median_ms(step, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    lessons = load_lessons()
    sheet = model.build_sheet(lessons, language="tr", seed=7, versions=4, kinds=model.KINDS)
    steps = {
        "load lesson (baseline)": lambda: load_lessons(),
        "build 4 versions": lambda: model.build_sheet(lessons, language="tr", seed=7, versions=4, kinds=model.KINDS),
        "render HTML": lambda: html.render(sheet),
        "render Markdown": lambda: markdown.render(sheet),
        "render GIFT": lambda: gift.render(sheet),
        "render Moodle XML": lambda: moodle.render(sheet),
    }
    pages: int | str = "no"  # the PDF's page count: "no" pages without WeasyPrint
    try:
        from pypdf import PdfReader

        # As the command writes it: each version and key laid out on its own, padded for duplex printing.
        # The first call pays for importing WeasyPrint and loading fonts; the steps time the later ones.
        def render_pdf() -> bytes:
            ((_, data),) = documents(sheet, SheetFormat.pdf, Path("quiz.pdf"))
            return as_bytes(data)

        pages = len(PdfReader(BytesIO(render_pdf())).pages)
        steps["render PDF (WeasyPrint)"] = render_pdf
    except Exception as exc:  # noqa: BLE001 - a benchmark without the extra still reports the rest
        print(f"PDF skipped: {exc}")
    results = {name: median_ms(step, rounds if "PDF" not in name else max(3, rounds // 5)) for name, step in steps.items()}
    baseline = results["load lesson (baseline)"]
    print(f"{'step':<28}{'median ms':>10}{'x baseline':>12}")
    for name, ms in results.items():
        print(f"{name:<28}{ms:>10.1f}{ms / baseline:>12.1f}")
    print(f"4 versions x {len(sheet.versions[0].questions)} questions, every kind, Turkish: {pages} PDF pages")


if __name__ == "__main__":
    main()
