"""The teacher's pages beside the dashboard: one learner's page, and the sheet of the hardest items.

- the dashboard's charts: :mod:`.class_charts`;
- ``GET /teacher/learners/{id}``: one learner's figures, the same charts as their own stats page, read
  through the teacher's view of that learner, and "who failed what": the cards they fail most, with what
  they typed and the lesson's diagnosis of it;
- ``GET /teacher/sheet``: the items the class fails most as a quiz sheet to print (HTML, the sheet code of
  ``bertdrill sheet --from-class``, over the lessons' texts as the teacher published them), or its key.

Every page here is the teacher's: a learner gets 403, someone logged out the login page, an id that is no
learner of this class 404, a count or seed out of range 400. Nothing here changes anything, so the pages are
plain GETs (the sheet's form too) and carry no CSRF token to check.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from bertdrill.cli.base import number
from bertdrill.core import i18n
from bertdrill.core.i18n import _
from bertdrill.core.scheduling.state import study_day
from bertdrill.web import pages, stats
from bertdrill.web.class_charts import SEED_MOST, SHEET_ITEMS, SHEET_MOST
from bertdrill.web.pages import render, speaking

if TYPE_CHECKING:
    from bertdrill.adapters.store import PostgresStore
    from bertdrill.adapters.store.members import Member
    from bertdrill.web.classroom import ClassServer

FAILED_SHOWN = 10  # cards on a learner's page, most failed first
SHEET_POLICY = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; "
                "frame-ancestors 'none'; base-uri 'none'")  # a sheet's own style sheet is inline; it has no script


class TeachingPages:
    """A learner's page and the sheet of the hardest items, for the teacher."""

    def __init__(self, server: ClassServer):
        self.server = server

    async def learner(self, request: Request) -> Response:
        return await run_in_threadpool(self._learner, request)

    def _learner(self, request: Request) -> Response:
        teacher = self.server.teacher(request)
        store = self.server.store.acting_as(teacher)
        learner = self._member(store, request.path_params["member"])
        server = self.server
        with speaking(pages.page_language(request, server.languages)):
            today = study_day(server.clock(), server.limits.rollover_hour)
            context = stats.progress(store.reading_for(learner), server.by_id, today)
            failed = []
            for each in store.failed_most(learner, limit=FAILED_SHOWN):
                card = server.by_id.get(each.card_id)
                notes = [(typed, *(server.diagnosed(card, typed, variant) if card else ("", variant)))
                         for typed, variant in each.typed]
                failed.append((each, card, notes))
            return render(request, "learner.html", member=teacher, learner=learner, failed=failed, **context)

    @staticmethod
    def _member(store: PostgresStore, wanted: int) -> Member:
        """The learner with this id in this class (archived ones too: their history is kept); else 404."""
        for member in store.class_members(archived=True):
            if member.id == wanted and not member.is_teacher:
                return member
        raise HTTPException(404, _("no learner of this class has that id"))

    async def sheet(self, request: Request) -> Response:
        return await run_in_threadpool(self._sheet, request)

    def _sheet(self, request: Request) -> Response:
        from bertdrill.adapters.export.files import as_bytes
        from bertdrill.adapters.export.sheets import model
        from bertdrill.adapters.export.sheets.formats import KeyMode, SheetFormat
        from bertdrill.adapters.export.sheets.output import documents
        from bertdrill.cli.classroom import failed_items

        teacher = self.server.teacher(request)
        count = _whole(request, "count", SHEET_ITEMS, 1, SHEET_MOST)
        seed = _whole(request, "seed", 0, 0, SEED_MOST)
        part = request.query_params.get("part", "sheet")
        if part not in ("sheet", "key"):
            raise HTTPException(400, _("part is sheet or key"))
        server = self.server
        store = server.store.acting_as(teacher)
        with speaking(pages.page_language(request, server.languages)):
            report = store.class_report(study_day(server.clock(), server.limits.rollover_hour))
            items = failed_items(report.cards, count)
            if not items:
                return render(request, "error.html", 409, member=teacher, status=409, reason="", detail=_(
                    "No learner has failed a card yet, so there is no sheet of the hardest items to print."))
            built = model.build_sheet(server.lessons, language=i18n.language(), seed=seed, count=len(items), items=items,
                                      title=_("The hardest items of the class"))
            files = documents(built, SheetFormat.html, Path("hardest.html"), KeyMode.separate)
        html = as_bytes(files[0 if part == "sheet" else 1][1])
        return Response(html, media_type="text/html; charset=utf-8",
                        headers={"Content-Security-Policy": SHEET_POLICY})


def _whole(request: Request, name: str, default: int, least: int, most: int) -> int:
    """A whole-number query parameter from ``least`` to ``most``; 400 for anything else."""
    given = request.query_params.getlist(name)
    if not given:
        return default
    found = pages.whole(given[0], most) if len(given) == 1 else None
    if found is None or found < least:
        raise HTTPException(400, _("{name} is a whole number from {least} to {most}").format(
            name=name, least=number(least), most=number(most)))
    return found
