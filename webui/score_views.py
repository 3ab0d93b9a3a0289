"""A score cell of the trace page, opened: how one plugin scored one node in one cycle.

The fragment (htmx) and the page (a plain link) show the same partial; what it says is built by
webui/score_explain/. Views parse input, call one selector, and render.
"""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from schedviz.cluster import selectors
from schedviz.cluster.services import ObjectNotFound
from webui import access
from webui.score_explain import score_computation

SCORE_TEMPLATE = "webui/trace/score.html"


@require_http_methods(["GET", "HEAD"])
def score_cell(
    request: HttpRequest, cluster_id: int, number: int, node: str, plugin: str
) -> HttpResponse:
    cluster = access.cluster_for(request, cluster_id)
    try:
        trace = selectors.cycle_get(cluster=cluster, number=number)
    except ObjectNotFound as error:
        raise Http404(error.errors[0]) from None
    try:
        computation = score_computation(cluster=cluster, trace=trace, node=node, plugin=plugin)
    except KeyError:
        raise Http404(f"{plugin} did not score {node} in cycle {number}") from None
    context = {"cluster": cluster, "trace": trace, "c": computation}
    if not getattr(request, "htmx", None):
        return render(request, SCORE_TEMPLATE, context)
    response = render(request, SCORE_TEMPLATE + "#computation", context)
    # Opened in the cycle's page (a boosted link): the page's address stays the cycle's.
    response["HX-Push-Url"] = "false"
    return response
