"""The GRPO loss pinned on hand-computed cases."""

import math

import pytest
import torch

from isobook.grpo.loss import LossWeights, ZeroVarianceFilter, grpo_loss


def one_token_batch(advantages: list[float], ratio: float = 1.0, engine_ratio: float = 1.0) -> dict:
    """N rollouts of one token each; logprobs chosen so pi/pi_old = ratio and pi_old/mu = engine_ratio."""
    n = len(advantages)
    old = torch.full((n, 1), math.log(0.5))
    return {
        "logprobs": (old + math.log(ratio)).requires_grad_(),
        "old_logprobs": old,
        "engine_logprobs": old - math.log(engine_ratio),
        "advantages": torch.tensor(advantages),
        "mask": torch.ones(n, 1),
        "zero_variance": torch.zeros(n, dtype=torch.bool),
    }


def test_on_policy_loss_is_minus_the_mean_advantage_and_its_gradient() -> None:
    batch = one_token_batch([1.0, -0.5])
    terms = grpo_loss(**batch, weights=LossWeights())
    assert terms.policy == pytest.approx(-0.25)
    terms.loss.backward()
    # d/dlogp of -A * exp(logp - old) at ratio 1 is -A, over 2 tokens
    assert batch["logprobs"].grad.flatten().tolist() == pytest.approx([-0.5, 0.25])


def test_clipping_binds_only_where_it_should() -> None:
    up = grpo_loss(**one_token_batch([1.0], ratio=1.5), weights=LossWeights(clip=0.2))
    assert up.policy == pytest.approx(-1.2) and up.clip_fraction == 1.0  # min(1.5, 1.2) * A
    down = grpo_loss(**one_token_batch([-1.0], ratio=1.5), weights=LossWeights(clip=0.2))
    assert down.policy == pytest.approx(1.5)  # min(-1.5, -1.2): the unclipped, pessimistic one
    assert down.clip_fraction == 0.0  # outside [0.8, 1.2] but not clipped: its gradient flows
    low = grpo_loss(**one_token_batch([-1.0], ratio=0.5), weights=LossWeights(clip=0.2))
    assert low.policy == pytest.approx(0.8) and low.clip_fraction == 1.0  # min(-0.5, -0.8) -> clipped at 0.8
    rises = grpo_loss(**one_token_batch([1.0], ratio=0.5), weights=LossWeights(clip=0.2))
    assert rises.clip_fraction == 0.0  # A > 0 below 1 - eps: min takes the unclipped term
    no_signal = grpo_loss(**one_token_batch([0.0, 1.0], ratio=1.5), weights=LossWeights(clip=0.2))
    assert no_signal.clip_fraction == 0.5  # a zero advantage gives no gradient to clip
    on_policy = grpo_loss(**one_token_batch([1.0, -1.0]), weights=LossWeights(clip=0.2))
    assert on_policy.clip_fraction == 0.0


def test_tis_weights_and_truncates() -> None:
    small = grpo_loss(**one_token_batch([1.0], engine_ratio=1.5), weights=LossWeights(tis_cap=2.0))
    assert small.policy == pytest.approx(-1.5) and small.tis_truncated_fraction == 0.0
    large = grpo_loss(**one_token_batch([1.0], engine_ratio=3.0), weights=LossWeights(tis_cap=2.0))
    assert large.policy == pytest.approx(-2.0) and large.tis_truncated_fraction == 1.0


def test_k3_kl_and_entropy_terms() -> None:
    batch = one_token_batch([0.0, 0.0])
    ref = batch["old_logprobs"] + torch.tensor([[math.log(0.5)], [0.0]])  # ref/pi = 0.5 and 1
    entropy = torch.tensor([[1.0], [3.0]])
    terms = grpo_loss(**batch, weights=LossWeights(kl=0.1, entropy=0.01), ref_logprobs=ref, entropy=entropy)
    assert terms.kl == pytest.approx(k3(0.5) / 2)  # the second token has ref = pi: KL 0
    assert terms.entropy == pytest.approx(2.0)
    assert float(terms.loss.detach()) == pytest.approx(0.1 * k3(0.5) / 2 - 0.01 * 2.0)


def test_token_mean_weighs_by_tokens() -> None:
    batch = one_token_batch([1.0, 1.0])
    batch["logprobs"] = batch["logprobs"].detach().repeat(1, 3).requires_grad_()
    batch["old_logprobs"] = batch["old_logprobs"].repeat(1, 3)
    batch["engine_logprobs"] = batch["engine_logprobs"].repeat(1, 3)
    batch["advantages"] = torch.tensor([1.0, -1.0])
    batch["mask"] = torch.tensor([[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
    assert grpo_loss(**batch, weights=LossWeights()).policy == pytest.approx((-3 + 1) / 4)


def k3(ratio: float) -> float:
    """exp(x) - x - 1 at x = log(ref / pi)."""
    return ratio - math.log(ratio) - 1


@pytest.mark.parametrize(
    ("mode", "policy", "kl", "entropy"),
    [
        # the zero-variance rollout (the third) counts everywhere
        (ZeroVarianceFilter.NONE, -1.0 / 3, (k3(0.5) + 0.0 + k3(0.25)) / 3, (1 + 2 + 6) / 3),
        # ...nowhere
        (ZeroVarianceFilter.ALL, -1.0 / 2, k3(0.5) / 2, (1 + 2) / 2),
        # ...in the policy mean only (where its advantage is 0 anyway)
        (ZeroVarianceFilter.REGULARISERS, -1.0 / 3, k3(0.5) / 2, (1 + 2) / 2),
    ],
)
def test_zero_variance_modes(mode: ZeroVarianceFilter, policy: float, kl: float, entropy: float) -> None:
    batch = one_token_batch([1.0, 0.0, 0.0])
    batch["zero_variance"] = torch.tensor([False, False, True])
    ref = batch["old_logprobs"] + torch.log(torch.tensor([[0.5], [1.0], [0.25]]))
    terms = grpo_loss(**batch, weights=LossWeights(kl=1.0, zero_variance=mode), ref_logprobs=ref,
                      entropy=torch.tensor([[1.0], [2.0], [6.0]]))
    assert (terms.policy, terms.kl, terms.entropy) == pytest.approx((policy, kl, entropy))
