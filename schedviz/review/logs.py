"""kube-scheduler's log as a list of records: klog text or JSON, any verbosity, any prefix.

Two formats reach a reviewer (k8s.io/klog/v2 and k8s.io/component-base/logs/json):

- klog text, the default: ``I1128 13:11:30.123456    1234 schedule_one.go:314] "Successfully
  bound pod to node" pod="default/web-1" node="node-a" evaluatedNodes=3 feasibleNodes=2``: a
  header (severity, month and day, time, process id, caller), the message as a Go quoted string,
  then ``key=value`` pairs whose values are quoted strings (Go escapes), bare numbers and words,
  JSON (``Plugins={...}``, ``resourceclaims=[]``) or multi-line strings (``config=<`` then lines
  starting with a tab, closed by `` >``).
- JSON (``--logging-format=json``): one object a line, ``ts`` (milliseconds since the epoch),
  ``caller``, ``msg``, ``v`` (the verbosity of an info line), ``err`` (of an error), ``logger``,
  then the values; a ``klog.KObj`` is ``{"name": ..., "namespace": ...}``.

Each line may carry what collected it: ``kubectl logs --timestamps`` (an RFC 3339 time and a
space), the container runtime's file (``<time> stderr F ``) or journald (``May 21 20:52:25 host
kube-scheduler[91664]: ``). klog's header has no year: the prefix's year is used when there is
one, else the caller's ``year``, and a month that goes back (December to January) moves to the
next year. Lines that are none of these (an unstructured ``Infof`` line, a stack trace, a
truncated record) are counted as skipped, never fatal.

The process id in klog's header tells scheduler instances apart (a leader change starts a new
process); JSON has none, so there a startup line ("Starting Kubernetes Scheduler") starts a new
instance within a file.
"""

from __future__ import annotations

import calendar
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

STARTUP_MESSAGE = "Starting Kubernetes Scheduler"

_KLOG_HEADER = re.compile(
    r"(?P<severity>[IWEF])(?P<month>\d\d)(?P<day>\d\d) "
    r"(?P<clock>\d\d:\d\d:\d\d(?:\.\d+)?) +(?P<pid>\d+) (?P<caller>[^ \]]*)\] ?"
)
# kubectl logs --timestamps, and the container runtime's log file (CRI: "<time> <stream> <F|P> ").
_RFC3339_PREFIX = re.compile(
    r"(?P<time>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)) "
    r"(?:(?:stdout|stderr) [FP] )?"
)
_JOURNALD_PREFIX = re.compile(r"[A-Z][a-z]{2} +\d+ \d\d:\d\d:\d\d \S+ [^ :]+?(?:\[\d+\])?: ")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-/]*=")


class LogFormatError(ValueError):
    """A log file that is not text (binary, another encoding)."""


@dataclass(slots=True)
class LogRecord:
    """One log entry: when, which scheduler process, how verbose, the message and its values."""

    time: float  # seconds since the epoch, UTC
    source: str  # the file it came from
    line: int  # its first line in that file, from 1
    instance: str  # the scheduler process that wrote it
    message: str
    values: dict[str, Any] = field(default_factory=dict)
    verbosity: int | None = None  # the V level of an info line of a JSON log
    severity: str = "I"
    caller: str = ""


@dataclass
class LogReading:
    """The records of some log files, merged by time, and what could not be read."""

    records: list[LogRecord] = field(default_factory=list)
    skipped: int = 0
    # A few of the skipped lines, for the reviewer ("file:line: text").
    skipped_examples: list[str] = field(default_factory=list)
    instances: list[str] = field(default_factory=list)


SKIPPED_EXAMPLES = 5


def read_logs(files: Iterable[tuple[str, str]], *, year: int) -> LogReading:
    """Reads ``(name, text)`` log files and merges their records by time (ties keep the order
    of the files and of the lines)."""
    reading = LogReading()
    for name, text in files:
        reader = _FileReader(name, year)
        reading.records.extend(reader.read(text))
        reading.skipped += reader.skipped
        room = SKIPPED_EXAMPLES - len(reading.skipped_examples)
        reading.skipped_examples.extend(reader.skipped_examples[: max(room, 0)])
        for instance in reader.instances:
            if instance not in reading.instances:
                reading.instances.append(instance)
    reading.records.sort(key=lambda record: record.time)
    return reading


def _strip_prefix(line: str) -> tuple[str, int | None]:
    """The line without what collected it, and the year that prefix gives (None: no year)."""
    match = _RFC3339_PREFIX.match(line)
    if match is not None:
        return line[match.end() :], int(match.group("time")[:4])
    match = _JOURNALD_PREFIX.match(line)
    if match is not None:
        return line[match.end() :], None
    return line, None


class _FileReader:
    def __init__(self, name: str, year: int) -> None:
        self.name = name
        self.year = year
        self.skipped = 0
        self.skipped_examples: list[str] = []
        self.instances: list[str] = []
        self._last_month = 0
        # Startups seen in this file, and the last process id: either starts a new instance.
        self._starts = 0
        self._pid = ""

    def read(self, text: str) -> Iterator[LogRecord]:
        if "\x00" in text[:4096]:
            raise LogFormatError(f"{self.name}: not a text log (it holds NUL bytes)")
        pending: list[str] = []
        pending_line = 0
        pending_year: int | None = None
        for number, raw in enumerate(text.splitlines(), start=1):
            line, year = _strip_prefix(raw)
            if _KLOG_HEADER.match(line) or line.lstrip().startswith("{"):
                if pending:
                    yield from self._record(pending, pending_line, pending_year)
                pending, pending_line, pending_year = [line], number, year
            elif pending and (line.startswith(("\t", " >")) or line == ">"):
                pending.append(line)  # a multi-line value goes on
            elif line.strip():
                if pending:
                    yield from self._record(pending, pending_line, pending_year)
                    pending = []
                self._skip(number, raw)
        if pending:
            yield from self._record(pending, pending_line, pending_year)

    def _skip(self, number: int, text: str) -> None:
        self.skipped += 1
        if len(self.skipped_examples) < SKIPPED_EXAMPLES:
            self.skipped_examples.append(f"{self.name}:{number}: {text[:200]}")

    def _record(self, lines: list[str], number: int, year: int | None) -> Iterator[LogRecord]:
        first = lines[0]
        record = (
            self._json_record(first, number)
            if first.lstrip().startswith("{")
            else self._klog_record("\n".join(lines), number, year)
        )
        if record is None:
            self._skip(number, first)
            return
        if record.instance not in self.instances:
            self.instances.append(record.instance)
        yield record

    # ------------------------------------------------------------------ klog text

    def _klog_record(self, text: str, number: int, year: int | None) -> LogRecord | None:
        header = _KLOG_HEADER.match(text)
        if header is None:
            return None
        rest = text[header.end() :]
        if not rest.startswith('"'):
            return None  # printf-style (Infof): no structure to read
        try:
            message, end = _go_string(rest, 0)
            values = _klog_values(rest[end:])
        except ValueError:
            return None
        month, day = int(header.group("month")), int(header.group("day"))
        if year is not None:
            self.year = year
        elif month < self._last_month:
            self.year += 1
        self._last_month = month
        try:
            when = _epoch(self.year, month, day, header.group("clock"))
        except ValueError:
            return None
        pid = header.group("pid")
        if message == STARTUP_MESSAGE or pid != self._pid:
            self._starts += 1
            self._pid = pid
        return LogRecord(
            time=when,
            source=self.name,
            line=number,
            instance=self._instance(f"pid {pid}"),
            message=message,
            values=values,
            severity=header.group("severity"),
            caller=header.group("caller"),
        )

    def _instance(self, process: str) -> str:
        """The name of the scheduler process writing now: the file, its process id, and which
        start in the file it is (containers all run as pid 1, so the file tells them apart)."""
        parts = [self.name, process, f"start {self._starts}" if self._starts > 1 else ""]
        return " ".join(part for part in parts if part)

    # ------------------------------------------------------------------ JSON

    def _json_record(self, text: str, number: int) -> LogRecord | None:
        try:
            entry = json.loads(text)
        except ValueError:
            return None
        if not isinstance(entry, dict) or not isinstance(entry.get("msg"), str):
            return None
        ts = entry.get("ts")
        if not isinstance(ts, (int, float)) or isinstance(ts, bool):
            return None
        if entry["msg"] == STARTUP_MESSAGE or not self._starts:
            self._starts += 1
        verbosity = entry.get("v")
        values = {
            key: _json_value(value)
            for key, value in entry.items()
            if key not in ("ts", "caller", "msg", "v", "level")
        }
        return LogRecord(
            time=float(ts) / 1000.0,
            source=self.name,
            line=number,
            instance=self._instance(""),
            message=entry["msg"],
            values=values,
            verbosity=verbosity if isinstance(verbosity, int) else None,
            severity="E" if "err" in entry and verbosity is None else "I",
            caller=str(entry.get("caller", "")),
        )


def _json_value(value: Any) -> Any:
    """A ``klog.KObj`` ({"name", "namespace"}) as klog text writes it: ``namespace/name``."""
    if isinstance(value, dict) and set(value) <= {"name", "namespace"} and "name" in value:
        namespace = value.get("namespace") or ""
        return f"{namespace}/{value['name']}" if namespace else str(value["name"])
    return value


def _epoch(year: int, month: int, day: int, clock: str) -> float:
    whole, _, fraction = clock.partition(".")
    moment = datetime.strptime(f"{year:04d}-{month:02d}-{day:02d} {whole}", "%Y-%m-%d %H:%M:%S")
    return calendar.timegm(moment.timetuple()) + (float(f"0.{fraction}") if fraction else 0.0)


def parse_rfc3339(text: str) -> float:
    """Seconds since the epoch of an RFC 3339 time (any number of fraction digits)."""
    match = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)", text.strip())
    if match is None:
        raise ValueError(f"not an RFC 3339 time: {text!r}")
    base, fraction, zone = match.groups()
    moment = datetime.fromisoformat(base + ("+00:00" if zone == "Z" else zone))
    return moment.timestamp() + (float(fraction) if fraction else 0.0)


# ---------------------------------------------------------------------- klog's key=value pairs

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "a": "\a", "b": "\b"}
_ESCAPES.update({"f": "\f", "v": "\v", "'": "'"})


def _go_string(text: str, start: int) -> tuple[str, int]:
    """A Go ``%q`` string starting at ``text[start]`` (a double quote): its value and the index
    after its closing quote. Raises ValueError when it does not close."""
    out: list[str] = []
    index = start + 1
    while True:
        close = text.find('"', index)
        if close < 0:
            break
        escape = text.find("\\", index, close)
        if escape < 0:
            out.append(text[index:close])
            return "".join(out), close + 1
        out.append(text[index:escape])
        index = escape
        code = text[index + 1 : index + 2]
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            index += 2
        elif code in ("x", "u", "U"):
            width = {"x": 2, "u": 4, "U": 8}[code]
            digits = text[index + 2 : index + 2 + width]
            out.append(chr(int(digits, 16)))
            index += 2 + width
        elif code.isdigit():
            out.append(chr(int(text[index + 1 : index + 4], 8)))
            index += 4
        else:
            raise ValueError(f"bad escape at {index}")
    raise ValueError("unterminated string")


def _klog_values(text: str) -> dict[str, Any]:
    values: dict[str, Any] = {}
    index = 0
    length = len(text)
    while index < length:
        while index < length and text[index] in " \n":
            index += 1
        if index >= length:
            break
        key_match = _KEY.match(text, index)
        if key_match is None:
            raise ValueError(f"no key at {index}")
        key = key_match.group()[:-1]
        index = key_match.end()
        value, index = _klog_value(text, index)
        values[key] = value
    return values


def _klog_value(text: str, index: int) -> tuple[Any, int]:
    if text.startswith('"', index):
        return _go_string(text, index)
    if text.startswith("<\n", index):
        close = text.find("\n >", index)
        if close < 0:
            raise ValueError("unterminated multi-line value")
        body = text[index + 2 : close]
        lines = [line[1:] if line.startswith("\t") else line for line in body.split("\n")]
        return "\n".join(lines), close + 3
    if text.startswith(("{", "["), index):
        end = _balanced_end(text, index)
        raw = text[index:end]
        try:
            return json.loads(raw), end
        except ValueError:
            return raw, end
    end = index
    while end < len(text) and text[end] not in " \n":
        end += 1
    return _scalar(text[index:end]), end


def _balanced_end(text: str, index: int) -> int:
    depth = 0
    position = index
    while position < len(text):
        char = text[position]
        if char == '"':
            _, position = _go_string(text, position)
            continue
        if char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return position + 1
        position += 1
    raise ValueError("unbalanced value")


def _scalar(raw: str) -> Any:
    if re.fullmatch(r"-?\d+", raw):
        return int(raw)
    if re.fullmatch(r"-?\d+\.\d*(?:e[-+]?\d+)?", raw):
        return float(raw)
    if raw in ("true", "false"):
        return raw == "true"
    return raw
