"""The baseline gate: a committed JSON file of known failures, keyed by what failed.

Format (``version: 2``)::

    {"version": 2,
     "failures": [
       {"suite": "routing.yaml", "case": "r_017", "role": "admin", "mode": "retrieval",
        "scorer": "routing", "reason": "ranked first: chinook, ..."}]}

An entry is (suite file name, case id, role, mode, scorer) with its reason, and the LLM config
(``"llm": NAME``) when the item ran under ``--nl2sql-llm NAME``, so a baseline
survives moving the suite and one file can hold the known failures of several modes. An entry
excuses only the same scorer failing in the same mode: an item is reported as xfail when every
gating scorer that failed is known for the run's mode; any other failure fails the run and names
what the baseline knew about the item. An entry of one LLM config never excuses (nor is fixed
by) the same item under another config, nor under none; an entry without ``llm`` is keyed as
before, so baselines written without ``--nl2sql-llm`` read the same. An entry whose item ran in its mode and whose scorer did
not fail is **fixed**; an entry whose case or role the suite no longer has is **stale**. With
``--nl2sql-strict-baseline`` both fail the run. ``--nl2sql-update-baseline`` rewrites the
entries of the items that ran (in the run's mode), prunes stale entries, keeps the rest and
says what changed (``BaselineChange``), as syrupy reports unused snapshots.

Version 1 files (``"suite::case[role]" -> {"scorer", "reason"}``) recorded no mode: reading one
in a gating run is a usage error telling how to migrate; ``--nl2sql-update-baseline`` reads it
as the run's mode (``migrate_v1``) and writes version 2.
"""

from __future__ import annotations

import json
import re
import reprlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from pytest_nl2sql.errors import Nl2sqlError
from pytest_nl2sql.suitefile.lock import write_atomic

__all__ = [
    "BASELINE_VERSION",
    "Baseline",
    "BaselineChange",
    "BaselineError",
    "Entry",
    "Judgement",
    "baseline_key",
    "beside",
    "judge",
    "migrate_v1",
]

BASELINE_VERSION = 2
_FIELDS = ("suite", "case", "role", "mode", "scorer")
_V1_KEY = re.compile(r"^(?P<suite>[^:]+)::(?P<case>.+)\[(?P<role>[^\[\]]+)\]$")


class BaselineError(Nl2sqlError):
    pass


@attrs.frozen(order=True)
class Entry:
    """One known failure: this scorer failed for this item in this mode."""

    suite: str
    case: str
    role: str
    mode: str
    scorer: str
    llm: str = ""  # the --nl2sql-llm config the failure was seen under ("" when none)
    reason: str = attrs.field(default="", eq=False, order=False)

    @property
    def key(self) -> tuple[str, ...]:
        return (self.suite, self.case, self.role, self.mode, self.scorer, *((self.llm,) if self.llm else ()))

    @property
    def item(self) -> str:
        return baseline_key(self.suite, self.case, self.role, self.llm)

    def describe(self) -> str:
        return f"{self.item} {self.mode} {self.scorer}"

    def to_json(self) -> dict[str, str]:
        return {**{f: getattr(self, f) for f in _FIELDS}, **({"llm": self.llm} if self.llm else {}), "reason": self.reason}


def baseline_key(suite_path: str | Path, case_id: str, role: str, llm: str | None = None) -> str:
    """``<suite file name>::<case id>[<role>]`` (``[<role>-<llm>]`` under an LLM config): how an
    item is named in messages, as its node id ends."""
    return f"{Path(suite_path).name}::{case_id}[{role}{'-' + llm if llm else ''}]"


def beside(suite_path: str | Path) -> Path:
    """The baseline found without a flag: ``<stem>.baseline.json`` next to the suite."""
    p = Path(suite_path)
    return p.with_name(p.stem + ".baseline.json")


def migrate_v1(failures: Mapping[str, Any], mode: str, where: Path | str = "baseline") -> list[Entry]:
    """Version 1 entries as version 2 ones, seen in ``mode`` (one entry per listed scorer)."""
    out = []
    for key, value in failures.items():
        m = _V1_KEY.match(key)
        if m is None or not isinstance(value, dict):
            raise BaselineError(f"{where}: version 1 entry {key!r} is not 'suite.yaml::case[role]' -> {{\"scorer\": ..., \"reason\": ...}}")
        scorers = [s.strip() for s in str(value.get("scorer") or "engine").split(",") if s.strip()] or ["engine"]
        for scorer in scorers:
            out.append(Entry(m["suite"], m["case"], m["role"], mode, scorer, reason=str(value.get("reason") or "")))
    return out


@attrs.frozen
class BaselineChange:
    """What ``--nl2sql-update-baseline`` did to one file."""

    path: Path
    added: tuple[Entry, ...] = ()
    fixed: tuple[Entry, ...] = ()
    stale: tuple[Entry, ...] = ()
    kept: int = 0
    migrated: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.added or self.fixed or self.stale or self.migrated)

    def lines(self) -> list[str]:
        head = (
            f"{self.path}: {len(self.added)} added, {len(self.fixed)} removed (fixed), "
            f"{len(self.stale)} removed (stale), {self.kept} kept"
            + (" (migrated from version 1)" if self.migrated else "")
        )
        out = [head]
        out += [f"  + {e.describe()}: {e.reason}"[:240] for e in self.added]
        out += [f"  - {e.describe()} (fixed)" for e in self.fixed]
        out += [f"  - {e.describe()} (stale: {why})" for e, why in ((e, e.reason) for e in self.stale)]
        return out


@attrs.frozen
class Judgement:
    """The baseline's word on one item: its verdict, the entries that excused it, the entries
    it fixed, and the entries of the item that did not apply (another mode or scorer)."""

    verdict: str  # passed, failed, xfailed, xfail-fixed
    known: tuple[Entry, ...] = ()
    fixed: tuple[Entry, ...] = ()
    other: tuple[Entry, ...] = ()

    @property
    def state(self) -> str | None:
        """The record's ``baseline`` field: known, fixed, new (failed although the baseline
        knew other failures of the item), or None (the baseline says nothing about it)."""
        if self.verdict == "xfailed":
            return "known"
        if self.fixed and self.verdict != "failed":
            return "fixed"
        if self.verdict == "failed" and (self.other or self.fixed):
            return "new"
        return "fixed" if self.fixed else None

    def reason(self) -> str:
        return "; ".join(f"{e.scorer}: {e.reason}" if e.reason else e.scorer for e in self.known)

    def knew(self) -> str:
        """What the baseline knew about a failing item it does not excuse."""
        entries = sorted({*self.other, *self.fixed})
        return "; ".join(f"mode {e.mode}, {e.scorer}" + (f": {e.reason}" if e.reason else "") for e in entries)


def judge(
    baseline: Baseline | None, suite: str | Path, case: str, role: str, mode: str, failed: Iterable[str] | None, llm: str | None = None
) -> Judgement:
    """``failed``: the gating scorers that failed (None when the item passed); ``llm``: the
    item's LLM config (only that config's entries apply)."""
    entries = baseline.for_item(suite, case, role, llm) if baseline is not None else []
    here = [e for e in entries if e.mode == mode]
    other = tuple(sorted(e for e in entries if e.mode != mode))
    if failed is None:
        return Judgement("xfail-fixed" if here else "passed", fixed=tuple(sorted(here)), other=other)
    failing = set(failed) or {"engine"}
    known = tuple(sorted(e for e in here if e.scorer in failing))
    fixed = tuple(sorted(e for e in here if e.scorer not in failing))
    if {e.scorer for e in known} == failing:
        return Judgement("xfailed", known=known, fixed=fixed, other=other)
    return Judgement("failed", known=(), fixed=fixed, other=tuple(sorted({*other, *known})))


class Baseline:
    def __init__(self, path: Path, entries: Iterable[Entry] = (), *, version: int = BASELINE_VERSION, raw_v1: Mapping[str, Any] | None = None) -> None:
        self.path = path
        self.entries: dict[tuple[str, ...], Entry] = {e.key: e for e in entries}
        self.version = version
        self.raw_v1 = dict(raw_v1) if raw_v1 is not None else None

    @classmethod
    def load(cls, path: Path) -> Baseline:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls(path)
        except RecursionError:  # e.g. 100,000 nested '[' (json recurses once per level)
            raise BaselineError(f"{path}: not a baseline file (nested too deeply to read)") from None
        except (OSError, ValueError) as exc:  # ValueError: not JSON, not UTF-8, a 5,000-digit number
            raise BaselineError(f"{path}: not a baseline file ({str(exc)[:200]})") from None
        shape = f"{path}: a baseline is {{\"version\": 2, \"failures\": [{{\"suite\", \"case\", \"role\", \"mode\", \"scorer\", \"reason\"}}, ...]}}"
        if not isinstance(data, dict):
            raise BaselineError(shape)
        if data.get("version") == 1 and isinstance(data.get("failures"), dict):
            bad = [k for k, v in data["failures"].items() if not isinstance(v, dict)]
            if bad:
                raise BaselineError(
                    f"{path}: failure {bad[0]!r} must map to {{\"scorer\": ..., \"reason\": ...}}, got {reprlib.repr(data['failures'][bad[0]])}"
                )
            return cls(path, version=1, raw_v1=data["failures"])
        if data.get("version") != BASELINE_VERSION or not isinstance(data.get("failures"), list):
            raise BaselineError(shape)
        entries = []
        for i, raw in enumerate(data["failures"]):
            if not isinstance(raw, dict) or any(not isinstance(raw.get(f), str) or not raw.get(f) for f in _FIELDS):
                raise BaselineError(f"{path}: failure #{i + 1} needs the strings {', '.join(_FIELDS)} (and a reason), got {reprlib.repr(raw)}")
            if not isinstance(raw.get("llm", ""), str):
                raise BaselineError(f"{path}: failure #{i + 1}: \"llm\" is the name of an LLM config (a string), got {reprlib.repr(raw['llm'])}")
            entries.append(Entry(*(raw[f] for f in _FIELDS), llm=raw.get("llm") or "", reason=str(raw.get("reason") or "")))
        return cls(path, entries)

    def require_current(self) -> None:
        """A version 1 file cannot gate: it does not say in which mode its failures were seen."""
        if self.version == 1:
            raise BaselineError(
                f"{self.path}: baseline version 1 does not record the mode its failures were seen in, so it "
                "cannot gate; migrate it to version 2 by rerunning in that mode with --nl2sql-update-baseline "
                "(e.g. --nl2sql-mode retrieval --nl2sql-update-baseline) and review the diff"
            )

    def in_mode(self, mode: str) -> Baseline:
        """A version 1 file read as seen in ``mode`` (a version 2 file unchanged)."""
        if self.version != 1:
            return self
        return Baseline(self.path, migrate_v1(self.raw_v1 or {}, mode, self.path))

    def for_item(self, suite: str | Path, case: str, role: str, llm: str | None = None) -> list[Entry]:
        name, llm = Path(suite).name, llm or ""
        return [e for e in self.entries.values() if (e.suite, e.case, e.role, e.llm) == (name, case, role, llm)]

    def known(self, suite: str | Path, case: str, role: str, mode: str, scorer: str, llm: str | None = None) -> Entry | None:
        return self.entries.get((Path(suite).name, case, role, mode, scorer, *((llm,) if llm else ())))

    def stale(self, suites: Mapping[str, Mapping[str, Iterable[str]]]) -> list[tuple[Entry, str]]:
        """Entries of the given suites (``{file name: {case id: roles}}``) whose case or role is gone."""
        out = []
        for e in sorted(self.entries.values()):
            cases = suites.get(e.suite)
            if cases is None:
                continue  # a suite this run did not load: nothing to say about it
            if e.case not in cases:
                out.append((e, f"no approved case {e.case!r} in {e.suite}"))
            elif e.role not in set(cases[e.case]):
                out.append((e, f"case {e.case!r} has no role {e.role!r}"))
        return out

    def updated(
        self,
        mode: str,
        ran: Iterable[tuple[str, str, str, Mapping[str, str], str]],
        suites: Mapping[str, Mapping[str, Iterable[str]]],
    ) -> tuple[Baseline, BaselineChange]:
        """A new baseline from the items that ran in ``mode``: (suite, case, role, {failed scorer:
        reason}, LLM config or ""); stale entries of ``suites`` are pruned, every other entry is kept."""
        base = self.in_mode(mode)
        entries = dict(base.entries)
        added, fixed = [], []
        for suite, case, role, failed, llm in ran:
            for e in base.for_item(suite, case, role, llm):
                if e.mode == mode and e.scorer not in failed:
                    fixed.append(entries.pop(e.key))
            for scorer, reason in failed.items():
                new = Entry(Path(suite).name, case, role, mode, scorer, llm, reason[:300])
                if new.key not in entries:
                    added.append(new)
                entries[new.key] = new
        stale = []
        for e, why in Baseline(self.path, entries.values()).stale(suites):
            entries.pop(e.key, None)
            stale.append(attrs.evolve(e, reason=why))
        new_baseline = Baseline(self.path, entries.values())
        change = BaselineChange(
            self.path,
            tuple(sorted(added)),
            tuple(sorted(fixed)),
            tuple(sorted(stale)),
            kept=len(entries) - len(added),
            migrated=self.version == 1,
        )
        return new_baseline, change

    def to_json(self) -> dict[str, Any]:
        return {"version": BASELINE_VERSION, "failures": [e.to_json() for e in sorted(self.entries.values())]}

    def write(self) -> None:
        write_atomic(self.path, json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n")
