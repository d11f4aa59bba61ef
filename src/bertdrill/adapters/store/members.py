"""A class's members and published lessons, on PostgreSQL: who may log in to the class server, and what they study.

A class is a row (``classroom``), and so is each member (``member``): an id, a display name in any script, a
role (learner or teacher), and the ``learner`` key their schedules and answers are filed under. The key is
given once (``member:<id>``) and never reused, so a member who is archived keeps their history, and a new
member of the same name starts with none of it. A password is kept only as a memory-hard hash (scrypt,
:func:`hash_password`); a login is a random token of which only a SHA-256 is stored. Lessons are published
into the database as their files' text (``published_lesson``, one row per version, never overwritten), so the
class server and ``sheet --from-class`` use the texts the teacher published, in every language, and no learner
needs a lesson file.

These tables exist on PostgreSQL only (schema version 8; a file on SQLite has one learner and no members), in
SQLModel's registry of their own, so the learner's tables in :mod:`.schema` stay what an SQLite file holds.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, cast

from sqlalchemy import Connection, Table, delete, func, insert, select, text, update
from sqlalchemy.orm import registry
from sqlmodel import Field, SQLModel

from bertdrill.adapters.store.schema import UTCTime
from bertdrill.core.errors import StoreError
from bertdrill.core.i18n import _
from bertdrill.ports import PublishedLesson

NAME_MAX = 100  # characters of a member's display name
PASSWORD_MIN = 8
PASSWORD_MAX = 1024  # a longer "password" is a denial of service on scrypt, not a password
LOGIN_DAYS = 30  # a login token's life
# scrypt's cost: 2**14 x 8 (16 MiB of memory per hash, about 50 ms on one core), as OWASP's minimum advises.
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**14, 8, 1


class MemberRole(StrEnum):
    LEARNER = "learner"
    TEACHER = "teacher"


class ClassBase(SQLModel, registry=registry()):
    """The class's tables: a metadata of their own (PostgreSQL only; see the module's docstring)."""


class ClassroomRow(ClassBase, table=True):
    """The class this database holds (one row: two classes are two databases, and share nothing)."""

    __tablename__ = "classroom"
    id: int | None = Field(default=None, primary_key=True)
    name: str
    address: str | None = None  # the class server's address, as learners type it (class init --address)
    created_at: datetime = Field(sa_type=UTCTime)


class MemberRow(ClassBase, table=True):
    """A member of the class: a learner or a teacher, archived (with their history) or not."""

    __tablename__ = "member"
    id: int | None = Field(default=None, primary_key=True)
    class_id: int = Field(foreign_key="classroom.id")
    name: str  # as the teacher typed it (NFC), any script
    name_key: str  # what a login matches: the name NFC-normalised and case-folded; unique among current members
    role: str  # learner | teacher
    learner: str = Field(unique=True)  # the key of their rows in schedule, review...: never given to anyone else
    created_at: datetime = Field(sa_type=UTCTime)
    archived_at: datetime | None = Field(default=None, sa_type=UTCTime)


class MemberPasswordRow(ClassBase, table=True):
    """A member's password, as a scrypt hash with its salt and cost (never the password)."""

    __tablename__ = "member_password"
    member_id: int = Field(primary_key=True, foreign_key="member.id")
    hash: str
    changed_at: datetime = Field(sa_type=UTCTime)


class LoginRow(ClassBase, table=True):
    """A member logged in: the SHA-256 of their token (the token itself is only in their browser)."""

    __tablename__ = "member_login"
    token_hash: str = Field(primary_key=True)
    member_id: int = Field(foreign_key="member.id", index=True)
    created_at: datetime = Field(sa_type=UTCTime)
    expires_at: datetime = Field(sa_type=UTCTime)


class PublishedLessonRow(ClassBase, table=True):
    """A lesson as the teacher published it: the file's text, every version kept."""

    __tablename__ = "published_lesson"
    lesson_id: str = Field(primary_key=True)
    version: int = Field(primary_key=True)  # 1, 2, ... per lesson; the highest is the one in use
    path: str  # the file's name when published, for messages
    source: str  # the lesson file's text (TOML, every language's texts)
    digest: str  # SHA-256 of the text: publishing the same text again adds no version
    published_at: datetime = Field(sa_type=UTCTime)


def _table(model: type[SQLModel]) -> Table:
    return cast(Table, model.__table__)  # type: ignore[attr-defined]  # SQLModel sets it on table=True models


CLASSROOM, MEMBER, MEMBER_PASSWORD, LOGIN, PUBLISHED = (_table(model) for model in (
    ClassroomRow, MemberRow, MemberPasswordRow, LoginRow, PublishedLessonRow))
CLASS_METADATA = ClassBase.metadata


@dataclass(frozen=True)
class Member:
    """A member as the server and the teacher's commands see them."""

    id: int
    name: str
    role: MemberRole
    learner: str  # the key of their rows
    archived: bool = False

    @property
    def is_teacher(self) -> bool:
        return self.role is MemberRole.TEACHER


# --------------------------------------------------------------------------- names and passwords (no SQL)


def display_name(name: str) -> str:
    """A member's name as kept: NFC, spaces around it dropped; StoreError for an empty, too long or
    control-character name. Any script, any punctuation (``%`` too): the name is never put in a URL or SQL."""
    shown = unicodedata.normalize("NFC", name).strip()
    if not shown or len(shown) > NAME_MAX or any(unicodedata.category(ch) in ("Cc", "Cs") for ch in shown):
        raise StoreError(_("{name!r} is not a member's name (1 to {most} characters, no control characters)")
                         .format(name=name, most=NAME_MAX))
    return shown


def name_key(name: str) -> str:
    """What a login compares: the name as :func:`display_name` keeps it, case-folded (``AYŞE`` logs in as ``ayşe``)."""
    return unicodedata.normalize("NFC", display_name(name).casefold())


def check_password(password: str) -> None:
    if not PASSWORD_MIN <= len(password) <= PASSWORD_MAX:
        raise StoreError(_("a password has {least} to {most} characters").format(least=PASSWORD_MIN,
                                                                                   most=PASSWORD_MAX))


def hash_password(password: str) -> str:
    """``scrypt$N$r$p$salt$hash`` (hex): a fresh 16-byte salt, the cost stored beside it so it can be raised later."""
    check_password(password)
    salt = secrets.token_bytes(16)
    digest = _scrypt(password, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P)
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${salt.hex()}${digest.hex()}"


def password_matches(password: str, stored: str) -> bool:
    """Whether ``password`` is the one ``stored`` was made from (constant-time compare; False for a malformed hash)."""
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
        if scheme != "scrypt" or len(password) > PASSWORD_MAX:
            return False
        found = _scrypt(password, bytes.fromhex(salt), int(n), int(r), int(p))
    except (ValueError, MemoryError):
        return False
    return hmac.compare_digest(found, bytes.fromhex(digest))


def _scrypt(password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(password.encode("utf-8"), salt=salt, n=n, r=r, p=p, maxmem=64 * 1024 * 1024, dklen=32)


# A hash to check a password against when the name is unknown, so a wrong name costs as long as a wrong password.
UNKNOWN_NAME_HASH = "scrypt$16384$8$1$" + "00" * 16 + "$" + "00" * 32


def new_token() -> tuple[str, str]:
    """A login token (for the browser's cookie) and its SHA-256 (for the database)."""
    token = secrets.token_urlsafe(32)
    return token, token_hash(token)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def new_password() -> str:
    """A password to hand a learner: 16 letters and digits, easy to read out (no 0/O, 1/l)."""
    alphabet = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    return "".join(secrets.choice(alphabet) for _ in range(16))


def source_digest(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- the statements (run as the teacher's role or the server's)


def _member(row: Any) -> Member:
    return Member(int(row.id), row.name, MemberRole(row.role), row.learner, row.archived_at is not None)


def classroom_id(connection: Connection) -> int | None:
    found = connection.execute(select(CLASSROOM.c.id).order_by(CLASSROOM.c.id).limit(1)).scalar_one_or_none()
    return int(found) if found is not None else None


def ensure_classroom(connection: Connection, name: str, address: str | None, now: datetime) -> int:
    """The class's row, created by the first ``class init``; ``address`` replaces the one kept when given."""
    found = classroom_id(connection)
    if found is None:
        return int(connection.execute(insert(CLASSROOM).values(name=name, address=address, created_at=now)
                                      .returning(CLASSROOM.c.id)).scalar_one())
    if address is not None:
        connection.execute(update(CLASSROOM).where(CLASSROOM.c.id == found).values(address=address))
    return found


def server_address(connection: Connection) -> str | None:
    return connection.execute(select(CLASSROOM.c.address).order_by(CLASSROOM.c.id).limit(1)).scalar_one_or_none()


def _class_or_fail(connection: Connection) -> int:
    found = classroom_id(connection)
    if found is None:
        raise StoreError(_("this database is no class yet: run bertdrill class init first"))
    return found


def find(connection: Connection, name: str, *, archived: bool = False) -> Member:
    """The current member called ``name`` (case and Unicode form aside); with ``archived``, the most recently
    archived one if no current member has it. StoreError when there is none."""
    key = name_key(name)
    query = select(MEMBER).where(MEMBER.c.name_key == key, MEMBER.c.class_id == _class_or_fail(connection))
    if not archived:
        query = query.where(MEMBER.c.archived_at.is_(None))
    row = connection.execute(query.order_by(MEMBER.c.archived_at.is_(None).desc(), MEMBER.c.id.desc())).first()
    if row is None:
        raise StoreError(_("the class has no member called {name!r}").format(name=display_name(name)))
    return _member(row)


def by_id(connection: Connection, member_id: int) -> Member | None:
    row = connection.execute(select(MEMBER).where(MEMBER.c.id == member_id)).first()
    return _member(row) if row is not None else None


def all_members(connection: Connection, *, archived: bool = False) -> list[Member]:
    query = select(MEMBER).order_by(MEMBER.c.name_key, MEMBER.c.id)
    if not archived:
        query = query.where(MEMBER.c.archived_at.is_(None))
    return [_member(row) for row in connection.execute(query)]


def add(connection: Connection, name: str, password_hash: str, role: MemberRole, now: datetime) -> Member:
    """A new member with a key of their own (``member:<id>``): nobody's earlier history is theirs."""
    class_id = _class_or_fail(connection)
    shown, key = display_name(name), name_key(name)
    taken = connection.execute(select(MEMBER.c.id).where(
        MEMBER.c.class_id == class_id, MEMBER.c.name_key == key, MEMBER.c.archived_at.is_(None))).first()
    if taken is not None:
        raise StoreError(_("the class already has a member called {name!r}: rename or archive them first, "
                           "or choose another name").format(name=shown))
    member_id = int(connection.execute(text("SELECT nextval(pg_get_serial_sequence('member', 'id'))")).scalar_one())
    connection.execute(insert(MEMBER).values(id=member_id, class_id=class_id, name=shown, name_key=key,
                                             role=role.value, learner=f"member:{member_id}", created_at=now))
    connection.execute(insert(MEMBER_PASSWORD).values(member_id=member_id, hash=password_hash, changed_at=now))
    return Member(member_id, shown, role, f"member:{member_id}")


def adopt(connection: Connection, name: str, learner: str, password_hash: str, now: datetime) -> Member:
    """A member whose rows are already filed under ``learner`` (a learner role of the old class, moving over)."""
    class_id = _class_or_fail(connection)
    member_id = int(connection.execute(text("SELECT nextval(pg_get_serial_sequence('member', 'id'))")).scalar_one())
    shown = display_name(name)
    connection.execute(insert(MEMBER).values(id=member_id, class_id=class_id, name=shown, name_key=name_key(name),
                                             role=MemberRole.LEARNER.value, learner=learner, created_at=now))
    connection.execute(insert(MEMBER_PASSWORD).values(member_id=member_id, hash=password_hash, changed_at=now))
    return Member(member_id, shown, MemberRole.LEARNER, learner)


def rename(connection: Connection, name: str, new_name: str) -> Member:
    member = find(connection, name)
    shown, key = display_name(new_name), name_key(new_name)
    other = connection.execute(select(MEMBER.c.id).where(
        MEMBER.c.class_id == _class_or_fail(connection), MEMBER.c.name_key == key, MEMBER.c.archived_at.is_(None),
        MEMBER.c.id != member.id)).first()
    if other is not None:
        raise StoreError(_("the class already has a member called {name!r}").format(name=shown))
    connection.execute(update(MEMBER).where(MEMBER.c.id == member.id).values(name=shown, name_key=key))
    return Member(member.id, shown, member.role, member.learner)


def archive(connection: Connection, name: str, now: datetime) -> Member:
    """The member can no longer log in (their logins end now); their history stays, under their own key."""
    member = find(connection, name)
    connection.execute(update(MEMBER).where(MEMBER.c.id == member.id).values(archived_at=now))
    connection.execute(delete(LOGIN).where(LOGIN.c.member_id == member.id))
    return Member(member.id, member.name, member.role, member.learner, archived=True)


def set_password(connection: Connection, member_id: int, password_hash: str, now: datetime, *,
                 keep_login: str | None = None) -> None:
    """A new password; every login of the member ends, but the one whose token hash is ``keep_login``."""
    changed = connection.execute(update(MEMBER_PASSWORD).where(MEMBER_PASSWORD.c.member_id == member_id)
                                 .values(hash=password_hash, changed_at=now)).rowcount
    if not changed:
        raise StoreError(_("no such member"))
    ended = delete(LOGIN).where(LOGIN.c.member_id == member_id)
    connection.execute(ended if keep_login is None else ended.where(LOGIN.c.token_hash != keep_login))


def password_of(connection: Connection, name: str) -> tuple[Member, str] | None:
    """A current member and their password's hash, for a login; None for a name nobody current has."""
    try:
        key = name_key(name)
    except StoreError:
        return None
    row = connection.execute(select(MEMBER, MEMBER_PASSWORD.c.hash).join_from(
        MEMBER, MEMBER_PASSWORD, MEMBER_PASSWORD.c.member_id == MEMBER.c.id).where(
        MEMBER.c.name_key == key, MEMBER.c.archived_at.is_(None))).first()
    return (_member(row), row.hash) if row is not None else None


def own_password(connection: Connection, member_id: int) -> str | None:
    return connection.execute(select(MEMBER_PASSWORD.c.hash).where(
        MEMBER_PASSWORD.c.member_id == member_id)).scalar_one_or_none()


def start_login(connection: Connection, member_id: int, hashed_token: str, now: datetime) -> None:
    connection.execute(delete(LOGIN).where(LOGIN.c.expires_at <= now))  # a few old rows at most, on every login
    connection.execute(insert(LOGIN).values(token_hash=hashed_token, member_id=member_id, created_at=now,
                                            expires_at=now + timedelta(days=LOGIN_DAYS)))


def logged_in(connection: Connection, hashed_token: str, now: datetime) -> Member | None:
    """The current member of a login token that has not expired; None for any other token."""
    row = connection.execute(select(MEMBER).join_from(LOGIN, MEMBER, MEMBER.c.id == LOGIN.c.member_id).where(
        LOGIN.c.token_hash == hashed_token, LOGIN.c.expires_at > now, MEMBER.c.archived_at.is_(None))).first()
    return _member(row) if row is not None else None


def end_login(connection: Connection, hashed_token: str) -> None:
    connection.execute(delete(LOGIN).where(LOGIN.c.token_hash == hashed_token))


def publish(connection: Connection, lesson_id: str, path: str, source: str, now: datetime) -> int | None:
    """Keep ``source`` as the lesson's newest version; returns its number, or None when the newest is already it."""
    newest = connection.execute(select(PUBLISHED.c.version, PUBLISHED.c.digest).where(
        PUBLISHED.c.lesson_id == lesson_id).order_by(PUBLISHED.c.version.desc()).limit(1)).first()
    digest = source_digest(source)
    if newest is not None and newest.digest == digest:
        return None
    version = 1 if newest is None else int(newest.version) + 1
    connection.execute(insert(PUBLISHED).values(lesson_id=lesson_id, version=version, path=path, source=source,
                                                digest=digest, published_at=now))
    return version


def published_versions(connection: Connection) -> dict[str, int]:
    """Each published lesson's newest version number (a cheap look: has anything been published since?)."""
    return {lesson_id: int(version) for lesson_id, version in connection.execute(
        select(PUBLISHED.c.lesson_id, func.max(PUBLISHED.c.version)).group_by(PUBLISHED.c.lesson_id))}


def published(connection: Connection) -> list[PublishedLesson]:
    """The newest version of every published lesson, by lesson id."""
    newest = (select(PUBLISHED.c.lesson_id, func.max(PUBLISHED.c.version).label("version"))
              .group_by(PUBLISHED.c.lesson_id).subquery("newest"))
    rows = connection.execute(select(PUBLISHED).join(newest, (newest.c.lesson_id == PUBLISHED.c.lesson_id)
                                                     & (newest.c.version == PUBLISHED.c.version))
                              .order_by(PUBLISHED.c.lesson_id))
    return [PublishedLesson(row.lesson_id, int(row.version), row.path, row.source, row.published_at) for row in rows]
