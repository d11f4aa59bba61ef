"""``bertdrill class``: a class on one PostgreSQL database: set it up, add learners, read the report.

The teacher runs these with the teacher's role (the one that creates the tables, and so reads
every learner's rows); each learner runs the usual commands with a role of their own. See
docs/classroom.md.
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
    escape,
    load,
    out,
    print_json,
)
from bertdrill.core.errors import BertdrillError
from bertdrill.core.i18n import _, ngettext
from bertdrill.core.limits import DEFAULT_ROLLOVER

if TYPE_CHECKING:
    from bertdrill.adapters.store import ClassReport, PostgresStore

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


@class_app.command()
def init(db: DbOption = None, paths: FilesOption = None, lang: LangOption = "") -> None:
    """Create the class's tables, load its lessons and turn on row-level security (run it again after
    changing the lessons)."""
    from bertdrill.adapters.lessons import all_cards

    lessons = load(paths)
    with _open_class(db) as store:
        group = store.class_init(all_cards(lessons))
        where = store.where
    out.print(ngettext("Class ready in {where}: {lessons} lesson; each learner sees only their own reviews "
                       "(row-level security), the teacher's role sees them all. Learners' group role: {group}.",
                       "Class ready in {where}: {lessons} lessons; each learner sees only their own reviews "
                       "(row-level security), the teacher's role sees them all. Learners' group role: {group}.",
                       len(lessons)).format(where=escape(where), lessons=len(lessons), group=escape(group)))
    out.print(_("Add a learner with: bertdrill class add-learner NAME"))


@class_app.command("add-learner")
def add_learner(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The learner's name, which becomes their PostgreSQL role.")],
    password: Annotated[str | None, typer.Option(
        "--password", show_default=False, help="The role's password (default: a new random one, printed once).")] = None,
    db: DbOption = None,
    lang: LangOption = "",
) -> None:
    """Create a learner's PostgreSQL role and print how that learner connects."""
    import secrets

    chosen = password or secrets.token_urlsafe(12)
    with _open_class(db) as store:
        created, url = store.add_learner(name, chosen)
    if created:
        out.print(_("Added {name}: a PostgreSQL role of their own, in the class.").format(name=escape(name)))
    else:
        out.print(_("{name} already had a PostgreSQL role: it is now in the class, and its password is unchanged "
                    "(the URL below shows the one given here).").format(name=escape(name)))
    out.print(_("{name} connects with:").format(name=escape(name)))
    out.print(f"  export BERTDRILL_DB='{escape(url)}'")
    out.print("  bertdrill review")
    if created and password is None:
        out.print(_("The password is shown only now: pass it on privately."))


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
    if as_json:
        print_json(as_data(found, where))
        return
    for line in as_lines(found, where):
        out.print(escape(line))


def hardest_items(db: str | None, count: int) -> list[tuple[str, str]]:
    """The ``count`` items the class fails most, as (lesson id, item id), hardest first, for ``sheet --from-class``:
    items of cards someone failed at their latest review, or lapsed on."""
    from bertdrill.adapters.store import Store
    from bertdrill.core.scheduling.state import study_day

    with Store.open(db, read_only=True) as store:
        found = store.class_report(study_day(clock()(), DEFAULT_ROLLOVER))
        where = store.where
    items: list[tuple[str, str]] = []
    for card in found.cards:
        if (card.failing or card.lapses) and (card.lesson_id, card.item_id) not in items:
            items.append((card.lesson_id, card.item_id))
    if not items:
        raise BertdrillError(_("no learner in {where} has failed a card yet, so there is nothing for "
                               "--from-class to choose").format(where=where))
    return items[:count]


def _percent(share: float | None) -> str:
    return "-" if share is None else f"{share:.0%}"


def as_data(found: ClassReport, where: str) -> dict[str, object]:
    """The report as JSON: the same figures the screen shows."""
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
                   "stability_days": round(card.stability, 2) if card.stability is not None else None}
                  for card in found.cards],
    }


def as_lines(found: ClassReport, where: str) -> list[str]:
    """The report as text: a table of learners, then the cards, hardest first."""
    if not found.learners:
        return [_("No learners in {where} yet: add them with bertdrill class add-learner NAME").format(where=where)]
    lines = [_("Class report for study day {day}: {learners} learners, {cards} cards ({where})").format(
        day=found.today.isoformat(), learners=len(found.learners), cards=len(found.cards), where=where), ""]
    width = max(len(_("learner")), *(len(row.learner) for row in found.learners))
    lines.append(f"{_('learner'):<{width}}  {_('due'):>5}  {_('7 days'):>6}  {_('retention'):>9}  "
                 f"{_('streak'):>6}  {_('last active')}")
    for row in found.learners:
        last = row.last_active.strftime("%Y-%m-%d %H:%M UTC") if row.last_active else "-"
        lines.append(f"{row.learner:<{width}}  {row.due:>5}  {row.answered_week:>6}  {_percent(row.retention):>9}  "
                     f"{row.streak:>6}  {last}")
    lines += ["", _("Cards, hardest first (failed last time: learners whose latest review of it failed)")]
    width = max(len(_("card")), *(len(card.card_id) for card in found.cards)) if found.cards else 4
    lines.append(f"{_('card'):<{width}}  {_('answers'):>7}  {_('lapse rate'):>10}  {_('failed last time'):>16}  "
                 f"{_('EF'):>4}")
    for card in found.cards:
        failed = f"{card.failing}/{card.learners} {_percent(card.failed_share)}" if card.learners else "-"
        ease = f"{card.ef100 / 100:.2f}" if card.ef100 is not None else "-"
        lines.append(f"{card.card_id:<{width}}  {card.answers:>7}  {_percent(card.lapse_rate):>10}  {failed:>16}  "
                     f"{ease:>4}")
    return lines
