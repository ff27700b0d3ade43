"""A key the provider echoes split across deltas reaches neither the stored events nor a live
view (issue 26 §5: the executor scrubbed each delta on its own): through the real OpenAI SDK
against a fake compatible server that streams the planted key in pieces."""

from __future__ import annotations

from pathlib import Path

import pytest

from sweepbench import CallSpec, Executor, Request
from sweepbench.models.base import Event, ReasoningDelta, TextDelta
from sweepbench.settings import REDACTED
from sweepbench.store import Store
from tests.helpers import planted_key
from tests.servers import OpenAIServer

KEY = planted_key()


async def test_a_split_key_is_never_recorded_nor_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    split = ["Your key is ", KEY[:5], KEY[5:17], KEY[17:], " — keep it safe."]
    seen: list[Event] = []
    with OpenAIServer(api_key=KEY) as server:
        monkeypatch.setenv("SWEEPBENCH_COMPATIBLE_BASE_URL", server.url + "/v1")
        monkeypatch.setenv("SWEEPBENCH_COMPATIBLE_API_KEY", KEY)
        server.reply(split, reasoning=["thinking of ", KEY[:9], KEY[9:], " now"])
        store = Store.open(f"sqlite:///{tmp_path / 'calls.db'}")
        executor = Executor(store)
        outcome = await executor.execute(
            CallSpec(Request.simple("compatible/m", "say my key", max_tokens=200), "generate"),
            on_event=seen.append,
        )
        await executor.aclose()
    assert outcome.result.error is None and KEY not in outcome.result.text
    shown = "".join(e.text for e in seen if isinstance(e, TextDelta))
    thought = "".join(e.text for e in seen if isinstance(e, ReasoningDelta))
    assert shown == f"Your key is {REDACTED} — keep it safe."
    assert thought == f"thinking of {REDACTED} now"
    call_id = outcome.call_id
    assert call_id is not None
    stored = "".join(str(e.data) for e in store.events(call_id))
    assert KEY not in stored and KEY[:9] not in stored and REDACTED in stored
    store.close()
    assert not _files_holding(tmp_path, KEY)


def _files_holding(folder: Path, secret: str) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
