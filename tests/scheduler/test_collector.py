import gc
import threading

from schedviz.scheduler.collector import GC_THRESHOLD0, scheduling_collector


def test_the_young_generation_is_collected_less_often_while_scheduling_and_restored_after() -> None:
    before = gc.get_threshold()
    with scheduling_collector():
        assert gc.get_threshold() == (max(GC_THRESHOLD0, before[0]), *before[1:])
    assert gc.get_threshold() == before


def test_runners_sharing_a_process_keep_the_tuning_until_the_last_one_ends() -> None:
    before = gc.get_threshold()
    first_in, second_out, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: list[tuple[int, ...]] = []

    def first() -> None:
        with scheduling_collector():
            first_in.set()
            second_out.wait(5)
            seen.append(gc.get_threshold())  # the second ended: still tuned for this one
        first_out.set()

    thread = threading.Thread(target=first)
    thread.start()
    first_in.wait(5)
    with scheduling_collector():
        pass
    second_out.set()
    thread.join(5)
    assert seen == [(max(GC_THRESHOLD0, before[0]), *before[1:])]
    assert gc.get_threshold() == before


def test_a_process_tuned_higher_already_is_not_lowered() -> None:
    before = gc.get_threshold()
    gc.set_threshold(GC_THRESHOLD0 * 2, *before[1:])
    try:
        with scheduling_collector():
            assert gc.get_threshold()[0] == GC_THRESHOLD0 * 2
    finally:
        gc.set_threshold(*before)
