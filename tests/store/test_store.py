"""The store: migrations, SQLite settings, the call round trip, lookups, several writers.

Tests that take the ``store`` fixture also run against PostgreSQL when
``SWEEPBENCH_TEST_POSTGRES`` holds the URL of a throwaway database (its ``public`` schema is
dropped before each test), e.g. ``postgresql+psycopg://postgres@127.0.0.1:5432/postgres``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
import sqlalchemy as sa

from sweepbench.errors import DataError, UserError
from sweepbench.store import (
    MIGRATIONS,
    CallEnd,
    CallStart,
    EventRecord,
    Store,
    apply_migrations,
    latest_version,
)
from sweepbench.store.schema import metadata
from tests.backends import BACKENDS, backend_url

START = CallStart(
    model="scripted/echo",
    provider="scripted",
    request={"messages": [{"role": "user", "content": "hi ✓"}], "settings": {"max_tokens": 5}},
)


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    with Store.open(backend_url(request.param, tmp_path / "db" / "store.db")) as s:
        yield s


def test_migrations_are_applied_once_and_recorded(store: Store) -> None:
    query = sa.text("SELECT version, name, applied_at FROM schema_migrations ORDER BY version")
    assert store.schema_version() == latest_version() == len(MIGRATIONS) >= 1
    with store.engine.connect() as conn:
        first = conn.execute(query).all()
    assert [(v, n) for v, n, _ in first] == [(m.version, m.name) for m in MIGRATIONS]
    assert first[0][1] == "calls"
    assert apply_migrations(store.engine) == []
    url = store.engine.url.render_as_string(hide_password=False)
    with Store.open(url) as again, again.engine.connect() as conn:
        assert conn.execute(query).all() == first  # nothing re-applied or re-recorded


def test_migrated_schema_matches_schema_module(store: Store) -> None:
    inspector = sa.inspect(store.engine)
    assert set(inspector.get_table_names()) == set(metadata.tables)
    for table in metadata.tables.values():
        columns = {c["name"]: c for c in inspector.get_columns(table.name)}
        assert list(columns) == [c.name for c in table.columns], table.name
        for column in table.columns:
            assert columns[column.name]["nullable"] == column.nullable, column
        indexes = {i["name"] for i in inspector.get_indexes(table.name)}
        assert indexes == {i.name for i in table.indexes}
    pk = inspector.get_pk_constraint("call_events")["constrained_columns"]
    assert pk == ["call_id", "seq"]


def test_sqlite_connections_use_wal_foreign_keys_and_busy_timeout(store: Store) -> None:
    if store.engine.dialect.name != "sqlite":
        pytest.skip("SQLite only")
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar_one() >= 1000


def test_round_trip_with_events_and_exact_cost(store: Store) -> None:
    call_id = store.start_call(START)
    running = store.get_call(call_id)
    assert running.finished_at is None and running.stop_reason is None and not running.finished
    assert running.created_at.tzinfo is not None
    assert running.request == START.request and running.role == "generate"

    events = [
        EventRecord(seq=0, kind="reasoning", data="hmm", t_s=0.1),
        EventRecord(seq=1, kind="text", data="hel", t_s=0.2),
        EventRecord(seq=2, kind="text", data="lo", t_s=0.25),
    ]
    store.append_events(call_id, events[:1])
    store.append_events(call_id, events[1:])
    store.append_events(call_id, [])
    tail = [
        EventRecord(seq=3, kind="usage", data={"input_tokens": 3, "output_tokens": 2}, t_s=0.3),
        EventRecord(seq=4, kind="finish", data={"stop_reason": "end"}, t_s=0.3),
    ]
    store.append_events(call_id, tail)
    assert store.events(call_id) == events + tail

    cost = Decimal("0.000123456789")
    end = CallEnd(
        text="hello",
        reasoning="hmm",
        stop_reason="end",
        provider_reason="end_turn",
        input_tokens=3,
        output_tokens=2,
        reasoning_tokens=1,
        cache_read_tokens=4,
        cache_write_tokens=5,
        cost_usd=cost,
        price_source="test table 2025-01-01",
        ttft_s=0.1,
        wall_s=0.3,
    )
    store.finish_call(call_id, end)
    done = store.get_call(call_id)
    assert done.finished and done.finished_at is not None
    assert done.finished_at >= done.created_at
    assert done.cost_usd == cost and str(done.cost_usd) == "0.000123456789"
    assert done.model_dump(include=set(CallEnd.model_fields)) == end.model_dump()
    with pytest.raises(UserError, match="already finished"):
        store.finish_call(call_id, end)


def test_failed_call_without_a_price(store: Store) -> None:
    end = CallEnd(stop_reason="error", error="overloaded", error_kind="retryable", cost_usd=None)
    call_id = store.record_call(START.model_copy(update={"role": "judge", "run_id": "r1"}), end)
    got = store.get_call(call_id)
    assert got.cost_usd is None and got.stop_reason == "error" and got.error == "overloaded"
    assert got.error_kind == "retryable" and got.role == "judge" and got.run_id == "r1"
    assert got.text == "" and got.input_tokens == 0


def test_record_call_dates_the_start_from_wall_time(store: Store) -> None:
    finished = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
    end = CallEnd(stop_reason="end", wall_s=2.5)
    got = store.get_call(store.record_call(START, end, finished_at=finished))
    assert got.finished_at == finished
    assert got.created_at == finished - timedelta(seconds=2.5)


def test_decimal_precision_and_forms_survive(store: Store) -> None:
    for amount in ["0", "1.500", "1E-12", "123456789.123456789123456789"]:
        end = CallEnd(stop_reason="end", cost_usd=Decimal(amount))
        got = store.get_call(store.record_call(START, end)).cost_usd
        assert got is not None and str(got) == str(Decimal(amount))


def test_naive_datetimes_are_refused(store: Store) -> None:
    with pytest.raises(sa.exc.StatementError, match="naive"):
        store.start_call(START, created_at=datetime(2025, 1, 1))


def test_lookup_by_unique_prefix(store: Store) -> None:
    ids = [store.start_call(START) for _ in range(40)]
    target = ids[0]
    others = ids[1:]
    length = next(n for n in range(1, 33) if not any(o.startswith(target[:n]) for o in others))
    assert store.get_call(target[:length]).id == target
    assert store.get_call(target[:length].upper()).id == target
    assert store.get_call(f"  {target} ").id == target
    # 40 ids over 16 first digits: some first digit is shared
    shared = next(i[0] for i in ids if sum(o.startswith(i[0]) for o in ids) > 1)
    with pytest.raises(UserError, match="ambiguous"):
        store.get_call(shared)


@pytest.mark.parametrize("bad", ["0" * 32, "zz", "%", "_", ""])
def test_unknown_id_is_a_user_error(store: Store, bad: str) -> None:
    store.start_call(START)
    with pytest.raises(UserError):
        store.get_call(bad)


def test_finish_or_events_for_unknown_call(store: Store) -> None:
    with pytest.raises(UserError, match="no call"):
        store.finish_call("f" * 32, CallEnd(stop_reason="end"))
    with pytest.raises(DataError):
        store.append_events("f" * 32, [EventRecord(seq=0, kind="text", data="x", t_s=0)])
    call_id = store.start_call(START)
    store.append_events(call_id, [EventRecord(seq=0, kind="text", data="x", t_s=0)])
    with pytest.raises(DataError):
        store.append_events(call_id, [EventRecord(seq=0, kind="text", data="y", t_s=1)])
    assert [e.data for e in store.events(call_id)] == ["x"]  # the failed batch left nothing


def test_list_calls_newest_first_with_filters(store: Store) -> None:
    base = datetime(2025, 1, 1, tzinfo=UTC)
    other = CallStart(model="local/smollm2-135m", provider="local", request={})
    made = []
    for i in range(5):
        start = START if i % 2 == 0 else other
        made.append(store.start_call(start, created_at=base + timedelta(seconds=i)))
    assert [c.id for c in store.list_calls()] == made[::-1]
    assert [c.id for c in store.list_calls(limit=2)] == made[:2:-1]
    assert [c.id for c in store.list_calls(model="local/smollm2-135m")] == [made[3], made[1]]
    assert len(store.list_calls(limit=None)) == 5
    assert store.list_calls(model="nope/nothing") == []


def test_reopen_keeps_rows(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "keep.db")
    with Store.open(url) as s:
        call_id = s.record_call(START, CallEnd(stop_reason="end", text="kept"))
        s.append_events(call_id, [EventRecord(seq=0, kind="text", data="kept", t_s=0)])
    with Store.open(url) as s:
        assert s.get_call(call_id).text == "kept"
        assert [e.data for e in s.events(call_id)] == ["kept"]


def test_two_stores_on_one_file_see_each_others_writes(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "shared.db")
    with Store.open(url) as a, Store.open(url) as b:
        from_a = a.start_call(START)
        assert b.get_call(from_a).finished_at is None
        b.finish_call(from_a, CallEnd(stop_reason="end", text="by b"))
        assert a.get_call(from_a).text == "by b"
        from_b = b.record_call(START, CallEnd(stop_reason="cancelled"))
        assert {c.id for c in a.list_calls()} == {from_a, from_b}


def test_concurrent_writers_wait_instead_of_failing(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "busy.db")
    stores = [Store.open(url) for _ in range(4)]
    errors: list[BaseException] = []

    def work(s: Store) -> None:
        try:
            for _ in range(25):
                call_id = s.start_call(START)
                s.append_events(call_id, [EventRecord(seq=0, kind="text", data="x", t_s=0)])
                s.finish_call(call_id, CallEnd(stop_reason="end", cost_usd=Decimal("0.01")))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert errors == []
        assert len(stores[0].list_calls(limit=None)) == 100
    finally:
        for s in stores:
            s.close()


def test_in_memory_store_is_shared_between_threads() -> None:
    with Store.open("sqlite://") as s:
        call_id = s.start_call(START)
        seen: list[str] = []
        thread = threading.Thread(target=lambda: seen.append(s.get_call(call_id).id))
        thread.start()
        thread.join()
        assert seen == [call_id]


def test_default_url_is_under_sweepbench_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SWEEPBENCH_DB", raising=False)
    monkeypatch.setenv("SWEEPBENCH_HOME", str(tmp_path / "home"))
    with Store.open() as s:
        s.start_call(START)
        assert s.url.endswith("sweepbench.db")
    assert (tmp_path / "home" / "sweepbench.db").is_file()


def test_sweepbench_db_overrides_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWEEPBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SWEEPBENCH_DB", sqlite_url(tmp_path / "elsewhere" / "x.db"))
    with Store.open() as s:
        s.start_call(START)
    assert (tmp_path / "elsewhere" / "x.db").is_file()
    assert not (tmp_path / "home" / "sweepbench.db").exists()


def test_a_newer_database_is_refused(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "new.db")
    with Store.open(url) as s, s.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO schema_migrations VALUES (999, 'future', '2099-01-01T00:00:00+00:00')"
        )
    with pytest.raises(UserError, match="upgrade sweepbench"):
        Store.open(url)


def test_bad_url_and_missing_driver_are_user_errors(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(UserError, match="folder"):
        Store.open(sqlite_url(tmp_path / "file" / "x.db"))
    with pytest.raises(UserError):
        Store.open("not a url")
    with pytest.raises(UserError, match="driver"):
        Store.open("nosuchdb://host/db")
