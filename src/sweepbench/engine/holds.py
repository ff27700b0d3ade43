"""How the engine holds money for a call before it starts and settles it when it ends.

- :class:`PerCallHolds` (generate, a sweep's retries): one reservation per call, settled at
  once.
- :class:`AdmittedHolds` (sweeps): the sweep was admitted as a whole; each call's first attempt
  uses its reservation, a retry takes a new one.
- :class:`LeaseHolds` (benchmarks): a worker holds one *lease* covering its next calls, draws
  each call's worst case from it, returns the unused part when the call ends, and settles the
  lease at the sum of its calls' actual costs in the runner's group commit. A lease never covers
  more than it reserved, so no ceiling is exceeded with any concurrency or number of processes.
  When not even one worst case fits any more, the worker first gives back its idle leases (of
  its other roles and models); then a call whose whole output streams in sight may hold *less*
  than its worst case, down to its floor (:meth:`LeaseHolds.take`): its hold is a *cap*, and the
  executor cuts its stream before its cost can pass it (the item is "stopped at the limit").

A call that holds nothing is free ($0 price): $0 calls count against no ceiling.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Protocol

from sqlalchemy.engine import Connection

from sweepbench.money.ceilings import Charge, SpendRefused, micro_to_usd, usd_to_micro
from sweepbench.money.ledger import Ledger, Settlement

LEASE_CALLS = 32
"""A benchmark lease covers about this many calls at their worst case."""
_ZERO = Decimal(0)


@dataclass
class Hold:
    """Money held for one call: a reservation of its own, or a draw on a lease."""

    worst_usd: Decimal
    reservation_id: str | None = None
    lease: _Lease | None = None
    worst_micro: int = 0
    """``worst_usd`` in micro-dollars, rounded up (what a lease draw takes)."""
    cap_usd: Decimal | None = None
    """Set when the call holds less than its worst case (``worst_usd`` is then the cap): the
    executor must stop its stream before its cost can exceed this."""

    @property
    def holds_money(self) -> bool:
        """False for a free call."""
        return self.reservation_id is not None or self.lease is not None


class Holds(Protocol):
    """A strategy for holding and settling calls' money."""

    def take(
        self, run_id: str, role: str, model: str, worst_usd: Decimal, first: bool,
        key: str | None = None, floor_usd: Decimal | None = None,
        worst_micro: int | None = None,
    ) -> Hold:  # fmt: skip
        """Hold ``worst_usd`` for one call (``first``: its first attempt; ``key``: the item or
        sample it is for; ``floor_usd``: the least it may hold, cut at its hold, when it may
        hold less; ``worst_micro``: ``worst_usd`` in micro-dollars rounded up, when the caller
        has it). SpendRefused when a ceiling would be crossed."""

    def attach(self, hold: Hold, call_id: str) -> None:
        """The call's row exists: link the hold to it (before traffic)."""

    def settle(
        self, hold: Hold, actual_usd: Decimal | None, call_id: str | None,
        actual_micro: int | None = None,
    ) -> None:  # fmt: skip
        """The call ended at ``actual_usd`` (None: no price, count the worst case;
        ``actual_micro``: the same in micro-dollars, half up, when the caller has it)."""


class PerCallHolds:
    """One reservation per call, settled as soon as the call ends."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def take(
        self, run_id: str, role: str, model: str, worst_usd: Decimal, first: bool,
        key: str | None = None, floor_usd: Decimal | None = None,
        worst_micro: int | None = None,
    ) -> Hold:  # fmt: skip
        """Admit one charge (its worst case: a sweep's or a generation's call is never cut)."""
        [rid] = self.ledger.admit(run_id, [Charge(model=model, ceiling_usd=worst_usd, role=role)])
        return Hold(worst_usd, reservation_id=rid)

    def attach(self, hold: Hold, call_id: str) -> None:
        """Link the reservation to its call row."""
        if hold.reservation_id is not None:
            self.ledger.attach(hold.reservation_id, call_id)

    def settle(
        self, hold: Hold, actual_usd: Decimal | None, call_id: str | None,
        actual_micro: int | None = None,
    ) -> None:  # fmt: skip
        """Settle at once."""
        if hold.reservation_id is not None:
            self.ledger.settle(hold.reservation_id, actual_usd)


class AdmittedHolds(PerCallHolds):
    """A sweep admitted as a whole: a call's first attempt uses the reservation admitted for
    its key (``reservations``: key → reservation id, or None for a free call); a retry admits
    a new one."""

    def __init__(self, ledger: Ledger, reservations: dict[str, str | None]) -> None:
        super().__init__(ledger)
        self.reservations = reservations

    def take(
        self, run_id: str, role: str, model: str, worst_usd: Decimal, first: bool,
        key: str | None = None, floor_usd: Decimal | None = None,
        worst_micro: int | None = None,
    ) -> Hold:  # fmt: skip
        """The admitted reservation of call ``key`` on its first attempt, else a new one."""
        if first and key is not None and key in self.reservations:
            return Hold(worst_usd, reservation_id=self.reservations.pop(key))
        return super().take(run_id, role, model, worst_usd, first, key)  # a retry: its own


@dataclass
class _Lease:
    reservation_id: str
    run_id: str
    role: str
    model: str
    reserved_micro: int
    drawn_micro: int = 0
    """Worst cases of the calls in flight."""
    used_micro: int = 0
    """Actual costs of the calls that ended."""
    unpriced: bool = False
    """A call under this lease had no price: the lease settles at its reserved amount."""
    in_flight: int = 0
    closed: bool = False

    @property
    def free_micro(self) -> int:
        return self.reserved_micro - self.drawn_micro - self.used_micro


@dataclass
class LeaseHolds:
    """Leases per (run, role, model); settlements wait for the runner's group commit."""

    ledger: Ledger
    calls_per_lease: int = LEASE_CALLS
    _open: dict[tuple[str, str, str], _Lease] = field(default_factory=dict)
    _done: list[_Lease] = field(default_factory=list)
    _closing: list[_Lease] = field(default_factory=list)
    """Closed leases whose calls are still in flight."""

    def take(
        self, run_id: str, role: str, model: str, worst_usd: Decimal, first: bool,
        key: str | None = None, floor_usd: Decimal | None = None,
        worst_micro: int | None = None,
    ) -> Hold:  # fmt: skip
        """Draw the call's worst case from the open lease, taking a new lease when it has too
        little left. When no ceiling leaves room for a worst case, the idle leases of this
        worker's other roles and models are given back first; then, with ``floor_usd``, the
        call may hold less, down to its floor, as a cap it is cut at (``Hold.cap_usd``)."""
        worst = usd_to_micro(worst_usd, up=True) if worst_micro is None else worst_micro
        if worst == 0:
            return Hold(worst_usd)
        scope = (run_id, role, model)
        lease = self._open.get(scope)
        if lease is None or lease.reserved_micro - lease.drawn_micro - lease.used_micro < worst:
            if lease is not None:
                self._close(scope, lease)
                # Settle the leases whose calls have all ended first: left open until the next
                # group commit, their whole reservation would count as held, and the new lease
                # would be refused ("limit reached, $0 spent") with money still left.
                self.ledger.settle_many(self.settlements())
            lease = self._new_lease(scope, worst, worst_usd, floor_usd)
        free = lease.reserved_micro - lease.drawn_micro - lease.used_micro  # free_micro
        draw = worst if worst <= free else free
        lease.drawn_micro += draw
        lease.in_flight += 1
        if draw < worst:
            capped = micro_to_usd(draw)
            return Hold(capped, lease=lease, worst_micro=draw, cap_usd=capped)
        return Hold(worst_usd, lease=lease, worst_micro=worst)

    def _new_lease(
        self, scope: tuple[str, str, str], worst: int, worst_usd: Decimal,
        floor_usd: Decimal | None,
    ) -> _Lease:  # fmt: skip
        """A lease for ``scope``: room for about :data:`LEASE_CALLS` worst cases, as much as
        fits down to one; failing that, after giving back the idle leases, down to one worst
        case again, then down to the call's floor. SpendRefused when not even that fits."""
        run_id, role, model = scope
        want = micro_to_usd(worst * self.calls_per_lease)
        try:
            rid, amount = self.ledger.lease(run_id, role, model, want, worst_usd)
        except SpendRefused:
            if not self._give_back_idle():
                if floor_usd is None or floor_usd >= worst_usd:
                    raise
                rid, amount = self.ledger.lease(run_id, role, model, want, floor_usd)
            else:
                try:
                    rid, amount = self.ledger.lease(run_id, role, model, want, worst_usd)
                except SpendRefused:
                    if floor_usd is None or floor_usd >= worst_usd:
                        raise
                    rid, amount = self.ledger.lease(run_id, role, model, want, floor_usd)
        lease = self._open[scope] = _Lease(rid, run_id, role, model, usd_to_micro(amount, up=True))
        return lease

    def _give_back_idle(self) -> bool:
        """Close and settle every open lease with no call in flight, so what they hold is
        free again; True when any was given back."""
        idle = [(scope, lease) for scope, lease in self._open.items() if lease.in_flight == 0]
        for scope, lease in idle:
            self._close(scope, lease)
        if idle:
            self.ledger.settle_many(self.settlements())
        return bool(idle)

    def attach(self, hold: Hold, call_id: str) -> None:
        """Leases are settled as a whole; calls are not linked one by one."""

    def settle(
        self, hold: Hold, actual_usd: Decimal | None, call_id: str | None,
        actual_micro: int | None = None,
    ) -> None:  # fmt: skip
        """Return the call's worst case to its lease and count what it cost."""
        lease = hold.lease
        if lease is None:
            return
        lease.drawn_micro -= hold.worst_micro
        lease.in_flight -= 1
        if actual_usd is None:
            lease.unpriced = True
            lease.used_micro += hold.worst_micro
        elif actual_micro is not None:
            lease.used_micro += actual_micro
        else:
            lease.used_micro += usd_to_micro(actual_usd if actual_usd > 0 else _ZERO, up=False)
        if lease.closed and lease.in_flight == 0:
            self._done.append(lease)
            self._closing.remove(lease)

    def _close(self, key: tuple[str, str, str], lease: _Lease) -> None:
        lease.closed = True
        del self._open[key]
        if lease.in_flight == 0:
            self._done.append(lease)
            return
        self._closing.append(lease)
        if lease.free_micro > 0:  # keep only what the calls in flight may still cost
            lease.reserved_micro = lease.used_micro + lease.drawn_micro
            self.ledger.shrink(lease.reservation_id, micro_to_usd(lease.reserved_micro))

    def close_all(self) -> None:
        """The session is ending: every open lease settles once its calls have ended."""
        for key, lease in list(self._open.items()):
            self._close(key, lease)

    @property
    def pending(self) -> int:
        """Leases ready to settle."""
        return len(self._done)

    def settlements(self) -> Sequence[Settlement]:
        """Take the leases ready to settle, at what their calls cost."""
        done, self._done = self._done, []
        return [
            Settlement(
                lease.reservation_id,
                None if lease.unpriced else micro_to_usd(lease.used_micro),
            )
            for lease in done
        ]

    def settle_in(self, conn: Connection) -> None:
        """Settle the ready leases inside the caller's transaction (the group commit), and
        record what the open ones have used so far (the answers of this commit included)."""
        settlements = self.settlements()
        if settlements:
            self.ledger.settle_in(conn, settlements)
        held = [*self._open.values(), *self._closing]
        used = [(lease.reservation_id, lease.used_micro) for lease in held]
        if used:
            self.ledger.note_used_in(conn, used)

    def spent(self) -> Decimal:
        """What the calls of every lease of this session have cost so far."""
        leases = [*self._open.values(), *self._done]
        return micro_to_usd(sum(lease.used_micro for lease in leases))
