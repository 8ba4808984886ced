"""The softmax bandits of paper Figure 12 (tabular, and over shared features) on numbers we can check."""

import numpy as np
import pytest

from isobook.analysis.bandit import (
    STEP_RULES,
    BanditSetup,
    LinearPolicy,
    batch_split_curves,
    best_n,
    comparable_budgets,
    initial_logits,
    make_policy,
    optimizer_curves,
    sharing_curves,
    suboptimality_curves,
    train_bandits,
)
from isobook.config import BanditConfig, ConfigError


def test_initial_logits_give_each_problem_its_start_pass_rate() -> None:
    setup = BanditSetup(start_pass=np.array([0.3, 0.03, 0.9]), actions=8)
    logits = initial_logits(setup)
    policy = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    assert policy[:, 0] == pytest.approx([0.3, 0.03, 0.9])
    assert policy[0, 1:] == pytest.approx([0.7 / 7] * 7)  # the wrong arms share the rest evenly


def test_no_update_leaves_the_start_and_training_moves_toward_the_correct_arm() -> None:
    setup = BanditSetup(start_pass=np.array([0.3]), seeds=64)
    curve = train_bandits(setup, n=8, updates=50, record_every=10, rng=np.random.default_rng(0))
    # every 10th update, the last, and each update ending at a power-of-two number of rollouts
    assert curve["update"].tolist() == [0, 1, 2, 4, 8, 10, 16, 20, 30, 32, 40, 50]
    assert curve["rollouts"].tolist() == [0, 8, 16, 32, 64, 80, 128, 160, 240, 256, 320, 400]
    assert curve["suboptimality"].iloc[0] == pytest.approx(0.7)
    assert curve["suboptimality"].is_monotonic_decreasing and curve["suboptimality"].iloc[-1] < 0.05


def test_groups_with_equal_rewards_do_not_move_the_policy() -> None:
    # At pass@1 1e-9 every group of 2 is all wrong: zero advantage, no update (GRPO's blind spot
    # on hard problems, which larger n escapes).
    setup = BanditSetup(start_pass=np.array([1e-9, 1e-9]), batch_problems=2, seeds=8)
    curve = train_bandits(setup, n=2, updates=20, record_every=20, rng=np.random.default_rng(1))
    assert curve["suboptimality"].to_numpy() == pytest.approx(np.full(len(curve), 1 - 1e-9), abs=1e-12)


def test_at_a_fixed_budget_the_smallest_group_wins_without_interference() -> None:
    curves = suboptimality_curves(BanditSetup(start_pass=np.array([0.45]), seeds=128), [2, 8, 32], budget=1024)
    final = curves.sort_values("rollouts").groupby("n")["suboptimality"].last()
    assert final[2] < final[8] < final[32]
    assert best_n(curves, [256, 1024])["n"].tolist() == [2, 2]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"start_pass": np.array([0.0])}, "start_pass"),
    ({"start_pass": np.array([0.5]), "batch_problems": 2}, r"batch_problems: must be in \[1, 1\]"),
    ({"actions": 1}, "actions: must be >= 2"),
    ({"optimizer": "sgd"}, "optimizer: 'sgd'; allowed: gradient, adam"),
    ({"lr_scaling": "linear"}, "lr_scaling: 'linear'; allowed: constant, sqrt"),
])
def test_bad_setups_fail_naming_the_field(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        BanditSetup(**kwargs)


def test_one_hot_features_are_the_tabular_policy_draw_for_draw() -> None:
    # d = P one-hot features make W a table: with every correct answer at arm 0 the shared
    # policy takes exactly the tabular steps on the same random draws.
    setup = BanditSetup(start_pass=np.array([0.3, 0.05, 0.6, 0.2, 0.45]), actions=6, batch_problems=2, seeds=4)
    problems = len(setup.start_pass)
    one_hot = LinearPolicy(np.broadcast_to(np.eye(problems), (4, problems, problems)).copy(),
                           np.zeros((4, problems), dtype=int), np.broadcast_to(initial_logits(setup), (4, problems, 6)))
    tabular = train_bandits(setup, n=4, updates=60, record_every=6, rng=np.random.default_rng(3))
    shared = train_bandits(setup, n=4, updates=60, record_every=6, rng=np.random.default_rng(3), policy=one_hot)
    assert shared["suboptimality"].to_numpy() == pytest.approx(tabular["suboptimality"].to_numpy(), abs=1e-12)
    assert tabular["suboptimality"].iloc[-1] < 0.5 * tabular["suboptimality"].iloc[0]  # it did learn


def test_shared_features_start_at_the_start_pass_rate_with_random_answers_and_couple_problems() -> None:
    setup = BanditSetup(start_pass=np.full(64, 0.25), actions=8, batch_problems=4, seeds=3, features=16)
    policy = make_policy(setup, features_seed=5)
    assert policy.features.shape == (3, 64, 16)
    assert np.mean(np.sum(policy.features**2, axis=-1)) == pytest.approx(1.0, abs=0.05)  # |x_p|^2 ~ 1
    assert len(np.unique(policy.answers)) == 8  # each problem its own correct answer
    probs = np.exp(policy.logits()) / np.exp(policy.logits()).sum(-1, keepdims=True)
    assert np.take_along_axis(probs, policy.correct()[..., None], -1) == pytest.approx(np.full((3, 64, 1), 0.25))
    # the same seed draws the same problems for every n; another seed other problems
    assert np.array_equal(make_policy(setup, features_seed=5).features, policy.features)
    assert not np.array_equal(make_policy(setup, features_seed=6).features, policy.features)
    before = policy.logits()
    chosen = np.array([[0], [1], [2]])
    change = np.zeros((3, 1, 8))
    change[:, 0, 3] = 1.0
    policy.step(chosen, change)
    moved = policy.logits() - before  # [S, P, A]
    own = moved[np.arange(3), chosen[:, 0], 3]
    assert own == pytest.approx(np.sum(policy.features[np.arange(3), chosen[:, 0]] ** 2, axis=-1))
    assert np.count_nonzero(np.abs(moved[..., 3]) > 1e-9) > 3 * 60  # an update on one problem moves the others


def test_without_sharing_the_smallest_n_wins_and_with_few_shared_features_a_larger_n_wins_late() -> None:
    # Figure 12's mechanism at toy scale (seconds): 64 problems compete for 8 shared features.
    settings = BanditConfig(problems=64, actions=8, features=(8,), batch_problems=4, rollouts_per_problem=(2, 16),
                            budget=32768, lr=2.0, seeds=8, fixed_batch=32)
    curves = sharing_curves(settings)
    assert set(curves["features"]) == {64, 8}  # the tabular policy is the one-hot case, d = P = 64
    final = curves[curves["rollouts"] == settings.budget].set_index(["features", "n"])["suboptimality"]
    assert final[(64, 2)] < final[(64, 16)]
    assert final[(8, 16)] < final[(8, 2)]
    assert final[(64, 2)] < 0.05 < final[(8, 16)]  # the tabular policy solves what shared weights cannot
    assert final[(8, 16)] < 1 - 1 / 8  # the shared policy does learn from its start
    for rule in STEP_RULES:
        split = batch_split_curves(settings, 8, rule)
        assert set(zip(split["batch_problems"], split["n"])) == {(16, 2), (2, 16)}  # each B_p with its own n
    with pytest.raises(ValueError, match="step: 'per token'; allowed: per problem, per update"):
        batch_split_curves(settings, 8, "per token")


def test_per_update_steps_scale_each_problems_step_so_every_split_moves_the_weights_alike() -> None:
    settings = BanditConfig(problems=32, actions=4, features=(4,), batch_problems=4, rollouts_per_problem=(2, 8),
                            budget=256, lr=1.0, seeds=2, fixed_batch=16)
    same = batch_split_curves(settings, 4, "per problem")
    scaled = batch_split_curves(settings, 4, "per update")
    # B_p = 8 (n = 2) takes half the step per problem per update, B_p = 2 (n = 8) twice it: other curves
    for n in (2, 8):
        assert not np.allclose(same[same["n"] == n]["suboptimality"], scaled[scaled["n"] == n]["suboptimality"])
    at_reference = BanditConfig(**{**settings.__dict__, "fixed_batch": 8})  # B_p = 4 = batch_problems at n = 2
    assert np.array_equal(batch_split_curves(at_reference, 4, "per problem").query("n == 2")["suboptimality"],
                          batch_split_curves(at_reference, 4, "per update").query("n == 2")["suboptimality"])


def test_curves_are_read_at_each_power_of_two_even_when_a_batch_is_not_one() -> None:
    # B_p x n = 6 rollouts per update: the last update within 8, 16, 32 and 64 rollouts is kept
    setup = BanditSetup(start_pass=np.array([0.3, 0.4, 0.5]), batch_problems=3, seeds=4)
    curve = train_bandits(setup, n=2, updates=20, record_every=20, rng=np.random.default_rng(2))
    assert curve["rollouts"].tolist() == [0, 6, 12, 30, 60, 120] and set(curve["seeds"]) == {4}


@pytest.mark.parametrize(("overrides", "message"), [
    ({"rollouts_per_problem": (1, 2)}, "bandit.rollouts_per_problem: needs powers of two >= 2"),
    ({"budget": 1000}, "bandit.budget: needs a power of two"),
    ({"budget": 256}, r"bandit.budget: 256 buys no update of every curve; allowed: >= 512"),
    ({"features": ()}, "bandit.features"),
    ({"features": (16, 256)}, r"bandit.features: needs numbers of features in \[1, problems - 1\]"),
    ({"lr": 0.0}, "bandit.lr: must be > 0"),
    ({"adam_lr": 0.0}, "bandit.adam_lr: must be > 0"),
    ({"fixed_batch": 4, "rollouts_per_problem": (2, 8)}, r"bandit.fixed_batch: 4 must split .* got \[2\]"),
])
def test_bad_bandit_settings_fail_naming_the_field(overrides: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        BanditConfig(**overrides)


def test_the_bandits_budgets_start_where_every_curve_has_made_an_update() -> None:
    """From the largest batch any curve of the chapter takes (B_p x the largest n, or the
    batch split's fixed batch), rounded up to a power of two, doubling to the budget."""
    assert comparable_budgets(BanditConfig())[:2] == [512, 1024] and comparable_budgets(BanditConfig())[-1] == 262144
    split_larger = BanditConfig(batch_problems=2, rollouts_per_problem=(2, 8), fixed_batch=64, budget=1024)
    assert comparable_budgets(split_larger) == [64, 128, 256, 512, 1024]  # 2 x 8 = 16 < 64


def test_adams_first_step_moves_every_coordinate_with_a_gradient_by_the_step_size() -> None:
    """Bias-corrected Adam's first step is lr * g / (|g| + eps): +-lr wherever the gradient
    is non-zero (to eps / |g|, below 1e-5 here), however small the gradient; the plain
    step is lr * g."""
    setup = BanditSetup(start_pass=np.array([0.3, 0.2, 0.1, 0.4]), batch_problems=2, seeds=3, lr=0.05,
                        optimizer="adam")
    policy = make_policy(setup)
    start = policy.theta.copy()
    train_bandits(setup, n=8, updates=1, record_every=1, rng=np.random.default_rng(4), policy=policy)
    moved = np.abs(policy.theta - start)
    stepped = moved > 1e-6  # the rest had a gradient of rounding only (|g| << eps): Adam leaves them near still
    assert stepped.any() and np.allclose(moved[stepped], 0.05, rtol=1e-5) and (moved[~stepped] < 1e-9).all()
    plain = make_policy(setup)
    train_bandits(BanditSetup(**{**setup.__dict__, "optimizer": "gradient"}), n=8, updates=1, record_every=1,
                  rng=np.random.default_rng(4), policy=plain)
    assert np.array_equal(np.sign(plain.theta - start)[stepped], np.sign(policy.theta - start)[stepped])  # same draws
    assert not np.allclose(np.abs(plain.theta - start)[stepped], 0.05)


def test_a_sqrt_scaled_step_equals_the_constant_one_at_the_reference_batch() -> None:
    setup = BanditSetup(start_pass=np.full(8, 0.2), batch_problems=4, lr=0.03, lr_scaling="sqrt", reference_batch=64)
    assert setup.lr_at(16) == pytest.approx(0.03) and setup.lr_at(4) == pytest.approx(0.015)
    assert setup.lr_at(64) == pytest.approx(0.06) and BanditSetup(lr=0.03).lr_at(64) == 0.03


def test_optimizer_curves_run_the_tabular_and_the_largest_shared_policy_under_adam_from_the_same_start() -> None:
    settings = BanditConfig(problems=32, actions=4, features=(4, 8), batch_problems=4, rollouts_per_problem=(2, 8),
                            budget=512, seeds=3, fixed_batch=16, adam_lr=0.05, reference_batch=32)
    adam = optimizer_curves(settings)
    plain = sharing_curves(settings)
    assert set(map(tuple, adam[["features", "lr_scaling"]].drop_duplicates().to_numpy())) == {
        (32, "constant"), (8, "constant"), (32, "sqrt"), (8, "sqrt")}
    for features in (32, 8):
        start = adam[(adam["features"] == features) & (adam["rollouts"] == 0)]["suboptimality"]
        assert np.allclose(start, plain[(plain["features"] == features) & (plain["rollouts"] == 0)]
                           ["suboptimality"].iloc[0])
        trained = adam[(adam["features"] == features) & (adam["rollouts"] == 512)]
        assert (trained["suboptimality"] < start.iloc[0]).all()  # every Adam curve learns
    # n = 8 at B_p = 4 is the reference batch: there the sqrt rule takes the constant step, draw for draw
    at_reference = adam[adam["n"] == 8].pivot_table(index=["features", "rollouts"], columns="lr_scaling",
                                                    values="suboptimality")
    assert np.array_equal(at_reference["constant"], at_reference["sqrt"])
