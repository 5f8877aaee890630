"""A request's life: its tokens, its sampling, its timestamps, its output."""
import itertools
import time
from dataclasses import dataclass, field

from .sampling_params import SamplingParams

_ids = itertools.count()


def new_request_id() -> str:
    """The next automatic request id ("0", "1", ...): LLMEngine skips any a live request holds."""
    return str(next(_ids))


# ANCHOR: metrics
@dataclass
class RequestMetrics:
    """Timestamps on the engine's clock (seconds) and token counts."""
    arrival_time: float
    first_scheduled_time: float | None = None
    first_token_time: float | None = None
    finish_time: float | None = None
    num_prompt_tokens: int = 0
    num_output_tokens: int = 0
    num_draft_tokens: int = 0         # stage 6: tokens drafted for it
    num_accepted_tokens: int = 0      # ... of which verified and kept

    @property
    def ttft(self) -> float | None:
        """Time to first token: arrival to the first generated token. None for a
        request that ended without one (it failed or was aborted first)."""
        if self.first_token_time is None:
            return None
        return self.first_token_time - self.arrival_time

    @property
    def latency(self) -> float:
        """End to end: arrival to the last token."""
        return self.finish_time - self.arrival_time

    # ANCHOR: tpot
    @property
    def tpot(self) -> float:
        """Time per output token after the first (0 for a one-token answer)."""
        n = self.num_output_tokens - 1
        return (self.finish_time - self.first_token_time) / n if n > 0 else 0.0
    # ANCHOR_END: tpot
# ANCHOR_END: metrics


# ANCHOR: request
# A request is itself, not its fields: hashable, compared by identity.
@dataclass(eq=False)
class Request:
    prompt_token_ids: list[int]
    params: SamplingParams
    eos_token_ids: tuple[int, ...]
    request_id: str = field(default_factory=new_request_id)
    prompt: str | None = None
    generator: object = None          # this request's torch.Generator
    output_token_ids: list[int] = field(default_factory=list)
    finished: bool = False            # set with finish_reason, by finish()
    finish_reason: str | None = None  # "length" | "stop" | "eos" | "abort" | "error"
    error: str | None = None          # what went wrong, when finish_reason is "error"
    metrics: RequestMetrics = None
    num_computed_tokens: int = 0      # stages 4-5: tokens whose K/V are in the cache
    num_preemptions: int = 0          # times its KV was dropped to make room

    def __post_init__(self):
        if self.metrics is None:
            self.metrics = RequestMetrics(arrival_time=time.perf_counter())
        self.metrics.num_prompt_tokens = len(self.prompt_token_ids)
        # Prompt then output, as one list the model reads from: each new token is
        # appended here and to output_token_ids (Engine.deliver).
        self.all_token_ids = self.prompt_token_ids + self.output_token_ids

    def finish(self, reason: str, now: float):
        self.finished, self.finish_reason, self.metrics.finish_time = True, reason, now

    def abort(self, now: float):
        self.finish("abort", now)

    def fail(self, error: Exception, now: float):
        """Something about this request alone went wrong (e.g. sampling it raised)."""
        self.finish("error", now)
        self.error = f"{type(error).__name__}: {error}"
# ANCHOR_END: request


@dataclass
class StepOutput:
    """What ``LLMEngine.step`` returns for each request that got a token."""
    request_id: str
    new_token_ids: list[int]
    output_token_ids: list[int]          # everything generated so far
    finished: bool
    finish_reason: str | None
    metrics: RequestMetrics | None = None   # set on a finished request's last output
    error: str | None = None                # set when finish_reason is "error"


@dataclass
class RequestOutput:
    """What ``LLM.generate`` returns for each prompt, in prompt order."""
    request_id: str
    prompt: str | None
    prompt_token_ids: list[int]
    output_token_ids: list[int]
    text: str
    finish_reason: str
    metrics: RequestMetrics
    error: str | None = None                # set when finish_reason is "error"
