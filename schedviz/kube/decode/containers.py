"""Containers, init containers and volumes of a pod spec.

Mirrors pkg/apis/core/validation/validation.go (validateContainers, validateInitContainers,
validateContainerPorts, AccumulateUniqueHostPorts, ValidateVolumes) and pkg/apis/core/v1/
defaults.go (SetDefaults_ContainerPort, and SetDefaults_Pod's requests defaulted to limits).
Only what the scheduler reads is validated in depth: no probes, env or security contexts, no
volume source details.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from schedviz.kube import errors as fe
from schedviz.kube.decode.reader import Reader, child, index
from schedviz.kube.decode.resources import validate_resource_requirements
from schedviz.kube.decode.validation import is_dns1123_label, is_valid_port_name, is_valid_port_num
from schedviz.kube.errors import FieldError
from schedviz.kube.objects import Container, ContainerPort, Volume

_PROTOCOLS = ("SCTP", "TCP", "UDP")
_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_TERMINATION_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")
_INIT_ONLY_FIELDS = ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe")


@dataclass
class ContainerSpec:
    """A container as read, with the fields validation needs beyond the scheduler's view."""

    container: Container
    port_names: list[str]
    pull_policy: str
    termination_message_policy: str
    lifecycle_fields: list[str]


def read_container(r: Reader, raw: Mapping[str, Any], path: str) -> ContainerSpec:
    resources = r.obj(raw, "resources", path)
    res_path = child(path, "resources")
    ports = []
    port_names = []
    for port_path, port in r.maps(raw, "ports", path):
        ports.append(
            ContainerPort(
                container_port=r.int32(port, "containerPort", port_path) or 0,
                host_port=r.int32(port, "hostPort", port_path) or 0,
                protocol=r.string(port, "protocol", port_path)
                or "TCP",  # SetDefaults_ContainerPort
                host_ip=r.string(port, "hostIP", port_path),
            )
        )
        port_names.append(r.string(port, "name", port_path))
    container = Container(
        name=r.string(raw, "name", path),
        image=r.string(raw, "image", path),
        requests=r.resources(resources, "requests", res_path),
        limits=r.resources(resources, "limits", res_path),
        ports=tuple(ports),
        restart_policy=r.optional_str(raw, "restartPolicy", path),
    )
    # SetDefaults_Pod: requests default to limits for every resource that has only a limit.
    for name, limit in container.limits.items():
        container.requests.setdefault(name, limit)
    return ContainerSpec(
        container=container,
        port_names=port_names,
        # Both are defaulted upstream when empty, so only a value given is checked.
        pull_policy=r.string(raw, "imagePullPolicy", path),
        termination_message_policy=r.string(raw, "terminationMessagePolicy", path),
        lifecycle_fields=[f for f in _INIT_ONLY_FIELDS if raw.get(f) is not None],
    )


def _validate_container_ports(spec: ContainerSpec, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, (port, name) in enumerate(zip(spec.container.ports, spec.port_names, strict=True)):
        port_path = index(path, i)
        if name:
            msgs = is_valid_port_name(name)
            if msgs:
                errs.extend(fe.invalid(child(port_path, "name"), name, msg) for msg in msgs)
            elif name in names:
                errs.append(fe.duplicate(child(port_path, "name"), name))
            else:
                names.add(name)
        if port.container_port == 0:
            errs.append(fe.required(child(port_path, "containerPort")))
        else:
            errs.extend(
                fe.invalid(child(port_path, "containerPort"), port.container_port, msg)
                for msg in is_valid_port_num(port.container_port)
            )
        if port.host_port != 0:
            errs.extend(
                fe.invalid(child(port_path, "hostPort"), port.host_port, msg)
                for msg in is_valid_port_num(port.host_port)
            )
        if port.protocol not in _PROTOCOLS:
            errs.append(fe.not_supported(child(port_path, "protocol"), port.protocol, _PROTOCOLS))
    return errs


def _validate_container_common(spec: ContainerSpec, path: str) -> list[FieldError]:
    c = spec.container
    errs: list[FieldError] = []
    if not c.name:
        errs.append(fe.required(child(path, "name")))
    else:
        errs.extend(
            fe.invalid(child(path, "name"), c.name, msg) for msg in is_dns1123_label(c.name)
        )
    if not c.image:
        errs.append(fe.required(child(path, "image")))
    policy = spec.termination_message_policy
    if policy and policy not in _TERMINATION_MESSAGE_POLICIES:
        errs.append(
            fe.not_supported(
                child(path, "terminationMessagePolicy"),
                spec.termination_message_policy,
                _TERMINATION_MESSAGE_POLICIES,
            )
        )
    errs += _validate_container_ports(spec, child(path, "ports"))
    if spec.pull_policy and spec.pull_policy not in _PULL_POLICIES:
        errs.append(
            fe.not_supported(child(path, "imagePullPolicy"), spec.pull_policy, _PULL_POLICIES)
        )
    errs += validate_resource_requirements(c.requests, c.limits, child(path, "resources"))
    return errs


def _host_port_conflicts(containers: list[ContainerSpec], path: str) -> list[FieldError]:
    """AccumulateUniqueHostPorts over the given containers."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for ci, spec in enumerate(containers):
        for pi, port in enumerate(spec.container.ports):
            if port.host_port == 0:
                continue
            entry = f"{port.protocol}/{port.host_ip}/{port.host_port}"
            if entry in seen:
                errs.append(
                    fe.duplicate(
                        child(index(child(index(path, ci), "ports"), pi), "hostPort"), entry
                    )
                )
            else:
                seen.add(entry)
    return errs


def validate_containers(containers: list[ContainerSpec], path: str) -> list[FieldError]:
    if not containers:
        return [fe.required(path)]
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, spec in enumerate(containers):
        c_path = index(path, i)
        errs += _validate_container_common(spec, c_path)
        if spec.container.name in names:
            errs.append(fe.duplicate(child(c_path, "name"), spec.container.name))
        else:
            names.add(spec.container.name)
        if spec.container.restart_policy is not None:
            errs.append(
                fe.forbidden(
                    child(c_path, "restartPolicy"), "may not be set for non-init containers"
                )
            )
    return errs + _host_port_conflicts(containers, path)


def validate_init_containers(
    init_containers: list[ContainerSpec], containers: list[ContainerSpec], path: str
) -> list[FieldError]:
    errs: list[FieldError] = []
    names = {spec.container.name for spec in containers}
    for i, spec in enumerate(init_containers):
        c_path = index(path, i)
        errs += _validate_container_common(spec, c_path)
        policy = spec.container.restart_policy
        if policy is not None and policy != "Always":
            errs.append(fe.not_supported(child(c_path, "restartPolicy"), policy, ("Always",)))
        if spec.container.name in names:
            errs.append(fe.duplicate(child(c_path, "name"), spec.container.name))
        elif spec.container.name:
            names.add(spec.container.name)
        # Upstream checks each init container alone, as a list of one: its index is always 0.
        errs += _host_port_conflicts([spec], path)
        if policy != "Always":
            errs.extend(
                fe.forbidden(
                    child(c_path, name),
                    "may not be set for init containers without restartPolicy=Always",
                )
                for name in spec.lifecycle_fields
            )
    return errs


def read_volumes(
    r: Reader, spec: Mapping[str, Any], path: str
) -> tuple[list[Volume], list[FieldError]]:
    """The pod's volumes and what ValidateVolumes finds wrong with them."""
    volumes: list[Volume] = []
    errs: list[FieldError] = []
    names: set[str] = set()
    for vol_path, raw in r.maps(spec, "volumes", path):
        name = r.string(raw, "name", vol_path)
        sources = [k for k, v in raw.items() if k != "name" and v is not None]
        volume_errs: list[FieldError] = []
        for extra in sources[1:]:
            volume_errs.append(
                fe.forbidden(child(vol_path, extra), "may not specify more than 1 volume type")
            )
        if not sources:
            volume_errs.append(fe.required(vol_path, "must specify a volume type"))
        source_kind = sources[0] if sources else ""
        source = raw.get(source_kind) if source_kind else {}
        if not isinstance(source, dict):
            r._wrong(child(vol_path, source_kind), source, "object")
            source = {}
        claim_name = None
        read_only = False
        if source_kind == "persistentVolumeClaim":
            claim_path = child(vol_path, source_kind)
            claim_name = r.string(source, "claimName", claim_path)
            read_only = r.boolean(source, "readOnly", claim_path)
            if not claim_name:
                volume_errs.append(fe.required(child(claim_path, "claimName")))
        if not name:
            volume_errs.append(fe.required(child(vol_path, "name")))
        else:
            volume_errs.extend(
                fe.invalid(child(vol_path, "name"), name, msg) for msg in is_dns1123_label(name)
            )
        if name in names:
            volume_errs.append(fe.duplicate(child(vol_path, "name"), name))
        if not volume_errs:
            names.add(name)
        errs += volume_errs
        volumes.append(
            Volume(
                name=name,
                pvc_claim_name=claim_name,
                pvc_read_only=read_only,
                source_kind=source_kind,
                source=dict(source),
            )
        )
    return volumes, errs
