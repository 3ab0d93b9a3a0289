"""The page writes' rate limit: the JSON API's token bucket (schedviz.cluster.ratelimit), shared
with it per client, answered the way a page expects.

A write beyond ``SCHEDVIZ_WRITE_RATE_PER_MINUTE`` gets 429 with ``Retry-After``: a plain post the
"too many writes" page, an htmx request the message alone, put at the top of the page's <main>
(``HX-Retarget``/``HX-Reswap``; base.html lets htmx swap a 429) so the form it came from stays.
A write refused with 503 because the limiter's Redis is unreachable is answered the same way,
with the "try again shortly" message.
"""

from __future__ import annotations

import functools
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from schedviz.cluster.ratelimit import View, limit_writes

TEMPLATE = "webui/limits/too_many_writes.html"
UNAVAILABLE_TEMPLATE = "webui/limits/unavailable.html"


def limit_page_writes(view: View) -> View:
    """``limit_writes`` for a page: the same bucket, an HTML answer when it is empty."""
    limited = limit_writes(view)

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = limited(request, *args, **kwargs)
        # Page views never answer JSON: a JSON 429 or 503 is the limiter's.
        status = response.status_code
        if status not in (429, 503) or not isinstance(response, JsonResponse):
            return response
        seconds = int(response["Retry-After"])
        context = {"rate": settings.SCHEDVIZ_WRITE_RATE_PER_MINUTE, "seconds": seconds}
        template = TEMPLATE if status == 429 else UNAVAILABLE_TEMPLATE
        if getattr(request, "htmx", False):
            page = render(request, f"{template}#message", context, status=status)
            page["HX-Retarget"] = "#main"
            page["HX-Reswap"] = "afterbegin"
        else:
            page = render(request, template, context, status=status)
        page["Retry-After"] = str(seconds)
        return page

    return wrapper
