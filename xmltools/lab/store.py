"""An experiment's results in SQLite: one row per trial, one per turn, written as each trial ends.

The database is the run's memory: a run that was killed resumes by skipping
the trials it holds (each trial's rows are written in one transaction, so a
trial is either all there or not there), and ``xmltools experiment show``
reads the matrix back from it.  The standard library's ``sqlite3``; the
database is opened per call, so threads and processes never share a handle.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError

__all__ = ["Store", "TrialRow", "TurnRow"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS trials (
    variant TEXT NOT NULL, model TEXT NOT NULL, task TEXT NOT NULL, idx INTEGER NOT NULL,
    passed INTEGER NOT NULL, claimed INTEGER NOT NULL, stop_reason TEXT NOT NULL,
    turns INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,
    estimated INTEGER NOT NULL, cached INTEGER NOT NULL, cost REAL NOT NULL, seconds REAL NOT NULL,
    answer TEXT, checks TEXT NOT NULL, first_error TEXT, transcript TEXT, finished TEXT NOT NULL,
    browser TEXT,
    PRIMARY KEY (variant, model, task, idx)
);
CREATE TABLE IF NOT EXISTS turns (
    variant TEXT NOT NULL, model TEXT NOT NULL, task TEXT NOT NULL, idx INTEGER NOT NULL,
    n INTEGER NOT NULL, action TEXT, status TEXT, url TEXT,
    PRIMARY KEY (variant, model, task, idx, n)
);
"""

ADDED_COLUMNS = (("browser", "TEXT"),)  # columns newer than the first schema, in the order added


@dataclass
class TurnRow:
    n: int
    action: str | None
    status: str | None
    url: str | None


@dataclass
class TrialRow:
    variant: str
    model: str
    task: str
    idx: int
    passed: bool
    claimed: bool  # the model said it was done (called the completion tool before a limit ran out)
    stop_reason: str
    turns: int
    prompt_tokens: int
    completion_tokens: int
    estimated: bool  # some tokens were estimated: the server did not say
    cached: bool  # every model reply came from the cache
    cost: float
    seconds: float
    answer: str | None
    checks: list[dict[str, Any]]  # {"check": ..., "problem": None | "..."}
    first_error: str | None
    transcript: str | None
    finished: str
    browser: str | None = None  # where its browser ran: local, or a remote endpoint
    turn_rows: list[TurnRow] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str, str, int]:
        return self.variant, self.model, self.task, self.idx

    @property
    def false_claim(self) -> bool:
        return self.claimed and not self.passed


class Store:
    """The results database of one experiment run (``results.sqlite`` in the run's folder)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._db() as db:
            db.executescript(SCHEMA)
            have = {str(r[1]) for r in db.execute("PRAGMA table_info(trials)")}
            for column, kind in ADDED_COLUMNS:  # a database an earlier version wrote gains them
                if column not in have:
                    try:
                        db.execute(f"ALTER TABLE trials ADD COLUMN {column} {kind}")
                    except sqlite3.OperationalError as e:  # another process added it first
                        if "duplicate column" not in str(e):
                            raise

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        with closing(sqlite3.connect(self.path, timeout=30)) as db, db:
            yield db

    def start(self, fingerprint: str) -> None:
        """Tie the database to an experiment; a different one is a usage error (start over with --fresh)."""
        with self._db() as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
            if row is None:
                db.execute("INSERT INTO meta VALUES ('fingerprint', ?)", (fingerprint,))
            elif row[0] != fingerprint:
                raise UsageError(
                    f"{self.path} holds the results of another experiment (its variants, models or tasks"
                    " differ): give --fresh to start over, or another --out"
                )

    def done(self) -> set[tuple[str, str, str, int]]:
        with self._db() as db:
            rows = db.execute("SELECT variant, model, task, idx FROM trials").fetchall()
        return {(str(v), str(m), str(t), int(k)) for v, m, t, k in rows}

    def add(self, row: TrialRow) -> None:
        """Write a trial and its turns at once: after a kill it is either whole or absent."""
        data = asdict(row)
        turns = data.pop("turn_rows")
        data["checks"] = json.dumps(data["checks"])
        cols = ", ".join(data)
        marks = ", ".join("?" for _ in data)
        with self._db() as db:
            db.execute(f"INSERT OR REPLACE INTO trials ({cols}) VALUES ({marks})", tuple(data.values()))
            db.executemany(
                "INSERT OR REPLACE INTO turns VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(*row.key, t["n"], t["action"], t["status"], t["url"]) for t in turns],
            )

    def trials(self) -> list[TrialRow]:
        with self._db() as db:
            db.row_factory = sqlite3.Row
            rows = db.execute("SELECT * FROM trials ORDER BY task, model, variant, idx").fetchall()
        out = []
        for r in rows:
            d = dict(r)
            d["checks"] = json.loads(d["checks"])
            for flag in ("passed", "claimed", "estimated", "cached"):
                d[flag] = bool(d[flag])
            out.append(TrialRow(**d))
        return out

    def turn_count(self) -> int:
        with self._db() as db:
            return int(db.execute("SELECT COUNT(*) FROM turns").fetchone()[0])


def as_records(rows: Sequence[TrialRow], *, flat: bool = False) -> list[dict[str, Any]]:
    """The trials as plain records, without their turns: ``checks`` a list of ``{"check", "problem"}``
    (for JSON), or, ``flat``, that list as one JSON string (for CSV, whose cells are text)."""
    out = []
    for r in rows:
        d = asdict(r)
        d.pop("turn_rows")
        d["false_claim"] = r.false_claim
        if flat:
            d["checks"] = json.dumps(d["checks"])
        out.append(d)
    return out
