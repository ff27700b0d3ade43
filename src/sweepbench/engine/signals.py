"""Stop on Ctrl-C *and* on SIGTERM: ``systemctl stop`` and ``docker stop`` send SIGTERM, and a
run stopped that way must act as Stop all (streams closed, what was produced kept and settled),
not die with its reservations open."""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def stop_on_signals(callback: Callable[[], None]) -> Iterator[None]:
    """Within a running event loop, call ``callback`` on SIGINT or SIGTERM (where the loop
    can take signal handlers: the main thread of a Unix process)."""
    loop = asyncio.get_running_loop()
    installed: list[signal.Signals] = []
    for signum in STOP_SIGNALS:
        try:
            loop.add_signal_handler(signum, callback)
        except (NotImplementedError, RuntimeError, ValueError):
            continue
        installed.append(signum)
    try:
        yield
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)


@contextmanager
def stop_on_signals_while_blocked(callback: Callable[[], None]) -> Iterator[None]:
    """The same without an event loop (a process waiting on others): ``callback`` on SIGINT
    or SIGTERM instead of KeyboardInterrupt; only in the main thread (elsewhere a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    for signum in STOP_SIGNALS:
        signal.signal(signum, lambda _signum, _frame: callback())
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
