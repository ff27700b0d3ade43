"""``sweepbench generate``: one answer streamed to the terminal, through the engine (held,
recorded, settled), and what it prints while it streams: the answer's text, scrubbed of every
key the process knows before it reaches the terminal (the stored call and ``--json`` are
scrubbed by the engine; a streamed delta goes straight to the screen, so it is scrubbed
here)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from sweepbench.stream_scrub import StreamScrubber

err = Console(stderr=True)


def scrubbed_printer(write: Callable[[str], object], secrets: Sequence[str]) -> StreamPrinter:
    """A printer of streamed text through ``write`` (stdout's), scrubbed of ``secrets``."""
    return StreamPrinter(write, StreamScrubber(secrets))


class StreamPrinter:
    """Writes streamed text as it arrives, less what the scrubber holds back; :meth:`close`
    writes the rest."""

    def __init__(self, write: Callable[[str], object], scrubber: StreamScrubber) -> None:
        self._write = write
        self._scrubber = scrubber

    def print(self, text: str) -> None:
        """Show a delta (what of it may be shown yet)."""
        shown = self._scrubber.feed(text)
        if shown:
            self._write(shown)

    def close(self) -> None:
        """The stream ended (finished, failed or stopped): show what was held back."""
        rest = self._scrubber.flush()
        if rest:
            self._write(rest)


def generate_command(
    model: Annotated[str, typer.Argument(help="provider/model, e.g. local/smollm2-135m")],
    prompt: Annotated[str, typer.Argument(help="What to ask.")],
    system: Annotated[str | None, typer.Option("--system", help="System prompt.")] = None,
    max_tokens: Annotated[
        str | None, typer.Option("--max-tokens", help="Output budget (64000 or 64k).")
    ] = None,
    effort: Annotated[
        str | None, typer.Option("--effort", help="none, low, medium, high, xhigh, max")
    ] = None,
    temperature: Annotated[float | None, typer.Option("--temperature")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object at the end.")] = (
        False
    ),
) -> None:
    """Stream one answer to the terminal; end with tokens, cost, stop reason and timings.

    Ctrl-C stops generation and still prints what was produced."""
    import asyncio

    from sweepbench.cli.validate import check_prompt, read_budget
    from sweepbench.engine.signals import stop_on_signals
    from sweepbench.generation import Generation, generation_request
    from sweepbench.models import TextDelta
    from sweepbench.money.prices import format_usd
    from sweepbench.settings import scrub, secret_values
    from sweepbench.store import Store

    check_prompt(prompt)
    request, note = generation_request(
        model,
        prompt,
        system=system,
        max_tokens=None if max_tokens is None else read_budget(max_tokens),
        effort=effort,
        temperature=temperature,
    )
    if note and not as_json:
        err.print(f"[yellow]note:[/yellow] {escape(note)}")
    with Store.open() as store:
        generation = Generation(store, request)  # an unknown model fails here, before traffic
        call = generation.call

        def write(text: str) -> None:
            sys.stdout.write(text)
            sys.stdout.flush()

        printer = scrubbed_printer(write, secret_values())  # no key reaches the terminal

        def show(event: object) -> None:
            if not as_json and isinstance(event, TextDelta):
                printer.print(event.text)

        async def main() -> None:
            try:
                with stop_on_signals(generation.cancel):  # Ctrl-C or SIGTERM
                    await generation.run(show)
            finally:
                printer.close()  # what was held back in case a key was split across deltas

        asyncio.run(main())
    result = call.result
    usage = result.usage
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "model": result.model,
                    "text": result.text,
                    "stop_reason": result.stop_reason,
                    "usage": {
                        "input_tokens": usage.input_tokens,
                        "output_tokens": usage.output_tokens,
                        "reasoning_tokens": usage.reasoning_tokens,
                        "cache_read_tokens": usage.cache_read_tokens,
                        "estimated": result.usage_estimated,
                    },
                    "cost_usd": None if call.cost_usd is None else str(call.cost_usd),
                    "price_source": call.price_source,
                    "ttft_s": result.ttft_s,
                    "wall_s": round(result.wall_s, 4),
                    "error": str(result.error) if result.error else None,
                    "call_id": call.call_id,
                },
                ensure_ascii=False,
            )
        )
    else:
        if result.text and not result.text.endswith("\n"):
            sys.stdout.write("\n")
        ttft = "–" if result.ttft_s is None else f"{result.ttft_s:.2f} s"
        reasoning = f" (reasoning {usage.reasoning_tokens:,})" if usage.reasoning_tokens else ""
        if result.usage_estimated:
            reasoning += " (estimated: the stream stopped before the provider reported usage)"
        truncated = (
            f" · TRUNCATED at {usage.output_tokens:,} tokens"
            if result.stop_reason == "max_tokens"
            else ""
        )
        err.print(
            f"[dim]tokens in {usage.input_tokens:,} · out {usage.output_tokens:,}{reasoning} · "
            f"cost {format_usd(call.cost_usd)} · stop {result.stop_reason}{truncated} · "
            f"first token {ttft} · wall {result.wall_s:.2f} s[/dim]"
        )
    if result.error is not None:
        err.print(f"[red]error:[/red] {escape(scrub(str(result.error)))}", soft_wrap=True)
        raise typer.Exit(1)
    if result.stop_reason == "cancelled":
        raise typer.Exit(130)


def register(app: typer.Typer) -> None:
    """Add ``generate``."""
    app.command("generate")(generate_command)


__all__ = ["StreamPrinter", "StreamScrubber", "scrubbed_printer"]
