"""Scheduler extenders: webhooks that filter, prioritize, preempt and bind over HTTP.

Mirrors pkg/scheduler/extender.go (``HTTPExtender``, ``NewHTTPExtender``, ``makeTransport``,
``convertToMetaVictims``, ``convertToVictims``), ``buildExtenders`` from pkg/scheduler/scheduler.go
(ignorable extenders go last; managed resources ``ignoredByScheduler`` become NodeResourcesFit's
``ignoredResources`` in every profile) and the JSON of
staging/src/k8s.io/kube-scheduler/extender/v1/types.go (``ExtenderArgs``,
``ExtenderFilterResult``, ``HostPriorityList``, ``ExtenderPreemptionArgs``/``Result``,
``ExtenderBindingArgs``/``Result``). Go's structs there have no JSON tags, so keys are the field
names (``Pod``, ``NodeNames``, ``FailedNodes``...) and, as Go's decoder does, answers are read
with keys matched regardless of case. Pods and nodes go out as their v1 manifests.

Deliberately different:
- Extender URLs are checked when the scheduler is built: only http and https, and only the
  ``host:port`` pairs of the allow-list the caller passes (``None`` allows any). Redirects are not
  followed and proxies from the environment are not used, so a request goes to the configured
  host and port or nowhere. A request that gets no HTTP answer fails with one message whatever
  the socket said (upstream adds Go's dial error), so that a trace cannot tell open ports from
  closed ones.
- ``httpTimeout`` bounds each socket operation rather than the whole exchange.
- An extender's successful Bind is applied to the simulated cluster by schedviz: the extender
  cannot reach it, and the pod would otherwise never be bound.
- Every request and answer is recorded in the cycle's trace (``CycleTrace.extenders``).
"""

from __future__ import annotations

import base64
import copy
import http.client
import json
import os
import ssl
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from schedviz.kube.objects import Container, Node, Pod
from schedviz.scheduler.apis.config.types import (
    Extender,
    ExtenderTLSConfig,
    KubeSchedulerProfile,
)
from schedviz.scheduler.apis.config.types_pluginargs import NodeResourcesFitArgs
from schedviz.scheduler.framework.interface import NodeInfoLister
from schedviz.scheduler.framework.types import NodeInfo
from schedviz.scheduler.preemption import Victims
from schedviz.scheduler.trace import CycleTrace, ExtenderCall

# DefaultExtenderTimeout.
DEFAULT_EXTENDER_TIMEOUT = 5.0
# extenderv1.MinExtenderPriority / MaxExtenderPriority.
MIN_EXTENDER_PRIORITY = 0
MAX_EXTENDER_PRIORITY = 10
# framework.ExtenderName: the plugin name put in UnschedulablePlugins when extenders reject nodes.
EXTENDER_NAME = "Extender"
# noderesources.Name, whose args receive the resources extenders manage alone.
NODE_RESOURCES_FIT = "NodeResourcesFit"

# The one error of a request that got no HTTP answer (refused, timed out, unreachable, reset).
NO_ANSWER = "no HTTP answer from the extender"

VERB_FILTER = "filter"
VERB_PRIORITIZE = "prioritize"
VERB_PREEMPT = "preempt"
VERB_BIND = "bind"

JSON = Any


class ExtenderConfigError(ValueError):
    """An extender cannot be built (bad URL, host not allowed, TLS files, plugin args)."""


class ExtenderError(Exception):
    """A call to an extender failed (upstream returns the ``error``)."""


@dataclass(slots=True)
class FilterResult:
    nodes: list[NodeInfo]
    failed: dict[str, str]
    failed_and_unresolvable: dict[str, str]


# ---------------------------------------------------------------------------------------------
# Building


def normalize_host(host: str) -> str:
    """A host as the allow-list compares it: lower case, IPv6 without brackets."""
    return host.strip().lower().removeprefix("[").removesuffix("]")


def host_port(host: str, port: int) -> str:
    """``host:port`` as the allow-list writes it (``[v6]:port`` for IPv6)."""
    host = normalize_host(host)
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def normalize_host_port(entry: str) -> str:
    """An allow-list entry, ``host:port``, written as ``host_port`` writes it."""
    host, _, port = entry.strip().rpartition(":")
    return host_port(host, int(port)) if port.isdigit() else entry.strip().lower()


def build_extenders(
    extenders: Sequence[Extender], allowed_hosts: frozenset[str] | None = None
) -> list[HTTPExtender]:
    """Upstream ``buildExtenders``: one client per extender, ignorable ones last."""
    built = [HTTPExtender(config, allowed_hosts, index) for index, config in enumerate(extenders)]
    return [e for e in built if not e.is_ignorable()] + [e for e in built if e.is_ignorable()]


def profiles_with_ignored_resources(
    extenders: Sequence[Extender], profiles: Sequence[KubeSchedulerProfile]
) -> list[KubeSchedulerProfile]:
    """The profiles with NodeResourcesFit ignoring the resources extenders manage alone.

    Upstream overwrites ``NodeResourcesFitArgs.IgnoredResources`` in place; here the profiles are
    copied so that the caller's configuration stays as it was given.
    """
    ignored = [r.name for e in extenders for r in e.managed_resources if r.ignored_by_scheduler]
    if not ignored:
        return list(profiles)
    result: list[KubeSchedulerProfile] = []
    for profile in profiles:
        profile = copy.deepcopy(profile)
        config = next((c for c in profile.plugin_config if c.name == NODE_RESOURCES_FIT), None)
        if config is None:
            raise ExtenderConfigError("can't find NodeResourcesFitArgs in plugin config")
        if not isinstance(config.args, NodeResourcesFitArgs):
            raise ExtenderConfigError(
                f"want args to be of type NodeResourcesFitArgs, got {type(config.args).__name__}"
            )
        config.args.ignored_resources = list(ignored)
        result.append(profile)
    return result


def _check_url(config: Extender, allowed_hosts: frozenset[str] | None, index: int) -> None:
    where = f'extenders[{index}] "{config.url_prefix}"'
    parts = urlsplit(config.url_prefix)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ExtenderConfigError(f"{where}: urlPrefix must be an http or https URL with a host")
    try:
        port = parts.port
    except ValueError as error:
        raise ExtenderConfigError(f"{where}: {error}") from None
    if allowed_hosts is None:
        return
    target = host_port(parts.hostname, port or (443 if parts.scheme == "https" else 80))
    if target not in {normalize_host_port(entry) for entry in allowed_hosts}:
        allowed = ", ".join(sorted(allowed_hosts)) or "none"
        raise ExtenderConfigError(
            f'{where}: "{target}" is not an allowed extender host:port '
            f"(SCHEDVIZ_EXTENDER_ALLOWED_HOSTS: {allowed})"
        )


def _tls_context(config: Extender, index: int) -> ssl.SSLContext | None:
    """Upstream ``makeTransport``: TLS settings, insecure when HTTPS is on without a CA."""
    tls = config.tls_config
    if tls is None and not config.enable_https:
        return None
    context = ssl.create_default_context()
    has_ca = tls is not None and bool(tls.ca_file or tls.ca_data)
    insecure = (tls is not None and tls.insecure) or (config.enable_https and not has_ca)
    try:
        if tls is not None:
            if tls.ca_file:
                context.load_verify_locations(cafile=tls.ca_file)
            if tls.ca_data:
                context.load_verify_locations(cadata=_pem(tls.ca_data))
            if tls.cert_file or tls.cert_data:
                _load_client_certificate(context, tls)
    except (OSError, ssl.SSLError, ValueError) as error:
        raise ExtenderConfigError(
            f'extenders[{index}] "{config.url_prefix}": tlsConfig: {error}'
        ) from None
    if insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def _pem(data: str) -> str:
    """``caData``/``certData``/``keyData`` are bytes, base64 in YAML; PEM text is taken as is."""
    if "-----BEGIN" in data:
        return data
    return base64.b64decode(data).decode()


def _load_client_certificate(context: ssl.SSLContext, tls: ExtenderTLSConfig) -> None:
    if tls.cert_file:
        context.load_cert_chain(tls.cert_file, tls.key_file or None)
        return
    # The ssl module reads certificates from files only.
    with tempfile.TemporaryDirectory() as directory:
        cert_path = os.path.join(directory, "cert.pem")
        key_path = os.path.join(directory, "key.pem")
        with open(cert_path, "w") as cert:
            cert.write(_pem(tls.cert_data))
        with open(key_path, "w") as key:
            key.write(_pem(tls.key_data) if tls.key_data else "")
        context.load_cert_chain(cert_path, key_path if tls.key_data else None)


class _HTTPSConnection(http.client.HTTPSConnection):
    """An HTTPS connection that checks the certificate against ``serverName`` when one is set."""

    def __init__(self, *args: Any, server_name: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._server_name = server_name

    def connect(self) -> None:
        if not self._server_name:
            super().connect()
            return
        http.client.HTTPConnection.connect(self)
        self.sock = self._context.wrap_socket(  # type: ignore[attr-defined]
            self.sock, server_hostname=self._server_name
        )


# ---------------------------------------------------------------------------------------------
# The client


class HTTPExtender:
    """One configured extender (upstream ``HTTPExtender``)."""

    def __init__(
        self, config: Extender, allowed_hosts: frozenset[str] | None = None, index: int = 0
    ) -> None:
        _check_url(config, allowed_hosts, index)
        self.extender_url = config.url_prefix
        self.preempt_verb = config.preempt_verb
        self.filter_verb = config.filter_verb
        self.prioritize_verb = config.prioritize_verb
        self.bind_verb = config.bind_verb
        self.weight = config.weight
        self.timeout = config.http_timeout_seconds or DEFAULT_EXTENDER_TIMEOUT
        self.node_cache_capable = config.node_cache_capable
        self.managed_resources = frozenset(r.name for r in config.managed_resources)
        self.ignorable = config.ignorable
        self._tls = _tls_context(config, index)
        self._server_name = config.tls_config.server_name if config.tls_config else ""
        # The cycle being run, set by the scheduler; None runs untraced.
        self.trace: CycleTrace | None = None

    def name(self) -> str:
        return self.extender_url

    def is_ignorable(self) -> bool:
        return self.ignorable

    def supports_preemption(self) -> bool:
        return bool(self.preempt_verb)

    def is_binder(self) -> bool:
        return bool(self.bind_verb)

    def is_prioritizer(self) -> bool:
        return bool(self.prioritize_verb)

    def is_filter(self) -> bool:
        return bool(self.filter_verb)

    def is_interested(self, pod: Pod) -> bool:
        """True when no resources are managed, or a container asks for one of them."""
        if not self.managed_resources:
            return True
        return self._has_managed_resources(pod.containers) or self._has_managed_resources(
            pod.init_containers
        )

    def _has_managed_resources(self, containers: Iterable[Container]) -> bool:
        return any(
            name in self.managed_resources
            for container in containers
            for name in (*container.requests, *container.limits)
        )

    # ------------------------------------------------------------------ verbs

    def filter(self, pod: Pod, nodes: Sequence[NodeInfo]) -> FilterResult:
        """The nodes the extender keeps, and the failed ones with its reasons."""
        if not self.filter_verb:
            return FilterResult(list(nodes), {}, {})
        call, body = self._send(VERB_FILTER, self.filter_verb, self._args(pod, nodes), nodes)
        by_name = {node_info.name: node_info for node_info in nodes}
        try:
            error = _string(_get(body, "Error"))
            node_names = _get(body, "NodeNames")
            node_list = _get(body, "Nodes")
            kept_names: list[str] | None = None
            if self.node_cache_capable and node_names is not None:
                kept_names = [str(name) for name in _list(node_names)]
            elif node_list is not None:
                kept_names = [
                    str(_get(_get(item, "metadata"), "name") or "")
                    for item in _list(_get(node_list, "items"))
                ]
            failed = _string_map(_get(body, "FailedNodes"))
            unresolvable = _string_map(_get(body, "FailedAndUnresolvableNodes"))
        except (TypeError, ValueError) as problem:
            raise self._bad_answer(call, self.filter_verb, problem) from None
        call.response = {
            "nodeNames": kept_names,
            "failedNodes": failed,
            "failedAndUnresolvableNodes": unresolvable,
            "error": error or None,
        }
        if error:
            raise self._fail(call, error)
        kept: list[NodeInfo] = []
        for name in kept_names or []:
            node_info = by_name.get(name)
            if node_info is None:
                raise self._fail(
                    call,
                    f'extender "{self.extender_url}" claims a filtered node "{name}" '
                    "which is not found in the input node list",
                )
            kept.append(node_info)
        return FilterResult(kept, failed, unresolvable)

    def prioritize(self, pod: Pod, nodes: Sequence[NodeInfo]) -> tuple[dict[str, int], int]:
        """Each node's score (0 to 10) and the extender's weight; no verb: zeros, weight 0."""
        if not self.prioritize_verb:
            return {node_info.name: 0 for node_info in nodes}, 0
        call, body = self._send(
            VERB_PRIORITIZE, self.prioritize_verb, self._args(pod, nodes), nodes
        )
        scores: dict[str, int] = {}
        try:
            for entry in _list(body):
                host = str(_get(entry, "Host") or "")
                scores[host] = scores.get(host, 0) + _int(_get(entry, "Score"))
        except (TypeError, ValueError) as problem:
            raise self._bad_answer(call, self.prioritize_verb, problem) from None
        call.response = {"scores": dict(scores), "weight": self.weight}
        return scores, self.weight

    def process_preemption(
        self, pod: Pod, node_name_to_victims: Mapping[str, Victims], node_infos: NodeInfoLister
    ) -> dict[str, Victims]:
        """The candidates the extender keeps, with the victims it chose on each."""
        if not self.supports_preemption():
            raise ExtenderError(
                f"preempt verb is not defined for extender {self.extender_url} "
                "but run into ProcessPreemption"
            )
        meta = convert_to_meta_victims(node_name_to_victims)
        args: dict[str, JSON] = {
            "Pod": pod_to_v1(pod),
            "NodeNameToVictims": None,
            "NodeNameToMetaVictims": None,
        }
        if self.node_cache_capable:
            args["NodeNameToMetaVictims"] = meta
        else:
            args["NodeNameToVictims"] = {
                node: {
                    "Pods": [pod_to_v1(victim) for victim in victims.pods],
                    "NumPDBViolations": victims.num_pdb_violations,
                }
                for node, victims in node_name_to_victims.items()
            }
        summary = {
            "pod": pod.key,
            "nodeNameToVictims": _victims_summary(node_name_to_victims),
            "sent": "NodeNameToMetaVictims" if self.node_cache_capable else "NodeNameToVictims",
        }
        call, body = self._exchange(VERB_PREEMPT, self.preempt_verb, args, summary)
        try:
            answer = _get(body, "NodeNameToMetaVictims")
            result_meta = {
                str(node): {
                    "uids": [str(_get(p, "UID") or "") for p in _list(_get(victims, "Pods") or [])],
                    "numPDBViolations": _int(_get(victims, "NumPDBViolations")),
                }
                for node, victims in _dict(answer or {}).items()
            }
        except (TypeError, ValueError) as problem:
            raise self._bad_answer(call, self.preempt_verb, problem) from None
        call.response = {"nodeNameToMetaVictims": result_meta}
        try:
            return self._convert_to_victims(result_meta, node_infos)
        except ExtenderError as error:
            raise self._fail(call, str(error)) from None

    def bind(self, pod: Pod, node_name: str) -> None:
        """Asks the extender to bind; raises ExtenderError when it cannot."""
        if not self.is_binder():
            raise ExtenderError("unexpected empty bindVerb in extender")
        args = {
            "PodName": pod.name,
            "PodNamespace": pod.namespace,
            "PodUID": pod.uid,
            "Node": node_name,
        }
        call, body = self._exchange(VERB_BIND, self.bind_verb, args, dict(args))
        try:
            error = _string(_get(body, "Error"))
        except (TypeError, ValueError) as problem:
            raise self._bad_answer(call, self.bind_verb, problem) from None
        call.response = {"error": error or None}
        if error:
            raise self._fail(call, error)

    # ------------------------------------------------------------------ plumbing

    def _args(self, pod: Pod, nodes: Sequence[NodeInfo]) -> dict[str, JSON]:
        """ExtenderArgs: node names for a node-cache-capable extender, else the nodes."""
        names = [node_info.name for node_info in nodes]
        if self.node_cache_capable:
            return {"Pod": pod_to_v1(pod), "Nodes": None, "NodeNames": names}
        items = [node_to_v1(node_info.node) for node_info in nodes if node_info.node]
        return {"Pod": pod_to_v1(pod), "Nodes": {"metadata": {}, "items": items}, "NodeNames": None}

    def _send(
        self, verb: str, path: str, args: dict[str, JSON], nodes: Sequence[NodeInfo]
    ) -> tuple[ExtenderCall, JSON]:
        pod = args["Pod"]["metadata"]
        summary = {
            "pod": f"{pod.get('namespace', '')}/{pod.get('name', '')}",
            "nodeNames": [node_info.name for node_info in nodes],
            "sent": "NodeNames" if self.node_cache_capable else "Nodes",
        }
        return self._exchange(verb, path, args, summary)

    def _exchange(
        self, verb: str, path: str, args: dict[str, JSON], summary: dict[str, Any]
    ) -> tuple[ExtenderCall, JSON]:
        """Posts ``args`` to ``urlPrefix/path`` and decodes the answer (upstream ``send``)."""
        call = ExtenderCall(self.extender_url, verb, summary)
        if self.trace is not None:
            self.trace.extenders.append(call)
        started = time.perf_counter()
        try:
            return call, self._post(path, args)
        except ExtenderError as error:
            self._fail(call, str(error))
            raise
        finally:
            call.duration = time.perf_counter() - started

    def _post(self, path: str, args: dict[str, JSON]) -> JSON:
        url = self.extender_url.rstrip("/") + "/" + path
        parts = urlsplit(url)
        host = parts.hostname or ""
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        connection: http.client.HTTPConnection
        if parts.scheme == "https":
            connection = _HTTPSConnection(
                host,
                parts.port,
                timeout=self.timeout,
                context=self._tls or ssl.create_default_context(),
                server_name=self._server_name,
            )
        else:
            connection = http.client.HTTPConnection(host, parts.port, timeout=self.timeout)
        body = json.dumps(args).encode()
        try:
            connection.request("POST", target, body, {"Content-Type": "application/json"})
            response = connection.getresponse()
            payload = response.read()
        except ssl.SSLCertVerificationError as error:
            # A TLS server answered (on an allowed host:port) with a certificate not trusted:
            # the configuration's to fix, so said.
            raise ExtenderError(f'Post "{url}": {error.verify_message} ({error.reason})') from None
        except (OSError, http.client.HTTPException):
            # Upstream's "Post <url>: <dial error>", without the error: whether the port was
            # closed, filtered or spoke something else than HTTP is not the user's to learn.
            raise ExtenderError(f'Post "{url}": {NO_ANSWER}') from None
        finally:
            connection.close()
        if response.status != http.client.OK:
            raise ExtenderError(f"failed {path} with extender at URL {url}, code {response.status}")
        try:
            return json.loads(payload)
        except ValueError as error:
            raise ExtenderError(f"decoding the answer of {path}: {error}") from None

    def _bad_answer(self, call: ExtenderCall, path: str, problem: Exception) -> ExtenderError:
        return self._fail(call, f"decoding the answer of {path}: {problem}")

    def _fail(self, call: ExtenderCall, message: str) -> ExtenderError:
        """Records the failure; the scheduler skips it for an ignorable extender, and always
        for Prioritize, whose scores are optional."""
        call.error = message
        call.ignored = self.ignorable or call.verb == VERB_PRIORITIZE
        return ExtenderError(message)

    def _convert_to_victims(
        self, meta: Mapping[str, Mapping[str, Any]], node_infos: NodeInfoLister
    ) -> dict[str, Victims]:
        """Upstream ``convertToVictims``: the extender's pod UIDs back to the pods on the node."""
        result: dict[str, Victims] = {}
        for node_name, victims in meta.items():
            node_info = node_infos.get(node_name)
            if node_info is None:
                raise ExtenderError(f'nodeinfo not found for node name "{node_name}"')
            pods: list[Pod] = []
            for uid in victims["uids"]:
                pod = next((p.pod for p in node_info.pods if p.pod.uid == uid), None)
                if pod is None:
                    raise ExtenderError(
                        f"extender: {self.extender_url} claims to preempt pod (UID: &{{{uid}}}) "
                        f"on node: {node_name}, but the pod is not found on that node"
                    )
                pods.append(pod)
            result[node_name] = Victims(pods, victims["numPDBViolations"])
        return result


def convert_to_meta_victims(node_name_to_victims: Mapping[str, Victims]) -> dict[str, JSON]:
    """Upstream ``convertToMetaVictims``: victims as pod UIDs."""
    return {
        node: {
            "Pods": [{"UID": pod.uid} for pod in victims.pods],
            "NumPDBViolations": victims.num_pdb_violations,
        }
        for node, victims in node_name_to_victims.items()
    }


def _victims_summary(node_name_to_victims: Mapping[str, Victims]) -> dict[str, Any]:
    return {
        node: {
            "pods": [pod.key for pod in victims.pods],
            "numPDBViolations": victims.num_pdb_violations,
        }
        for node, victims in node_name_to_victims.items()
    }


# ---------------------------------------------------------------------------------------------
# v1 JSON of the objects sent


def pod_to_v1(pod: Pod) -> dict[str, JSON]:
    """The pod's manifest, with the identity and placement the scheduler knows now."""
    doc: dict[str, JSON] = dict(pod.manifest)
    doc.setdefault("apiVersion", "v1")
    doc.setdefault("kind", "Pod")
    metadata = dict(doc.get("metadata") or {})
    metadata.update(name=pod.name, namespace=pod.namespace)
    if pod.uid:
        metadata["uid"] = pod.uid
    doc["metadata"] = metadata
    spec = dict(doc.get("spec") or {})
    if pod.node_name:
        spec["nodeName"] = pod.node_name
    doc["spec"] = spec
    if pod.nominated_node_name:
        status = dict(doc.get("status") or {})
        status["nominatedNodeName"] = pod.nominated_node_name
        doc["status"] = status
    return doc


def node_to_v1(node: Node) -> dict[str, JSON]:
    doc: dict[str, JSON] = dict(node.manifest)
    doc.setdefault("apiVersion", "v1")
    doc.setdefault("kind", "Node")
    metadata = dict(doc.get("metadata") or {})
    metadata["name"] = node.name
    if node.uid:
        metadata["uid"] = node.uid
    doc["metadata"] = metadata
    return doc


# ---------------------------------------------------------------------------------------------
# Reading answers as Go's encoding/json does: keys match regardless of case, null is empty


def _get(obj: JSON, key: str) -> JSON:
    if obj is None:
        return None
    if not isinstance(obj, dict):
        raise TypeError(f"expected an object, got {type(obj).__name__}")
    if key in obj:
        return obj[key]
    lowered = key.lower()
    for name, value in obj.items():
        if isinstance(name, str) and name.lower() == lowered:
            return value
    return None


def _list(value: JSON) -> list[JSON]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise TypeError(f"expected an array, got {type(value).__name__}")
    return value


def _dict(value: JSON) -> dict[str, JSON]:
    if not isinstance(value, dict):
        raise TypeError(f"expected an object, got {type(value).__name__}")
    return value


def _string(value: JSON) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def _int(value: JSON) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise TypeError(f"expected an integer, got {value!r}")
    return int(value)


def _string_map(value: JSON) -> dict[str, str]:
    if value is None:
        return {}
    return {str(k): _string(v) for k, v in _dict(value).items()}
