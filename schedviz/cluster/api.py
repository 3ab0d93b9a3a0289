"""The JSON API: clusters, applying manifests, pods and traces, for scripts and CI.

Plain Django views that parse the request, call one service or selector and answer JSON.
Authentication: ``Authorization: Token <key>`` (see ``manage.py apitoken``), or the browser's
session, which must then pass the CSRF check for writes. Errors answer ``{"errors": [...]}``
with every message: 400 bad input (nothing saved), 401 no or bad credentials, 404 no such
object (or someone else's cluster), 405 wrong method, 409 conflict, 413 body over
``SCHEDVIZ_MAX_UPLOAD_BYTES``, 429 more writes than ``SCHEDVIZ_WRITE_RATE_PER_MINUTE``, 503 the
rate limiter's Redis is unreachable (``Retry-After``).

Hostile values are 400s naming the field, never 500s: a path or query parameter holding a NUL
character (PostgreSQL's text cannot), an integer too long for Python to convert (over
``sys.get_int_max_str_digits()`` digits, 4300 by default) where a number is expected.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.response import HttpResponseBase
from django.middleware.csrf import CsrfViewMiddleware
from django.views.decorators.csrf import csrf_exempt

from schedviz.cluster import (
    attempts,
    exports,
    lessons,
    reviews,
    selectors,
    services,
    streaming,
    validation,
)
from schedviz.cluster.models import WORKLOAD_KINDS, Cluster, DebugSession
from schedviz.cluster.ratelimit import limit_writes
from schedviz.cluster.services import Conflict, ObjectNotFound, ServiceError
from schedviz.kube.load import parse_json_int
from schedviz.scheduler.trace import SCHEMA_VERSION

ApiView = Callable[..., HttpResponseBase]

DEFAULT_CYCLE_LIMIT = 500
MAX_CYCLE_LIMIT = 5000


def _errors(status: int, *messages: str) -> JsonResponse:
    return JsonResponse({"errors": list(messages)}, status=status)


class _BodyTooLarge(Exception):
    pass


class _BadRequest(Exception):
    def __init__(self, *messages: str):
        self.messages = list(messages)


class _CsrfCheck(CsrfViewMiddleware):
    """Django's CSRF check as a function: the reason it fails, or None."""

    def _reject(self, request: HttpRequest, reason: str) -> Any:
        return reason


def _csrf_failure(request: HttpRequest) -> str | None:
    check = _CsrfCheck(lambda _request: HttpResponse())
    check.process_request(request)
    reason = check.process_view(request, lambda _request: HttpResponse(), (), {})
    return reason if isinstance(reason, str) else None


def _authenticate(request: HttpRequest) -> User | JsonResponse:
    header = request.headers.get("Authorization", "")
    if header:
        scheme, _, key = header.partition(" ")
        user = selectors.api_token_user(key=key.strip()) if scheme == "Token" else None
        if user is None:
            return _unauthorized("invalid token")
        return user
    if isinstance(request.user, User) and request.user.is_authenticated:
        if request.method not in ("GET", "HEAD", "OPTIONS"):
            reason = _csrf_failure(request)
            if reason is not None:
                return _errors(403, f"CSRF Failed: {reason}")
        return request.user
    return _unauthorized("authentication credentials were not provided")


def _unauthorized(message: str) -> JsonResponse:
    response = _errors(401, message)
    response["WWW-Authenticate"] = "Token"
    return response


def api_view(*methods: str) -> Callable[[ApiView], ApiView]:
    """Method check, authentication, and errors as JSON; the view gets the user."""

    def decorate(view: ApiView) -> ApiView:
        @csrf_exempt  # session requests are checked in _authenticate; token requests need none
        @functools.wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            if request.method not in methods:
                response = _errors(405, f"method {request.method} not allowed")
                response["Allow"] = ", ".join(methods)
                return response
            user = _authenticate(request)
            if isinstance(user, JsonResponse):
                return user
            try:
                _refuse_nul_parameters(request, kwargs)
                return view(request, user, *args, **kwargs)
            except _BodyTooLarge:
                limit = settings.SCHEDVIZ_MAX_UPLOAD_BYTES
                return _errors(413, f"request body larger than {limit} bytes")
            except _BadRequest as error:
                return _errors(400, *error.messages)
            except ObjectNotFound as error:
                return _errors(404, *error.errors)
            except Conflict as error:
                return _errors(409, *error.errors)
            except ServiceError as error:
                return _errors(400, *error.errors)

        return wrapper

    return decorate


def _refuse_nul_parameters(request: HttpRequest, kwargs: dict[str, Any]) -> None:
    """Path and query parameters end up in SQL as text, which cannot hold a NUL character."""
    named = [(name, value) for name, value in kwargs.items() if isinstance(value, str)]
    named += [(name, value) for name, values in request.GET.lists() for value in values]
    errors = [error for name, value in named for error in validation.text_errors(name, value)]
    if errors:
        raise _BadRequest(*errors)


def _body_text(request: HttpRequest) -> str:
    """The request body as text, refused past the upload limit before it is all read."""
    limit = settings.SCHEDVIZ_MAX_UPLOAD_BYTES
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    if declared > limit:
        raise _BodyTooLarge
    # Read the stream, not request.body, whose own limit (DATA_UPLOAD_MAX_MEMORY_SIZE) is lower.
    data = request.read(limit + 1)
    if len(data) > limit:
        raise _BodyTooLarge
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _BadRequest("request body is not UTF-8 text") from None


def _json_body(request: HttpRequest) -> dict[str, Any]:
    text = _body_text(request)
    try:
        data = json.loads(text, parse_int=parse_json_int) if text.strip() else {}
    except json.JSONDecodeError as error:
        raise _BadRequest(f"request body is not JSON: {error}") from None
    # Integers too long to convert were kept (parse_json_int): no field takes one, and each
    # field's check names it.
    if not isinstance(data, dict):
        raise _BadRequest("request body must be a JSON object")
    return data


def _cluster(user: User, cluster_id: int) -> Cluster:
    return selectors.cluster_get(cluster_id=cluster_id, user=user)


def _cluster_json(cluster: Cluster) -> dict[str, Any]:
    return {
        "id": cluster.id,
        "name": cluster.name,
        "clockMode": cluster.clock_mode,
        "runState": cluster.run_state,
        "speed": cluster.speed,
        "pendingSteps": cluster.pending_steps,
        "seed": cluster.seed,
    }


@api_view("GET", "POST")
@limit_writes
def clusters(request: HttpRequest, user: User) -> HttpResponse:
    """GET: the clusters the user sees. POST {"name", "clockMode"?, "speed"?, "seed"?}: a new
    cluster of the user's."""
    if request.method == "GET":
        return JsonResponse(
            {"clusters": [_cluster_json(c) for c in selectors.cluster_list(user=user)]}
        )
    body = _json_body(request)
    name, clock_mode = body.get("name"), body.get("clockMode", Cluster.ClockMode.LIVE)
    speed, seed = body.get("speed", 1.0), body.get("seed")
    if not isinstance(name, str):
        raise _BadRequest("name: Required value: a string")
    if not isinstance(clock_mode, str):
        raise _BadRequest("clockMode: Invalid value: must be a string")
    errors = validation.text_errors("name", name) + validation.speed_errors(speed)
    errors += validation.seed_errors(seed) if seed is not None else []
    if errors:
        raise _BadRequest(*errors)
    cluster = services.cluster_create(
        name=name, owner=user, clock_mode=clock_mode, speed=float(speed), seed=seed
    )
    return JsonResponse(_cluster_json(cluster), status=201)


@api_view("GET", "DELETE")
@limit_writes
def cluster_detail(request: HttpRequest, user: User, cluster_id: int) -> HttpResponse:
    cluster = _cluster(user, cluster_id)
    if request.method == "DELETE":
        services.cluster_delete(cluster=cluster)
        return HttpResponse(status=204)
    return JsonResponse(_cluster_json(cluster))


@api_view("POST")
@limit_writes
def cluster_apply(request: HttpRequest, user: User, cluster_id: int) -> HttpResponse:
    """The body (YAML or JSON manifests) applied whole, or 400 with every error; a body past
    the limits on objects, nodes or pods is refused as soon as that is seen."""
    cluster = _cluster(user, cluster_id)
    result = services.manifests_apply(cluster=cluster, text=_body_text(request))
    applied = [obj.to_json() for obj in result.objects]
    if result.scheduler_config:
        applied.append(
            {
                "kind": "KubeSchedulerConfiguration",
                "action": result.scheduler_config,
                "line": result.lines[-1],
            }
        )
    return JsonResponse({"applied": applied, "notice": result.skipped_notice})


EXPORT_FORMATS = tuple(streaming.EXPORTS)


@api_view("GET")
def cluster_export(request: HttpRequest, user: User, cluster_id: int) -> HttpResponseBase:
    """?format=yaml (the default): every object and the scheduler configuration, as YAML that
    recreates the cluster. ?format=jsonl: the traces as JSON lines. ?format=kss: a v1 List of
    the pods annotated as kube-scheduler-simulator does (JSON). All streamed; ?gzip=1 gzips."""
    cluster = _cluster(user, cluster_id)
    export_format = request.GET.get("format") or "yaml"
    if export_format not in EXPORT_FORMATS:
        supported = ", ".join(EXPORT_FORMATS)
        raise _BadRequest(
            f"format: Unsupported value: {export_format!r}: supported values: {supported}"
        )
    try:
        gzip = streaming.wants_gzip(request.GET.get("gzip"))
    except ValueError as error:
        raise _BadRequest(str(error)) from None
    return streaming.export_response(cluster=cluster, export_format=export_format, gzip=gzip)


@api_view("GET")
def pods(request: HttpRequest, user: User, cluster_id: int) -> HttpResponse:
    cluster = _cluster(user, cluster_id)
    namespace = request.GET.get("namespace") or None
    rows = selectors.pod_list(cluster=cluster, namespace=namespace)
    return JsonResponse(
        [
            {
                "namespace": pod.namespace,
                "name": pod.name,
                "nodeName": pod.node_name,
                "phase": pod.phase,
                "nominatedNodeName": pod.nominated_node_name,
            }
            for pod in rows
        ],
        safe=False,
    )


@api_view("DELETE")
@limit_writes
def pod_detail(
    request: HttpRequest, user: User, cluster_id: int, namespace: str, name: str
) -> HttpResponse:
    cluster = _cluster(user, cluster_id)
    services.pod_delete(cluster=cluster, namespace=namespace, name=name)
    return HttpResponse(status=204)


@api_view("GET")
def workloads(request: HttpRequest, user: User, cluster_id: int) -> HttpResponse:
    """Every workload with its replicas, the pods created and those bound."""
    cluster = _cluster(user, cluster_id)
    rows = selectors.workload_list(cluster=cluster)
    return JsonResponse([row.to_json() for row in rows], safe=False)


@api_view("DELETE")
@limit_writes
def workload_detail(
    request: HttpRequest, user: User, cluster_id: int, kind: str, namespace: str, name: str
) -> HttpResponse:
    """Deletes the workload and what its controller made."""
    cluster = _cluster(user, cluster_id)
    deleted = services.objects_delete(
        cluster=cluster, refs=[services.ObjectRef(_workload_kind(kind), name, namespace)]
    )
    return JsonResponse({"deleted": [d.to_json() for d in deleted]})


@api_view("POST")
@limit_writes
def workload_scale(
    request: HttpRequest, user: User, cluster_id: int, kind: str, namespace: str, name: str
) -> HttpResponse:
    """``{"replicas": N}``: scales the workload; its pods are created or deleted at once."""
    cluster = _cluster(user, cluster_id)
    replicas = _json_body(request).get("replicas")
    if isinstance(replicas, bool) or not isinstance(replicas, int):
        raise _BadRequest(f"replicas: Invalid value: {replicas!r}: must be an integer")
    result = services.workload_scale(
        cluster=cluster,
        kind=_workload_kind(kind),
        namespace=namespace,
        name=name,
        replicas=replicas,
    )
    return JsonResponse({"objects": [o.to_json() for o in result.objects]})


def _workload_kind(kind: str) -> str:
    """The kind as named in the path: ``Deployment`` or ``deployments``."""
    for known in WORKLOAD_KINDS:
        if kind in (known, known.lower(), f"{known.lower()}s"):
            return known
    raise _BadRequest(
        f"kind: Unsupported value: {kind!r}: supported values: {', '.join(WORKLOAD_KINDS)}"
    )


def _int_param(request: HttpRequest, name: str, default: int, maximum: int | None = None) -> int:
    raw = request.GET.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise _BadRequest(f"{name}: Invalid value: {raw!r}: must be an integer") from None
    if value < 0 or (maximum is not None and value > maximum):
        limit = f" and at most {maximum}" if maximum is not None else ""
        raise _BadRequest(f"{name}: Invalid value: {value}: must be at least 0{limit}")
    return value


@api_view("GET")
def cycles(request: HttpRequest, user: User, cluster_id: int) -> HttpResponse:
    """?pod=<ns>/<name>: every cycle of that pod; else cycles after ?after=N, ?limit=M of them."""
    cluster = _cluster(user, cluster_id)
    pod = request.GET.get("pod")
    if pod is not None:
        namespace, _, name = pod.rpartition("/")
        if not name:
            raise _BadRequest("pod: Invalid value: expected <namespace>/<name>")
        traces = selectors.cycles_for_pod(
            cluster=cluster, namespace=namespace or "default", name=name
        )
    else:
        after = _int_param(request, "after", 0)
        limit = _int_param(request, "limit", DEFAULT_CYCLE_LIMIT, MAX_CYCLE_LIMIT)
        traces = selectors.cycle_traces_since(cluster=cluster, after=after, limit=limit)
    return JsonResponse({"schemaVersion": SCHEMA_VERSION, "cycles": traces})


@api_view("GET")
def pod_diagnosis(
    request: HttpRequest, user: User, cluster_id: int, namespace: str, name: str
) -> HttpResponse:
    """Why the pod is Pending: its last failed attempt's reasons as the FitError message counts
    them, each node's filter verdicts, and per rejecting plugin the requeueing events and what
    would make the pod schedulable (computed on the cluster now)."""
    cluster = _cluster(user, cluster_id)
    result = attempts.pod_diagnosis(cluster=cluster, namespace=namespace, name=name)
    return JsonResponse(result.to_json())


def _required_int(request: HttpRequest, name: str) -> int:
    if not request.GET.get(name):
        raise _BadRequest(f"{name}: Required value: a cycle number")
    return _int_param(request, name, 0)


@api_view("GET")
def pod_attempt_diff(
    request: HttpRequest, user: User, cluster_id: int, namespace: str, name: str
) -> HttpResponse:
    """?a=<cycle>&b=<cycle>: what changed between two attempts of the pod."""
    cluster = _cluster(user, cluster_id)
    before, after = _required_int(request, "a"), _required_int(request, "b")
    diff = attempts.pod_attempt_diff(
        cluster=cluster, namespace=namespace, name=name, before=before, after=after
    )
    return JsonResponse(diff.to_json())


@api_view("POST")
@limit_writes
def cluster_import(request: HttpRequest, user: User) -> HttpResponse:
    """The body (a JSON-lines trace export, or a List of pods annotated by
    kube-scheduler-simulator) as a new paused cluster of the user's, for review; ?name= names it
    (default: the exported cluster's name, or "imported")."""
    text = _body_text(request)
    name = request.GET.get("name") or exports.import_name(owner=user, text=text)
    cluster = exports.trace_import(name=name, owner=user, text=text)
    return JsonResponse({"id": cluster.id, "name": cluster.name}, status=201)


@api_view("POST")
@limit_writes
def cluster_review(request: HttpRequest, user: User) -> HttpResponse:
    """A real scheduler's logs, events and dump (multipart: log, events, cluster, config)
    reconciled with the engine's replay (docs/review.md); the replay is kept as a new paused
    cluster of the user's (?name= names it) whose cycles the attempts' ``replay.cycle`` number."""
    stored = reviews.review_uploaded(
        owner=user, files=request.FILES, name=request.GET.get("name", "")
    )
    cluster = {"id": stored.cluster.id, "name": stored.cluster.name}
    return JsonResponse({**stored.review.to_json(), "cluster": cluster}, status=201)


@api_view("GET")
def lesson_list(request: HttpRequest, user: User) -> HttpResponse:
    """The built-in lessons in teaching order: slug, title, summary, explanation, things to try."""
    return JsonResponse({"lessons": [info.to_json() for info in lessons.lesson_list()]})


@api_view("POST")
@limit_writes
def lesson_load(request: HttpRequest, user: User, slug: str) -> HttpResponse:
    """A new cluster of the user's holding the lesson's manifests; a JSON body {"paused": true}
    (optional) makes it start paused, to be stepped one cycle at a time."""
    body = _json_body(request) if request.content_type == "application/json" else {}
    paused = body.get("paused", False)
    if not isinstance(paused, bool):
        raise _BadRequest("paused: Invalid value: must be a boolean")
    cluster = lessons.lesson_load(slug=slug, owner=user, paused=paused)
    return JsonResponse({"id": cluster.id, "name": cluster.name}, status=201)


def _debug_json(session: DebugSession | None) -> dict[str, Any]:
    if session is None:
        return {"state": None}
    return {
        "state": session.state,
        "sequence": session.sequence,
        "cycle": session.cycle or None,
        "pod": session.pod or None,
        "point": session.point or None,
        "plugins": session.plugins,
        "reached": session.reached,
        "cycleState": session.state_entries,
        "previous": session.previous,
        "outcome": session.outcome or None,
    }


@api_view("GET", "POST")
@limit_writes
def cluster_debug(request: HttpRequest, user: User, cluster_id: int) -> HttpResponse:
    """GET: the step debugger's current stop. POST {"action": "step-into" | "continue" |
    "finish", "sequence"?: N}: step into the next cycle of a paused cluster, or answer the stop
    (``sequence`` names it, so that a command sent twice moves on once); 202 with the session."""
    cluster = _cluster(user, cluster_id)
    if request.method == "POST":
        body = _json_body(request)
        action = body.get("action")
        sequence = body.get("sequence")
        if action not in services.DEBUG_ACTIONS:
            supported = ", ".join(f'"{a}"' for a in services.DEBUG_ACTIONS)
            raise _BadRequest(
                f"action: Unsupported value: {action!r}: supported values: {supported}"
            )
        if sequence is not None and (not isinstance(sequence, int) or isinstance(sequence, bool)):
            raise _BadRequest(f"sequence: Invalid value: {sequence!r}: must be an integer")
        if action == "step-into":
            session = services.debug_step_into(cluster=cluster)
        else:
            session = services.debug_command(cluster=cluster, command=action, sequence=sequence)
        return JsonResponse(_debug_json(session), status=202)
    return JsonResponse(_debug_json(selectors.debug_session_get(cluster=cluster)))
