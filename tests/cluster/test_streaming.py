"""Exports streamed (schedviz/cluster/streaming.py): chunks made as they are sent, gzip on
request, the same text as the whole document, and a client gone mid-way closing the export."""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator

import pytest
import yaml
from django.test import Client
from test_exports import DEMO, scheduled_cluster

from schedviz.cluster import exports, services, streaming

pytestmark = pytest.mark.django_db


def test_the_first_part_goes_alone_then_parts_are_joined_into_chunks_of_the_size_asked() -> None:
    made = list(streaming.chunks(["head", "ab", "cd", "é", "f"], size=3))
    assert made == [b"head", b"abcd", "é".encode() + b"f"]
    assert list(streaming.chunks([], size=3)) == []


def test_gzipped_chunks_are_one_gzip_stream_of_them() -> None:
    data = [b"x" * 1000, b"y" * 10, b""]
    assert gzip.decompress(b"".join(streaming.gzipped(data))) == b"".join(data)


def _counted(total: int, made: list[int], closed: list[bool]) -> Iterator[str]:
    try:
        for index in range(total):
            made.append(index)
            yield "x" * 1024
    finally:
        closed.append(True)


async def test_the_first_chunk_is_sent_before_the_export_is_all_made() -> None:
    made: list[int] = []
    closed: list[bool] = []
    total = 8 * streaming.CHUNK_BYTES // 1024
    served = streaming._served(_counted(total, made, closed), gzip=False)
    first = await anext(served)
    assert first == b"x" * 1024
    second = await anext(served)
    assert len(second) >= streaming.CHUNK_BYTES
    # The chunks sent and at most the next one made: not the whole export.
    assert len(made) <= 2 * streaming.CHUNK_BYTES // 1024 + 2 < total
    rest = [chunk async for chunk in served]
    assert len(first) + len(second) + sum(map(len, rest)) == total * 1024 and closed == [True]


async def test_a_gzipped_export_sends_its_first_bytes_at_once() -> None:
    served = streaming._served(iter(["head", "x" * 10]), gzip=True)
    first = await anext(served)
    assert zlib.decompressobj(streaming.GZIP_WBITS).decompress(first) == b"head"
    assert gzip.decompress(first + b"".join([c async for c in served])) == b"head" + b"x" * 10


async def test_a_client_gone_mid_way_closes_the_export() -> None:
    made: list[int] = []
    closed: list[bool] = []
    total = 8 * streaming.CHUNK_BYTES // 1024
    served = streaming._served(_counted(total, made, closed), gzip=True)
    await anext(served)
    await served.aclose()
    assert closed == [True] and len(made) < total


@pytest.mark.parametrize("export_format", ["yaml", "jsonl", "kss"])
def test_an_export_gzipped_on_request_is_the_plain_export_compressed(
    client: Client, export_format: str
) -> None:
    token = services.api_token_create(username="alice")
    auth = {"HTTP_AUTHORIZATION": f"Token {token.key}"}
    cluster = scheduled_cluster(DEMO.read_text(), owner=token.user)
    url = f"/api/clusters/{cluster.id}/export?format={export_format}"
    plain = b"".join(client.get(url, **auth))
    compressed = client.get(url + "&gzip=1", **auth)
    assert compressed["Content-Type"] == "application/gzip"
    assert compressed["Content-Disposition"].endswith('.gz"')
    body = gzip.decompress(b"".join(compressed)).decode()
    if export_format == "jsonl":
        # Only the header's exportedAt may differ between the two requests.
        plain_lines, lines = plain.decode().splitlines(), body.splitlines()
        assert plain_lines[1:] == lines[1:]
        assert {**json.loads(plain_lines[0]), "exportedAt": ""} == {
            **json.loads(lines[0]),
            "exportedAt": "",
        }
    else:
        assert body == plain.decode()


def test_a_gzip_value_that_is_not_a_yes_or_a_no_is_refused_naming_it(client: Client) -> None:
    token = services.api_token_create(username="alice")
    cluster = scheduled_cluster(DEMO.read_text(), owner=token.user)
    answer = client.get(
        f"/api/clusters/{cluster.id}/export?format=jsonl&gzip=maybe",
        HTTP_AUTHORIZATION=f"Token {token.key}",
    )
    assert answer.status_code == 400
    assert answer.json()["errors"][0].startswith('gzip: Unsupported value: "maybe"')


def test_the_yaml_export_streamed_is_the_whole_list_printed_at_once() -> None:
    cluster = scheduled_cluster(DEMO.read_text())
    items = list(services.object_manifests(cluster=cluster))
    documents = [
        {"apiVersion": "v1", "kind": "List", "items": items},
        services.scheduler_config_document(cluster=cluster),
    ]
    whole = yaml.dump_all(documents, Dumper=yaml.SafeDumper, sort_keys=False)
    assert "".join(services.cluster_export_yaml_stream(cluster=cluster)) == whole


def test_the_kss_export_as_text_is_the_list_it_describes() -> None:
    cluster = scheduled_cluster(DEMO.read_text())
    text = "".join(exports.trace_export_kss_text(cluster=cluster))
    assert json.loads(text) == exports.trace_export_kss(cluster=cluster)
