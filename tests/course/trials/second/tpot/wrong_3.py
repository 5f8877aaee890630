"""Misconception: a one-token answer ends on the step that produced its token, so its
finish_time equals first_token_time and that equality is the guard. A one-token request
that finishes later (first 1.0 s, finish 1.5 s, e.g. aborted) divides by zero."""


def tpot(self) -> float:
    decode_time = self.finish_time - self.first_token_time
    if decode_time == 0:
        return 0.0
    return decode_time / (self.num_output_tokens - 1)
