"""``bertdrill class``: a class on one PostgreSQL database: set it up, add learners, read the report.

The teacher runs these with the teacher's role (the one that creates the tables, and so reads
every learner's rows); learners never connect to the database: they log in to the class server, in a
browser or with ``bertdrill login`` from their terminal. See docs/classroom.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from bertdrill.cli.base import (
    DbOption,
    FilesOption,
    LangOption,
    LessonOption,
    RolloverOption,
    app,
    clock,
    decimal,
    escape,
    load,
    number,
    out,
    print_json,
    print_lines,
)
from bertdrill.core import i18n
from bertdrill.core.errors import BertdrillError
from bertdrill.core.i18n import _, ngettext
from bertdrill.core.limits import DEFAULT_ROLLOVER

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from bertdrill.adapters.store import CardSummary, ClassReport, PostgresStore, Store, WrongAnswer
    from bertdrill.core.lesson import Lesson

    Diagnosed = tuple[WrongAnswer, str, str | None]  # a wrong answer, its diagnosis, its variant's values (None: own)

class_app = typer.Typer(
    help="A class on one PostgreSQL database: set it up, add learners, see what the class knows.",
    no_args_is_help=True,
)
app.add_typer(class_app, name="class")


def _open_class(db: str | None) -> PostgresStore:
    """The class's store, as the teacher's role; a PostgreSQL database or a clear error."""
    from bertdrill.adapters.store import PostgresStore, Store

    store = Store.open(db)
    if not isinstance(store, PostgresStore):
        where = store.where
        store.close()
        raise BertdrillError(_("{where} is an SQLite file, and a class needs PostgreSQL: "
                               "use --db postgresql://USER@HOST/DATABASE (or $BERTDRILL_DB)").format(where=where))
    return store


AddressOption = Annotated[str | None, typer.Option(
    "--address", metavar="URL", show_default=False,
    help="The class server's address as learners type it (https://class.example.org/), kept for add-learner.")]
PasswordOption = Annotated[str | None, typer.Option(
    "--password", show_default=False, help="The password (default: a new random one, printed once).")]
NameArgument = Annotated[str, typer.Argument(metavar="NAME", help="The member's name, as they type it to log in.")]


@class_app.command()
def init(db: DbOption = None, paths: FilesOption = None, address: AddressOption = None,
         server_password: Annotated[str | None, typer.Option(
             "--server-password", show_default=False,
             help="Set the password of the class server's own database role (it is created without one).")] = None,
         lang: LangOption = "") -> None:
    """Create the class's tables, publish its lessons (their texts, every language) and set up the class
    server's roles and row-level security. Run it again after editing a lesson: every learner's history is kept."""
    from bertdrill.adapters.lessons import all_cards, source_text

    lessons = load(paths)
    sources = [(lesson.id, lesson.path, source_text(lesson.path)) for lesson in lessons]
    with _open_class(db) as store:
        setup = store.open_class(all_cards(lessons), sources, address=address, server_password=server_password)
        where = store.where
    out.print(ngettext("Class ready in {where}: {lessons} lesson.", "Class ready in {where}: {lessons} lessons.",
                       len(lessons)).format(where=escape(where), lessons=len(lessons)))
    for lesson_id, version in setup.published:
        out.print(_("Published {lesson} (version {version}).").format(lesson=escape(lesson_id), version=version))
    if not setup.published:
        out.print(_("The lessons are as published before: nothing new to publish."))
    for member, password in setup.moved:
        out.print(_("Moved {name} over from a database role of their own: every answer stays theirs; their role "
                    "no longer reads the class.").format(name=escape(member.name)))
        for line in _login_lines(member.name, setup.address, password):
            out.print(line)
    out.print(_("The class server connects as the role {role}, which owns nothing and sees a learner's rows only "
                "while acting for that learner (row-level security).").format(role=escape(setup.roles.server)))
    if setup.server_created and server_password is None:
        out.print(_("Give that role a password (--server-password) unless the server connects over the local "
                    "socket; then start it with: bertdrill serve --db postgresql://{role}@HOST/DATABASE").format(
                        role=escape(setup.roles.server)))
    out.print(_("Add a learner with: bertdrill class add-learner NAME"))


def _login_lines(name: str, address: str | None, password: str | None, *, learner: bool = True) -> list[str]:
    """How a member logs in: the server's address and their name (and a generated password, once); a learner,
    also how from a terminal (when the address is known)."""
    import shlex

    where = address or _("the address bertdrill serve prints (keep it with bertdrill class init --address URL)")
    lines = [_("They log in at {address} with:").format(address=escape(where)),
             "  " + _("name: {name}").format(name=escape(name))]
    if password is not None:
        lines += ["  " + _("password: {password}").format(password=escape(password)),
                  _("The password is shown only now: pass it on privately.")]
    if learner and address:
        lines.append(_("From a terminal: {command}").format(command=escape(
            f"bertdrill login {shlex.quote(address)} --name {shlex.quote(name)}")))
    return lines


def _add(name: str, password: str | None, db: str | None, teacher: bool) -> None:
    from bertdrill.adapters.store.members import MemberRole, new_password

    chosen = password or new_password()
    with _open_class(db) as store:
        member = store.add_member(name, chosen, MemberRole.TEACHER if teacher else MemberRole.LEARNER)
        address = store.server_address()
    out.print((_("Added the teacher {name} to the class.") if teacher else _("Added {name} to the class.")).format(
        name=escape(member.name)))
    for line in _login_lines(member.name, address, None if password else chosen, learner=not teacher):
        out.print(line)


@class_app.command("add-learner")
def add_learner(name: NameArgument, password: PasswordOption = None, db: DbOption = None, lang: LangOption = "") -> None:
    """Add a learner to the class and print how they log in to the class server (never a database URL)."""
    _add(name, password, db, teacher=False)


@class_app.command("add-teacher")
def add_teacher(name: NameArgument, password: PasswordOption = None, db: DbOption = None, lang: LangOption = "") -> None:
    """Add a teacher, who logs in to the class server to see the dashboard and manage the members."""
    _add(name, password, db, teacher=True)


@class_app.command()
def rename(name: NameArgument,
           new_name: Annotated[str, typer.Argument(metavar="NEW_NAME", help="The name they log in with from now on.")],
           db: DbOption = None, lang: LangOption = "") -> None:
    """Rename a member: their history and password stay theirs."""
    with _open_class(db) as store:
        member = store.rename_member(name, new_name)
    out.print(_("Renamed: {old} is now {new}; they log in with the new name.").format(
        old=escape(name), new=escape(member.name)))


@class_app.command()
def archive(name: NameArgument, db: DbOption = None, lang: LangOption = "") -> None:
    """Archive a member: they can no longer log in, their history is kept, and a new member of the same name
    starts afresh."""
    with _open_class(db) as store:
        member = store.archive_member(name)
    out.print(_("Archived {name}: logged out and unable to log in; their history is kept, and the report leaves "
                "them out.").format(name=escape(member.name)))


@class_app.command("reset-password")
def reset_password(name: NameArgument, password: PasswordOption = None, db: DbOption = None,
                   lang: LangOption = "") -> None:
    """Give a member a new password (their logins end); printed once if generated."""
    from bertdrill.adapters.store.members import new_password

    chosen = password or new_password()
    with _open_class(db) as store:
        member = store.reset_password(name, chosen)
        address = store.server_address()
    out.print(_("New password for {name}; they are logged out everywhere.").format(name=escape(member.name)))
    for line in _login_lines(member.name, address, None if password else chosen, learner=not member.is_teacher):
        out.print(line)


@class_app.command("members")
def list_members(
    archived: Annotated[bool, typer.Option("--archived", help="Archived members too.")] = False,
    db: DbOption = None, lang: LangOption = "",
) -> None:
    """The class's members: name, learner or teacher, and whether archived."""
    with _open_class(db) as store:
        found = store.class_members(archived=archived)
    if not found:
        out.print(_("The class has no members yet: add them with bertdrill class add-learner NAME"))
    for member in found:
        role = _("teacher") if member.is_teacher else _("learner")
        state = f" ({_('archived')})" if member.archived else ""
        out.print(f"{escape(member.name)}  {role}{state}")


@class_app.command()
def report(
    lesson_id: LessonOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON for scripts.")] = False,
    db: DbOption = None,
    rollover_hour: RolloverOption = DEFAULT_ROLLOVER,
    lang: LangOption = "",
) -> None:
    """Per learner: due, answered in 7 days, retention, streak, last active; per card across the class,
    hardest first: answers, lapse rate, who failed it last time, ease."""
    from bertdrill.adapters.store import Store
    from bertdrill.core.scheduling.state import study_day

    with Store.open(db, read_only=True) as store:
        today = study_day(clock()(), rollover_hour)
        found = store.class_report(today, lessons=[lesson_id] if lesson_id else None)
        where = store.where
        wrong = diagnosed_wrong(store, [lesson_id] if lesson_id else None)
    if as_json:
        print_json(as_data(found, where, wrong))
        return
    print_lines(as_lines(found, where, wrong))


def diagnosed_wrong(store: Store, lessons: Sequence[str] | None) -> dict[str, list[Diagnosed]]:
    """Each card's most common wrong answers in a class, with the diagnosis of each and, for fresh numbers, the
    variant's values, as the dashboard shows them; none for a database with no published lessons."""
    from bertdrill.adapters.store import PostgresStore

    if not isinstance(store, PostgresStore) or not (published := store.published_lessons()):
        return {}
    # the lessons' code only for a class that published some (100 ms of imports)
    from bertdrill.app.variants import FreshNumbers
    from bertdrill.core.cards import compile_lesson
    from bertdrill.core.diagnosis import Diagnoser
    from bertdrill.core.lesson import parse

    texts = [parse(lesson.source, f"{lesson.path} (published version {lesson.version})") for lesson in published]
    by_id = {card.id: card for lesson in texts for card in compile_lesson(lesson)}
    named = {lesson.id: Diagnoser.for_lesson(lesson) for lesson in texts}
    replay, language = FreshNumbers(texts), i18n.language()
    return {card_id: [(answer, *replay.diagnosed(by_id[card_id], answer.typed, answer.variant, named, language))
                      for answer in answers]
            for card_id, answers in store.wrong_answers(lessons=lessons).items() if card_id in by_id}


def hardest_items(db: str | None, count: int) -> list[tuple[str, str]]:
    """The ``count`` items the class fails most, as (lesson id, item id), hardest first, for ``sheet --from-class``."""
    from bertdrill.adapters.store import Store
    from bertdrill.core.scheduling.state import study_day

    with Store.open(db, read_only=True) as store:
        found = store.class_report(study_day(clock()(), DEFAULT_ROLLOVER))
        where = store.where
    items = failed_items(found.cards, count)
    if not items:
        raise BertdrillError(_("no learner in {where} has failed a card yet, so there is nothing for "
                               "--from-class to choose").format(where=where))
    return items


def failed_items(cards: Sequence[CardSummary], count: int) -> list[tuple[str, str]]:
    """The first ``count`` items of the report's cards (hardest first) that someone failed at their latest review,
    or lapsed on (none: nobody failed yet): the sheet of the hardest items (``sheet --from-class``, the dashboard's)."""
    items: list[tuple[str, str]] = []
    for card in cards:
        if (card.failing or card.lapses) and (card.lesson_id, card.item_id) not in items:
            items.append((card.lesson_id, card.item_id))
    return items[:count]


def class_lessons(db: str | None) -> list[Lesson] | None:
    """The lessons as the class's teacher published them (their texts, every language), for ``sheet --from-class``;
    None for a database that has published none (an SQLite file, a class from before publishing)."""
    from bertdrill.adapters.store import PostgresStore, Store
    from bertdrill.core.lesson import parse

    with Store.open(db, read_only=True) as store:
        published = store.published_lessons() if isinstance(store, PostgresStore) else []
    return [parse(lesson.source, f"{lesson.path} (published version {lesson.version})") for lesson in published] or None


def _percent(share: float | None) -> str:
    from bertdrill.core.languages import written_percent

    return "-" if share is None else written_percent(share, 0, i18n.language())


def as_data(found: ClassReport, where: str, wrong: Mapping[str, list[Diagnosed]] | None = None
            ) -> dict[str, object]:
    """The report as JSON: the same figures the screen shows."""
    wrong = wrong or {}
    return {
        "study_day": found.today.isoformat(),
        "database": where,
        "learners": [{"learner": row.learner, "due": row.due, "answered_7_days": row.answered_week,
                      "retention": row.retention, "reviews_30_days": row.reviews, "streak": row.streak,
                      "last_active": row.last_active.isoformat() if row.last_active else None}
                     for row in found.learners],
        "cards": [{"card": card.card_id, "lesson": card.lesson_id, "item": card.item_id, "answers": card.answers,
                   "lapse_rate": card.lapse_rate, "learners": card.learners, "failed_last_time": card.failing,
                   "failed_share": card.failed_share, "ef": round(card.ef100 / 100, 2) if card.ef100 else None,
                   "stability_days": round(card.stability, 2) if card.stability is not None else None,
                   "wrong_answers": [{"typed": answer.typed, "learners": answer.learners, "times": answer.times,
                                      "variant": answer.variant, "values": values, "diagnosis": note}
                                     for answer, note, values in wrong.get(card.card_id, [])]}
                  for card in found.cards],
    }


def as_lines(found: ClassReport, where: str, wrong: Mapping[str, list[Diagnosed]] | None = None) -> list[str]:
    """The report as text: a table of learners, then the cards, hardest first, then their most common wrong
    answers (a class's), diagnosed."""
    if not found.learners:
        return [_("No learners in {where} yet: add them with bertdrill class add-learner NAME").format(where=where)]
    learners = ngettext("{count} learner", "{count} learners", len(found.learners)).format(
        count=number(len(found.learners)))
    cards = ngettext("{count} card", "{count} cards", len(found.cards)).format(count=number(len(found.cards)))
    lines = [_("Class report for study day {day}: {learners}, {cards} ({where})").format(
        day=found.today.isoformat(), learners=learners, cards=cards, where=where), ""]
    width = max(len(_("learner")), *(len(row.learner) for row in found.learners))
    lines.append(f"{_('learner'):<{width}}  {_('due'):>5}  {_('7 days'):>6}  {_('retention'):>9}  "
                 f"{_('streak'):>6}  {_('last active')}")
    for row in found.learners:
        last = row.last_active.strftime("%Y-%m-%d %H:%M UTC") if row.last_active else "-"
        lines.append(f"{row.learner:<{width}}  {number(row.due):>5}  {number(row.answered_week):>6}  "
                     f"{_percent(row.retention):>9}  {number(row.streak):>6}  {last}")
    lines += ["", _("Cards, hardest first (failed last time: learners whose latest review of it failed)")]
    width = max(len(_("card")), *(len(card.card_id) for card in found.cards)) if found.cards else 4
    lines.append(f"{_('card'):<{width}}  {_('answers'):>7}  {_('lapse rate'):>10}  {_('failed last time'):>16}  "
                 f"{_('EF'):>4}")
    for card in found.cards:
        failed = (f"{number(card.failing)}/{number(card.learners)} {_percent(card.failed_share)}"
                  if card.learners else "-")
        ease = decimal(card.ef100 / 100, 2) if card.ef100 is not None else "-"
        lines.append(f"{card.card_id:<{width}}  {number(card.answers):>7}  {_percent(card.lapse_rate):>10}  {failed:>16}  "
                     f"{ease:>4}")
    return lines + _wrong_lines(found, wrong or {})


def _wrong_lines(found: ClassReport, wrong: Mapping[str, list[Diagnosed]]) -> list[str]:
    """"web/width@small: 2 learners typed 272 for d = 16: …", hardest card first."""
    if not wrong:
        return []
    from bertdrill.app.variants import learners_typed  # the lessons' code only when there are wrong answers to say

    lines = [f"{card.card_id}: {learners_typed(answer.learners, answer.typed, note, values)}"
             for card in found.cards for answer, note, values in wrong.get(card.card_id, [])]
    return ["", _("Most common wrong answers, and what the lesson's diagnosis says of them"), *lines] if lines else []
