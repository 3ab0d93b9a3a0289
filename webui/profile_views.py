"""The scheduler profiles page: every profile after multiPoint expansion, which plugins run at
each extension point, in what order and with what weight; edited in a form or as YAML, and saved
through ``services.manifests_apply`` like any other configuration.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import yaml
from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from schedviz.cluster import selectors, services
from schedviz.cluster.services import ServiceError
from schedviz.kube.errors import ManifestError
from schedviz.kube.load import Manifests, load_manifests
from schedviz.outoftree.registry import new_registry
from schedviz.scheduler.apis.config.types import KubeSchedulerConfiguration
from schedviz.scheduler.apis.config.v1 import (
    API_VERSION,
    KIND,
    decode_configuration,
    default_configuration,
    to_v1_dict,
)
from schedviz.scheduler.apis.config.validation import ConfigError
from schedviz.scheduler.framework.runtime.framework import EXTENSION_POINTS, FrameworkError
from schedviz.simulation.simulator import new_simulation
from webui import access
from webui.forms import too_large
from webui.limits import limit_page_writes


@dataclass(slots=True)
class PluginChoice:
    """A plugin that could sit at an extension point: whether it does, where, with what weight."""

    name: str
    enabled: bool
    order: int | None
    weight: int | None


@dataclass(slots=True)
class PointPlugins:
    point: str
    plugins: list[PluginChoice]


@dataclass(slots=True)
class ProfileView:
    index: int
    name: str
    percentage: int | None
    points: list[PointPlugins]
    args_yaml: str
    error: str = ""


@cache
def _capabilities() -> dict[str, frozenset[str]]:
    """Every registered plugin's extension points (a profile enabling them all, built once)."""
    frameworks = _frameworks(default_configuration())
    capable: dict[str, set[str]] = {}
    for framework in frameworks.values():
        for name, plugin in framework.plugins_map.items():
            for point, protocol in EXTENSION_POINTS.items():
                if isinstance(plugin, protocol):
                    capable.setdefault(name, set()).add(point)
    return {name: frozenset(points) for name, points in capable.items()}


def _frameworks(config: KubeSchedulerConfiguration) -> dict[str, Any]:
    """The profiles' frameworks as the scheduler builds them (multiPoint expanded)."""
    simulation = new_simulation(
        Manifests(), registry=new_registry(), config=config, capture_queue=False
    )
    return dict(simulation.scheduler.profiles)


def _profile_views(config: KubeSchedulerConfiguration) -> tuple[list[ProfileView], str]:
    try:
        frameworks = _frameworks(config)
        error = ""
    except (FrameworkError, ValueError) as failure:
        frameworks, error = {}, str(failure)
    capable = _capabilities()
    encoded = to_v1_dict(config).get("profiles") or []
    views = []
    for index, profile in enumerate(config.profiles):
        framework = frameworks.get(profile.scheduler_name)
        points = []
        for point in EXTENSION_POINTS:
            running = [p.name() for p in framework.points[point]] if framework else []
            candidates = [n for n, where in capable.items() if point in where]
            candidates += [n for n in running if n not in candidates]
            choices = [
                PluginChoice(
                    name=name,
                    enabled=name in running,
                    order=running.index(name) + 1 if name in running else None,
                    weight=(framework.score_plugin_weight.get(name) if framework else None)
                    if point == "score"
                    else None,
                )
                for name in candidates
            ]
            choices.sort(key=lambda c: (c.order is None, c.order or 0))
            points.append(PointPlugins(point, choices))
        plugin_config = encoded[index].get("pluginConfig") if index < len(encoded) else None
        views.append(
            ProfileView(
                index=index,
                name=profile.scheduler_name,
                percentage=profile.percentage_of_nodes_to_score,
                points=points,
                args_yaml=yaml.safe_dump(plugin_config or [], sort_keys=False),
            )
        )
    return views, error


def _document_yaml(document: Mapping[str, Any]) -> str:
    return yaml.safe_dump(dict(document), sort_keys=False)


def _set_entry(entries: list[dict[str, Any]], name: str, **fields: Any) -> None:
    for entry in entries:
        if entry.get("name") == name:
            entry.update(fields)
            return
    entries.append({"name": name, **fields})


def _remove_entry(entries: list[dict[str, Any]], name: str) -> None:
    entries[:] = [e for e in entries if e.get("name") != name]


def _plugin_set(profile: dict[str, Any], point: str) -> dict[str, list[dict[str, Any]]]:
    plugins = profile.setdefault("plugins", {})
    plugin_set: dict[str, list[dict[str, Any]]] = plugins.setdefault(point, {})
    plugin_set.setdefault("enabled", [])
    plugin_set.setdefault("disabled", [])
    return plugin_set


class FormError(ValueError):
    pass


# The form's range for a score plugin's weight, checked here as in the browser. Upstream's
# framework (runtime/framework.go getScoreWeights) turns a weight of 0 into 1 and refuses only a
# total that could overflow int64, so a YAML configuration may say more; the form offers the
# weights a person means: 1 (a plugin's default unless set) to 100.
MIN_FORM_WEIGHT = 1
MAX_FORM_WEIGHT = 100


def _parse_weights(post: Mapping[str, Any], names: Sequence[str]) -> dict[str, int]:
    weights = {}
    for name in names:
        text = str(post.get(f"weight-{name}", "")).strip()
        if not text:
            continue
        try:
            weight = int(text)
        except ValueError:
            raise FormError(f"weight of {name}: {text!r} is not an integer") from None
        if not MIN_FORM_WEIGHT <= weight <= MAX_FORM_WEIGHT:
            raise FormError(
                f"weight of {name}: Invalid value: {weight}: must be between {MIN_FORM_WEIGHT} "
                f"and {MAX_FORM_WEIGHT} (leave it empty for the default)"
            )
        weights[name] = weight
    return weights


def _parse_percentage(text: str) -> int | None:
    text = text.strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise FormError(f"percentageOfNodesToScore: {text!r} is not an integer") from None


def profile_document_from_form(
    document: Mapping[str, Any], view: ProfileView, post: Any
) -> dict[str, Any]:
    """The configuration document with one profile changed as the form asks.

    Changes are written the way a person would write them by hand, leaving the rest of their
    document alone: a plugin turned off at a point is listed under that point's ``disabled``,
    one turned on under its ``enabled``; a changed weight replaces the plugin's multiPoint entry
    when multiPoint enables it there (the defaults' order is kept), else its ``score`` entry.
    """
    new = copy.deepcopy(dict(document))
    profiles: list[dict[str, Any]] = new.setdefault("profiles", [])
    while len(profiles) <= view.index:
        profiles.append({})
    profile = profiles[view.index]
    profile["schedulerName"] = view.name
    wanted = set(post.getlist("enabled"))
    score_names = [c.name for p in view.points if p.point == "score" for c in p.plugins]
    weights = _parse_weights(post, score_names)
    for point in view.points:
        for choice in point.plugins:
            on = f"{point.point}:{choice.name}" in wanted
            if on and not choice.enabled:
                plugin_set = _plugin_set(profile, point.point)
                _remove_entry(plugin_set["disabled"], choice.name)
                extra = {"weight": weights[choice.name]} if choice.name in weights else {}
                _set_entry(plugin_set["enabled"], choice.name, **extra)
            elif not on and choice.enabled:
                plugin_set = _plugin_set(profile, point.point)
                _remove_entry(plugin_set["enabled"], choice.name)
                _set_entry(plugin_set["disabled"], choice.name)
            elif (
                on
                and point.point == "score"
                and weights.get(choice.name, choice.weight) != (choice.weight)
            ):
                _set_weight(profile, choice.name, weights[choice.name])
    percentage = _parse_percentage(str(post.get("percentage", "")))
    if percentage is None:
        profile.pop("percentageOfNodesToScore", None)
    else:
        profile["percentageOfNodesToScore"] = percentage
    _drop_empty_sets(profile)
    return new


def _set_weight(profile: dict[str, Any], name: str, weight: int) -> None:
    score = _plugin_set(profile, "score")
    if any(e.get("name") == name for e in score["enabled"]):
        _set_entry(score["enabled"], name, weight=weight)
        return
    multi = _plugin_set(profile, "multiPoint")
    if any(e.get("name") == name for e in multi["disabled"]):
        _set_entry(score["enabled"], name, weight=weight)
        return
    _set_entry(multi["enabled"], name, weight=weight)


def _drop_empty_sets(profile: dict[str, Any]) -> None:
    plugins = profile.get("plugins") or {}
    for point in list(plugins):
        plugin_set = plugins[point]
        for key in ("enabled", "disabled"):
            if key in plugin_set and not plugin_set[key]:
                del plugin_set[key]
        if not plugin_set:
            del plugins[point]
    if "plugins" in profile and not profile["plugins"]:
        del profile["plugins"]


def _yaml_errors(text: str) -> list[str]:
    """Why the text is not a single KubeSchedulerConfiguration document ([] if it is)."""
    try:
        manifests = load_manifests(text, "configuration")
    except ManifestError as error:
        return [str(e) for e in error.errors]
    if manifests.objects:
        return [f"only a {KIND} ({API_VERSION}) belongs here; other objects go to the cluster"]
    if not manifests.scheduler_configs:
        return [f"no {KIND} ({API_VERSION}) in the text"]
    return _unrunnable(manifests.scheduler_configs[0])


def _unrunnable(document: Mapping[str, Any]) -> list[str]:
    """Why the scheduler could not build a configuration the decoder accepts (a plugin at a
    point it does not implement...): it is refused before it is saved. The decoder's own errors
    are left to the service, which reports them with their field paths."""
    try:
        config = decode_configuration(document, known_plugins=set(new_registry()))
    except ConfigError:
        return []
    try:
        _frameworks(config)
    except (FrameworkError, ValueError) as error:
        return [f"{KIND}: {error}"]
    return []


@dataclass(slots=True)
class PostedConfiguration:
    """The configuration a form asks for: the YAML form's text, or the document with one
    profile changed by the profile form (``profile``)."""

    text: str
    profile: int | None
    errors: list[str]


def _posted_configuration(
    post: Any, document: Mapping[str, Any], views: Sequence[ProfileView]
) -> PostedConfiguration:
    if post.get("action") == "yaml":
        text = str(post.get("configuration", ""))
        if len(text.encode()) > settings.SCHEDVIZ_MAX_UPLOAD_BYTES:
            return PostedConfiguration(text, None, [too_large(len(text.encode()))])
        return PostedConfiguration(text, None, _yaml_errors(text))
    try:
        index = int(post.get("profile", ""))
    except ValueError:
        index = -1
    if not 0 <= index < len(views):
        return PostedConfiguration("", None, ["no such profile"])
    try:
        changed = profile_document_from_form(document, views[index], post)
    except FormError as error:
        return PostedConfiguration("", index, [str(error)])
    return PostedConfiguration(_document_yaml(changed), index, _unrunnable(changed))


@require_http_methods(["GET", "HEAD", "POST"])
@limit_page_writes
def profiles(request: HttpRequest, cluster_id: int) -> HttpResponse:
    """The scheduler profiles after multiPoint expansion; edited in a form or as YAML."""
    cluster = access.cluster_for(request, cluster_id)
    document = services.scheduler_config_document(cluster=cluster)
    config = selectors.scheduler_configuration(cluster=cluster)
    views, framework_error = _profile_views(config)
    yaml_text = _document_yaml(document)
    posted = None
    if request.method == "POST":
        posted = _posted_configuration(request.POST, document, views)
        if posted.profile is None:
            yaml_text = posted.text
        if not posted.errors:
            try:
                result = services.manifests_apply(
                    cluster=cluster, text=posted.text, source="profiles"
                )
            except ServiceError as error:
                posted.errors = list(error.errors)
            else:
                messages.success(request, f"scheduler configuration {result.scheduler_config}")
                return HttpResponseRedirect(reverse("webui:profiles", args=[cluster.pk]))
    errors = posted.errors if posted else []
    context = {
        "cluster": cluster,
        "profiles": views,
        "framework_error": framework_error,
        "configuration": config,
        "yaml_text": yaml_text,
        "yaml_rows": min(40, max(10, yaml_text.count("\n") + 3)),
        "defaulted_yaml": _document_yaml(to_v1_dict(config)),
        "errors": errors,
        "failed_profile": posted.profile if posted and errors else None,
        "yaml_failed": bool(errors) and posted is not None and posted.profile is None,
    }
    return render(request, "webui/trace/profiles.html", context, status=400 if errors else 200)
