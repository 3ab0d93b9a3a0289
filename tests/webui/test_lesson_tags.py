"""The lessons' little markup: paragraphs, lists, bold and code made tags, everything else
escaped (a lesson's text can never inject markup)."""

from __future__ import annotations

from webui.templatetags.lesson_tags import lesson_inline, lesson_markup


def test_paragraphs_lists_bold_and_code_become_tags() -> None:
    text = "**Filter.** A pod\nfits `cpu`.\n\n- one **a**\n  continued\n- two `x`\n\nLast."
    assert lesson_markup(text) == (
        "<p><strong>Filter.</strong> A pod fits <code>cpu</code>.</p>\n"
        "<ul><li>one <strong>a</strong> continued</li><li>two <code>x</code></li></ul>\n"
        "<p>Last.</p>"
    )


def test_markup_in_the_text_is_escaped_even_inside_code_and_bold() -> None:
    html = lesson_markup("<script>x</script> `<img src=x>` **<b>** & done")
    assert "<script>" not in html and "<img" not in html and "<b>" not in html
    assert "&lt;script&gt;x&lt;/script&gt;" in html
    assert "<code>&lt;img src=x&gt;</code>" in html
    assert "<strong>&lt;b&gt;</strong>" in html and "&amp; done" in html


def test_code_keeps_its_asterisks_literal() -> None:
    assert lesson_inline("see `a**b**c` and **bold**") == (
        "see <code>a**b**c</code> and <strong>bold</strong>"
    )
