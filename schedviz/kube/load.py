"""Loading manifests: YAML or JSON text in, validated objects out, or every error at once.

Plays the part of ``kubectl create -f`` against the API server: documents are split as
k8s.io/apimachinery/pkg/util/yaml does (multi-document YAML, a JSON object, a JSON array),
``kind: List`` and ``*List`` documents (what ``kubectl get -o yaml`` prints) are expanded item by
item as kubectl's resource builder does, and each object goes through ``decode_object``.
KubeSchedulerConfiguration documents are passed through raw for the config package.

What real dumps hold is taken as a cluster would have it: the items of a typed list
(``NodeList``, ``PodList``: what the API server returns, whose items carry no kind) take the
list's kind and apiVersion; ``metadata.generateName`` without a name gets a name as the API
server generates one (``schedviz.kube.names``, seeded); objects of kinds the scheduler never
reads (ConfigMap, Secret, ServiceAccount, custom resources...) are skipped and named in
``Manifests.skipped_notice`` rather than refused. A kind the scheduler reads in a version the
API server does not serve is still refused in its words.

Deliberately different: the input is all or nothing (kubectl creates the valid documents and
reports the rest); aliases, depth and alias expansion are bounded so that hostile YAML (an
"alias bomb", a self-referencing anchor, thousands of nested brackets) fails with a clear
message instead of exhausting memory or the stack. Strings holding a NUL character or a lone
surrogate (JSON can escape both) are refused, naming the field: neither can be stored
(PostgreSQL text and jsonb refuse NUL; UTF-8 has no surrogates); so are integers longer than
Python converts (``sys.get_int_max_str_digits()``, 4300 digits by default), also naming the
field. Inputs too big to be accepted are refused while they are read, not after (``ObjectLimits``:
at most so many objects, nodes, pods in one input): YAML's document markers are counted before
anything is parsed, a List's items before any is decoded, and objects, nodes and pods as they
are decoded, the input refused at the first one past a limit. Only safe loading is used:
libyaml's CSafeLoader when the text cannot nest deeply, else a bounded pure-Python
SafeLoader. Syntax error lines count from the top of the file (kubectl counts from the top of
the document).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

from schedviz.kube.decode import KINDS, decode_object
from schedviz.kube.errors import (
    AlreadyExistsError,
    DocumentError,
    FieldError,
    InvalidObjectError,
    LocatedError,
    ManifestError,
)
from schedviz.kube.names import GENERATE_NAME_ATTEMPTS, NameGenerator
from schedviz.kube.objects import KubeObject

SCHEDULER_CONFIG_API_VERSION = "kubescheduler.config.k8s.io/v1"
SCHEDULER_CONFIG_KIND = "KubeSchedulerConfiguration"

MAX_DEPTH = 100
MAX_ALIASES = 1000
# Alias expansion may add at most this many nodes beyond the document's own, plus a multiple.
_EXPANSION_ALLOWANCE = 100_000
_EXPANSION_RATIO = 4
EXCESSIVE_ALIASING = "document contains excessive aliasing"


@dataclass(frozen=True)
class Limit:
    """At most ``count`` of something in one input; ``setting`` names where it is configured."""

    count: int
    setting: str = ""

    def refusal(self, what: str) -> str:
        where = f" ({self.setting})" if self.setting else ""
        return f"the input holds more than {self.count} {what}; the limit is {self.count}{where}"


@dataclass(frozen=True)
class ObjectLimits:
    """Limits on one input: objects (every document and List item), and nodes and pods."""

    objects: Limit | None = None
    nodes: Limit | None = None
    pods: Limit | None = None


class _TooMany(Exception):
    pass


_DOCUMENT_MARKER = re.compile(r"^---(?:[ \t\r]|$)", re.MULTILINE)


def _document_bound(text: str) -> int:
    """An upper bound on the YAML documents of ``text``: a ``---`` at the start of a line always
    starts one (YAML forbids it inside scalars), and text before the first is one more."""
    markers = _DOCUMENT_MARKER.findall(text)
    return len(markers) + (0 if text.lstrip().startswith("---") else 1)


# What the notice lists of the skipped objects, at most.
SKIPPED_NAMED = 20


@dataclass
class Manifests:
    """What a set of manifests holds, in input order."""

    objects: list[KubeObject] = field(default_factory=list)
    scheduler_configs: list[dict[str, Any]] = field(default_factory=list)
    # The objects of kinds the scheduler does not read, as ``Kind/name``, skipped.
    skipped: list[str] = field(default_factory=list)
    # Objects loaded with names a v1.34 API server refuses (``lenient_names``), its messages.
    name_warnings: list[str] = field(default_factory=list)
    # Where each object came from, by (qualified resource, key): (source, document, item path),
    # so that what is refused after loading (admission) is located like what loading refuses.
    origins: dict[tuple[str, str], tuple[str, int, str]] = field(default_factory=dict)

    def locate(self, error: LocatedError, resource: str, key: str) -> LocatedError:
        """The error located at the object's document, when the input holds it."""
        origin = self.origins.get((resource, key))
        if origin is not None:
            error.locate(*origin)
        return error

    @property
    def skipped_notice(self) -> str:
        """One line naming the skipped objects; empty when none was."""
        count = len(self.skipped)
        if not count:
            return ""
        named = ", ".join(self.skipped[:SKIPPED_NAMED])
        more = f" and {count - SKIPPED_NAMED} more" if count > SKIPPED_NAMED else ""
        what = "1 object of a kind" if count == 1 else f"{count} objects of kinds"
        return f"skipped {what} the scheduler does not read: {named}{more}"


class OversizedInt:
    """An integer with more digits than Python converts, kept as text so that the document's
    check can name the field it is in."""

    def __init__(self, digits: str) -> None:
        self.digits = digits.lstrip("+-").replace("_", "")


def _is_oversized(digits: str) -> bool:
    return len(digits.lstrip("+-").replace("_", "")) > sys.get_int_max_str_digits()


def parse_json_int(digits: str) -> int | OversizedInt:
    """``json.loads``'s ``parse_int`` that keeps over-long integers for the check to name."""
    return OversizedInt(digits) if _is_oversized(digits) else int(digits)


def _construct_yaml_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int | OversizedInt:
    value = loader.construct_scalar(node)
    if isinstance(value, str) and _is_oversized(value):
        return OversizedInt(value)
    number: int = loader.construct_yaml_int(node)
    return number


def _with_int_limit(loader: type[Any]) -> type[Any]:
    """``loader`` whose integers over Python's digit limit become OversizedInt."""
    limited: type[Any] = type(f"IntLimited{loader.__name__}", (loader,), {})
    limited.add_constructor("tag:yaml.org,2002:int", _construct_yaml_int)
    return limited


_CSafeLoader: type[Any] | None = getattr(yaml, "CSafeLoader", None)
if _CSafeLoader is not None:
    _CSafeLoader = _with_int_limit(_CSafeLoader)


class _LimitExceeded(Exception):
    pass


class _BoundedSafeLoader(yaml.SafeLoader):
    """yaml.SafeLoader that refuses deep nesting and excessive aliasing while composing."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._aliases = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise _LimitExceeded(EXCESSIVE_ALIASING)
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise _LimitExceeded(f"exceeded max depth of {MAX_DEPTH}")
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


_BoundedLoader = _with_int_limit(_BoundedSafeLoader)


def _check_expansion(document: Any) -> None:
    """Refuses self-referencing documents and ones that aliases blow up, in linear time."""
    sizes: dict[int, int] = {}
    in_progress: set[int] = set()
    unique = 0
    # Iterative post-order walk: (node, depth, children_done).
    stack: list[tuple[Any, int, bool]] = [(document, 1, False)]
    while stack:
        node, depth, done = stack.pop()
        if not isinstance(node, dict | list):
            continue
        ident = id(node)
        if done:
            values = node.values() if isinstance(node, dict) else node
            sizes[ident] = 1 + sum(
                sizes.get(id(v), 1) if isinstance(v, dict | list) else 1 for v in values
            )
            in_progress.discard(ident)
            continue
        if ident in sizes:
            continue
        if ident in in_progress:
            raise _LimitExceeded("document refers to itself through an alias")
        if depth > MAX_DEPTH:
            raise _LimitExceeded(f"exceeded max depth of {MAX_DEPTH}")
        in_progress.add(ident)
        unique += 1 + len(node)
        stack.append((node, depth, True))
        values = node.values() if isinstance(node, dict) else node
        stack.extend((v, depth + 1, False) for v in values if isinstance(v, dict | list))
    expanded = sizes.get(id(document), 1)
    if expanded > _EXPANSION_RATIO * unique + _EXPANSION_ALLOWANCE:
        raise _LimitExceeded(EXCESSIVE_ALIASING)


# libyaml composes nodes recursively in C; beyond this bound on nesting the bounded Python
# loader is used instead, which refuses deep nesting before the stack is at risk.
_C_LOADER_MAX_NESTING = 1000


def _nesting_bound(text: str) -> int:
    """An upper bound on the nesting depth: block nesting needs columns, flow nesting brackets."""
    widest = max((len(line) for line in text.splitlines()), default=0)
    openers = text.count("[") + text.count("{")
    if openers <= _C_LOADER_MAX_NESTING:
        return widest + openers
    depth = deepest = 0
    for bracket in re.findall(r"[\[\]{}]", text):
        depth = depth + 1 if bracket in "[{" else max(depth - 1, 0)
        deepest = max(deepest, depth)
    return widest + deepest


def _make_loader(text: str) -> Any:
    if _CSafeLoader is not None and _nesting_bound(text) <= _C_LOADER_MAX_NESTING:
        return _CSafeLoader(text)
    return _BoundedLoader(text)


def _yaml_documents(text: str) -> Iterator[Any]:
    loader = _make_loader(text)
    try:
        while loader.check_data():
            yield loader.get_data()
    finally:
        loader.dispose()


def _split_documents(
    text: str, source: str, precount: Callable[[int], None] | None = None
) -> Iterator[tuple[int, Any]]:
    """(position from 1, parsed document) for every document; raises DocumentError on syntax.

    ``precount`` is told how many objects a parsed document holds (a JSON array's elements, a
    List's items) before the document is checked or yielded, so that it may refuse it unread.

    Text that looks like JSON is read as JSON (an array is a list of documents); if it is not
    JSON after all it is read as YAML (flow style), and if that fails too the JSON error is
    the one reported.
    """
    json_error = None
    if text.lstrip()[:1] in ("{", "["):
        try:
            parsed = json.loads(text, parse_int=parse_json_int)
        except json.JSONDecodeError as error:
            json_error = DocumentError(
                f"json: line {error.lineno}, column {error.colno}: {error.msg}",
                1,
                source,
                line=error.lineno,
            )
        except RecursionError:
            raise DocumentError(f"exceeded max depth of {MAX_DEPTH}", 1, source) from None
        else:
            documents = parsed if isinstance(parsed, list) else [parsed]
            if precount is not None:
                precount(sum(_objects_in(document) for document in documents))
            yield from _numbered(documents, source)
            return
    position = 0
    try:
        for document in _yaml_documents(text):
            # Flow-style YAML that looked like a JSON array is a list of documents too.
            items = (
                document if json_error is not None and isinstance(document, list) else [document]
            )
            for item in items:
                position += 1
                if precount is not None:
                    precount(_objects_in(item))
                _check_or_raise(item, position, source)
                yield position, item
    except yaml.MarkedYAMLError as error:
        if json_error is not None:
            raise json_error from None
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = error.problem or error.context or "invalid YAML"
        where = f"line {line}: " if line is not None else ""
        raise DocumentError(f"yaml: {where}{problem}", position + 1, source, line=line) from None
    except (yaml.YAMLError, _LimitExceeded) as error:
        raise DocumentError(f"yaml: {error}", position + 1, source) from None
    except RecursionError:
        raise DocumentError(
            f"yaml: exceeded max depth of {MAX_DEPTH}", position + 1, source
        ) from None


def read_documents(text: str, source: str) -> Iterator[tuple[int, Any]]:
    """(position from 1, parsed document) for every document of ``text``, read as the manifests
    are (the same bounds on hostile YAML); raises DocumentError on syntax."""
    return _split_documents(text, source)


def _objects_in(document: Any) -> int:
    """How many objects a document holds: a List's items, else itself."""
    if isinstance(document, dict) and isinstance(document.get("items"), list):
        kind = document.get("kind")
        if isinstance(kind, str) and kind.endswith("List"):
            return len(document["items"])
    return 1


def _numbered(documents: list[Any], source: str) -> Iterator[tuple[int, Any]]:
    for position, document in enumerate(documents, start=1):
        _check_or_raise(document, position, source)
        yield position, document


_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_UNSTORABLE_STRING = "strings may not contain NUL characters or unpaired surrogates"


def _oversized(number: OversizedInt) -> str:
    limit = sys.get_int_max_str_digits()
    return f"an integer of {len(number.digits)} digits: at most {limit} digits"


def unstorable_value(document: Any) -> tuple[str, str] | None:
    """The path of the first key or value that cannot be stored, if any, and why."""
    if not _holds_unstorable(document):
        return None  # the usual case: no path is built
    stack: list[tuple[Any, str]] = [(document, "")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, str):
            if _UNSTORABLE.search(node):
                return path or "<document>", _UNSTORABLE_STRING
        elif isinstance(node, OversizedInt):
            return path or "<document>", _oversized(node)
        elif isinstance(node, dict):
            for key, value in node.items():
                if isinstance(key, OversizedInt):
                    return f"{path}.<key>" if path else "<key>", _oversized(key)
                name = str(key)
                child = f"{path}.{name}" if path else name
                if _UNSTORABLE.search(name):
                    return child, _UNSTORABLE_STRING
                stack.append((value, child))
        elif isinstance(node, list):
            stack.extend((value, f"{path}[{i}]") for i, value in enumerate(node))
    return None


def _holds_unstorable(document: Any) -> bool:
    """Whether ``unstorable_value`` finds anything: the same walk without the paths."""
    search = _UNSTORABLE.search
    stack = [document]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        node = pop()
        if isinstance(node, str):
            if search(node):
                return True
        elif isinstance(node, dict):
            for key, value in node.items():
                if isinstance(key, OversizedInt) or search(str(key)):
                    return True
                push(value)
        elif isinstance(node, list):
            extend(node)
        elif isinstance(node, OversizedInt):
            return True
    return False


def _check_or_raise(document: Any, position: int, source: str) -> None:
    try:
        _check_expansion(document)
    except _LimitExceeded as error:
        raise DocumentError(str(error), position, source) from None
    unstorable = unstorable_value(document)
    if unstorable is not None:
        path, reason = unstorable
        raise DocumentError(f"{path}: Invalid value: {reason}", position, source)


def _type_name(value: Any) -> str:
    return {list: "array", str: "string", bool: "boolean", int: "number", float: "number"}.get(
        type(value), type(value).__name__
    )


# The kinds the scheduler reads, in any version: in an unknown version they are refused, as the
# API server's REST mapper does, where a kind it never reads is skipped.
_READ_KINDS = frozenset({kind for _, kind in KINDS} | {SCHEDULER_CONFIG_KIND})


def _read_kind(document: dict[str, Any]) -> bool:
    kind, api_version = document.get("kind"), document.get("apiVersion")
    if not isinstance(kind, str) or not kind or not isinstance(api_version, str) or not api_version:
        return True  # refused with the API server's "Object 'Kind' is missing"
    return (api_version, kind) in KINDS or kind in _READ_KINDS


def _with_list_kind(item: Any, list_kind: str, list_api_version: Any) -> Any:
    """An item of a typed list (``NodeList``, as the API server returns a list) without its
    own kind and apiVersion takes the list's: the API server leaves them out of the items."""
    if (
        list_kind == "List"
        or not isinstance(item, dict)
        or ("kind" in item and "apiVersion" in item)
    ):
        return item
    item = dict(item)
    item.setdefault("kind", list_kind.removesuffix("List"))
    if isinstance(list_api_version, str):
        item.setdefault("apiVersion", list_api_version)
    return item


class _Collector:
    """Gathers objects and errors over every source, so the whole input is judged at once."""

    def __init__(
        self, limits: ObjectLimits | None = None, seed: int = 0, lenient_names: bool = False
    ) -> None:
        self.manifests = Manifests()
        self._lenient_names = lenient_names
        self.errors: list[LocatedError] = []
        self._seen: set[tuple[str, str]] = set()
        self._limits = limits or ObjectLimits()
        self._objects = 0
        self._kinds = {"Node": 0, "Pod": 0}
        self._names = NameGenerator(seed)
        self._generated: set[tuple[str, str, str]] = set()

    def add_text(self, text: str, source: str) -> None:
        objects = self._limits.objects
        if (
            objects is not None
            and text.lstrip()[:1] not in ("{", "[")
            and self._objects + _document_bound(text) > objects.count
        ):
            raise _TooMany(objects.refusal("objects"))
        try:
            for position, document in _split_documents(text, source, self._count_objects):
                if document is not None:
                    self._add_document(document, source, position, "")
        except DocumentError as error:
            self.errors.append(error)

    def _count_objects(self, count: int) -> None:
        limit = self._limits.objects
        if limit is not None and self._objects + count > limit.count:
            raise _TooMany(limit.refusal("objects"))

    def _count(self, document: dict[str, Any]) -> None:
        """Counts an object about to be decoded; past a limit the whole input is refused."""
        self._count_objects(1)
        self._objects += 1
        kind = document.get("kind")
        if isinstance(kind, str) and kind in self._kinds:
            self._kinds[kind] += 1
            limit = self._limits.nodes if kind == "Node" else self._limits.pods
            if limit is not None and self._kinds[kind] > limit.count:
                raise _TooMany(limit.refusal("nodes" if kind == "Node" else "pods"))

    def _add_document(self, document: Any, source: str, position: int, item_path: str) -> None:
        if not isinstance(document, dict):
            error = DocumentError(f"expected an object, got {_type_name(document)}")
            error.locate(source, position, item_path)
            self.errors.append(error)
            return
        kind, api_version = document.get("kind"), document.get("apiVersion")
        if isinstance(kind, str) and kind.endswith("List") and "items" in document:
            self._add_list(document, source, position, item_path)
        elif kind == SCHEDULER_CONFIG_KIND and api_version == SCHEDULER_CONFIG_API_VERSION:
            self.manifests.scheduler_configs.append(document)
        elif not _read_kind(document):
            self.manifests.skipped.append(f"{kind}/{_object_name(document)}")
        else:
            self._add_object(document, source, position, item_path)

    def _add_list(self, document: dict[str, Any], source: str, position: int, path: str) -> None:
        items = document["items"]
        if items is None:
            return
        if not isinstance(items, list):
            error = DocumentError(f"items: expected an array, got {_type_name(items)}")
            error.locate(source, position, path)
            self.errors.append(error)
            return
        prefix = f"{path}." if path else ""
        list_kind, list_api_version = document["kind"], document.get("apiVersion")
        for i, item in enumerate(items):
            item = _with_list_kind(item, list_kind, list_api_version)
            self._add_document(item, source, position, f"{prefix}items[{i}]")

    def _add_object(self, document: dict[str, Any], source: str, position: int, path: str) -> None:
        self._count(document)
        document = self._named(document)
        name_warnings: list[FieldError] | None = [] if self._lenient_names else None
        try:
            obj = decode_object(document, name_warnings=name_warnings)
        except (InvalidObjectError, DocumentError) as error:
            error.locate(source, position, path)
            self.errors.append(error)
            return
        if name_warnings:
            info = KINDS[(document["apiVersion"], document["kind"])]
            warning = InvalidObjectError(
                document["kind"], obj.name, name_warnings, group=info.group
            )
            warning.locate(source, position, path)
            self.manifests.name_warnings.append(str(warning))
        info = KINDS[(document["apiVersion"], document["kind"])]
        identity = (info.qualified_resource, obj.key)
        if identity in self._seen:
            duplicate = AlreadyExistsError(info.qualified_resource, obj.name)
            duplicate.locate(source, position, path)
            self.errors.append(duplicate)
            return
        self._seen.add(identity)
        self.manifests.objects.append(obj)
        self.manifests.origins[identity] = (source, position, path)

    def _named(self, document: dict[str, Any]) -> dict[str, Any]:
        """The document with a name generated from ``metadata.generateName`` when it has none,
        as the API server names it on create (drawn again if the input holds the name)."""
        meta = document.get("metadata")
        if not isinstance(meta, dict) or meta.get("name"):
            return document
        base = meta.get("generateName")
        if not isinstance(base, str) or not base:
            return document
        key = (str(document.get("kind")), str(meta.get("namespace") or ""))
        name = self._names.generate(base)
        for _ in range(GENERATE_NAME_ATTEMPTS):
            if (*key, name) not in self._generated:
                break
            name = self._names.generate(base)
        self._generated.add((*key, name))
        return {**document, "metadata": {**meta, "name": name}}

    def result(self) -> Manifests:
        if self.errors:
            raise ManifestError(self.errors)
        return self.manifests


def _object_name(document: dict[str, Any]) -> str:
    meta = document.get("metadata")
    if isinstance(meta, dict):
        for key in ("name", "generateName"):
            if isinstance(meta.get(key), str) and meta[key]:
                return str(meta[key])
    return "<unnamed>"


def load_manifests(
    text: str,
    source: str = "<input>",
    *,
    limits: ObjectLimits | None = None,
    seed: int = 0,
    lenient_names: bool = False,
) -> Manifests:
    """Every object of ``text``, decoded and validated; ManifestError lists all that is wrong.

    ``limits``: an input past one is refused with that one error as soon as it is seen.
    ``seed`` seeds the names generated for ``metadata.generateName``: the same input and seed
    give the same names. ``lenient_names`` as in ``load_files``."""
    collector = _Collector(limits, seed, lenient_names)
    try:
        collector.add_text(text, source)
    except _TooMany as error:
        raise ManifestError([DocumentError(str(error), source=source)]) from None
    return collector.result()


MANIFEST_EXTENSIONS = (".json", ".yaml", ".yml")


def _expand_directories(paths: list[str]) -> list[str]:
    """kubectl -f DIR: the directory's .json, .yaml and .yml files, by name, not recursively."""
    expanded: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            names = sorted(n for n in os.listdir(path) if n.endswith(MANIFEST_EXTENSIONS))
            expanded.extend(os.path.join(path, n) for n in names)
        else:
            expanded.append(path)
    return expanded


def load_files(paths: list[str], *, seed: int = 0, lenient_names: bool = False) -> Manifests:
    """``load_manifests`` over several files, judged together (a name may not repeat).

    A directory stands for its manifest files, as with ``kubectl create -f DIR``.
    ``lenient_names``: names that only the API server's rules refuse (upstream's unit tests
    name nodes ``nodeA``) are loaded and reported in ``Manifests.name_warnings``.
    """
    collector = _Collector(seed=seed, lenient_names=lenient_names)
    for path in _expand_directories(paths):
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except (OSError, UnicodeDecodeError) as error:
            reason = error.strerror if isinstance(error, OSError) else str(error)
            failure = DocumentError(f"open {path}: {reason}")
            collector.errors.append(failure)
            continue
        collector.add_text(text, path)
    return collector.result()
