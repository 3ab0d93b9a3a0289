"""Reviews of a real scheduler (schedviz.review) run for the API and the review page.

``review_run`` reads the uploaded logs, events, dump and configuration, reconciles every
attempt with the engine's replay, and keeps the replay as a new paused, virtual cluster (the
dump's objects and the replayed cycles, imported as "Import a trace for review" imports a trace
file), so that each attempt links to the full page of its replayed cycle: the per-node filter
verdicts and scores the log never had. Nothing is stored when the input is refused.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import yaml
from django.conf import settings
from django.contrib.auth.models import User

from schedviz.cluster import exports
from schedviz.cluster.models import Cluster
from schedviz.cluster.services import ServiceError
from schedviz.kube.errors import ManifestError
from schedviz.kube.load import load_manifests
from schedviz.outoftree.registry import new_registry
from schedviz.review.events import EventsError
from schedviz.review.logs import LogFormatError
from schedviz.review.review import Review, ReviewInputError, review
from schedviz.scheduler.apis.config.validation import ConfigError
from schedviz.scheduler.framework.runtime.framework import FrameworkError
from schedviz.scheduler.trace import SCHEMA_VERSION
from schedviz.simulation.simulator import TraceLog

Upload = tuple[str, str]  # (file name, text)


@dataclass
class StoredReview:
    review: Review
    cluster: Cluster


def review_run(
    *,
    owner: User | None,
    logs: Sequence[Upload],
    events: Sequence[Upload],
    clusters: Sequence[Upload],
    config: Upload | None,
    name: str = "",
) -> StoredReview:
    """Raises ServiceError naming the file and the problem; stores nothing then."""
    if not logs:
        raise ServiceError(["log: at least one kube-scheduler log is required"])
    if not clusters:
        raise ServiceError(["cluster: at least one dump (kubectl get -o yaml) is required"])
    try:
        manifests = load_manifests(
            "\n---\n".join(text for _, text in clusters),
            source=", ".join(file for file, _ in clusters),
            lenient_names=True,
        )
        config_doc = _config(config) if config is not None else None
        traces = TraceLog()
        result = review(
            logs=logs,
            events=events,
            manifests=manifests,
            registry=new_registry(),
            config_doc=config_doc,
            emit=traces,
        )
    except ManifestError as error:
        raise ServiceError([str(error)]) from None
    except (
        ConfigError,
        FrameworkError,
        EventsError,
        LogFormatError,
        ReviewInputError,
    ) as error:
        raise ServiceError([str(error)]) from None
    objects = [obj.manifest for obj in manifests.objects if getattr(obj, "manifest", None)]
    header: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION,
        "kind": exports.TRACE_KIND,
        "cluster": name or "review",
        "objects": objects,
        "schedulerConfiguration": result.config_document,
    }
    lines = [json.dumps(header, separators=(",", ":"))]
    lines.extend(json.dumps(trace.to_json(), separators=(",", ":")) for trace in traces)
    text = "\n".join(lines) + "\n"
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M")
    cluster_name = name or exports.free_cluster_name(owner=owner, base=f"review {stamp}")
    cluster = exports.trace_import(name=cluster_name, owner=owner, text=text)
    return StoredReview(review=result, cluster=cluster)


def _config(upload: Upload) -> dict[str, Any]:
    file, text = upload
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ServiceError([f"config: {file}: not YAML: {error}"]) from None
    if not isinstance(document, dict):
        raise ServiceError([f"config: {file}: expected a KubeSchedulerConfiguration object"])
    return document


REVIEW_FIELDS = ("log", "events", "cluster", "config")


def uploads_of(files: Any, field: str) -> list[Upload]:
    """The files of one multipart field as ``(name, text)``; ServiceError when one is not
    UTF-8 text or the upload is over ``SCHEDVIZ_MAX_UPLOAD_BYTES``."""
    limit = settings.SCHEDVIZ_MAX_UPLOAD_BYTES
    out: list[Upload] = []
    for upload in files.getlist(field):
        if upload.size is not None and upload.size > limit:
            raise ServiceError([f"{field}: {upload.name}: larger than {limit} bytes"])
        try:
            out.append((str(upload.name), upload.read().decode("utf-8")))
        except UnicodeDecodeError:
            raise ServiceError([f"{field}: {upload.name}: not UTF-8 text"]) from None
    return out


def review_uploaded(*, owner: User | None, files: Any, name: str = "") -> StoredReview:
    """``review_run`` on a multipart upload: fields log (one or more), events (any), cluster
    (one or more) and config (at most one)."""
    configs = uploads_of(files, "config")
    if len(configs) > 1:
        raise ServiceError(["config: at most one KubeSchedulerConfiguration file"])
    return review_run(
        owner=owner,
        logs=uploads_of(files, "log"),
        events=uploads_of(files, "events"),
        clusters=uploads_of(files, "cluster"),
        config=configs[0] if configs else None,
        name=name,
    )
