"""`bertdrill stats`: the pure figures, the store's queries on a known history, the screen and --json.

The history below is written through the real store API (``session.record_attempt``, which
runs SM-2) with a fixed clock, and every figure asserted here was worked out by hand from it.
The golden screen is made from a frozen copy of the lesson (tests/golden/bert-basics.toml);
after an intended change, rewrite it with ``BERTDRILL_UPDATE_GOLDEN=1 pytest tests/test_stats.py``.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path

import pytest

from bertdrill.adapters.lessons import read_lesson
from bertdrill.adapters.store import Store
from bertdrill.app.session import record_attempt
from bertdrill.core import stats
from bertdrill.core.cards import compile_lesson
from bertdrill.core.scheduling.state import AnswerKind, CardStage
from bertdrill.ports import CardFigures

GOLDEN = Path(__file__).parent / "golden"
TODAY = date(2025, 3, 3)  # a Monday
ZONE = timezone(timedelta(hours=3))
NOW = "2025-03-03T10:00:00+03:00"
P = "bert-basics/"


def day(offset: int) -> date:
    return TODAY + timedelta(days=offset)


# --------------------------------------------------------------------------- pure figures


def test_levels_are_quarters_of_the_top_count():
    assert [stats.level(count, 8) for count in (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 80)] == [0, 1, 1, 2, 2, 3, 3, 4, 4, 4, 4]
    assert stats.level(5, 0) == 0 and stats.level(-1, 4) == 0


def test_percentile_is_nearest_rank():
    assert stats.percentile([], 95) == 0
    assert stats.percentile([7], 95) == 7
    assert stats.percentile(list(range(1, 101)), 95) == 95
    assert stats.percentile([1] * 18 + [2, 2, 4, 5], 95) == 4  # one busy day does not set the scale


def test_bars_in_eighths():
    assert stats.bar(10, 10, 4) == "████"
    assert stats.bar(5, 10, 4) == "██"
    assert stats.bar(3, 10, 4) == "█▎"  # 1.2 cells = 9.6 eighths, rounded to 10: one cell and two eighths
    assert stats.bar(1, 1000, 4) == "▏"  # never invisible
    assert stats.bar(0, 10, 4) == stats.bar(3, 0, 4) == ""
    assert stats.bar(20, 10, 4) == "████"  # capped at the width


def test_heatmap_is_whole_weeks_ending_with_today():
    heat = stats.heatmap({day(0): 4, day(-1): 1, day(-175): 2, day(-176): 9, day(1): 3}, TODAY)
    assert heat.first == date(2024, 9, 9) and heat.first.weekday() == 0
    assert heat.weeks == 26 and heat.days == 176
    assert heat.counts == {day(0): 4, day(-1): 1, day(-175): 2}  # before the first Monday or after today: out
    grid = heat.grid()
    assert len(grid) == 7 and all(len(row) == 26 for row in grid)
    assert grid[0][25] == 4 and grid[6][24] == 1 and grid[0][0] == 2  # Monday today; Sunday yesterday
    assert [row[25] for row in grid[1:]] == [None] * 6  # the rest of this week is still to come
    assert (heat.total, heat.active_days, heat.top) == (7, 3, 4)


def test_heatmap_on_a_wednesday_and_month_labels():
    heat = stats.heatmap({}, date(2025, 1, 15), weeks=8)
    assert heat.first == date(2024, 11, 25)
    assert [row[-1] for row in heat.grid()] == [0, 0, 0, None, None, None, None]
    assert heat.months() == [(0, "Dec"), (5, "Jan")]  # the weeks holding Sunday 1 December and 1 January
    assert heat.legend() == [(0, 0, 0)] and heat.top == 0


def test_legend_lists_the_levels_a_count_can_reach():
    heat = stats.heatmap({day(-i): count for i, count in enumerate([1, 2, 3, 5, 8, 13, 40])}, TODAY)
    assert heat.top == 40
    assert heat.legend() == [(0, 0, 0), (1, 1, 10), (2, 11, 20), (3, 21, 30), (4, 31, 40)]
    tiny = stats.heatmap({TODAY: 2}, TODAY)
    assert tiny.legend() == [(0, 0, 0), (2, 1, 1), (4, 2, 2)]  # 2 fills a cell; 1 is half of it


# --------------------------------------------------------------------------- a known history

REMOVED = "word-embedding-table"


def history(store: Store, cards) -> None:
    """35 answers over 200 days; the figures in the tests below follow from them by hand."""

    def answer(card_id, grade, offset, kind="review"):
        record_attempt(store, P + card_id, grade, moment=datetime.combine(day(offset), datetime.min.time(), ZONE)
                       + timedelta(hours=9), kind=kind)

    # A mature card: 5, 5, 5, 5 on the due days (intervals 1, 6, 17, 48), then a 3 at 48 days: due in 12 days.
    for grade, offset in zip((5, 5, 5, 5, 3), (-200, -199, -193, -176, -128)):
        answer("bert-definition", grade, offset, "new" if offset == -200 else "review")
    # A leech: right, wrong, right, wrong ... on 16 days in a row: 8 lapses, EF down to the floor.
    for i in range(16):
        answer("bert-vs-gpt", 4 if i % 2 == 0 else 1, -40 + i, "new" if i == 0 else "review")
    # A young card that lapsed once and came back, with a same-day re-drill.
    answer("head-size@bert-base", 5, -5, "new")
    answer("head-size@bert-base", 2, -4)
    answer("head-size@bert-base", 4, -4, "redrill")
    answer("head-size@bert-base", 4, -3)
    answer("head-size@bert-base", 4, -2)
    # Three more first answers three days ago: one suspended later, one whose item leaves the lesson,
    # and the lesson's exercise.
    answer("bert-acronym", 5, -3, "new")
    answer(REMOVED, 5, -3, "new")
    answer("count-bert-base", 5, -3, "practice")
    # One answer two days ago, buried until the day after tomorrow.
    answer("attention-projections", 4, -2, "new")
    # Five new cards yesterday: all due today.
    for card_id, grade in zip(("bidirectional", "pre-training", "fine-tuning", "understands-not-generates",
                               "bert-base-settings"), (5, 4, 3, 4, 5)):
        answer(card_id, grade, -1, "new")
    store.set_flags(P + "bert-acronym", suspended=True)
    store.set_flags(P + "attention-projections", buried_until=day(2))


@pytest.fixture
def lessons(tmp_path):
    """The frozen lesson, and a copy without one item: the CLI syncs it, so that card is removed."""
    text = (GOLDEN / "bert-basics.toml").read_text(encoding="utf-8")
    blocks = text.split("\n[[item]]\n")
    kept = [block for block in blocks if not block.startswith(f'id = "{REMOVED}"\n')]
    assert len(kept) == len(blocks) - 1
    full, edited = tmp_path / "full" / "bert-basics.toml", tmp_path / "edited" / "bert-basics.toml"
    for path, body in ((full, text), (edited, "\n[[item]]\n".join(kept))):
        path.parent.mkdir()
        path.write_text(body, encoding="utf-8")
    return full, edited


@pytest.fixture
def filled(lessons, monkeypatch):
    """The database named by BERTDRILL_DB, holding the known history; the clock set to today."""
    full, edited = lessons
    store = Store.open()
    cards = compile_lesson(read_lesson(full))
    store.sync(cards)
    history(store, cards)
    store.sync(compile_lesson(read_lesson(edited)))
    monkeypatch.setenv("BERTDRILL_NOW", NOW)
    yield store, edited
    store.close()


def test_known_history_figures_from_the_store(filled):
    store, _ = filled
    assert store.answer_count() == 35
    first = stats.heatmap_start(TODAY)
    per_day = store.reviews_per_day(first, TODAY)
    assert sum(per_day.values()) == 31  # four of the mature card's answers are older than 26 weeks
    assert {offset: per_day[day(offset)] for offset in (-5, -4, -3, -2, -1)} == {-5: 1, -4: 2, -3: 4, -2: 2, -1: 5}
    assert len(per_day) == 22 and stats.heatmap(per_day, TODAY).top == 4
    # yesterday ends a run of 5 (the leech waited from day -24); the longest is the leech's 16 days and the mature
    # card's 5 before them: nothing was due from its last answer on day -128 until the leech's first on day -40
    assert store.streaks(TODAY) == (5, 21)
    assert store.streaks(day(1)) == (0, 21)
    forecast = dict(store.forecast(TODAY, 14))
    assert {d: n for d, n in forecast.items() if n} == {day(0): 6, day(2): 1, day(4): 1, day(12): 1}
    retention = store.retention()
    assert (retention.young_passed, retention.young_total, retention.mature_passed, retention.mature_total) == (12, 21, 1, 1)
    assert store.card_states(TODAY) == {"new": 20, "learning": 7, "young": 1, "mature": 1, "suspended": 1, "removed": 1}
    assert store.average_ef() == pytest.approx(2660 / 11 / 100)
    [leech] = store.leeches()
    assert (leech.card_id, leech.schedule.lapses, leech.schedule.ef100, leech.leech) == (P + "bert-vs-gpt", 8, 130, True)
    assert [(s.card_id, s.schedule.ef100) for s in store.hardest(3)] == [
        (P + "bert-vs-gpt", 130), (P + "head-size@bert-base", 228), (P + "fine-tuning", 236)]


def test_the_figures_of_every_card_join_no_schedule_to_its_card_and_are_the_joins(filled, monkeypatch):
    """Over every lesson, the schedules are counted without joining each to its card: the cards no review shows
    (removed, practice) are read from their own index and left out by id. The figures are those of the join, which
    a lesson filter, or more hidden cards than are listed, still takes."""
    from sqlalchemy import event

    from bertdrill.adapters.store import reports

    store, _ = filled
    statements: list[str] = []
    event.listen(store.engine, "before_cursor_execute", lambda *args: statements.append(args[2]))

    def figures() -> tuple[object, ...]:
        return (store.card_states(TODAY), store.average_ef(), store.forecast(TODAY, 14), store.leeches(),
                store.card_figures(TODAY), store.hardest(8), store.due_count(TODAY), store.due_count(day(4)))

    without_join = figures()
    counted = [statement for statement in statements if "FROM schedule" in statement]
    assert counted and not any("JOIN card" in statement for statement in counted)
    hidden = [statement for statement in statements if "FROM card" in statement and "JOIN" not in statement]
    with store.engine.connect() as connection:
        plan = connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {hidden[0]}", (1001, 0)).all()
    assert "ix_card_hidden" in str(plan)  # the hidden cards are found by their index, not a pass over the cards
    states = store.card_states(TODAY)
    assert states[CardStage.REMOVED] == 1 and sum(states.values()) == 31
    assert without_join[4] == CardFigures(store.card_states(TODAY), store.average_ef(), store.leeches())  # in one pass
    assert without_join[-2:] == (6, 8)  # the forecast's: today's 6 (the removed card's schedule left out), day 4's

    statements.clear()
    monkeypatch.setattr(reports, "LISTED", 0)  # more hidden cards than are listed: each schedule is joined
    assert figures() == without_join
    assert any("JOIN card" in statement for statement in statements)


def test_the_screens_reports_read_the_hidden_cards_by_one_statement(filled, lessons):
    """The card figures, the hardest cards and the forecast leave the hidden cards out by one statement (each
    statement SQLAlchemy first meets in a process is about 1 ms to build and compile), and the hardest cards' two
    statements by one read of it; the removed cards' schedules are counted from what it found, with no statement
    when none is removed. The figures are those counted apart."""
    from sqlalchemy import event

    store, _ = filled
    statements: list[str] = []
    event.listen(store.engine, "before_cursor_execute", lambda *args: statements.append(" ".join(args[2].split())))
    figures, hardest, forecast = store.card_figures(TODAY), store.hardest(8), store.forecast(TODAY, 14)
    hidden = [statement for statement in statements if statement.startswith("SELECT card.")]
    # the card figures and their leeches (there is one), the hardest (once for two statements), the forecast
    assert len(hidden) == 4 and len(set(hidden)) == 1
    assert figures == CardFigures(store.card_states(TODAY), store.average_ef(), store.leeches())
    assert figures.states[CardStage.REMOVED] == 1
    assert [state.card_id for state in hardest[:3]] == [P + "bert-vs-gpt", P + "head-size@bert-base", P + "fine-tuning"]
    assert {d: n for d, n in forecast if n} == {day(0): 6, day(2): 1, day(4): 1, day(12): 1}

    full, _edited = lessons
    store.sync(compile_lesson(read_lesson(full)))  # the removed card back in its lesson: none removed
    statements.clear()
    assert store.card_figures(TODAY).states[CardStage.REMOVED] == 0
    assert not any("card_id IN" in statement for statement in statements)  # no count of removed cards' schedules
    assert sum("FROM schedule" in statement for statement in statements) == 2  # the pass, the leech listed


def test_the_forecast_and_the_hardest_cards_are_found_by_one_pass(filled, monkeypatch):
    """Over every lesson, the forecast's pass over the schedules review does not show on their due day (here one
    suspended, one buried, the removed and the practice card's) finds the cards at SM-2's floor too (here the
    leech): the due days' index and that one pass, where each was a pass of its own; more cards than the floor
    holds are read from above it in the same unit. The figures are those :meth:`forecast` and :meth:`hardest`
    give, for any number of cards, with a lesson filter, and with more hidden cards than are listed (joined)."""
    from sqlalchemy import event

    from bertdrill.adapters.store import reports

    store, _ = filled
    statements: list[str] = []
    event.listen(store.engine, "before_cursor_execute", lambda *args: statements.append(args[2]))
    forecast, [leech] = store.forecast_and_hardest(TODAY, 14, 1)
    schedules = [statement for statement in statements if "FROM schedule" in statement]
    assert len(schedules) == 2 and "GROUP BY schedule.due" in schedules[0]  # the due days' index, one pass
    assert leech.card_id == P + "bert-vs-gpt" and leech.schedule.ef100 == 130
    for listed in (1000, 0):
        monkeypatch.setattr(reports, "LISTED", listed)
        for lessons in (None, ["bert-basics"], ["other"]):
            for limit in (1, 2, 3, 8, 40):
                assert store.forecast_and_hardest(TODAY, 14, limit, lessons=lessons) == (
                    store.forecast(TODAY, 14, lessons=lessons), store.hardest(limit, lessons=lessons)), (listed, limit)
    assert {d: n for d, n in forecast if n} == {day(0): 6, day(2): 1, day(4): 1, day(12): 1}
    assert [state.card_id for state in store.forecast_and_hardest(TODAY, 14, 3)[1]] == [
        P + "bert-vs-gpt", P + "head-size@bert-base", P + "fine-tuning"]


def test_lesson_filter(filled):
    store, _ = filled
    assert store.answer_count(lessons=["other"]) == 0
    assert store.streaks(TODAY, lessons=["other"]) == (0, 0)
    assert store.leeches(lessons=["other"]) == [] and store.hardest(lessons=["other"]) == []
    assert store.average_ef(lessons=["other"]) is None
    assert store.retention(lessons=["bert-basics"]) == store.retention()


def test_golden_screen(cli, filled, monkeypatch):
    from bertdrill.cli.base import LazyConsole, out

    _, edited = filled
    assert isinstance(out, LazyConsole)  # typed as the Console it stands for
    monkeypatch.setattr(out.get(), "width", 100)
    result = cli("stats", "--file", str(edited))
    assert result.exit_code == 0, result.stderr
    golden = GOLDEN / "stats" / "screen-100.txt"
    if os.environ.get("BERTDRILL_UPDATE_GOLDEN"):
        golden.write_text(result.stdout, encoding="utf-8")
    assert result.stdout == golden.read_text(encoding="utf-8"), \
        "the stats screen changed; if intended, rerun with BERTDRILL_UPDATE_GOLDEN=1"
    assert "\x1b" not in result.stdout  # NO_COLOR: glyphs and words only


def test_screen_reads_without_colour(cli, filled):
    _, edited = filled
    lines = cli("stats", "--file", str(edited), "--days", "3").stdout.splitlines()
    assert "Reviews, last 26 weeks  31 answers on 22 of 176 days" in lines
    mondays = next(line for line in lines if line.startswith("Mon "))
    assert mondays.endswith("· ·") and len(mondays.split()) == 27  # 26 weeks; nothing yet today
    sundays = next(line for line in lines if line.startswith("Sun "))
    assert sundays.endswith("█") and len(sundays.split()) == 26  # yesterday's 5 answers fill a cell
    assert "    · none   ░ 1   ▒ 2   ▓ 3   █ 4–5" in lines
    assert "Streak  5 days now · longest 21 days  (answer a card today to keep it)" in lines
    assert [line for line in lines if line.startswith("  Mon Mar  3")] == ["  Mon Mar  3 6 " + "█" * 40]
    assert "  Wed Mar  5 1 " + "██████▋" in lines  # 1 of 6 on 40 cells
    assert "  young    57.1%  12 of 21  32.9 points below  (interval under 21 days)" in lines
    assert "  mature  100.0%    1 of 1  10.0 points above  (interval 21 days or more)" in lines
    assert "  new 20 · learning 7 · young 1 · mature 1 · suspended 0 · removed 1" not in lines
    assert "  new 20 · learning 7 · young 1 · mature 1 · suspended 1 · removed 1" in lines  # the practice card: not counted
    assert "Cards: 31  average EF 2.42" in lines


def test_leech_and_hardest_lists_show_prompts_in_the_language(cli, filled):
    _, edited = filled
    lines = cli("stats", "--file", str(edited), "--lang", "tr").stdout.splitlines()
    leech = lines.index("Sülükler: 1  8 ya da daha çok unutma; yeniden yaz ya da askıya al")
    assert lines[leech + 1].startswith("    8 unutma  bert-basics/bert-vs-gpt  BERT'i GPT'den ayıran")
    hardest = lines.index("En zor kartlar  en düşük EF önce, sülükler hariç")
    assert [line.split("  ")[1:3] for line in lines[hardest + 1:hardest + 3]] == [
        ["EF 2,28", "bert-basics/head-size@bert-base"], ["EF 2,36", "bert-basics/fine-tuning"]]


def test_json_has_the_same_figures(cli, filled):
    _, edited = filled
    result = cli("stats", "--file", str(edited), "--json", "--days", "5")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["study_day"] == "2025-03-03" and data["lesson"] is None and data["answers"] == 35
    heat = data["heatmap"]
    assert (heat["first"], heat["last"], heat["weeks"], heat["answers"], heat["active_days"], heat["top"]) == (
        "2024-09-09", "2025-03-03", 26, 31, 22, 4)
    assert [(level["glyph"], level["from"], level["to"]) for level in heat["levels"]] == [
        ("·", 0, 0), ("░", 1, 1), ("▒", 2, 2), ("▓", 3, 3), ("█", 4, 5)]
    assert heat["days"]["2025-03-02"] == 5 and "2024-09-08" not in heat["days"]
    assert data["streak"] == {"current": 5, "longest": 21}
    assert data["forecast"] == [{"day": "2025-03-03", "due": 6}, {"day": "2025-03-04", "due": 0},
                                {"day": "2025-03-05", "due": 1}, {"day": "2025-03-06", "due": 0},
                                {"day": "2025-03-07", "due": 1}]
    assert data["retention"] == {"target": 0.9, "young": {"passed": 12, "total": 21, "rate": 12 / 21},
                                 "mature": {"passed": 1, "total": 1, "rate": 1.0}}
    assert data["cards"] == {"new": 20, "learning": 7, "young": 1, "mature": 1, "suspended": 1, "removed": 1}
    assert data["average_ef"] == 2.42
    assert data["leeches"] == [{"card": P + "bert-vs-gpt", "prompt": data["leeches"][0]["prompt"], "ef": 1.3,
                                "lapses": 8, "suspended": False}]
    assert data["leeches"][0]["prompt"].startswith("What is the main architectural feature")
    assert [(card["card"], card["ef"]) for card in data["hardest"]] == [
        (P + "head-size@bert-base", 2.28), (P + "fine-tuning", 2.36)]
    assert data["database"] == os.environ["BERTDRILL_DB"]


def test_one_lesson_only(cli, filled):
    _, edited = filled
    lines = cli("stats", "--file", str(edited), "--lesson", "bert-basics").stdout.splitlines()
    assert lines[0] == "Progress · lesson bert-basics · study day 2025-03-03"
    bad = cli("stats", "--file", str(edited), "--lesson", "nope")
    assert bad.exit_code == 1 and "no lesson with this id" in bad.stderr


def test_empty_store_says_so(cli, monkeypatch):
    monkeypatch.setenv("BERTDRILL_NOW", NOW)
    result = cli("stats")
    assert (result.exit_code, result.stdout) == (
        0, "No reviews yet, so there is nothing to chart. Start with: bertdrill review\n")
    one = cli("stats", "--lesson", "bert-basics")
    assert one.stdout == ("No reviews yet in lesson bert-basics, so there is nothing to chart. "
                          "Start with: bertdrill review --lesson bert-basics\n")
    data = json.loads(cli("stats", "--json").stdout)
    assert data["answers"] == 0 and data["streak"] == {"current": 0, "longest": 0}
    assert data["cards"]["new"] == 32 and data["leeches"] == [] and data["average_ef"] is None
    assert data["retention"]["young"] == {"passed": 0, "total": 0, "rate": None}


def test_bad_options(cli):
    assert cli("stats", "--days", "0").exit_code == 2
    assert cli("stats", "--days", "400").exit_code == 2


def test_help_is_one_line_summary(cli):
    result = cli("--help")
    assert "stats" in result.stdout and "Show your progress" in result.stdout


# --------------------------------------------------------------------------- leeches in review


def almost_a_leech(card_id: str) -> Store:
    """A store where ``card_id`` has lapsed 7 times and is due today: one more wrong answer makes it a leech."""
    store = Store.open()
    from bertdrill.adapters.lessons import all_cards, load_lessons

    store.sync(all_cards(load_lessons()))
    for i in range(15):  # right, wrong, right ...: 7 lapses, and due today after the last right answer
        record_attempt(store, card_id, 4 if i % 2 == 0 else 1, kind=AnswerKind.NEW if i == 0 else AnswerKind.REVIEW,
                       moment=datetime.combine(day(-15 + i), datetime.min.time(), ZONE) + timedelta(hours=9))
    before = store.state(card_id)
    assert (before.schedule.lapses, before.leech, before.schedule.due) == (7, False, TODAY)
    return store


def test_review_tags_a_new_leech_with_leech_action_tag(cli, monkeypatch):
    card_id = P + "bert-definition"
    store = almost_a_leech(card_id)
    monkeypatch.setenv("BERTDRILL_NOW", NOW)
    result = cli("review", "--new", "0", "--leech-action", "tag", input="1\n5\n")  # the 8th lapse, then the re-drill
    assert result.exit_code == 0, result.stderr
    warning = ("Leech: bert-basics/bert-definition has lapsed 8 times, now tagged a leech: rewrite it, "
               "or suspend it when it comes back.")
    lines = result.stdout.splitlines()
    assert lines.count(warning) == 1  # once, the moment it happened; not again in the re-drill
    assert lines[lines.index(warning) - 1].startswith("Saved: grade 1 ")
    after = store.state(card_id)
    assert (after.schedule.lapses, after.leech, after.suspended) == (8, True, False)
    store.close()


def test_review_suspends_a_card_the_moment_it_becomes_a_leech(cli, monkeypatch):
    """As in Anki: at 8 lapses the card is suspended, with a one-line notice; it does not come back today."""
    card_id = P + "bert-definition"
    store = almost_a_leech(card_id)
    monkeypatch.setenv("BERTDRILL_NOW", NOW)
    result = cli("review", "--new", "0", input="1\n")
    assert result.exit_code == 0, result.stderr
    # issue 21: the session ends here, so no undo is offered that could not be given
    notice = "Leech: bert-basics/bert-definition has lapsed 8 times and is suspended: rewrite it."
    lines = result.stdout.splitlines()
    assert lines.count(notice) == 1
    assert lines[lines.index(notice) - 1] == "Saved: grade 1 · next review tomorrow (2025-03-04)."
    assert "Session over: 1 answered, 0 correct, 0 s. Due tomorrow: 0." in result.stdout  # no re-drill of it
    after = store.state(card_id)
    assert (after.schedule.lapses, after.leech, after.suspended) == (8, True, True)
    stats = cli("stats", "--json")
    assert [leech["card"] for leech in json.loads(stats.stdout)["leeches"]] == [card_id]  # stats lists it
    store.close()


def test_undo_takes_back_the_answer_and_the_leechs_suspension(cli, monkeypatch):
    card_id = P + "bert-definition"
    store = almost_a_leech(card_id)
    monkeypatch.setenv("BERTDRILL_NOW", NOW)
    result = cli("review", "--new", "1", input="1\n:undo\n")  # undone at the next card's prompt
    # the line protocol's command is offered, since a next card's prompt follows
    assert ("Leech: bert-basics/bert-definition has lapsed 8 times and is suspended: rewrite it. (:undo undoes "
            "this)") in result.stdout
    assert "Undone: bert-basics/bert-definition is back as it was." in result.stdout
    after = store.state(card_id)
    assert (after.schedule.lapses, after.leech, after.suspended) == (7, False, False)
    store.close()


def test_environment_chooses_the_leech_action(cli, monkeypatch):
    card_id = P + "bert-definition"
    store = almost_a_leech(card_id)
    monkeypatch.setenv("BERTDRILL_NOW", NOW)
    monkeypatch.setenv("BERTDRILL_LEECH_ACTION", "tag")
    result = cli("review", "--new", "0", input="1\n5\n")
    assert "now tagged a leech" in result.stdout and not store.state(card_id).suspended
    monkeypatch.setenv("BERTDRILL_LEECH_ACTION", "delete")
    refused = cli("review", "--new", "0", input="")
    assert refused.exit_code == 2 and "--leech-action" in refused.stderr
    store.close()


def test_the_leech_option_wins_over_the_environment(cli, monkeypatch):
    store = almost_a_leech(P + "bert-definition")
    monkeypatch.setenv("BERTDRILL_NOW", NOW)
    monkeypatch.setenv("BERTDRILL_LEECH_ACTION", "tag")
    assert "is suspended" in cli("review", "--new", "0", "--leech-action", "suspend", input="1\n").stdout
    store.close()


def test_leech_warning_is_escaped():
    from bertdrill.cli.review import leech_warning

    assert "\\[bold]" in leech_warning("x/[bold]y", 8)


# --------------------------------------------------------------------------- practice check records


@pytest.fixture
def practice_card():
    from bertdrill.adapters.lessons import all_cards, load_lessons

    [card] = [card for card in all_cards(load_lessons()) if card.kind == "practice"]
    return card


def practice_answers(db: str | None = None):
    store = Store.open(db)
    try:
        return store.answers(P + "count-bert-base"), store.state(P + "count-bert-base")
    finally:
        store.close()


def test_practice_check_records_a_right_attempt(cli, tmp_path, monkeypatch, practice_card):
    monkeypatch.setenv("BERTDRILL_NOW", NOW)
    script = tmp_path / "model.py"
    script.write_text(practice_card.solution["en"], encoding="utf-8")
    result = cli("practice", "check", str(script))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "Saved: grade 5 · check it again tomorrow (2025-03-04)."
    [answer], state = practice_answers()
    assert (answer.kind, answer.grade, answer.study_day, answer.typed) == (
        "practice", 5, TODAY, "23837184 7087872 590592\n109482240\n0.666")
    started = datetime(2025, 3, 3, 7, 0, tzinfo=UTC)  # BERTDRILL_NOW, and the clock ran on
    assert started < answer.reviewed_at < started + timedelta(seconds=10)
    assert 0 < answer.duration_ms < 10_000
    assert (state.schedule.repetitions, state.schedule.due) == (1, day(1))


@pytest.mark.parametrize("script, grade", [
    ('print("23837184 7087872 590592")\nprint(109482239)\nprint("0.666")\n', 2),  # ran, one number wrong
    ("raise SystemExit('no')\n", 1),  # did not run properly
    ("pass\n", 1),  # printed nothing
])
def test_practice_check_records_wrong_attempts_lower(cli, tmp_path, monkeypatch, script, grade):
    monkeypatch.setenv("BERTDRILL_NOW", NOW)
    path = tmp_path / "model.py"
    path.write_text(script, encoding="utf-8")
    result = cli("practice", "check", str(path))
    assert result.exit_code == 1
    assert f"Saved: grade {grade} · check it again tomorrow (2025-03-04)." in result.stdout
    [answer], state = practice_answers()
    assert (answer.kind, answer.grade) == ("practice", grade)
    assert (state.schedule.repetitions, state.schedule.ef100) == (0, 250 + {2: -32, 1: -54}[grade])


def test_practice_check_twice_a_day_moves_the_schedule_once(cli, tmp_path, monkeypatch, practice_card):
    monkeypatch.setenv("BERTDRILL_NOW", NOW)
    wrong, right = tmp_path / "wrong.py", tmp_path / "right.py"
    wrong.write_text("print(1)\n", encoding="utf-8")
    right.write_text(practice_card.solution["en"], encoding="utf-8")
    cli("practice", "check", str(wrong))
    second = cli("practice", "check", str(right))
    assert "Saved: grade 5 (already checked today: only the first check of a day moves the schedule)." in second.stdout
    answers, state = practice_answers()
    assert [answer.grade for answer in answers] == [2, 5]
    assert (state.schedule.repetitions, state.schedule.due) == (0, day(1))  # as the first check left it


def test_practice_check_uses_db_and_fails_before_running_on_a_bad_one(cli, tmp_path, monkeypatch, practice_card):
    monkeypatch.setenv("BERTDRILL_NOW", NOW)
    marker = tmp_path / "ran"
    script = tmp_path / "model.py"
    script.write_text(f"open({str(marker)!r}, 'w').close()\n" + practice_card.solution["en"], encoding="utf-8")
    other = tmp_path / "other.db"
    assert cli("practice", "check", "--db", str(other), str(script)).exit_code == 0
    assert marker.exists() and len(practice_answers(str(other))[0]) == 1
    assert not Path(os.environ["BERTDRILL_DB"]).exists()
    marker.unlink()
    folder = tmp_path / "a-folder"
    folder.mkdir()
    bad = cli("practice", "check", "--db", str(folder), str(script))
    assert (bad.exit_code, bad.stderr) == (1, f"Error: {folder} is a folder, not a database file\n")
    assert not marker.exists()  # the script never ran, so no attempt went unrecorded


# --------------------------------------------------------------------------- progress bars


def test_progress_is_quiet_off_a_terminal(capsys):
    from bertdrill.cli.base import progress

    assert list(progress(range(5), "Reading lessons", after=0)) == [0, 1, 2, 3, 4]
    assert capsys.readouterr().out == ""


def test_progress_shows_a_bar_on_a_terminal_once_work_is_slow(monkeypatch):
    import io

    from rich.console import Console

    from bertdrill.cli import base

    screen = io.StringIO()
    monkeypatch.setattr(base, "out", Console(file=screen, force_terminal=True, width=80))
    assert list(base.progress([1, 2, 3], "Syncing lessons", after=60)) == [1, 2, 3]
    assert screen.getvalue() == ""  # quick work never flickers
    assert list(base.progress([1, 2, 3], "Syncing lessons", after=0)) == [1, 2, 3]
    assert "Syncing lessons" in screen.getvalue() and "3/3" in screen.getvalue()


def test_lesson_text_is_shown_as_written_never_as_markup(cli, tmp_path, monkeypatch):
    lesson = tmp_path / "markup.toml"
    lesson.write_text('''[lesson]
id = "markup"
languages = ["en", "tr"]
title = { en = "Markup", tr = "İşaretleme" }

[[item]]
id = "tags"
kind = "fact"
question = { en = "What do [bold]x[/bold] and [/] print?", tr = "[bold]x[/bold] ve [/] ne yazar? İğüşöçı" }
answer = { en = "Themselves.", tr = "Kendilerini." }
''', encoding="utf-8")
    store = Store.open()
    store.sync(compile_lesson(read_lesson(lesson)))
    record_attempt(store, "markup/tags", 3, moment=datetime(2025, 3, 2, 9, tzinfo=ZONE), kind=AnswerKind.NEW)
    store.close()
    monkeypatch.setenv("BERTDRILL_NOW", NOW)
    english = cli("stats", "--file", str(lesson))
    assert english.exit_code == 0, english.stderr
    assert "  EF 2.36  markup/tags  What do [bold]x[/bold] and [/] print?" in english.stdout.splitlines()
    turkish = cli("stats", "--file", str(lesson), "--lang", "tr", "--json")
    assert json.loads(turkish.stdout)["hardest"][0]["prompt"] == "[bold]x[/bold] ve [/] ne yazar? İğüşöçı"


def test_a_narrow_terminal_never_wraps_a_number_from_its_percent_sign(cli, filled, monkeypatch):
    """Issue 21: at 60 columns the retention heading broke between "90" and "%"."""
    from bertdrill.cli.base import LazyConsole, out

    _, edited = filled
    assert isinstance(out, LazyConsole)  # typed as the Console it stands for
    monkeypatch.setattr(out.get(), "width", 60)
    monkeypatch.setattr(out.get(), "soft_wrap", False)
    lines = cli("stats", "--file", str(edited), "--days", "3").stdout.splitlines()
    assert not any(line.lstrip().startswith("%") for line in lines), lines
    assert any(line.endswith("90%") for line in lines), lines


def test_a_day_with_nothing_due_neither_breaks_nor_counts_in_a_streak():
    """issue 21: runs count the days studied; only a day when a card waited (owed) breaks one."""
    day = date(2025, 3, 3)
    studied = [day - timedelta(days=n) for n in (10, 9, 3)]
    assert stats.streaks(studied, [], day) == (3, 3)
    assert stats.streaks(studied, [(day - timedelta(days=6), day - timedelta(days=6))], day) == (1, 2)
    assert stats.streaks(studied, [(day - timedelta(days=1), day)], day) == (0, 3)  # yesterday owed: broken
    assert stats.streaks(studied, [(day, day)], day) == (3, 3)  # today can still be studied
    assert stats.streaks([], [], day) == (0, 0)
    assert stats.streaks([day + timedelta(days=1)], [], day) == (0, 0)  # after today: not counted


def test_stats_loads_neither_the_load_balancer_nor_the_exams_modules(tmp_path):
    """`stats` with no exam set and no load balancer chosen loads neither one's modules (FSRS's fit and evaluation
    come with the exam's; the load balancer's dataclasses cost every `status` and `stats` 2 ms), yet reads the
    scheduler setting, whose module is imported; nor the replay of a switch, nor the atomic writer when every lesson
    is in the cache already (the first review kept them)."""
    import subprocess
    import sys

    env = dict(os.environ, BERTDRILL_DB=str(tmp_path / "light.db"), BERTDRILL_CACHE=str(tmp_path / "cache"))
    subprocess.run([sys.executable, "-m", "bertdrill", "review", "--db", env["BERTDRILL_DB"], "--new", "1"],
                   input="5\n", capture_output=True, text=True, check=True, env=env)
    code = ("import sys; from bertdrill.cli import run; sys.argv = ['bertdrill', 'stats', '--db', sys.argv[1]]\n"
            "try:\n    run()\nexcept SystemExit:\n    pass\n"
            "print(*(name in sys.modules for name in ('bertdrill.adapters.store.scheduling',"
            " 'bertdrill.core.scheduling.spread', 'bertdrill.core.scheduling.exam', 'bertdrill.core.scheduling.replay',"
            " 'bertdrill.adapters.export.files')))")
    result = subprocess.run([sys.executable, "-c", code, env["BERTDRILL_DB"]], capture_output=True, text=True,
                            check=True, env=env)
    assert "Progress" in result.stdout, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1].split() == ["True", "False", "False", "False", "False"], result.stdout + result.stderr


def test_stats_and_status_make_none_of_the_records_their_start_never_uses(tmp_path):
    """`stats` and `status` (a store with answers) load none of the ports' records that a learner's start-up never
    makes (:mod:`bertdrill.ports.later`: each frozen dataclass costs about 0.5 ms to make), which are still the
    ports' records when asked for, and the store's ``Answer`` too."""
    import subprocess
    import sys

    import bertdrill.adapters.store
    import bertdrill.ports
    from bertdrill.ports import later

    env = dict(os.environ, BERTDRILL_DB=str(tmp_path / "light.db"), BERTDRILL_CACHE=str(tmp_path / "cache"))
    subprocess.run([sys.executable, "-m", "bertdrill", "review", "--db", env["BERTDRILL_DB"], "--new", "1"],
                   input="5\n", capture_output=True, text=True, check=True, env=env)
    for command in ("stats", "status"):
        code = (f"import sys; from bertdrill.cli import run; sys.argv = ['bertdrill', '{command}', '--db', sys.argv[1]]\n"
                "try:\n    run()\nexcept SystemExit:\n    pass\n"
                "print('bertdrill.ports.later' in sys.modules)")
        result = subprocess.run([sys.executable, "-c", code, env["BERTDRILL_DB"]], capture_output=True, text=True,
                                check=True, env=env)
        assert result.stdout.splitlines()[-1] == "False", command + result.stdout + result.stderr
    for name in ("Action", "Answer", "AnswerTimes", "ExamAsked", "FittedSet", "LessonExam", "PublishedLesson",
                 "SchedulerAsked"):
        assert getattr(bertdrill.ports, name) is getattr(later, name)
    assert bertdrill.adapters.store.Answer is later.Answer
    with pytest.raises(AttributeError):
        bertdrill.ports.Nothing  # noqa: B018 - the module's __getattr__ knows only its own records


def test_the_stores_modules_are_frozen_out_of_the_cycle_collector(tmp_path):
    """The store's modules (SQLModel, SQLAlchemy, the tables) load with the cycle collector paused and are frozen
    out of it: no full collection walks them while `stats` runs (30 of its ms on the 1M store)."""
    import subprocess
    import sys

    env = dict(os.environ, BERTDRILL_CACHE=str(tmp_path / "cache"))
    db = str(tmp_path / "frozen.db")
    subprocess.run([sys.executable, "-m", "bertdrill", "review", "--db", db, "--new", "1"], input="5\n",
                   capture_output=True, text=True, check=True, env=env)
    code = ("import gc, sys\n"
            "import bertdrill.cli as cli\n"
            "cli._ending = lambda: None\n"  # not the freeze at the end: what the command itself left
            "sys.argv = ['bertdrill', 'stats', '--db', sys.argv[1]]\n"
            "try:\n    cli.run()\nexcept SystemExit:\n    pass\n"
            "from sqlmodel import SQLModel\n"
            "from bertdrill.adapters.store.schema import SCHEDULE\n"
            "tracked = {id(each) for each in gc.get_objects()}\n"  # the frozen ones are in no generation
            "print(gc.get_stats()[2]['collections'], id(SQLModel) in tracked, id(SCHEDULE) in tracked)")
    result = subprocess.run([sys.executable, "-c", code, db], capture_output=True, text=True, check=True, env=env)
    assert "Progress" in result.stdout, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1].split() == ["0", "False", "False"], result.stdout + result.stderr
