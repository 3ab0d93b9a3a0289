"""A learner's first lesson in a real Chromium against the live ASGI server (conftest): open the
lessons, load one (paused), guess where the next pod lands, step one cycle, and see the reveal
arrive over the websocket without reloading the page."""

from __future__ import annotations

import re
from typing import Any

import pytest
from conftest import screenshot_widths

pytestmark = pytest.mark.browser

# Runners start on commit and stop after SCHEDVIZ_RUNNER_IDLE_SECONDS (5 s): generous waits.
LIVE_TIMEOUT_MS = 45_000


def test_a_learner_loads_a_lesson_predicts_steps_and_sees_the_reveal(dashboard_page: Any) -> None:
    from playwright.sync_api import expect

    page = dashboard_page
    page.goto("/")
    page.locator("#lessons-link").click()
    expect(page.locator("h1")).to_have_text("Lessons")
    page.get_by_role("link", name="1. Resource fit and the three scoring strategies").click()
    expect(page.locator(".lesson-text")).to_contain_text("LeastAllocated")
    # Loaded paused: no cycle runs until the learner steps.
    expect(page.locator("#id_paused")).to_be_checked()
    page.locator("#load-lesson").click()
    page.wait_for_url(re.compile(r"/clusters/\d+/$"))
    expect(page.locator("#lesson-panel")).to_contain_text("Things to try")
    expect(page.locator("#run-state")).to_have_text("Paused")
    document = page.evaluate_handle("document")
    # The runner started by the load lists the pods, publishes the queue and goes idle; once it
    # is idle nothing re-renders the form while the guess is picked.
    expect(page.locator("#runner-status")).to_contain_text("idle", timeout=LIVE_TIMEOUT_MS)

    expect(page.locator("#predict-pod")).to_have_value("default/spread-me")
    page.locator('#predict input[name="node"][value="node-a"]').check()
    page.locator("#predict-button").click()
    expect(page.locator("#open-guesses")).to_contain_text("default/spread-me")
    expect(page.locator("#open-guesses")).to_contain_text("node-a")

    page.locator("#step-button").click()
    reveal = page.locator("#reveal")
    expect(reveal).to_have_attribute("data-verdict", "scored-lower", timeout=LIVE_TIMEOUT_MS)
    expect(reveal).to_contain_text("Wrong")
    expect(reveal.locator(".chosen")).to_have_text("node-b")
    expect(reveal.locator("tr.decisive").first).to_contain_text("NodeResourcesFit")
    expect(page.locator("#tally")).to_contain_text("0 right · 1 wrong")
    # The reveal came over the websocket: the page was never reloaded.
    assert page.evaluate("(d) => d === document", document)
    # The feed shows the cycle the guess was revealed against, and its trace is a click away.
    expect(page.locator("#feed")).to_contain_text("default/spread-me")
    reveal.get_by_role("link", name=re.compile(r"cycle #\d+")).click()
    expect(page.locator("body")).to_contain_text("node-b")


def test_a_lesson_reveals_each_step_after_it_runs_ends_and_restarts_in_place(
    dashboard_page: Any,
) -> None:
    """predict -> step -> the step's text revealed -> step -> lesson complete -> restart."""
    from playwright.sync_api import expect

    page = dashboard_page
    page.goto("/lessons/topology-spread/")
    page.locator("#load-lesson").click()
    page.wait_for_url(re.compile(r"/clusters/\d+/$"))
    panel = page.locator("#lesson-panel")
    expect(panel.locator("#lesson-progress")).to_contain_text("Step 1 of 2")
    # Nothing that tells the outcome is on the page before the learner steps.
    expect(panel).not_to_contain_text("lands on")
    expect(page.locator("#runner-status")).to_contain_text("idle", timeout=LIVE_TIMEOUT_MS)
    screenshot_widths(page, "lesson-start")

    expect(page.locator("#predict-pod")).to_have_value("default/web-3")
    page.locator('#predict input[name="node"][value="node-c"]').check()
    page.locator("#predict-button").click()
    expect(page.locator("#open-guesses")).to_contain_text("node-c")
    page.locator("#step-button").click()
    expect(page.locator("#reveal")).to_contain_text("Right", timeout=LIVE_TIMEOUT_MS)
    # The step's text arrives over the websocket with the cycle.
    step = panel.locator("#lesson-step-1")
    expect(step).to_contain_text("web-3 lands on node-c", timeout=LIVE_TIMEOUT_MS)
    expect(panel.locator("#lesson-progress")).to_contain_text("Step 2 of 2")
    screenshot_widths(page, "lesson-step-1")

    expect(page.locator("#runner-status")).to_contain_text("idle", timeout=LIVE_TIMEOUT_MS)
    page.locator("#step-button").click()
    expect(panel.locator("#lesson-complete")).to_contain_text(
        "Lesson complete", timeout=LIVE_TIMEOUT_MS
    )
    expect(panel.locator("#lesson-progress")).to_contain_text("Lesson complete, 2 of 2 steps")
    expect(panel.locator("#lesson-complete")).to_contain_text("maxSkew")
    screenshot_widths(page, "lesson-complete")

    page.locator("#lesson-restart").click()
    page.wait_for_url(re.compile(r"/clusters/\d+/$"))
    expect(panel.locator("#lesson-progress")).to_contain_text("Step 1 of 2")
    expect(panel.locator("#lesson-step-1")).to_have_count(0)
    expect(page.locator("#run-state")).to_have_text("Paused")
    expect(page.locator("body")).to_contain_text("web-3")


def test_the_preemption_lessons_answers_are_revealed_right_at_every_step(
    dashboard_page: Any,
) -> None:
    """The answer the lesson's text teaches at each step (at step 2, the node preemption
    nominates) is the one the reveal marks right."""
    from playwright.sync_api import expect

    page = dashboard_page
    page.goto("/lessons/priority-and-preemption/")
    expect(page.locator(".lesson-text")).to_contain_text("needs 1 CPU")
    page.locator("#load-lesson").click()
    page.wait_for_url(re.compile(r"/clusters/\d+/$"))
    answers = [("default/polite", ""), ("default/web-2", "node-a")]
    answers += [("default/polite", ""), ("default/web-2", "node-a")]
    for number, (pod, node) in enumerate(answers, start=1):
        expect(page.locator("#runner-status")).to_contain_text("idle", timeout=LIVE_TIMEOUT_MS)
        expect(page.locator("#predict-pod")).to_have_value(pod)
        page.locator(f'#predict input[name="node"][value="{node or "/unschedulable"}"]').check()
        page.locator("#predict-button").click()
        expect(page.locator("#open-guesses")).to_contain_text(node or "unschedulable")
        page.locator("#step-button").click()
        expect(page.locator("#tally")).to_contain_text(
            f"{number} right · 0 wrong", timeout=LIVE_TIMEOUT_MS
        )
        expect(page.locator("#reveal")).to_contain_text("Right")
