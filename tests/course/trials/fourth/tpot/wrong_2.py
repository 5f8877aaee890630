"""Misconception: TPOT is quoted in milliseconds (as the book's tables and benchmarks print
it), so return ms. 1000 times too large: first 1.0 s, finish 2.0 s, 3 tokens gives 500.0."""


def tpot(self) -> float:
    if self.num_output_tokens <= 1:
        return 0.0
    return 1000.0 * (self.finish_time - self.first_token_time) / (self.num_output_tokens - 1)
