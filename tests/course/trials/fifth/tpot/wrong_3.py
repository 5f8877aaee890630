"""Misconception: TPOT is what the request's decoding took per token, counted from when it
was first scheduled (its prefill included). first_scheduled_time 0.5, first_token_time 1.0,
finish_time 2.0, 5 tokens gives 0.375 instead of 0.25."""


def tpot(self) -> float:
    if self.num_output_tokens <= 1:
        return 0.0
    return (self.finish_time - self.first_scheduled_time) / (self.num_output_tokens - 1)
