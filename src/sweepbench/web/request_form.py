"""A page's controls as fields of a :class:`~sweepbench.bench.request.BenchRequest`, both
ways: one table of :class:`FormField` rows (the control, the request field, the label its
problems are named by, how the control's value is read and how a request's value is shown)
reads a form into a request's fields and fills a form from a request — a stored run's
(:func:`~sweepbench.bench.request.request_from_run`) or a stored sweep's. The few settings
made of several controls (the models of each role, the limits per role, the benchmark and
its data) stay with their page."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sweepbench.axes.cells import read_budget
from sweepbench.bench.request import BenchRequest, parse_usd
from sweepbench.errors import UserError


def text(value: Any) -> str:
    """A control's text, trimmed ("" for none)."""
    return "" if value is None else str(value).strip()


def text_or_none(value: Any, _label: str = "") -> str | None:
    """A control's text, None when empty."""
    return text(value) or None


def whole(value: Any, label: str) -> int | None:
    """A whole number typed in a control (thousands commas allowed), None when empty; a
    UserError naming the control otherwise."""
    typed = text(value)
    if not typed:
        return None
    try:
        return int(typed.replace(",", ""))
    except ValueError:
        raise UserError(f"{label}: a whole number, not {typed!r}") from None


def budget(value: Any, label: str) -> int | None:
    """A token budget typed in a control, read as the CLI reads ``--max-tokens`` (the one
    parser, :func:`~sweepbench.axes.cells.read_budget`: "64.000", "64,000" and "64k" are
    64,000), None when empty; a UserError naming the control otherwise."""
    typed = text(value)
    if not typed:
        return None
    try:
        return read_budget(typed)
    except UserError as exc:
        raise UserError(f"{label}: {exc}") from None


def as_typed(value: Any, _label: str = "") -> object:
    """A number control as typed (None when empty), for the request to validate: a wrong one
    gets the library's message, never a silent default."""
    if isinstance(value, str):
        return value.strip().replace(",", "") or None
    return value


def usd(value: Any, label: str) -> Decimal | None:
    """A spending limit: none when empty or at most $0; otherwise the one money parser's
    answer (a UserError naming the control)."""
    typed = text(value)
    if not typed:
        return None
    amount = parse_usd(typed, label)
    return amount if amount > 0 else None


def checked(value: Any, _label: str = "") -> bool:
    """A checkbox's state."""
    return bool(value)


def names(value: Any, _label: str = "") -> str:
    """A comma-separated list as typed (the request splits it)."""
    return text(value)


def shown(value: Any) -> Any:
    """A request's value as a text control shows it ("" for none)."""
    return "" if value is None else str(value)


def joined(value: Any) -> str:
    """A request's list as a text control shows it: comma-separated."""
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return text(value)


def as_checked(value: Any) -> bool:
    """A request's flag as a checkbox shows it."""
    return bool(value)


@dataclass(frozen=True)
class FormField:
    """One control that sets one request field."""

    control: str
    """The control's id."""
    field: str
    """The :class:`BenchRequest` field it sets."""
    label: str
    """How the page names it (in the request's problems)."""
    read: Callable[[Any, str], Any] = text_or_none
    """The control's value (and the label, for errors) → the request field's value (None:
    the request's default)."""
    show: Callable[[Any], Any] = shown
    """The request field's value → the control's value."""
    prop: str = "value"
    """The control's property that holds it (``value``, ``checked``)."""


def read_form(table: Sequence[FormField], values: Mapping[str, Any]) -> dict[str, Any]:
    """The request fields the controls say (``values``: control id → value); a field read as
    None is left out (the request's default)."""
    read = {f.field: f.read(values.get(f.control), f.label) for f in table}
    return {name: value for name, value in read.items() if value is not None}


def fill_form(
    table: Iterable[FormField], request: BenchRequest | Mapping[str, Any]
) -> dict[str, Any]:
    """The controls' values (control id → value) that show ``request`` (a request, or one as
    stored: its JSON)."""
    if isinstance(request, Mapping):
        return {f.control: f.show(request.get(f.field)) for f in table}
    return {f.control: f.show(getattr(request, f.field)) for f in table}


def labels(table: Iterable[FormField], **more: str) -> dict[str, str]:
    """How the page names each request field (the table's, and ``more`` for the fields its
    composed controls set), for :meth:`BenchRequest.from_values`."""
    return {f.field: f.label for f in table} | more


def properties(table: Iterable[FormField]) -> dict[str, str]:
    """The property of each control that is not ``value`` (control id → property)."""
    return {f.control: f.prop for f in table if f.prop != "value"}
