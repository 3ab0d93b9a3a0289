"""Exports as streamed responses: the first bytes at once, memory flat whatever the size, gzip
on request.

An export is a sync generator of text that reads the database as it goes. Served as it is
under ASGI, Django would read the whole generator into a list before sending a byte (its
``StreamingHttpResponse`` can only hand a sync iterator to the event loop that way), so the
response gets an async iterator instead: each chunk of about ``CHUNK_BYTES`` is made in the
request's own thread (``sync_to_async``, thread-sensitive: the generator's database cursor
stays on one connection), and sent before the next is asked for. With gzip, a chunk is
compressed in another thread while the next one is made (zlib lets go of the GIL), at level
``GZIP_LEVEL``: most of the size goes at the first level (a 5000-node trace shrinks 12-fold)
for half of level 6's time.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import AsyncIterator, Iterable, Iterator

from asgiref.sync import sync_to_async
from django.http import StreamingHttpResponse

from schedviz.cluster import exports, services
from schedviz.cluster.models import Cluster

CHUNK_BYTES = 1 << 20
GZIP_LEVEL = 1
GZIP_WBITS = 16 + zlib.MAX_WBITS  # a gzip member, as `gzip -d` and browsers read it


def chunks(parts: Iterable[str], size: int = CHUNK_BYTES) -> Iterator[bytes]:
    """The parts as UTF-8: the first one alone, at once (a client sees the download start
    whatever comes next), then joined into chunks of at least ``size`` bytes (the last one
    less)."""
    iterator = iter(parts)
    for part in iterator:
        yield part.encode()
        break
    held: list[bytes] = []
    length = 0
    for part in iterator:
        data = part.encode()
        held.append(data)
        length += len(data)
        if length >= size:
            yield b"".join(held)
            held, length = [], 0
    if held:
        yield b"".join(held)


def gzipped(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """The chunks as one gzip stream."""
    compressor = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, GZIP_WBITS)
    for chunk in chunks:
        data = compressor.compress(chunk)
        if data:
            yield data
    yield compressor.flush()


async def _served(parts: Iterator[str], gzip: bool) -> AsyncIterator[bytes]:
    made = chunks(parts)
    following = sync_to_async(_next, thread_sensitive=True)
    compressor = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, GZIP_WBITS) if gzip else None
    pending = asyncio.ensure_future(following(made))
    first = True
    try:
        while (chunk := await pending) is not None:
            pending = asyncio.ensure_future(following(made))
            if compressor is not None:
                chunk = await asyncio.to_thread(compressor.compress, chunk)
                if first:
                    # zlib holds small input back: the first bytes go out now all the same.
                    chunk += compressor.flush(zlib.Z_SYNC_FLUSH)
            first = False
            if chunk:
                yield chunk
        if compressor is not None:
            yield compressor.flush()
    finally:
        # A client gone mid-way: let the chunk being made finish, then close the generator in
        # its own thread (its cursor is that thread's connection's).
        if not pending.done():
            await asyncio.wait([pending])
        await sync_to_async(_close, thread_sensitive=True)(made, parts)


def _next(made: Iterator[bytes]) -> bytes | None:
    return next(made, None)


def _close(*iterators: Iterator[object]) -> None:
    for iterator in iterators:
        close = getattr(iterator, "close", None)
        if close is not None:
            close()


# format -> content type, file name extension, the export's text in pieces
EXPORTS = {
    "yaml": ("application/yaml", "yaml", services.cluster_export_yaml_stream),
    "jsonl": ("application/x-ndjson", "jsonl", exports.trace_export_jsonl),
    "kss": ("application/json", "json", exports.trace_export_kss_text),
}


def export_response(*, cluster: Cluster, export_format: str, gzip: bool) -> StreamingHttpResponse:
    """The cluster's export in one of ``EXPORTS``' formats, as ``cluster-<id>.<extension>``."""
    content_type, extension, export = EXPORTS[export_format]
    return streamed(
        export(cluster=cluster),
        content_type=content_type,
        filename=f"cluster-{cluster.pk}.{extension}",
        gzip=gzip,
    )


def streamed(
    parts: Iterator[str], *, content_type: str, filename: str, gzip: bool = False
) -> StreamingHttpResponse:
    """An attachment streamed from the parts (``filename`` gets ``.gz`` with gzip)."""
    response = StreamingHttpResponse(
        _served(parts, gzip), content_type="application/gzip" if gzip else content_type
    )
    name = f"{filename}.gz" if gzip else filename
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


GZIP_VALUES = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}


def wants_gzip(value: str | None) -> bool:
    """``?gzip=1`` (``true``, ``yes``): the export compressed; absent, ``0``, ``false``, ``no``:
    plain. Anything else is refused (``ValueError`` with the API server's words)."""
    if value is None or value == "":
        return False
    try:
        return GZIP_VALUES[value.lower()]
    except KeyError:
        supported = ", ".join(f'"{word}"' for word in GZIP_VALUES)
        raise ValueError(
            f'gzip: Unsupported value: "{value}": supported values: {supported}'
        ) from None
