"""A review store in memory: the same :class:`~bertdrill.ports.ReviewStore` as SQLite and PostgreSQL, in Python.

It shows that the port is a real seam (tests/test_store.py runs its contract on all three), and it
makes the session's tests fast: no file, no fsync. It keeps nothing once the process ends, so no
command offers it to a learner; it is for tests, simulations and what-ifs.

Every rule here is the SQL's, spelled in Python: a card is *active* on a day when it is not
suspended, not buried past the day, not removed and of a kind a review session shows; new cards
come in lesson order, due cards most overdue first; only the first answer of a study day
reschedules. One learner: the store holds one person's schedules and log.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from types import TracebackType
from typing import Self

from bertdrill.adapters.store.database import learner_name, login_name, utc
from bertdrill.adapters.store.schema import ANSWER_KINDS, MATURE_DAYS, TYPED_MAX
from bertdrill.core.digests import cards_digest
from bertdrill.core.errors import StoreError
from bertdrill.core.i18n import _
from bertdrill.core.kinds import Kind
from bertdrill.core.limits import DEFAULT_NEW, DEFAULT_REVIEWS
from bertdrill.core.scheduling.actions import CardAction, Managed, managed
from bertdrill.core.scheduling.replay import replay
from bertdrill.core.scheduling.state import (
    LEECH_LAPSES,
    NEW,
    PASSING,
    REDRILL_BELOW,
    AnswerKind,
    CardStage,
    Schedule,
    check_grade,
    stage_of,
)
from bertdrill.core.stats import streaks
from bertdrill.ports import (
    KEEP,
    Action,
    Answer,
    AnswerTimes,
    CardFigures,
    CardLog,
    CardManagement,
    CardState,
    DayCounts,
    FittedSet,
    Keep,
    Retention,
    ReviewStore,
    Scheduler,
    SchedulerChoice,
    Status,
    Switch,
    SyncCard,
    SyncLesson,
    SyncReport,
)


@dataclass
class _Card:
    """A card row: what sync keeps of a lesson's card."""

    id: str
    lesson_id: str
    item_id: str
    kind: Kind
    position: int
    fingerprint: str
    removed: bool = False

    @property
    def reviewed(self) -> bool:
        return self.kind.reviewed


@dataclass
class _Schedule:
    """A schedule row: the scheduler's state and the learner's flags."""

    state: Schedule = NEW
    suspended: bool = False
    buried_until: date | None = None


class MemoryStore:
    """One learner's cards, schedules and log, in dicts and a list (the log in id order)."""

    def __init__(self, *, learner: str | None = None, where: str = "the in-memory store"):
        self.where = where
        self.learner = learner_name(learner, login_name)
        self._cards: dict[str, _Card] = {}
        self._schedules: dict[str, _Schedule] = {}
        self._log: list[Answer] = []
        self._actions: list[Action] = []  # bertdrill cards' actions, in id order
        self._next_id = 1
        self._requests: dict[str, int] = {}  # a client's id of an answer -> the answer it logged
        self._next_action = 1
        self._digests: dict[str, str] = {}
        self._choice = SchedulerChoice()
        self._fitted: list[FittedSet] = []  # oldest first

    def close(self) -> None:
        """Nothing to release; the data stays readable until the object is gone."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    # ----------------------------------------------------------------- sync

    def sync(self, cards: Sequence[SyncCard], *, now: datetime | None = None,
             track: Callable[[list[str]], Iterable[str]] = iter, schedules: bool = True) -> SyncReport:
        """Make the stored cards match the lessons' cards (each lesson of ``cards`` complete), keeping history."""
        by_lesson: dict[str, list[SyncCard]] = {}
        for card in cards:
            by_lesson.setdefault(card.lesson_id, []).append(card)
        return self.sync_lessons([_Lesson(lesson_id, _digest(rows), rows) for lesson_id, rows in by_lesson.items()],
                                 now=now, track=track, schedules=schedules)

    def sync_lessons(self, lessons: Sequence[SyncLesson], *, now: datetime | None = None,
                     track: Callable[[list[str]], Iterable[str]] = iter, schedules: bool = True) -> SyncReport:
        """:meth:`sync`, a lesson at a time: a lesson whose digest is the one kept is not read."""
        by_id = {lesson.id: lesson for lesson in lessons}
        report = SyncReport()
        for lesson_id in track([lesson.id for lesson in lessons if self._digests.get(lesson.id) != lesson.digest]):
            report += self._sync_lesson(lesson_id, list(by_id[lesson_id].cards))
            self._digests[lesson_id] = by_id[lesson_id].digest
        if schedules:
            for card_id in self._cards:
                self._schedules.setdefault(card_id, _Schedule())
        return report

    def _sync_lesson(self, lesson_id: str, cards: list[SyncCard]) -> SyncReport:
        added = changed = moved = restored = removed = 0
        for position, card in enumerate(cards):
            stored = self._cards.get(card.id)
            if stored is None:
                added += 1
            elif stored.removed:
                restored += 1
            elif stored.fingerprint != card.fingerprint:
                changed += 1
            elif (stored.item_id, stored.kind, stored.position) != (card.item_id, card.kind, position):
                moved += 1
            self._cards[card.id] = _Card(card.id, lesson_id, card.item_id, card.kind, position, card.fingerprint)
        wanted = {card.id for card in cards}
        for stored in self._cards.values():
            if stored.lesson_id == lesson_id and not stored.removed and stored.id not in wanted:
                stored.removed = True
                removed += 1
        return SyncReport(added=added, changed=changed, removed=removed, restored=restored, moved=moved)

    # ----------------------------------------------------------------- what the queries share

    def _rows(self, lessons: Collection[str] | None) -> Iterator[tuple[_Card, _Schedule]]:
        """The learner's schedules with their cards, of some lessons or all."""
        wanted = None if lessons is None else set(lessons)
        for card_id, schedule in self._schedules.items():
            card = self._cards[card_id]
            if wanted is None or card.lesson_id in wanted:
                yield card, schedule

    @staticmethod
    def _active(card: _Card, schedule: _Schedule, today: date) -> bool:
        """Shown on ``today``: not suspended, not buried past it, not removed, a reviewed kind."""
        return (not schedule.suspended and (schedule.buried_until is None or schedule.buried_until <= today)
                and not card.removed and card.reviewed)

    def _answers_of(self, lessons: Collection[str] | None) -> Iterator[Answer]:
        wanted = None if lessons is None else set(lessons)
        return (answer for answer in self._log if wanted is None or self._cards[answer.card_id].lesson_id in wanted)

    def _state(self, card_id: str) -> CardState:
        schedule = self._schedules.get(card_id)
        if schedule is None:
            raise StoreError(f"no card {card_id!r} in {self.where}; sync its lesson first")
        return CardState(card_id, schedule.state, schedule.suspended, schedule.buried_until,
                         schedule.state.lapses >= LEECH_LAPSES, self._cards[card_id].removed)

    # ----------------------------------------------------------------- the queue

    def due_ids(self, today: date, *, lessons: Collection[str] | None = None,
                limit: int = DEFAULT_REVIEWS) -> list[str]:
        due = [(schedule.state.due, card.lesson_id, card.position, card.id) for card, schedule in self._rows(lessons)
               if schedule.state.due is not None and schedule.state.due <= today and self._active(card, schedule, today)]
        return [row[3] for row in sorted(due)[:max(0, limit)]]

    def new_ids(self, today: date, *, lessons: Collection[str] | None = None, limit: int = DEFAULT_NEW) -> list[str]:
        new = [(card.lesson_id, card.position, card.id) for card, schedule in self._rows(lessons)
               if schedule.state.due is None and self._active(card, schedule, today)]
        return [row[2] for row in sorted(new)[:max(0, limit)]]

    def redrill_ids(self, today: date, *, lessons: Collection[str] | None = None) -> list[str]:
        latest: dict[str, Answer] = {}  # each card's latest answer today that is not a practice check
        for answer in self._answers_of(lessons):
            if answer.study_day == today and answer.kind is not AnswerKind.PRACTICE and answer.kind.schedules:
                latest[answer.card_id] = answer
        return [answer.card_id for answer in sorted(latest.values(), key=lambda answer: answer.id)
                if answer.grade < REDRILL_BELOW and answer.card_id in self._schedules
                and self._active(self._cards[answer.card_id], self._schedules[answer.card_id], today)]

    def state(self, card_id: str) -> CardState:
        return self._state(card_id)

    def state_under_choice(self, card_id: str) -> tuple[CardState, SchedulerChoice]:
        return self._state(card_id), self._choice

    def answer(self, card_id: str, *, grade: int, kind: AnswerKind, reviewed_at: datetime, study_day: date,
               reschedule: Callable[[Schedule], Schedule] | None = None, typed: str | None = None,
               duration_ms: int = 0, once_per_day: bool = False, variant: str | None = None,
               rescheduler: Callable[[SchedulerChoice], Callable[[Schedule], Schedule]] | None = None,
               request: str | None = None) -> Answer:
        """Log an answer and store the new schedule (the SQL stores' rules, :meth:`.reviews.ReviewWrites.answer`)."""
        if request is not None and request in self._requests:
            sent = next((answer for answer in self._log if answer.id == self._requests[request]), None)
            if sent is not None:
                return sent
        if rescheduler is not None:
            reschedule = rescheduler(self._choice)
        if kind not in ANSWER_KINDS:
            raise ValueError(f"kind must be one of {ANSWER_KINDS}, got {kind!r}")
        kind = AnswerKind(kind)
        check_grade(grade)
        before = self._state(card_id).schedule
        change, logged_kind = reschedule, kind
        if once_per_day and reschedule is not None:
            first = not any(answer.card_id == card_id and answer.study_day == study_day and answer.kind.schedules
                            for answer in reversed(self._log))
            logged_kind = kind.logged_as(first_of_day=first)
            change = reschedule if first else None
        if not kind.schedules:  # a cram answer keeps the schedule, whatever the caller passed
            change = None
        after = change(before) if change else before
        logged = Answer(self._next_id, card_id, utc(reviewed_at), study_day, logged_kind, grade,
                        typed[:TYPED_MAX] if typed is not None else None, max(0, min(int(duration_ms), 86_400_000)),
                        before, after, variant[:TYPED_MAX] if variant is not None else None)
        self._schedules[card_id].state = after
        self._log.append(logged)
        if request is not None:
            self._requests[request] = logged.id
        self._next_id += 1
        return logged

    def undo(self, review_id: int) -> CardState:
        found = next((answer for answer in self._log if answer.id == review_id), None)
        if found is None:
            raise StoreError(_("answer {id} is not in the log (already undone?)").format(id=review_id))
        latest = max(answer.id for answer in self._log if answer.card_id == found.card_id)
        if latest != review_id:
            raise StoreError(_("{card} was answered again since (in another window?), and only its latest "
                               "answer can be undone").format(card=found.card_id))
        self._schedules[found.card_id].state = found.before
        self._log.remove(found)
        return self._state(found.card_id)

    def set_flags(self, card_id: str, *, suspended: bool | None = None,
                  buried_until: date | None | Keep = KEEP) -> CardState:
        before = self._state(card_id)
        schedule = self._schedules[card_id]
        if suspended is not None:
            schedule.suspended = suspended
        if not isinstance(buried_until, Keep):
            schedule.buried_until = buried_until
        return before

    def manage(self, card_id: str, action: CardAction, *, at: datetime, study_day: date,
               due: date | None = None) -> Action:
        state = self._state(card_id)
        after = managed(Managed(state.schedule, state.suspended), CardAction(action), today=study_day, due=due)
        self._schedules[card_id].state = after.schedule
        self._schedules[card_id].suspended = after.suspended
        done = Action(self._next_action, card_id, utc(at), study_day, CardAction(action), state.schedule,
                      after.schedule, state.suspended, after.suspended)
        self._actions.append(done)
        self._next_action += 1
        return done

    def undo_action(self, action_id: int | None = None) -> Action:
        found = (self._actions[-1] if self._actions else None) if action_id is None else next(
            (done for done in self._actions if done.id == action_id), None)
        if found is None:
            raise StoreError(_("no card action to undo") if action_id is None
                             else _("card action {id} is not in the log (already undone?)").format(id=action_id))
        state = self._state(found.card_id)
        if (state.schedule, state.suspended) != (found.after, found.suspended_after):
            raise StoreError(_("{card} has changed since its {action} (answered, or changed again), so it "
                               "is left as it is").format(card=found.card_id, action=found.action))
        self._schedules[found.card_id].state = found.before
        self._schedules[found.card_id].suspended = found.suspended_before
        self._actions.remove(found)
        return found

    def actions(self, card_id: str | None = None) -> list[Action]:
        return [done for done in self._actions if card_id is None or done.card_id == card_id]

    def answers(self, card_id: str | None = None, *, since: date | None = None) -> list[Answer]:
        return [answer for answer in self._log if (card_id is None or answer.card_id == card_id)
                and (since is None or answer.study_day >= since)]

    # ----------------------------------------------------------------- reports

    def day_counts(self, day: date, *, lessons: Collection[str] | None = None) -> DayCounts:
        counts = dict.fromkeys(AnswerKind, 0)
        for answer in self._answers_of(lessons):
            if answer.study_day == day:
                counts[answer.kind] += 1
        return DayCounts.of(counts)

    def due_count(self, day: date, *, lessons: Collection[str] | None = None) -> int:
        return sum(1 for card, schedule in self._rows(lessons) if schedule.state.due is not None
                   and schedule.state.due <= day and self._active(card, schedule, day))

    def status(self, today: date, *, lessons: Collection[str] | None = None) -> Status:
        rows = list(self._rows(lessons))
        later = [schedule.state.due for card, schedule in rows if schedule.state.due is not None
                 and schedule.state.due > today and self._active(card, schedule, today)]
        return Status(
            due_now=self.due_count(today, lessons=lessons),
            new_cards=sum(1 for card, schedule in rows if schedule.state.due is None
                          and self._active(card, schedule, today)),
            learned=sum(1 for card, schedule in rows if schedule.state.due is not None and not card.removed
                        and card.reviewed),
            next_due=min(later, default=None),
            streak=self.streaks(today, lessons=lessons)[0],
            counts=self.day_counts(today, lessons=lessons))

    def reviews_per_day(self, since: date, until: date, *, lessons: Collection[str] | None = None) -> dict[date, int]:
        counts: dict[date, int] = {}
        for answer in self._answers_of(lessons):
            if since <= answer.study_day <= until:
                counts[answer.study_day] = counts.get(answer.study_day, 0) + 1
        return dict(sorted(counts.items()))

    def streaks(self, today: date, *, lessons: Collection[str] | None = None) -> tuple[int, int]:
        """As the SQL stores: a day with nothing due does not break a run (core.stats.streaks)."""
        answers = [answer for answer in self._answers_of(lessons)
                   if answer.study_day <= today and answer.kind is not AnswerKind.PRACTICE and answer.kind.schedules]
        owed = [(answer.before.due, answer.study_day - timedelta(days=1)) for answer in answers
                if answer.before.due is not None and answer.study_day > answer.before.due]
        waiting = [schedule.state.due for card, schedule in self._rows(lessons) if schedule.state.due is not None
                   and not schedule.suspended and not card.removed and card.reviewed]
        if waiting and min(waiting) <= today:
            owed.append((min(waiting), today))
        return streaks([answer.study_day for answer in self._answers_of(lessons) if answer.study_day <= today],
                       owed, today)

    def forecast(self, today: date, days: int, *, lessons: Collection[str] | None = None) -> list[tuple[date, int]]:
        days = max(days, 1)
        counts: dict[date, int] = {}
        for card, schedule in self._rows(lessons):
            due = schedule.state.due
            if due is not None and not schedule.suspended and not card.removed and card.reviewed:
                shown = max(due, schedule.buried_until or due, today)
                counts[shown] = counts.get(shown, 0) + 1
        return [(today + timedelta(days=i), counts.get(today + timedelta(days=i), 0)) for i in range(days)]

    def retention(self, since: date | None = None, *, lessons: Collection[str] | None = None) -> Retention:
        passed = {False: 0, True: 0}
        total = {False: 0, True: 0}
        for answer in self._answers_of(lessons):
            if answer.kind is AnswerKind.REVIEW and answer.study_day >= (since or date.min):
                mature = answer.before.interval >= MATURE_DAYS
                total[mature] += 1
                passed[mature] += answer.grade >= PASSING
        return Retention(passed[False], total[False], passed[True], total[True])

    def card_states(self, today: date, *, lessons: Collection[str] | None = None) -> dict[CardStage, int]:
        counts = dict.fromkeys(CardStage, 0)
        for card, schedule in self._rows(lessons):
            if card.reviewed:
                counts[stage_of(schedule.state, suspended=schedule.suspended, removed=card.removed)] += 1
        return counts

    def answer_count(self, *, lessons: Collection[str] | None = None) -> int:
        return sum(1 for _answer in self._answers_of(lessons))

    def answer_times(self, *, lessons: Collection[str] | None = None) -> AnswerTimes:
        durations: dict[tuple[str, int], tuple[int, int]] = {}
        days = set()
        for answer in self._answers_of(lessons):
            if answer.kind is not AnswerKind.PRACTICE and answer.kind.schedules:
                count, ms = durations.get((answer.kind, answer.grade), (0, 0))
                durations[(answer.kind, answer.grade)] = (count + 1, ms + answer.duration_ms)
                days.add(answer.study_day)
        return AnswerTimes(durations, len(days), sum(count for (kind, _grade), (count, _ms) in durations.items()
                                                     if kind == "new"))

    def average_ef(self, *, lessons: Collection[str] | None = None) -> float | None:
        eases = [schedule.state.ef100 for card, schedule in self._rows(lessons)
                 if schedule.state.due is not None and not card.removed]
        return sum(eases) / len(eases) / 100 if eases else None

    def leeches(self, min_lapses: int = LEECH_LAPSES, *, lessons: Collection[str] | None = None) -> list[CardState]:
        found = [(-schedule.state.lapses, card.id) for card, schedule in self._rows(lessons)
                 if schedule.state.lapses >= min_lapses and not card.removed]
        return [self._state(card_id) for _lapses, card_id in sorted(found)]

    def card_figures(self, today: date, *, lessons: Collection[str] | None = None) -> CardFigures:
        return CardFigures(self.card_states(today, lessons=lessons), self.average_ef(lessons=lessons),
                           self.leeches(lessons=lessons))

    def hardest(self, limit: int = 10, *, lessons: Collection[str] | None = None) -> list[CardState]:
        found = [(schedule.state.ef100, -schedule.state.lapses, card.id) for card, schedule in self._rows(lessons)
                 if schedule.state.due is not None and not card.removed]
        return [self._state(row[2]) for row in sorted(found)[:max(0, limit)]]

    def forecast_and_hardest(self, today: date, days: int, limit: int, *,
                             lessons: Collection[str] | None = None) -> tuple[list[tuple[date, int]], list[CardState]]:
        return self.forecast(today, days, lessons=lessons), self.hardest(limit, lessons=lessons)

    # ----------------------------------------------------------------- the scheduler

    def scheduler_choice(self) -> SchedulerChoice:
        return self._choice

    def switch_scheduler(self, choice: SchedulerChoice, scheduler: Scheduler, *,
                         track: Callable[[list[str]], Iterable[str]] = iter) -> Switch:
        """Every card's state replayed from its log under ``scheduler``; all or nothing (computed, then set)."""
        logs = self._logs(None)
        states = {card_id: replay(scheduler, logs.get(card_id, []), card_id) for card_id in track(sorted(self._schedules))}
        if choice.fitted is not None and not choice.fitted.number:  # a new set: the learner's next number
            fitted = replace(choice.fitted, number=len(self._fitted) + 1)
            choice = replace(choice, fitted=fitted)
            self._fitted.append(fitted)
        for card_id, state in states.items():
            self._schedules[card_id].state = state
        self._choice = choice
        return Switch(cards=len(states), answers=sum(len(log) for log in logs.values()), choice=choice)

    def fitted_sets(self) -> list[FittedSet]:
        return self._fitted[::-1]

    def card_logs(self, visit: Callable[[CardLog], None], *, lessons: Collection[str] | None = None,
                  track: Callable[[list[str]], Iterable[str]] = iter) -> int:
        logs = self._logs(lessons)
        answers = 0
        for card_id in track(sorted(logs)):
            answers += len(logs[card_id])
            visit(logs[card_id])
        return answers

    def _logs(self, lessons: Collection[str] | None) -> dict[str, CardLog]:
        logs: dict[str, CardLog] = {}
        for answer in self._answers_of(lessons):
            if answer.kind.schedules:  # a cram answer never scheduled its card: a replay leaves it out
                logs.setdefault(answer.card_id, []).append((answer.study_day, answer.grade))
        return logs




def _digest(cards: list[SyncCard]) -> str:
    """What the SQL stores' lesson digest sums up: ids, kinds, order, fingerprints."""
    return cards_digest((card.id, card.item_id, card.kind, card.fingerprint) for card in cards)


@dataclass(frozen=True)
class _Lesson:
    id: str
    digest: str
    cards: Sequence[SyncCard]


_conforms: type[ReviewStore] = MemoryStore
_manages: type[CardManagement] = MemoryStore  # mypy checks the protocol here, as for the SQL stores
