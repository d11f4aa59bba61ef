"""The figures of ``bertdrill stats`` that need no database: heatmap cells and levels, bars, labels.

Pure: standard library only, no clock (``today`` is an argument), no terminal. The
store counts answers and cards; this module turns counts into what the screen draws,
so every shape on it can be tested with plain numbers.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import cached_property

from bertdrill.core.i18n import pgettext

HEATMAP_WEEKS = 26
GLYPHS = "·░▒▓█"
"""One glyph per heatmap level, 0 (nothing answered) to 4, so the map reads without colour."""

TOP_PERCENTILE = 95
"""A day at this percentile of active days fills a cell: one marathon day does not wash out the rest."""

RETENTION_TARGET = 0.90
"""The share of due reviews SM-2 means to be recalled: its intervals are chosen for about 90 %."""

EIGHTHS = "▏▎▍▌▋▊▉█"


def month_names() -> tuple[str, ...]:
    """Short month names, January first, in the interface's language: the catalogs hold the names."""
    return (pgettext("month", "Jan"), pgettext("month", "Feb"), pgettext("month", "Mar"), pgettext("month", "Apr"),
            pgettext("month", "May"), pgettext("month", "Jun"), pgettext("month", "Jul"), pgettext("month", "Aug"),
            pgettext("month", "Sep"), pgettext("month", "Oct"), pgettext("month", "Nov"), pgettext("month", "Dec"))


def weekday_names() -> tuple[str, ...]:
    """Short weekday names, Monday first, in the interface's language."""
    return (pgettext("weekday", "Mon"), pgettext("weekday", "Tue"), pgettext("weekday", "Wed"),
            pgettext("weekday", "Thu"), pgettext("weekday", "Fri"), pgettext("weekday", "Sat"),
            pgettext("weekday", "Sun"))


def short_date(day: date) -> str:
    """``Dec  2`` in English, `` 2 Ara`` in Turkish: the catalog orders day and month too.

    The day is padded to two places, so dates of one month line up in a column.
    """
    # Translators: a short date; {day} is the day of the month, {month} the short month name.
    return pgettext("date", "{month} {day}").format(month=month_names()[day.month - 1], day=f"{day.day:2d}")


@dataclass(frozen=True)
class Heatmap:
    """Answers per study day over whole weeks: columns are weeks (Monday first), rows weekdays."""

    first: date  # the Monday of the first column
    today: date  # the last day drawn; later days of its week stay empty
    counts: Mapping[date, int] = field(default_factory=dict)  # only days within the map

    @property
    def weeks(self) -> int:
        return (self.today - self.first).days // 7 + 1

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def active_days(self) -> int:
        return sum(1 for count in self.counts.values() if count > 0)

    @property
    def days(self) -> int:
        """Days drawn, today included."""
        return (self.today - self.first).days + 1

    @cached_property  # a sort of the active days, asked by each of the grid's 182 cells
    def top(self) -> int:
        """Answers that fill a cell: the :data:`TOP_PERCENTILE` percentile of active days (0 if none)."""
        return percentile([count for count in self.counts.values() if count > 0], TOP_PERCENTILE)

    def level(self, count: int) -> int:
        return level(count, self.top)

    def grid(self) -> list[list[int | None]]:
        """Seven rows (Monday to Sunday) of one level per week; None for the days after today."""
        return [[self._cell(self.first + timedelta(weeks=week, days=weekday)) for week in range(self.weeks)]
                for weekday in range(7)]

    def _cell(self, day: date) -> int | None:
        return None if day > self.today else self.level(self.counts.get(day, 0))

    def legend(self) -> list[tuple[int, int, int]]:
        """(level, fewest, most answers) for each level that some count could reach, 0 first."""
        top = self.top
        if not top:
            return [(0, 0, 0)]
        most = max(self.counts.values())
        ranges = [(0, 0, 0)]
        for step in range(1, 5):
            fewest = (step - 1) * top // 4 + 1
            highest = most if step == 4 else step * top // 4
            if fewest <= highest:
                ranges.append((step, fewest, highest))
        return ranges

    def months(self) -> list[tuple[int, str]]:
        """(column, month name) for each week that holds the 1st of a month."""
        labels = []
        names = month_names()
        for week in range(self.weeks):
            monday = self.first + timedelta(weeks=week)
            first_of_month = next((monday + timedelta(days=i) for i in range(7)
                                   if (monday + timedelta(days=i)).day == 1), None)
            if first_of_month is not None:
                labels.append((week, names[first_of_month.month - 1]))
        return labels


def heatmap(counts: Mapping[date, int], today: date, weeks: int = HEATMAP_WEEKS) -> Heatmap:
    """The map of the ``weeks`` weeks that end with the week of ``today``."""
    first = heatmap_start(today, weeks)
    return Heatmap(first, today, {day: count for day, count in counts.items() if first <= day <= today})


def heatmap_start(today: date, weeks: int = HEATMAP_WEEKS) -> date:
    """The Monday that opens the map: ``weeks - 1`` weeks before the Monday of today's week."""
    return today - timedelta(days=today.weekday(), weeks=weeks - 1)


def level(count: int, top: int) -> int:
    """0 for no answers; else 1 to 4 by quarters of ``top`` (counts above ``top`` are 4)."""
    if count <= 0 or top <= 0:
        return 0
    return min(4, -(-4 * count // top))


def percentile(values: Sequence[int], percent: int) -> int:
    """The nearest-rank percentile: the smallest value with ``percent`` % of the values at or below it."""
    if not values:
        return 0
    ordered = sorted(values)
    rank = max(1, -(-percent * len(ordered) // 100))
    return ordered[rank - 1]


def bar(value: int, top: int, width: int) -> str:
    """A horizontal bar of ``value`` on a scale where ``top`` fills ``width`` cells, in eighths.

    Any value above zero shows at least a sliver, so a day with one card is not a day with none.
    """
    if value <= 0 or top <= 0 or width <= 0:
        return ""
    eighths = max(1, (value * width * 16 + top) // (2 * top))  # rounded to the nearest eighth
    full, part = divmod(min(eighths, width * 8), 8)
    return "█" * full + (EIGHTHS[part - 1] if part else "")


def share(passed: int, total: int) -> float | None:
    """passed / total, or None when there is nothing to divide."""
    return passed / total if total else None


def streaks(days: Iterable[date], owed: Iterable[tuple[date, date]], today: date) -> tuple[int, int]:
    """(current, longest) runs of study days with an answer, up to ``today``.

    A day without an answer breaks a run only when something was due on it: ``owed`` holds spans of days
    (first, last, both included) when a card was due and not answered. A day with nothing due neither
    breaks a run nor counts in it: a run counts the days studied. The current run is the latest one while
    every day between its last study day and today (today itself excepted: it can still be studied) was
    free; else 0.
    """
    studied = sorted({day for day in days if day <= today})
    if not studied:
        return 0, 0
    spans = sorted(owed)
    starts = [first for first, _last in spans]
    reach: list[date] = []  # the latest last day of the spans up to each one: where owed days reach so far
    for _first, last in spans:
        reach.append(max(last, reach[-1]) if reach else last)

    def free(first: date, last: date) -> bool:
        """No owed day in [first, last]."""
        if first > last:
            return True
        before = bisect_right(starts, last)  # spans starting on or before ``last``
        return before == 0 or reach[before - 1] < first

    longest = run = 0
    previous: date | None = None
    for day in studied:
        run = run + 1 if previous is not None and free(previous + timedelta(days=1), day - timedelta(days=1)) else 1
        longest = max(longest, run)
        previous = day
    assert previous is not None
    current = run if free(previous + timedelta(days=1), today - timedelta(days=1)) else 0
    return current, longest
