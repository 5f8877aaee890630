"""Misconception: a slot holds the request's whole sequence, prompt + max_tokens rows, so
size it directly instead of asking slot_size. Right under the default "max" reservation (every
hole is whole slots), wrong under "oracle"/"pow2": a hole of exactly prompt+max_tokens-1 rows is skipped."""


def first_fit(self, request) -> int | None:
    size = len(request.prompt_token_ids) + request.params.max_tokens
    size = min(size, self.max_model_len)
    for index, hole in enumerate(self.holes):
        if len(hole) >= size:
            return index
    return None
