"""Holds of the garbage collector's passes: off while held, on when the last hold lets go, never off
for longer than the bound, and left alone when someone else turned them off."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from typing import ClassVar

import pytest

from mockserver.api.asgi.collector import Collector, paused_for_start_up
from mockserver.engine.pacing import FakeClock


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    gc.enable()
    yield
    gc.enable()


def test_off_while_held_and_on_when_the_last_hold_lets_go() -> None:
    clock = FakeClock()
    collector = Collector(clock.now, max_hold_s=2.0)
    first, second = collector.hold(), collector.hold()
    assert not gc.isenabled() and collector.holding
    first()
    first()  # a release counts once
    assert not gc.isenabled()
    second()
    assert gc.isenabled() and not collector.holding


def test_never_off_for_longer_than_the_bound() -> None:
    clock = FakeClock()
    collector = Collector(clock.now, max_hold_s=2.0)
    stuck = collector.hold()  # never let go in time
    clock.advance(2.5)
    late = collector.hold()  # past the bound: the passes come back on, and this hold is not granted
    assert gc.isenabled() and not collector.holding
    clock.advance(1.0)
    assert collector.hold()() is None and gc.isenabled()  # none granted for as long again
    clock.advance(1.5)
    fresh = collector.hold()
    assert not gc.isenabled()
    stuck()  # a release from the stretch that ran too long ends nothing of the new one
    late()
    assert not gc.isenabled()
    fresh()
    assert gc.isenabled()


def test_passes_someone_else_turned_off_are_left_alone() -> None:
    collector = Collector(FakeClock().now)
    gc.disable()
    release = collector.hold()
    assert not collector.holding
    release()
    assert not gc.isenabled()  # still off: not this collector's to turn on


class ManualTimer:
    """A timer the test fires itself."""

    made: ClassVar[list[ManualTimer]] = []

    def __init__(self, seconds: float, action: Callable[[], None]) -> None:
        self.seconds, self.action = seconds, action
        self.daemon = False
        self.started = self.cancelled = False
        ManualTimer.made.append(self)

    def start(self) -> None:
        self.started = True

    def cancel(self) -> None:
        self.cancelled = True

    def fire(self) -> None:
        if not self.cancelled:
            self.action()


def test_the_timer_ends_a_hold_nobody_lets_go() -> None:
    clock = FakeClock()
    ManualTimer.made.clear()
    collector = Collector(clock.now, max_hold_s=2.0, timer=ManualTimer)
    stuck = collector.hold()
    (countdown,) = ManualTimer.made
    assert countdown.started and countdown.daemon and countdown.seconds == 2.0
    clock.advance(2.0)
    countdown.fire()  # nobody asked for another hold: the countdown alone turns the passes back on
    assert gc.isenabled() and not collector.holding
    assert collector.hold()() is None and gc.isenabled()  # none granted for as long again
    stuck()
    assert gc.isenabled()


def test_a_hold_let_go_in_time_stops_its_countdown() -> None:
    ManualTimer.made.clear()
    collector = Collector(FakeClock().now, timer=ManualTimer)
    collector.hold()()
    (countdown,) = ManualTimer.made
    assert countdown.cancelled
    countdown.fire()  # a cancelled countdown that fires anyway changes nothing
    assert gc.isenabled()


def test_start_up_pauses_the_passes_and_leaves_them_as_they_were() -> None:
    assert gc.isenabled()
    with paused_for_start_up():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_for_start_up():
            assert not gc.isenabled()
        assert not gc.isenabled()  # someone else's choice, left alone
    finally:
        gc.enable()
