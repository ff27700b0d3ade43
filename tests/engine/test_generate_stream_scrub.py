"""Issue 26 §5: ``generate`` prints the streamed answer scrubbed of every key, also a key the
provider echoes split across several deltas (through the real OpenAI SDK against a fake
compatible server that streams the planted key in pieces)."""

from __future__ import annotations

import json
import random

import pytest

from sweepbench.cli.generate import StreamScrubber
from sweepbench.settings import REDACTED, scrub
from tests.helpers import planted_key, run_cli
from tests.servers import OpenAIServer

KEY = planted_key()
OTHER = "tok-second-key-42"


def pieces(text: str, draw: random.Random) -> list[str]:
    """``text`` cut at random places (some pieces empty, some one character)."""
    cuts = sorted(draw.randrange(len(text) + 1) for _ in range(draw.randrange(1, 12)))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


@pytest.mark.parametrize("seed", range(40))
def test_what_is_let_out_is_the_whole_text_scrubbed(seed: int) -> None:
    draw = random.Random(seed)
    text = f"a{KEY}b {OTHER}{KEY} tail {KEY[:-1]} and {OTHER[:5]}"
    scrubber = StreamScrubber([KEY, OTHER])
    shown: list[str] = []
    for piece in pieces(text, draw):
        shown.append(scrubber.feed(piece))
        assert KEY not in "".join(shown) and OTHER not in "".join(shown)
    shown.append(scrubber.flush())
    assert "".join(shown) == scrub(text, [KEY, OTHER])
    assert "".join(shown).count(REDACTED) == 3  # two of KEY, one of OTHER; no partial one


def test_text_is_let_out_as_soon_as_no_key_can_start_in_it() -> None:
    scrubber = StreamScrubber([KEY])
    hold = len(KEY) - 1
    long_text = "x" * (hold + 10)
    assert scrubber.feed(long_text) == "x" * 10  # only the tail a key could start in waits
    assert scrubber.flush() == "x" * hold
    assert StreamScrubber([]).feed("as is") == "as is"  # no key known: nothing held back


def test_generate_prints_no_echoed_key_split_across_deltas(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    split = ["Your key is ", KEY[:5], KEY[5:17], KEY[17:], " — keep it safe."]
    with OpenAIServer(api_key=KEY) as server:
        monkeypatch.setenv("SWEEPBENCH_COMPATIBLE_BASE_URL", server.url + "/v1")
        monkeypatch.setenv("SWEEPBENCH_COMPATIBLE_API_KEY", KEY)
        server.reply(split)
        code, out, err = run_cli(monkeypatch, capsys, "generate", "compatible/m", "say my key")
        assert code == 0, err
        assert server.requests[-1].body is not None  # the call reached the server
        server.reply(split)
        code, json_out, err = run_cli(
            monkeypatch, capsys, "generate", "compatible/m", "say my key", "--json"
        )
        assert code == 0, err
    assert KEY not in out and KEY not in err
    assert out == f"Your key is {REDACTED} — keep it safe.\n"
    assert json.loads(json_out)["text"] == f"Your key is {REDACTED} — keep it safe."


def test_a_reply_without_keys_streams_unchanged(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with OpenAIServer(api_key=KEY) as server:
        monkeypatch.setenv("SWEEPBENCH_COMPATIBLE_BASE_URL", server.url + "/v1")
        monkeypatch.setenv("SWEEPBENCH_COMPATIBLE_API_KEY", KEY)
        server.reply(["Hello", " there", ", sk-", "almost a key"])
        code, out, err = run_cli(monkeypatch, capsys, "generate", "compatible/m", "hi")
    assert code == 0, err
    assert out == "Hello there, sk-almost a key\n"
