"""The GRPO objective isobook trains with (the paper's "healthy recipe", Figures 3-4).

Which variant, term by term:

* **Advantages**: one per rollout, from its group's rewards (`advantages`, chosen by
  ``recipe.advantage``); zero for a group whose rewards are all equal (its "zero variance").
* **Policy term**: PPO's clipped importance ratio ``pi / pi_old`` per token. isobook makes
  one update per batch (strictly on-policy), so the ratio is 1 and only carries the
  gradient; the clip binds only if a batch is reused, and the logged clip fraction counts
  the tokens where it does (0 on-policy).
* **Truncated importance sampling (TIS)**: the rollout engine's sampler and the trainer
  disagree slightly on log-probs (kernels, dtypes, vLLM); each token's policy term is
  weighted by ``min(pi_old / mu, cap)`` (``mu``: the engine's probability), detached.
* **KL to the base model**: the k3 estimator ``exp(ref - logp) - (ref - logp) - 1``
  (Schulman, "Approximating KL divergence", 2020): unbiased, always >= 0.
* **Entropy bonus**: the mean per-token entropy of the policy, subtracted with its weight.
* **Aggregation**: token mean over all valid tokens of the batch ("token-mean"), so long
  and short completions weigh by their tokens; a part of a batch divides by the whole
  batch's counts (`TokenCounts`), so micro-batches and processes add up to the batch.
* **Zero-variance filter**: `none` keeps every group; `all` drops zero-variance groups from
  every term; `regularisers` drops them from the KL and entropy terms only (paper Fig. 3).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import torch


class ZeroVarianceFilter(str, Enum):
    """Which terms leave out groups whose rewards are all equal."""

    NONE = "none"
    ALL = "all"
    REGULARISERS = "regularisers"


@dataclass(frozen=True)
class LossWeights:
    """Coefficients of the objective: `clip` is PPO's epsilon, `tis_cap` the TIS truncation."""

    clip: float = 0.2
    tis_cap: float = 2.0
    kl: float = 0.0
    entropy: float = 0.0
    zero_variance: ZeroVarianceFilter = ZeroVarianceFilter.NONE


@dataclass
class LossTerms:
    """The loss to backpropagate and its parts (token means) for logging."""

    loss: torch.Tensor  # scalar, differentiable
    policy: float
    kl: float
    entropy: float
    clip_fraction: float  # share of policy tokens where the clip binds (their gradient is 0)
    tis_truncated_fraction: float  # share of policy tokens whose TIS weight hit the cap


@dataclass(frozen=True)
class TokenCounts:
    """What the token means divide by. For a whole batch on one process, its own counts of
    policy and regulariser tokens; for a part of a batch (a micro-batch, one process's share
    under data parallelism) the whole batch's counts over the number of processes
    (`shards.batch_tokens`), so that the parts' terms add up to the batch's."""

    policy: torch.Tensor  # scalar, tokens
    regulariser: torch.Tensor  # scalar, tokens


def own_token_counts(mask: torch.Tensor, zero_variance: torch.Tensor, weights: LossWeights) -> TokenCounts:
    """The token counts of the rollouts `mask` # [N, T] and `zero_variance` # [N] alone."""
    policy_mask, regulariser_mask = term_masks(mask, zero_variance, weights)
    return TokenCounts(policy=policy_mask.sum().clamp(min=1.0), regulariser=regulariser_mask.sum().clamp(min=1.0))


def grpo_loss(logprobs: torch.Tensor, old_logprobs: torch.Tensor, engine_logprobs: torch.Tensor,
              advantages: torch.Tensor, mask: torch.Tensor, zero_variance: torch.Tensor,
              weights: LossWeights, ref_logprobs: torch.Tensor | None = None,
              entropy: torch.Tensor | None = None, tokens: TokenCounts | None = None) -> LossTerms:
    """The GRPO loss of N rollouts; see the module docstring.

    `logprobs` (with gradient), `old_logprobs` (trainer, at sampling time), `engine_logprobs`
    (rollout engine), `ref_logprobs` (base model), `entropy`, `mask`: # [N, T];
    `advantages`, `zero_variance` (the rollout's group has equal rewards): # [N].
    `tokens`: what the means divide by (default: these rollouts' own counts).
    """
    tokens = tokens or own_token_counts(mask, zero_variance, weights)
    policy_mask, regulariser_mask = term_masks(mask, zero_variance, weights)

    ratio = torch.exp(logprobs - old_logprobs)  # [N, T]
    advantage = advantages[:, None]  # [N, 1]
    clipped = ratio.clamp(1.0 - weights.clip, 1.0 + weights.clip)
    policy_tokens = -torch.minimum(ratio * advantage, clipped * advantage)  # [N, T]
    tis = torch.exp(old_logprobs - engine_logprobs).clamp(max=weights.tis_cap).detach()  # [N, T]
    policy = _token_mean(tis * policy_tokens, policy_mask, tokens.policy)
    loss = policy

    kl = torch.full((), float("nan"))  # not measured without the base model's log-probs
    if ref_logprobs is not None:
        log_ratio = ref_logprobs - logprobs
        kl = _token_mean(torch.exp(log_ratio) - log_ratio - 1.0, regulariser_mask, tokens.regulariser)
        if weights.kl:
            loss = loss + weights.kl * kl
    mean_entropy = torch.zeros(())
    if entropy is not None:
        mean_entropy = _token_mean(entropy, regulariser_mask, tokens.regulariser)
        if weights.entropy:
            loss = loss - weights.entropy * mean_entropy

    # The clip binds where min() takes the clipped term and it differs: the gradient is 0 there.
    binds = ((advantage > 0) & (ratio > 1.0 + weights.clip)) | ((advantage < 0) & (ratio < 1.0 - weights.clip))
    truncated = torch.exp(old_logprobs - engine_logprobs) > weights.tis_cap
    return LossTerms(
        loss=loss,
        policy=float(policy.detach()),
        kl=float(kl.detach()),
        entropy=float(mean_entropy.detach()),
        clip_fraction=float(_token_mean(binds.float(), policy_mask, tokens.policy)),
        tis_truncated_fraction=float(_token_mean(truncated.float(), policy_mask, tokens.policy)),
    )


def term_masks(mask: torch.Tensor, zero_variance: torch.Tensor, weights: LossWeights) -> tuple[torch.Tensor, torch.Tensor]:
    """The tokens the policy term and the regularisers average over. # [N, T] each"""
    mask = mask.float()
    keep = (~zero_variance).float()[:, None]  # [N, 1]
    policy_mask = mask * keep if weights.zero_variance is ZeroVarianceFilter.ALL else mask
    regulariser_mask = mask if weights.zero_variance is ZeroVarianceFilter.NONE else mask * keep
    return policy_mask, regulariser_mask


def _token_mean(values: torch.Tensor, mask: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """The sum of `values` over the tokens `mask` keeps, divided by `tokens` (a `TokenCounts`
    count): the mean itself when these are the whole batch (0 when it keeps none)."""
    return (values * mask).sum() / tokens
