"""What goes out over a dashboard's websocket: only what changed since the last frame.

The consumer (webui/consumers.py) keeps one ``LiveFrames`` per connection: it remembers the HTML
of every piece it sent (the node grid's head, each node card, the pending list, each cycle of
the feed) and a new frame carries only the pieces whose HTML differs, each as an
``hx-swap-oob`` fragment rendered from the dashboard's own partials. When the grid's cards
change set or order (a node added, a filter or page that now holds others) the whole grid goes
out once, as it does in the first frame. The Workloads panel goes the same way: whole when its
workloads change, else only the pod counts that changed.

Before this, every refresh sent the whole grid and the pending list: ~100 KB a frame at 48 cards
of a 1200-node cluster, for one pod bound (``manage.py pagebench`` measures both).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.template.loader import render_to_string

DASHBOARD = "webui/dashboard/page.html"
WORKLOADS = "webui/dashboard/workloads.html"


def _render(part: str, context: Mapping[str, Any], template: str = DASHBOARD) -> str:
    return render_to_string(f"{template}#{part}", dict(context))


class LiveFrames:
    """The pieces of one dashboard as last sent, and the frames that bring it up to date."""

    def __init__(self) -> None:
        self.cards: dict[str, str] = {}
        self.card_order: tuple[str, ...] | None = None
        self.head: str | None = None
        self.pending: str | None = None
        self.feed_items: dict[int, str] = {}
        self.feed_order: tuple[int, ...] | None = None
        self.workload_pods: dict[str, str] = {}
        self.workload_set: tuple[tuple[str, bool, str], ...] | None = None

    # ------------------------------------------------------------------ node grid, pending

    def live(self, context: Mapping[str, Any]) -> str:
        """The node grid and pending pods of ``presenters.live_context``: what changed."""
        return self._nodes(context) + self._pending(context)

    def _nodes(self, context: Mapping[str, Any]) -> str:
        cards = list(context["cards"])
        order = tuple(card.name for card in cards)
        part = {**context, "oob": False, "oob_part": True}
        head = _render("nodes_head", part)
        rendered = {card.name: _render("node_card", {**part, "node": card}) for card in cards}
        if order != self.card_order:
            self.card_order, self.head, self.cards = order, head, rendered
            return _render("nodes", {**context, "oob": True})
        frame = []
        if head != self.head:
            self.head = head
            frame.append(head)
        for name, html in rendered.items():
            if self.cards.get(name) != html:
                self.cards[name] = html
                frame.append(html)
        return "".join(frame)

    def _pending(self, context: Mapping[str, Any]) -> str:
        html = _render("pending", {**context, "oob": True})
        if html == self.pending:
            return ""
        self.pending = html
        return html

    # ------------------------------------------------------------------ workloads

    def workloads(self, context: Mapping[str, Any]) -> str:
        """The Workloads panel (``cluster`` and ``workloads``): the whole panel when a workload
        came, went or changed how it is scaled; otherwise only the pod counts that changed, so a
        replicas field being typed in is left alone."""
        workloads = list(context["workloads"])
        shape = tuple((w.key, w.scalable, w.managed_by) for w in workloads)
        counts = {
            w.key: _render("workload_pods", {"w": w, "oob_part": True}, WORKLOADS)
            for w in workloads
        }
        if shape != self.workload_set:
            self.workload_set, self.workload_pods = shape, counts
            return _render("workloads", {**context, "oob": True}, WORKLOADS)
        frame = [html for key, html in counts.items() if self.workload_pods.get(key) != html]
        self.workload_pods = counts
        return "".join(frame)

    # ------------------------------------------------------------------ the cycle feed

    def feed(self, entries: Iterable[Mapping[str, Any]]) -> str:
        """The feed (newest first): new cycles prepended, replaced ones swapped, the ones that
        fell off the end deleted; the whole list when it starts or its order is not a prefix
        shift of the last one."""
        feed = list(entries)
        items = {int(e["cycle"]): _render("feed_item", {"c": e, "oob_part": True}) for e in feed}
        order = tuple(int(e["cycle"]) for e in feed)
        kept = [number for number in order if number in self.feed_items]
        fresh = [number for number in order if number not in self.feed_items]
        previous = self.feed_order or ()
        shifted = (
            bool(previous)
            and order[len(fresh) :] == tuple(n for n in previous if n in order)
            and all(n not in previous for n in order[: len(fresh)])
        )
        if not shifted:
            self.feed_items, self.feed_order = items, order
            return _render("feed", {"feed": feed, "oob": True})
        frame = []
        if fresh:
            inserted = "".join(_render("feed_item", {"c": e}) for e in feed[: len(fresh)])
            frame.append(f'<ol id="feed-list" hx-swap-oob="afterbegin">{inserted}</ol>')
        frame += [items[n] for n in kept if items[n] != self.feed_items[n]]
        frame += [
            f'<li id="feed-cycle-{n}" hx-swap-oob="delete"></li>'
            for n in previous
            if n not in order
        ]
        self.feed_items, self.feed_order = items, order
        return "".join(frame)
