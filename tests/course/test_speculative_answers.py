"""Chapter 12's exercises, the acceptance rule and the rejected drafts' KV: wrong
answers students write, each caught where it goes wrong in one line that names the
case and the chapter's section; answers written differently that the contract
allows, passed; and the speculative configurations' runs, which catch a wrong
answer on their own."""
import pytest
import torch

from minicb.stages.speculative import draw, one_hot
from minicb.tools.course import check as checking
from minicb.tools.course.check import check
from minicb.tools.course.exercises import EXERCISES, CheckFailed
from minicb.tools.course.function_spaces import acceptance_examples, draws


def accept_with(keep, replace):
    """The rule, with its test of draft x (``keep(u, q, p, x)``) and its draw at the
    first rejection (``replace(p, q, generator)``) given."""
    def accept(draft, probs, generator=None):
        kept = []
        for i, token in enumerate(draft.tokens):
            p = probs[i]
            q = draft.probs[i] if draft.probs is not None else one_hot(token, p)
            if keep(torch.rand((), generator=generator), q, p, token):
                kept.append(token)
                continue
            return kept + [replace(p, q, generator)]
        return kept + [draw(probs[len(draft)], generator)]
    return accept


def rest_of(p, q, generator):
    rest = (p - q).clamp(min=0)
    return draw(rest if rest.sum() > 0 else p, generator)


RULE = lambda u, q, p, x: u * q[x] < p[x]                            # noqa: E731
# Wrong: a draw exactly at p(x) / q(x) keeps the draft.
accept_at_equality = accept_with(lambda u, q, p, x: u * q[x] <= p[x], rest_of)
# Wrong: the token at a rejection drawn from the whole of p, the rejected draft too.
accept_drawing_from_p = accept_with(RULE, lambda p, q, generator: draw(p, generator))


def accept_one_too_many(draft, probs, generator=None):
    """Wrong: after a rejection, a token from the next position's p as well."""
    kept = accept_with(RULE, rest_of)(draft, probs, generator)
    if len(kept) <= len(draft):
        kept.append(draw(probs[len(kept)], generator))
    return kept


def accept_drawing_every_u_first(draft, probs, generator=None):
    """Wrong: one u for each draft, drawn up front, whether its draft is examined or not."""
    us = [torch.rand((), generator=generator) for _ in draft.tokens]
    kept = []
    for i, token in enumerate(draft.tokens):
        q = draft.probs[i] if draft.probs is not None else one_hot(token, probs[i])
        if us[i] * q[token] >= probs[i][token]:
            return kept + [rest_of(probs[i], q, generator)]
        kept.append(token)
    return kept + [draw(probs[len(draft)], generator)]


def roll_back_without_trim(self, requests, tokens, drafts):
    """Wrong: the computed tokens roll back, the blocks stay."""
    for request, kept in zip(requests, tokens):
        draft = drafts.get(request)
        if draft and isinstance(kept, list):
            request.num_computed_tokens -= len(draft) - (len(kept) - 1)


def roll_back_keeping_the_models_token(self, requests, tokens, drafts):
    """Wrong: the model's own last token counted as computed, which no step fed."""
    for request, kept in zip(requests, tokens):
        draft = drafts.get(request)
        if draft and isinstance(kept, list):
            request.num_computed_tokens -= len(draft) - len(kept)
            self.kv.trim(request, request.num_computed_tokens)


def roll_back_freeing_by_hand(self, requests, tokens, drafts):
    """Wrong: blocks put back on the free list by hand, as stage 5's manager would;
    prefix caching's count of each block's owners is never counted down."""
    for request, kept in zip(requests, tokens):
        draft = drafts.get(request)
        if draft and isinstance(kept, list):
            request.num_computed_tokens -= len(draft) - (len(kept) - 1)
            table = self.kv.block_tables[request]
            while len(table) > self.kv.blocks_for(request.num_computed_tokens):
                give_back(self.kv.free_blocks, table.pop())


def give_back(free, block):
    if isinstance(free, dict):          # prefix caching's free list: an OrderedDict
        free[block] = None
    else:
        free.append(block)


SECTION = r" \(chapter 12, \"{}\", says what {} must do\)$"
ACCEPTANCE, ROLLBACK = SECTION.format("The acceptance rule", "accept"), SECTION.format(
    "Giving back the rejected drafts' KV", "roll_back")


@pytest.mark.parametrize("function,message", [
    (accept_at_equality, r"acceptance \(u times q\(x\) exactly p\(x\), prompt lookup: rejected\): yours gives "
     r"\[0, 1\]; the engine's own code gives \[1\]" + ACCEPTANCE),
    (accept_one_too_many, r"acceptance \(a prompt-lookup draft top-k cut from p: never kept\): yours gives "
     r"\[2, 1\]; the engine's own code gives \[2\]" + ACCEPTANCE),
    (accept_drawing_from_p, r"acceptance \(three prompt-lookup drafts: two kept, the third rejected though p "
     r"favours it\): yours gives \[1, 2, 0\]; the engine's own code gives \[1, 2, 1\]" + ACCEPTANCE),
    (accept_drawing_every_u_first, r"acceptance \(p and q disjoint: the first draft rejected\): afterwards "
     r"the generator's next draw \(each draw made moves it on\) is [\d.]+; the engine's own code leaves "
     r"[\d.]+" + ACCEPTANCE),
    (roll_back_without_trim, r"kv_rollback \(every draft rejected: a block of drafts goes back\): afterwards "
     r"self.kv.block_tables is \{'0': \[0, 1\]\}; the engine's own code leaves \{'0': \[0\]\}" + ROLLBACK),
    (roll_back_keeping_the_models_token, r"kv_rollback \(every draft rejected: a block of drafts goes back\): "
     r"afterwards each request's num_computed_tokens is \{'0': 5\}; the engine's own code leaves "
     r"\{'0': 4\}" + ROLLBACK),
    (roll_back_freeing_by_hand, r"kv_rollback \(prefix caching's blocks\): afterwards self.kv.ref_counts "
     r"\(of the blocks owned\) is \{.*\}; the engine's own code leaves \{.*\}" + ROLLBACK),
], ids=lambda x: getattr(x, "__name__", ""))
def test_a_wrong_answer_is_caught_in_one_line_naming_the_case_and_the_section(llama, function, message):
    name = "acceptance" if "accept" in function.__name__ else "kv_rollback"
    with pytest.raises(CheckFailed, match=message):
        check(name, function, llama)


def test_the_named_cases_draw_what_their_names_say():
    cases = acceptance_examples()
    late = cases["p a rounding below q at the draft and nowhere above: nothing left of p - q"]
    assert draws(late["seed"], 1)[0] * late["q"][0][0] >= late["p"][0][0]       # rejected
    assert all(p <= q for p, q in zip(late["p"][0], late["q"][0]))                # nothing left
    two = cases["three prompt-lookup drafts: two kept, the third rejected though p favours it"]
    assert [u < p[x] for u, p, x in zip(draws(two["seed"], 3), two["p"], two["tokens"])] == [True, True, False]
    exact = cases["u times q(x) exactly p(x), prompt lookup: rejected"]
    assert torch.tensor(draws(exact["seed"], 1)[0]) == torch.tensor(exact["p"][0][0])


def accept_written_differently(draft, probs, generator=None):
    """Right, written differently: a while loop, q's column read as a number, the
    last row by -1."""
    i, kept = 0, []
    while i < len(draft.tokens):
        x, p = draft.tokens[i], probs[i]
        q = torch.zeros_like(p).index_fill_(0, torch.tensor([x]), 1.0) if draft.probs is None else draft.probs[i]
        u = torch.rand((), generator=generator, device=probs.device)
        if not bool(u * q[x] < p[x]):
            rest = torch.clamp(p - q, min=0.0)
            return kept + [draw(p if float(rest.sum()) == 0.0 else rest, generator)]
        kept.append(int(x))
        i += 1
    return kept + [draw(probs[-1], generator)]


def test_an_acceptance_rule_written_differently_passes(llama):
    assert check("acceptance", accept_written_differently, llama).startswith("acceptance: passed")


def roll_back_from_the_tokens(self, requests, tokens, drafts):
    """Right, written differently: the cache ends at the request's tokens and its
    accepted drafts, computed from scratch."""
    for request, kept in zip(requests, tokens):
        if request in drafts and not isinstance(kept, BaseException):
            request.num_computed_tokens = len(request.all_token_ids) + len(kept) - 1
            self.kv.trim(request, request.num_computed_tokens)


def test_a_roll_back_written_differently_passes(llama):
    assert check("kv_rollback", roll_back_from_the_tokens, llama).startswith("kv_rollback: passed")


def test_the_speculative_runs_alone_catch_blocks_kept_and_a_wrong_replacement(llama, monkeypatch):
    """Drafts are kept and rejected in the runs, and a rejected draft's block goes back:
    with no generated inputs, the runs still fail these."""
    monkeypatch.setattr(checking, "explore", lambda *args: 0)
    assert set(EXERCISES["kv_rollback"].runs) == set(EXERCISES["acceptance"].runs) and \
        len(EXERCISES["acceptance"].runs) == 2
    with pytest.raises(CheckFailed, match=r"kv_rollback \(under paged, speculative .*\): step \d+ differs"):
        check("kv_rollback", roll_back_without_trim, llama)
    with pytest.raises(CheckFailed, match=r"acceptance \(under paged, speculative .*\): "):
        check("acceptance", accept_drawing_from_p, llama)
