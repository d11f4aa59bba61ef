"""``bertdrill review`` and ``bertdrill status``: the daily loop, in a terminal or scripted.

In a terminal the session is interactive: single keys (then Enter) for the
commands, Enter to reveal or to accept a suggested grade. When standard input
is not a terminal it follows the line protocol of docs/review.md: each prompt
takes exactly one line, and commands are whole lines (``:undo``), so an answer
such as ``b`` is never taken for a command.

Exit codes: 0 after ``q``/``:quit``, the end of the queue or the end of input
(Ctrl-D); 130 after Ctrl-C. Either way the summary is printed, and every answer
acknowledged with ``Saved:`` is already in the database.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import date
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, assert_never

import typer

from bertdrill.cli.base import (
    DbOption,
    FilesOption,
    LangOption,
    LearnerOption,
    LessonOption,
    LimitOption,
    NewOption,
    RolloverOption,
    app,
    card_count,
    chosen_lessons,
    chosen_scheduler,
    clock,
    day_count,
    escape,
    managing,
    number,
    open_indexed_store,
    out,
    print_json,
    scheduler_of,
    settled,
    texts_language,
)
from bertdrill.core.errors import BertdrillError, StoreError
from bertdrill.core.i18n import N_, _, ngettext
from bertdrill.core.limits import DEFAULT_NEW, DEFAULT_REVIEWS, DEFAULT_ROLLOVER

if TYPE_CHECKING:
    from typing import BinaryIO

    from bertdrill.adapters.lessons import LessonIndex
    from bertdrill.adapters.remote.login import Login
    from bertdrill.app.session import Entry, Outcome, Session
    from bertdrill.core.cards import Card
    from bertdrill.core.diagnosis import Diagnoser
    from bertdrill.core.grading import Verdict
    from bertdrill.core.kinds import Kind
    from bertdrill.core.lesson import Lesson
    from bertdrill.core.limits import Limits
    from bertdrill.core.scheduling.state import AnswerKind, NextStates
    from bertdrill.ports import Status

MAX_LINE_BYTES = 4096  # longer input lines are cut here (the rest is read and dropped)
ECHO_CHARS = 200  # how much of a line read in line mode is echoed back
COMMANDS = {"undo": "undo", "suspend": "suspend", "bury": "bury", "quit": "quit"}
KEYS = {"u": "undo", "s": "suspend", "b": "bury", "q": "quit"}
UNKNOWN = "unknown"  # a line that looks like a command (":x") but is none
LETTERS = "abcdefghij"  # choice options, as grading reads them


GRADE_WORDS = (N_("blackout"), N_("wrong"), N_("wrong, but it felt familiar"), N_("right, with effort"),
               N_("right, after a pause"), N_("right at once"))
"""What each grade 0-5 means, for the legend here and the grade buttons of the web page."""


def grades_legend() -> str:
    return " · ".join(f"{grade} {_(words)}" for grade, words in enumerate(GRADE_WORDS))



class LeechChoice(StrEnum):  # the CLI's copy of session.LeechAction: the session module loads only in `review`
    suspend = "suspend"
    tag = "tag"


class NumbersChoice(StrEnum):  # the CLI's copy of core.lesson.VariantMode, so --help loads no lesson code
    lesson = "lesson"
    fixed = "fixed"
    fresh = "fresh"
    mature = "mature"


NumbersOption = Annotated[NumbersChoice, typer.Option(
    "--numbers", envvar="BERTDRILL_NUMBERS", case_sensitive=False,
    help="Numeric cards: ask each lesson's own sets (fixed), fresh numbers from its [variants] at every review "
         "(fresh), its own sets until a card is mature and then fresh ones (mature), or as the lesson says.")]


SiblingsOption = Annotated[bool, typer.Option(
    "--bury-siblings/--no-bury-siblings", envvar="BERTDRILL_BURY_SIBLINGS",
    help="Once a card is answered, keep until tomorrow the cards whose answer it showed: its item's other "
         "cards (parameter sets, table pairs) and the cards its question, answer or explanation gives away "
         "(as Anki buries siblings).")]


LeechOption = Annotated[LeechChoice, typer.Option(
    "--leech-action", envvar="BERTDRILL_LEECH_ACTION", case_sensitive=False,
    help="What happens to a card that lapses 8 times: suspend it (as Anki does) or only tag it.")]


class Parts(Mapping[str, "Lesson"]):
    """Each lesson as the review knows it so far: the part of it holding the items of the cards built
    (:meth:`bertdrill.adapters.lessons.LessonIndex.built`), for fresh numbers and diagnosis."""

    def __init__(self, indexes: Sequence[LessonIndex]):
        self.indexes = {index.id: index for index in indexes}

    def __getitem__(self, lesson_id: str) -> Lesson:
        return self.indexes[lesson_id].built()

    def __iter__(self) -> Iterator[str]:
        return iter(self.indexes)

    def __len__(self) -> int:
        return len(self.indexes)


class Diagnosers(Mapping[str, "Diagnoser"]):
    """Each lesson's diagnoser, made the first time one of its cards is graded."""

    def __init__(self, lessons: Mapping[str, Lesson]):
        self.lessons = lessons
        self.made: dict[str, Diagnoser] = {}

    def __getitem__(self, lesson_id: str) -> Diagnoser:
        if lesson_id not in self.made:
            from bertdrill.core.diagnosis import Diagnoser

            self.made[lesson_id] = Diagnoser.for_lesson(self.lessons[lesson_id])
        return self.made[lesson_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self.lessons)

    def __len__(self) -> int:
        return len(self.lessons)


class Quit(Exception):
    """The learner asked to stop (q, :quit)."""


class Command(Exception):
    """A command typed at a prompt: undo, suspend, bury or quit."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


# --------------------------------------------------------------------------- commands


@app.command()
def review(
    ctx: typer.Context,
    lesson_id: LessonOption = None,
    lang: LangOption = "",
    new: NewOption = DEFAULT_NEW,
    limit: LimitOption = DEFAULT_REVIEWS,
    db: DbOption = None,
    learner: LearnerOption = None,
    paths: FilesOption = None,
    rollover_hour: RolloverOption = DEFAULT_ROLLOVER,
    leech_action: LeechOption = LeechChoice.suspend,
    exam: Annotated[str | None, typer.Option(
        "--exam", metavar="YYYY-MM-DD", show_default=False,
        help="Plan for an exam on this day (FSRS): every card's predicted recall on it should reach the target; "
             "`off` ends the plan. With --lesson, the exam is that lesson's alone (kept beside the others).")] = None,
    exam_target: Annotated[float | None, typer.Option(
        "--exam-target", metavar="R", show_default=False,
        help="With --exam: the predicted recall every card should have on the exam day, 0.70 to 0.99 "
             "(default 0.90).")] = None,
    numbers: NumbersOption = NumbersChoice.lesson,
    bury_siblings: SiblingsOption = True,
    cram: Annotated[bool, typer.Option(
        "--cram", help="Go through every card of the lessons (--lesson), due or not, as Anki's custom study: "
                       "answers are logged as cram and never change a schedule; no daily limit.")] = False,
) -> None:
    """Review today's cards: due ones first, then new ones. Every answer is saved at once.

    Keys: u undo · s suspend · b bury until tomorrow · q quit (then Enter). With standard
    input not a terminal, answers are read as lines; see docs/review.md. After `bertdrill login`, the
    review is the class's, on its server (--db reviews a database of your own instead).
    """
    import secrets

    if exam_target is not None and exam is None:
        raise BertdrillError(_("--exam-target goes with --exam: bertdrill review --exam YYYY-MM-DD --exam-target R"))
    if db is None and (login := _class_login()) is not None:
        if paths or learner is not None:
            raise BertdrillError(_("in a class the lessons and learners are the teacher's: --file and --learner are "
                                   "for a database of your own (--db), or run bertdrill logout"))
        # the class's daily limits, or fewer: a learner's own --new or --limit (or its variable) lowers them
        asked = {name: value for name, value in (("new", new), ("limit", limit))
                 if (source := ctx.get_parameter_source(name)) is not None and source.name != "DEFAULT"}
        raise typer.Exit(class_review(login, lesson_id=lesson_id, lang=lang, numbers=numbers.value,
                                      bury_siblings=bury_siblings, cram=cram, new=asked.get("new"),
                                      limit=asked.get("limit"), exam=exam, exam_target=exam_target))

    from bertdrill.app.deck import Deck
    from bertdrill.app.session import LeechAction, Limits, Session
    from bertdrill.app.variants import FreshNumbers
    from bertdrill.cli.base import load_indexed
    from bertdrill.core.lesson import VariantMode

    loaded = load_indexed(paths)  # each lesson as its index: a card is built when the session shows it
    lang = texts_language(chosen_lessons(loaded, lesson_id), lang)
    store, chosen, lessons = open_indexed_store(db, paths, lesson_id, lang, loaded=loaded, learner=learner)
    parts = Parts(loaded)
    mode = None if numbers is NumbersChoice.lesson else VariantMode(numbers.value)
    fresh = FreshNumbers(parts, mode=mode, salt=secrets.randbits(32))  # each session draws its own numbers
    with store:
        if exam is not None:
            from bertdrill.cli.exam import set_exam

            set_exam(store, [card for index in chosen for card in index.cards], exam, exam_target, rollover_hour,
                     new=new, limit=limit, lesson=lesson_id)
        session = settled(Session(store, Deck(chosen), clock=clock(), limits=Limits(new, limit, rollover_hour),
                                  lessons=lessons, leech_action=LeechAction(leech_action.value),
                                  scheduler=chosen_scheduler(store), follow=scheduler_of, numbers=fresh,
                                  bury_siblings=bury_siblings, cram=cram, actions=managing(store)))
        reader = TerminalInput() if sys.stdin.isatty() else LineInput(sys.stdin.buffer)
        code = Review(session, reader, lang, Diagnosers(parts)).run()
    raise typer.Exit(code)


def class_review(login: Login, *, lesson_id: str | None, lang: str, numbers: str, bury_siblings: bool,
                 cram: bool, new: int | None = None, limit: int | None = None, exam: str | None = None,
                 exam_target: float | None = None) -> int:
    """``bertdrill review`` in the class the learner logged in to (:mod:`bertdrill.cli.remote`); the exit code.
    ``exam``: the learner's exam plan is set first, by the server (``--exam DAY|off``, of ``lesson_id`` if given)."""
    import secrets

    from bertdrill.adapters.remote.client import ClassStore
    from bertdrill.app.deck import Deck
    from bertdrill.app.session import LeechAction, Limits, Session
    from bertdrill.app.variants import FreshNumbers
    from bertdrill.cli.base import chosen_lessons, scheduler_of
    from bertdrill.cli.remote import class_lessons, server_clock
    from bertdrill.core import i18n
    from bertdrill.core.cards import compile_lesson
    from bertdrill.core.lesson import VariantMode

    with ClassStore(login, language=lang or i18n.language()) as store:
        store.connection.language = i18n.language()  # the server's messages in the interface's language
        info = store.class_info()
        lessons = class_lessons(info)
        chosen = chosen_lessons(lessons, lesson_id)
        store.language = texts_language(chosen, lang or i18n.language())
        if exam is not None:
            from bertdrill.cli.exam import exam_day, show_plan
            from bertdrill.ports import ExamAsked

            show_plan(store.plan_exam(ExamAsked(exam_day(exam), exam_target, lesson_id)))
        out.print(_("Reviewing in the class at {server} as {name} (bertdrill logout to review on your own).").format(
            server=login.server, name=info.member), style="dim")
        by_id = {lesson.id: lesson for lesson in lessons}
        cards = [card for lesson in chosen for card in compile_lesson(lesson)]
        mode = None if numbers == "lesson" else VariantMode(numbers)
        session = settled(Session(store, Deck.of(cards), clock=server_clock(info),
                                  limits=Limits(min(info.new, new if new is not None else info.new),
                                                min(info.reviews, limit if limit is not None else info.reviews),
                                                info.rollover_hour),
                                  lessons=[lesson.id for lesson in chosen], leech_action=LeechAction(info.leech_action),
                                  scheduler=scheduler_of(store.scheduler_choice()), follow=scheduler_of,
                                  numbers=FreshNumbers(by_id, mode=mode, salt=secrets.randbits(32)),
                                  bury_siblings=bury_siblings, cram=cram, actions=store))
        reader = TerminalInput() if sys.stdin.isatty() else LineInput(sys.stdin.buffer)
        return Review(session, reader, store.language, Diagnosers(by_id)).run()


def _class_status(login: Login, lesson_id: str | None, lang: str) -> tuple[Status, date, int, Limits, str]:
    """``status`` in the class: the figures, the server's study day, the class's cards and limits, where."""
    from bertdrill.adapters.remote.client import ClassStore
    from bertdrill.cli.base import chosen_lessons
    from bertdrill.cli.remote import class_lessons
    from bertdrill.core.cards import compile_lesson
    from bertdrill.core.limits import Limits
    from bertdrill.core.scheduling.state import study_day

    with ClassStore(login, language=lang) as store:
        info = store.class_info()
        chosen = chosen_lessons(class_lessons(info), lesson_id)
        texts_language(chosen, lang)
        today = study_day(info.now, info.rollover_hour)
        found = store.status(today, lessons=[lesson.id for lesson in chosen])
        total = sum(card.kind.reviewed for lesson in chosen for card in compile_lesson(lesson))
        return found, today, total, Limits(info.new, info.reviews, info.rollover_hour), store.where


def _class_login() -> Login | None:
    from bertdrill.cli.remote import saved

    return saved()


@app.command()
def status(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")] = False,
    lesson_id: LessonOption = None,
    lang: LangOption = "",
    new: NewOption = DEFAULT_NEW,
    limit: LimitOption = DEFAULT_REVIEWS,
    db: DbOption = None,
    learner: LearnerOption = None,
    paths: FilesOption = None,
    rollover_hour: RolloverOption = DEFAULT_ROLLOVER,
) -> None:
    """Show what is due now, new cards for today, cards learned, the next due day and your streak."""
    from bertdrill.core.limits import Limits, room_today  # not the session: status loads no lesson code
    from bertdrill.core.scheduling.state import study_day

    if db is None and (login := _class_login()) is not None:  # logged in to a class: its status, on its server
        found, today, total, limits, where = _class_status(login, lesson_id, lang)
    else:
        # the lessons must have the language asked for, as review requires (status --lang fr ran in English)
        store, indexes, lessons = open_indexed_store(db, paths, lesson_id, lang, read_only=True, learner=learner)
        with store:
            today = study_day(clock()(), rollover_hour)
            found = store.status(today, lessons=lessons)
        limits, where = Limits(new, limit, rollover_hour), store.where
        total = sum(index.reviewed for index in indexes)  # the cards a review shows, as stats counts them
    _room, new_today = room_today(found.counts, limits, found.due_now)
    new_today = min(new_today, found.new_cards)
    data = {
        "study_day": today.isoformat(),
        "due_now": found.due_now,
        "new_today": new_today,
        "new_unseen": found.new_cards,
        "learned": found.learned,
        "cards": total,
        "next_due": found.next_due.isoformat() if found.next_due else None,
        "streak": found.streak,
        "answered_today": found.counts.first_answers + found.counts.redrill,
        "database": where,
    }
    if as_json:
        print_json(data)
        return
    rows = [
        (_("Due now"), number(found.due_now)),
        (_("New today"), _("{new} (of {unseen} not seen yet)").format(new=number(new_today),
                                                                     unseen=number(found.new_cards))),
        (_("Learned"), ngettext("{learned} of {total} card", "{learned} of {total} cards", total).format(
            learned=number(found.learned), total=number(total))),
        (_("Next due"), day_words(found.next_due, today) if found.next_due else _("nothing scheduled yet")),
        (_("Streak"), day_count(found.streak)),
        (_("Answered today"), number(found.counts.first_answers + found.counts.redrill)),
        (_("Database"), escape(where)),
    ]
    out.print(_("Study day {day}").format(day=today.isoformat()))
    width = max(15, *(len(label) for label, _value in rows))
    for label, value in rows:
        out.print(f"  {label:<{width}} {value}")


# --------------------------------------------------------------------------- input


class LineInput:
    """Lines from a byte stream: UTF-8 with bad bytes replaced, each cut at MAX_LINE_BYTES."""

    terminal = False

    def __init__(self, stream: BinaryIO):
        self.stream = stream

    def read(self, prompt: str) -> str:
        out.print(escape(prompt), end="")
        data = self.stream.readline(MAX_LINE_BYTES)
        if not data:
            out.print()
            raise EOFError
        cut = not data.endswith(b"\n") and len(data) >= MAX_LINE_BYTES
        while cut and (rest := self.stream.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
            pass  # drop the rest of an over-long line, a chunk at a time
        line = clean(data.decode("utf-8", errors="replace").rstrip("\r\n"))
        shown = line if len(line) <= ECHO_CHARS else line[:ECHO_CHARS] + "…"
        out.print(escape(shown) + (_("  (line cut to {limit} bytes)").format(limit=number(MAX_LINE_BYTES)) if cut else ""))
        return line


class TerminalInput:
    """Lines typed at a terminal, with line editing where readline is available."""

    terminal = True

    def __init__(self) -> None:
        try:
            import readline  # noqa: F401 - importing it gives input() editing and history
        except ImportError:  # pragma: no cover - Windows
            pass

    def read(self, prompt: str) -> str:
        return clean(input(clean(prompt))[: MAX_LINE_BYTES])


def clean(text: str) -> str:
    """Typed text without escape sequences or control characters: safe to echo and to store."""
    from bertdrill.core.text import clean_text

    return clean_text(text).replace("\n", " ")


# --------------------------------------------------------------------------- the loop


class Review:
    """Shows the session's cards, reads answers and commands, prints the summary."""

    def __init__(self, session: Session, reader: LineInput | TerminalInput, language: str,
                 diagnosers: Mapping[str, Diagnoser] | None = None):
        self.session = session
        self.reader = reader
        self.language = language
        # lesson id -> Diagnoser: wrong numbers explained (each lesson's, as given: made on first use if the
        # mapping makes them so); a variant's is the session's numbers' to make (FreshNumbers.diagnoser)
        self.lesson_diagnosers: Mapping[str, Diagnoser] = diagnosers or {}

    def run(self) -> int:
        code = 0
        try:
            self.intro()
            while (entry := self.session.show()) is not None:
                try:
                    self.ask(entry)
                except Command as command:
                    self.perform(command.name)
        except Quit:
            code = 0
        except EOFError:
            code = 0
        except KeyboardInterrupt:
            out.print()
            out.print(_("Interrupted."))
            code = 130
        self.outro()
        return code

    # ----------------------------------------------------------------- screens

    def intro(self) -> None:
        position = self.session.position
        if self.session.done:  # say when the next card is due, so the learner knows when to come back
            found = self.session.store.status(self.session.day, lessons=self.session.lessons)
            if found.next_due is not None:
                out.print(_("Nothing to review now. Next card due {when}.").format(
                    when=day_words(found.next_due, self.session.day)))
            else:
                out.print(_("Nothing to review now."))
            return
        keys = (_("Keys: u undo · s suspend · b bury until tomorrow · q quit (then Enter); Ctrl-C or Ctrl-D also quit.")
                if self.reader.terminal else _("Commands (whole lines): :undo :suspend :bury :quit"))
        if self.session.cram:
            out.print(_("[bold]Cram[/bold]: {cards}, due or not. Answers are logged as cram: no schedule changes, "
                        "and today's due reviews still count.").format(cards=card_count(position.total)))
        else:
            out.print(_("[bold]Review[/bold]: {cards} ({due} due, {redrill} to re-drill, {new} new).").format(
                cards=card_count(position.total), due=number(position.review), redrill=number(position.redrill),
                new=number(position.new)))
        out.print(keys, style="dim")
        out.print(_("Grades: {legend}").format(legend=grades_legend()), style="dim")

    def header(self, entry: Entry) -> None:
        position = self.session.position
        if self.reader.terminal and self.session.answers:
            out.clear()  # one card on screen at a time, as Anki: the last answer is gone before the next card
        out.print()
        if self.session.cram:
            out.print(_("[bold]Card {index} of {total}[/bold] · cram, the schedule is left alone").format(
                index=number(position.index), total=number(position.total)), highlight=False)
        else:
            out.print(_("[bold]Card {index} of {total}[/bold] · {review} review · {new} new · {redrill} re-drill").format(
                index=number(position.index), total=number(position.total), review=number(position.review),
                new=number(position.new), redrill=number(position.redrill)), highlight=False)
        fresh = " · " + _("fresh numbers") if getattr(entry.card, "variant", "") else ""
        out.print(f"{escape(entry.card.id)} · {kind_name(entry.card.kind)} · {entry_word(entry.kind)}{fresh}",
                  style="dim")

    def question(self, entry: Entry) -> None:
        card = entry.card
        out.print(escape(phrased(card, self.language) or card.question(self.language)))
        for position, option in enumerate(self.options(card), start=1):
            out.print(f"  {position}  {LETTERS[position - 1]})  {escape(option)}")

    def options(self, card: Card) -> tuple[str, ...]:
        """What a choice card offers, or a match card's table values to choose from."""
        return options(card, self.language)

    def outro(self) -> None:
        summary = self.session.summary()
        minutes, seconds = divmod(round(summary.seconds), 60)
        spent = (_("{minutes} min {seconds} s").format(minutes=minutes, seconds=seconds) if minutes
                 else _("{seconds} s").format(seconds=seconds))
        redrills = (ngettext(" ({count} re-drill)", " ({count} re-drills)", summary.redrills).format(
            count=number(summary.redrills)) if summary.redrills else "")
        out.print()
        out.print(_("[bold]Session over[/bold]: {answered} answered{redrills}, {correct} correct, {spent}. "
                    "Due tomorrow: {due}.").format(answered=number(summary.answered), redrills=redrills,
                                                   correct=number(summary.correct), spent=spent,
                                                   due=number(summary.due_tomorrow))
                  + (_(" Left for later: {left}.").format(left=number(summary.left)) if summary.left else ""))

    # ----------------------------------------------------------------- one card

    def ask(self, entry: Entry) -> None:
        self.header(entry)
        self.question(entry)
        card = entry.card
        typed: str | None = None
        verdict = None
        if graded_by_the_learner(card):
            if self.reader.terminal:  # a typed answer is graded; Enter alone shows the answer to grade yourself
                typed = self.read(_("Your answer, or Enter to see it (u s b q): "), entry, answering=False).strip()
                verdict = self.grade(card, typed) if typed else None
                typed = typed or None
        else:
            # on a choice or match card "b" may be an option: then the hint says ":b"
            keys = " ".join(f":{key}" if key in self.answer_letters(entry, True) else key for key in KEYS)
            hint = f" ({keys})" if self.reader.terminal else ""
            while verdict is None or verdict.retry:
                if verdict is not None:  # an option that does not exist: say so, and ask again
                    out.print(escape(verdict.feedback))
                typed = self.read(_("Your answer{hint}: ").format(hint=hint), entry, answering=True)
                verdict = self.grade(card, typed)
        if verdict is not None:
            self.show_verdict(verdict)
        else:
            out.print(_("[bold]Answer:[/bold] {answer}").format(answer=escape(card.answer[self.language])))
        self.explain(card)
        self.preview()
        # the learner judges free text that is not clearly right: no grade is suggested for Enter
        chosen = self.read_grade(entry, verdict.suggested if verdict is not None and not verdict.judge else None,
                                 judging=verdict is not None and verdict.judge)
        with _interrupts_held():
            outcome = self.session.answer(chosen, typed)
            out.print(saved_message(outcome, self.session.day))
            if outcome.suspended:  # undo is offered only where it can be given: at the next card's prompt
                undo = None if self.session.done else "u" if self.reader.terminal else ":undo"
                out.print(leech_suspended(card.id, outcome.after.lapses, undo))
            elif outcome.became_leech:
                out.print(leech_warning(card.id, outcome.after.lapses))
            if outcome.buried:
                out.print(buried_siblings(outcome.buried), style="dim")

    def grade(self, card: Card, typed: str) -> Verdict:
        from bertdrill.core.grading import grade

        return grade(card, typed, self.language, diagnoser=self.diagnoser(card))

    def diagnoser(self, card: Card) -> Diagnoser | None:
        """The lesson's diagnoser; for a card asked with fresh numbers, one that knows the variant's."""
        if self.session.numbers is None:
            return self.lesson_diagnosers.get(card.lesson_id)
        return self.session.numbers.diagnoser(card, self.lesson_diagnosers)

    def show_verdict(self, verdict: Verdict) -> None:
        """✓ or ✗ with words, the diff or the diagnosis, then the answer: each said once."""
        mark = "[yellow]?[/yellow]" if verdict.judge else "[green]✓[/green]" if verdict.correct else "[red]✗[/red]"
        out.print(f"{mark} {escape(verdict.feedback)}")
        if verdict.judge:
            found = " · ".join(f"[bold]{escape(part)}[/bold]" for part in verdict.matched) or "—"
            out.print("  " + _("Found in yours: {parts}").format(parts=found))
            out.print("  " + _("Not found: {parts}").format(parts=" · ".join(escape(p) for p in verdict.missing) or "—"))
        if verdict.diff:
            out.print("  " + _("Difference: {diff}").format(diff=escape(verdict.diff)))
        if verdict.note:
            out.print("  " + escape(verdict.note))
        out.print(_("[bold]Answer:[/bold] {answer}").format(answer=escape(verdict.expected)))

    def preview(self) -> None:
        """When the card comes back for each grade, from the session's scheduler, as Anki shows on its buttons."""
        states = self.session.preview()
        if states:
            out.print(_("Comes back: {when}").format(when=interval_preview(states, self.session.study_day(
                self.session.clock()))), style="dim", highlight=False)

    def explain(self, card: Card) -> None:
        explanation = card.explanation.get(self.language)
        if explanation:
            out.print(_("[italic]Why:[/italic] {explanation}").format(explanation=escape(explanation)))
        if card.cited:
            out.print(_("[italic]Source:[/italic] {source}").format(source=escape(card.cited[self.language])))

    def read_grade(self, entry: Entry, suggested: int | None, *, judging: bool = False) -> int:
        prompt = (_("Grade 0-5, Enter = {grade}: ").format(grade=suggested) if suggested is not None
                  else _("You judge: grade 0-5 (4 or 5 if you had it, 0-2 if not): ") if judging
                  else _("Grade 0-5: "))
        while True:
            line = self.read(prompt, entry, answering=False).strip()
            if not line and suggested is not None:
                return suggested
            if len(line) == 1 and line in "012345":
                return int(line)
            shown = line if len(line) <= 20 else line[:20] + "…"
            got = _("got {text!r}").format(text=shown) if line else _("got an empty line")
            rule = (_("A grade is a whole number from 0 to 5; Enter = {grade} ({got}).") if suggested is not None
                    else _("A grade is a whole number from 0 to 5 ({got})."))
            out.print(rule.format(grade=suggested, got=escape(got)))

    def read(self, prompt: str, entry: Entry, *, answering: bool) -> str:
        """One line; raises :class:`Command` when it is one (see :func:`command_in`).

        An unknown ``:command`` is refused with the list of commands, and the prompt asked again:
        it is never taken as an answer or a grade.
        """
        while True:
            line = self.reader.read(prompt)
            name = command_in(line, terminal=self.reader.terminal, answers=self.answer_letters(entry, answering))
            if name == UNKNOWN:
                out.print(_("Unknown command {command}: the commands are {commands}.").format(
                    command=escape(line.strip()), commands=" ".join(f":{name}" for name in COMMANDS)))
                continue
            if name:
                raise Command(name)
            return line

    def answer_letters(self, entry: Entry, answering: bool) -> str:
        """Letters that are answers at this prompt: the option letters of a choice or match card."""
        return LETTERS[: len(self.options(entry.card))] if answering else ""

    def perform(self, name: str) -> None:
        if name == "quit":
            raise Quit
        with _interrupts_held():
            if name == "undo":
                try:
                    back = self.session.undo()
                except StoreError as exc:  # another window answered the card since: both answers stay
                    out.print(_("Not undone: {reason}.").format(reason=escape(str(exc))))
                    return
                out.print(_("Undone: {card} is back as it was.").format(card=escape(back.card.id)) if back
                          else _("Nothing to undo."))
            elif name == "suspend":
                entry = self.session.suspend()
                undo = None if self.session.done else "u" if self.reader.terminal else ":undo"
                line = _("Suspended {card}: it will not be shown again.").format(card=escape(entry.card.id))
                out.print(line + (" " + _("({undo} undoes this)").format(undo=undo) if undo else ""))
            elif name == "bury":
                entry = self.session.bury()
                out.print(_("Buried {card} until tomorrow.").format(card=escape(entry.card.id)))


def command_in(line: str, *, terminal: bool, answers: str = "") -> str | None:
    """The command a line stands for, if any.

    Everywhere: ``:undo``, ``:suspend``, ``:bury``, ``:quit`` (or ``:u`` ``:s`` ``:b`` ``:q``); any other
    word after a colon is :data:`UNKNOWN` (refused, never an answer).
    In a terminal also the bare keys u, s, b, q, except a key in ``answers``: on a choice
    card the letters that name options are answers (``b`` is option b; ``:b`` buries).
    """
    word = line.strip().lower()
    if word.startswith(":"):
        return COMMANDS.get(word[1:]) or KEYS.get(word[1:]) or UNKNOWN
    if terminal and word in KEYS and word not in answers:
        return KEYS[word]
    return None


def entry_word(kind: AnswerKind) -> str:
    """Why a card is in the queue, in a word of the screen's language."""
    from bertdrill.core.scheduling.state import AnswerKind

    match kind:
        case AnswerKind.REVIEW:
            return _("due")
        case AnswerKind.NEW:
            return _("new")
        case AnswerKind.REDRILL:
            return _("re-drill")
        case AnswerKind.PRACTICE:
            return _("practice")
        case AnswerKind.CRAM:
            return _("cram")
        case unreachable:
            assert_never(unreachable)


def kind_name(kind: Kind) -> str:
    """A card's kind as the learner reads it."""
    from bertdrill.core.kinds import Kind

    match kind:
        case Kind.FACT:
            return _("fact")
        case Kind.CHOICE:
            return _("choice")
        case Kind.BLANK:
            return _("blank")
        case Kind.NUMERIC:
            return _("numeric")
        case Kind.MATCH:
            return _("match")
        case Kind.PRACTICE:
            return _("practice")
        case unreachable:
            assert_never(unreachable)


def phrased(card: Card, language: str) -> str | None:
    """The card's own phrasing of its question, where its kind has one (a table's pair asked as a question)."""
    from bertdrill.core.cards import BlankCard, ChoiceCard, FactCard, MatchCard, NumericCard, PracticeCard

    match card:
        case MatchCard():
            return card.phrased.get(language)
        case FactCard() | ChoiceCard() | BlankCard() | NumericCard() | PracticeCard():
            return None
        case unreachable:
            assert_never(unreachable)


def options(card: Card, language: str) -> tuple[str, ...]:
    """What the learner chooses from: a choice's options, a table's values; nothing for a card answered freely."""
    from bertdrill.core.cards import BlankCard, ChoiceCard, FactCard, MatchCard, NumericCard, PracticeCard

    match card:
        case ChoiceCard() | MatchCard():
            return tuple(card.options.get(language, ()))
        case FactCard() | BlankCard() | NumericCard() | PracticeCard():
            return ()
        case unreachable:
            assert_never(unreachable)


def graded_by_the_learner(card: Card) -> bool:
    """Whether the learner may see the answer and grade themselves (a fact: its answer is prose); every other
    kind is always typed and graded."""
    from bertdrill.core.cards import BlankCard, ChoiceCard, FactCard, MatchCard, NumericCard, PracticeCard

    match card:
        case FactCard():
            return True
        case ChoiceCard() | BlankCard() | NumericCard() | MatchCard() | PracticeCard():
            return False
        case unreachable:
            assert_never(unreachable)


def saved_message(outcome: Outcome, today: date) -> str:
    """The acknowledgement, printed only once the answer is committed."""
    from bertdrill.core.scheduling.state import AnswerKind

    due = outcome.after.due
    if outcome.kind is AnswerKind.CRAM:
        rest = _("cram, schedule unchanged")
    elif not outcome.rescheduled or due is None:
        rest = _("re-drill, schedule unchanged")
    else:
        rest = _("next review {when}").format(when=day_words(due, today))
    again = _("; back later in this session") if outcome.again else ""
    return _("Saved: grade {grade} · {rest}{again}.").format(grade=outcome.grade, rest=rest, again=again)


def leech_suspended(card_id: str, lapses: int, undo: str | None = None) -> str:
    """One line, the moment a card becomes a leech and is suspended (the default, as in Anki).

    ``undo`` is the key or command that takes it back, when the session goes on to a next prompt
    where it can be typed; at the end of a session none is offered.
    """
    line = "[bold]{}[/bold] ".format(_("Leech:")) + _(
        "{card} has lapsed {lapses} times and is suspended: rewrite it.").format(card=escape(card_id), lapses=lapses)
    return line + (" " + _("({undo} undoes this)").format(undo=undo) if undo else "")


def buried_siblings(card_ids: tuple[str, ...]) -> str:
    """One line: the cards an answer gave away, kept until tomorrow."""
    return ngettext("Until tomorrow: {cards}, whose answer this one showed.",
                    "Until tomorrow: {cards}, whose answers this one showed.", len(card_ids)).format(
        cards=", ".join(escape(card_id) for card_id in card_ids))


def interval_preview(states: NextStates, today: date) -> str:
    """``0–2 tomorrow · 3–5 in 15 days``: grades that give the same due day share one entry."""
    groups: list[tuple[list[int], date]] = []
    for grade_value, state in states.items():
        due = state.due
        assert due is not None, "a scheduler always gives a reviewed card a due day"
        if groups and groups[-1][1] == due:
            groups[-1][0].append(grade_value)
        else:
            groups.append(([grade_value], due))
    return " · ".join(f"{_grades(grades)} {due_words(due, today)}" for grades, due in groups)


def _grades(grades: list[int]) -> str:
    return str(grades[0]) if len(grades) == 1 else f"{grades[0]}–{grades[-1]}"


def due_words(due: date, today: date) -> str:
    days = (due - today).days
    if days <= 0:
        return _("today")
    if days == 1:
        return _("tomorrow")
    return ngettext("in {count} day", "in {count} days", days).format(count=days)


def leech_warning(card_id: str, lapses: int) -> str:
    """One line, the moment a card becomes a leech: it is tagged, and worth a look."""
    return ngettext("[bold]Leech:[/bold] {card} has lapsed {lapses} time, now tagged a leech: "
                    "rewrite it, or suspend it when it comes back.",
                    "[bold]Leech:[/bold] {card} has lapsed {lapses} times, now tagged a leech: "
                    "rewrite it, or suspend it when it comes back.", lapses).format(card=escape(card_id), lapses=lapses)


def day_words(day: date, today: date) -> str:
    ahead = (day - today).days
    if ahead == 0:
        return _("today ({date})").format(date=day.isoformat())
    if ahead == 1:
        return _("tomorrow ({date})").format(date=day.isoformat())
    if ahead < 0:
        return _("{date} ({days} ago)").format(date=day.isoformat(), days=day_count(-ahead))
    return _("in {days} ({date})").format(days=day_count(ahead), date=day.isoformat())


@contextmanager
def _interrupts_held() -> Iterator[None]:
    """Hold Ctrl-C while an answer is written and acknowledged, then deliver it.

    The answer is either saved and acknowledged, or not saved at all: a Ctrl-C in
    between never leaves the learner unsure which.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt
