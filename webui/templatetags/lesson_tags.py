"""The lessons' text as HTML: the little markup lesson.yaml uses (paragraphs, "- " lists,
``**bold**`` and backquoted code), every character escaped first, so only these tags are made."""

from __future__ import annotations

import re

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

_CODE = re.compile(r"(`[^`]+`)")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")


def _inline(text: str) -> str:
    """Escaped text with its code spans and bold made tags; a code span's text stays literal."""
    parts = []
    for part in _CODE.split(text):
        if len(part) > 2 and part.startswith("`") and part.endswith("`"):
            parts.append(f"<code>{escape(part[1:-1])}</code>")
        else:
            parts.append(_BOLD.sub(r"<strong>\1</strong>", str(escape(part))))
    return "".join(parts)


def _list_items(lines: list[str]) -> list[str]:
    items: list[str] = []
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("- "):
            items.append(stripped[2:])
        elif items:
            items[-1] += " " + stripped
    return items


@register.filter
def lesson_markup(text: str) -> SafeString:
    """Paragraphs and lists of a lesson's explanation (or one thing to try) as HTML."""
    blocks = []
    for block in _BLANK_LINE.split(str(text).strip()):
        lines = block.splitlines()
        if not lines:
            continue
        if lines[0].lstrip().startswith("- "):
            items = "".join(f"<li>{_inline(item)}</li>" for item in _list_items(lines))
            blocks.append(f"<ul>{items}</ul>")
        else:
            blocks.append(f"<p>{_inline(' '.join(line.strip() for line in lines))}</p>")
    # Every piece of the text went through escape() above; only the tags made here are markup.
    return mark_safe("\n".join(blocks))


@register.filter
def lesson_inline(text: str) -> SafeString:
    """One line of lesson text (a summary, a thing to try) with its code and bold."""
    return mark_safe(_inline(" ".join(str(text).split())))
