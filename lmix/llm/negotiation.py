"""A structured call in the mode its model takes (found by trying), validated, sent back once."""

import json
from collections.abc import Callable

from . import structured
from .base import CallConfig, LLMError, LLMInvalidOutput, Message, StructuredMode, T, Usage
from .failures import failed
from .patience import Retries
from .registry import provider_for

# What a server answers when it cannot take a structured request's shape: llama.cpp's
# answers json_schema with a 500, at once. Other failures are failures in any mode.
REFUSED_STATUSES = frozenset({400, 404, 415, 422, 500, 501})


def negotiated(
    config: CallConfig,
    messages: list[Message],
    schema: type[T],
    usage: Usage,
    *,
    stored: StructuredMode | None,
    remember: Callable[[StructuredMode], None],
    check: Callable[[T], None] | None = None,
    tries: list[dict] | None = None,
    wire: dict | None = None,
) -> T:
    """An instance of `schema` from the model of `config`, asked for as `wire` (a tighter
    JSON schema for this call) when given.

    With `stored` (a mode its adapter has) only that mode is used. Else the adapter's modes
    are tried in order: a request the server refuses (REFUSED_STATUSES) moves on to the
    next, and the first it takes is passed to `remember`, so no shape a server refused is
    sent to it again. Then the answer is validated (numbers out of their bounds clamped into
    them, noted on the try: structured.validate) and `check`ed; a failure is sent back once
    with what was wrong.

    Raises:
        LLMInvalidOutput: no valid answer after the repair; the message ends with the
            first problem, in one short line.
        LLMError: the last mode failed too, or a failure that is not a refusal.
    """
    asker = _Asker(config, schema, usage, tries if tries is not None else [], wire)
    modes = asker.provider.structured_modes
    if stored in modes:
        modes = (stored,)
    for position, mode in enumerate(modes):
        conversation = structured.conversation(mode, messages, schema, wire)
        probing = position < len(modes) - 1  # the last mode's refusal is a failure
        try:
            raw = asker.ask(mode, conversation, probing=probing)
        except LLMError as error:
            if probing and _refused(error):
                continue
            raise
        if mode != stored:
            remember(mode)
        return asker.judged(mode, conversation, raw, check)
    raise AssertionError("unreachable: the last mode returns or raises")


def _refused(error: LLMError) -> bool:
    return getattr(error, "status", None) in REFUSED_STATUSES


class _Asker:
    """One structured call's requests to its model, each noted in `tries`."""

    def __init__(
        self,
        config: CallConfig,
        schema: type[T],
        usage: Usage,
        tries: list[dict],
        wire: dict | None,
    ) -> None:
        self.config, self.schema, self.usage, self.tries = config, schema, usage, tries
        self.wire = wire
        self.provider = provider_for(config.provider)

    def ask(self, mode: StructuredMode, conversation: list[Message], *, probing: bool) -> str:
        """The raw answer. 429s, 5xx and timeouts are tried again, a probe's refusal not."""
        retries = Retries()
        while True:
            sent = [m.as_dict() for m in conversation]
            if mode == "tool":
                tool = json.dumps(structured.tool_definition(self.schema, self.wire))
                sent.append({"role": "note", "content": f"Forced tool call: {tool}"})
            entry = {"mode": mode, "messages": sent, "raw": "", "error": ""}
            self.tries.append(entry)
            try:
                entry["raw"] = self.provider.structured(
                    self.config, conversation, self.schema, self.usage, mode, self.wire
                )
                return entry["raw"]
            except LLMError as error:
                entry["error"] = str(error)
                if (probing and _refused(error)) or not retries.again(error):
                    raise

    def judged(
        self,
        mode: StructuredMode,
        conversation: list[Message],
        raw: str,
        check: Callable[[T], None] | None,
    ) -> T:
        """The answer, validated and checked, with one repair of the conversation."""
        for sent_back in (False, True):
            try:
                answer = self._read(raw)
                if check is not None:
                    try:
                        check(answer)
                    except ValueError as refusal:
                        raise structured.Unparsable(str(refusal), raw) from None
                return answer
            except structured.Unparsable as problem:
                self.tries[-1]["error"] = problem.summary
                if sent_back:
                    why = f"{LLMInvalidOutput.user_message.rstrip('.')}: {problem.summary}"
                    raise failed(
                        self.config.provider, "structured", LLMInvalidOutput(why)
                    ) from None
                conversation = structured.repair(conversation, problem)
                raw = self.ask(mode, conversation, probing=False)
        raise AssertionError("unreachable: the repair returns or raises")

    def _read(self, raw: str) -> T:
        """The answer as `schema`; numbers clamped into their bounds to read it are noted
        on its try as "repaired" (path, given, used)."""
        repairs: list[dict] = []
        answer = structured.parse(raw, self.schema, repairs)
        if repairs:
            self.tries[-1]["repaired"] = repairs
        return answer
