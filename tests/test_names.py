"""Store names: pinned to what earlier versions wrote, and stable when a defaulted field is added."""

import dataclasses
from pathlib import Path

import pytest

import isobook.sweeps.execute
from isobook.config import (
    ChainTaskConfig,
    Config,
    ConfigError,
    MathFileTaskConfig,
    TaskConfig,
    TrainConfig,
    load_config,
    pipeline,
    with_overrides,
)
from isobook.store.names import (
    Seed,
    base_model_id,
    base_scores_path,
    fingerprint,
    run_name,
    sets_id,
    step_seed,
    transfer_cache_name,
)
from isobook.sweeps import grid_run, model_arms, run_sweep, sweep_configs

from conftest import smoke_config

OLD_SCHEDULE = "evaluation.points_per_doubling=2"  # the default until 03b1181


def test_names_are_those_isobook_wrote_before_the_naming_moved() -> None:
    """Base models, sets and step-0 scores as isobook wrote them at b4b4834 (before `names`
    existed) for these smoke configs: an existing store keeps answering from its folders.
    Runs are named as since the warm-up moved to rollouts and ``track_kl`` to off (the
    recipe changed results, so every run was renamed; again when the LR anchor moved to B = 128)."""
    config = smoke_config(Path("/store"), "train.batch_problems=4", OLD_SCHEDULE)
    assert base_model_id(config) == "qwen2-h48-l2-chain-s0-8948b4"
    assert sets_id(config) == "qwen2-h48-l2-chain-s0-8948b4-pool400-05ecfa"
    assert base_scores_path(config).name == "easy-s0-0aa984.json"
    assert run_name(config) == "easy-bp4-n8-s0-7edc25"
    assert run_name(smoke_config(Path("/store"), "train.batch_problems=4", "train.rollouts_per_problem=4",
                                 "train.n_train=2", OLD_SCHEDULE)) == "easy-bp4-n4-s0-52b4d0"
    assert run_name(smoke_config(Path("/store"), "train.batch_problems=4", "train.set=hard",
                                 "recipe.zero_variance=all", OLD_SCHEDULE)) == "hard-bp4-n8-s0-b07025"
    # recipe.advantage replaced recipe.normalize_std: the default is the old default's run
    assert run_name(smoke_config(Path("/store"), "train.batch_problems=4", "recipe.advantage=grpo",
                                 OLD_SCHEDULE)) == run_name(config)
    others = {run_name(smoke_config(Path("/store"), "train.batch_problems=4", f"recipe.advantage={name}",
                                    OLD_SCHEDULE)) for name in ("drgrpo", "rloo")}
    assert len(others) == 2 and run_name(config) not in others
    assert transfer_cache_name(config, "hard").startswith("transfer-hard-")


def test_the_evaluation_schedule_names_the_run_but_not_the_base_models_scores() -> None:
    """A run scored at other points is another run (its curves, fits and training windows
    differ), so a store's runs never answer a config with another schedule; the step-0
    scores do not depend on the schedule and are shared."""
    old, new = (smoke_config(Path("/store"), "train.batch_problems=4", *schedule) for schedule in ([OLD_SCHEDULE], []))
    assert new.evaluation.points_per_doubling == 1 and run_name(new) != run_name(old)
    assert base_scores_path(new) == base_scores_path(old)


def test_the_default_configs_names_and_the_chat_fields() -> None:
    """Names of the default config (base model and sets as isobook wrote them before
    task.math_file.chat_template existed; its default, off, is the old behaviour, so only
    auto and on name other sets)."""
    default = Config()
    assert base_model_id(default) == "qwen2-h96-l3-chain-s0-fd7ea5"
    assert sets_id(default) == "qwen2-h96-l3-chain-s0-fd7ea5-pool4000-cff854"
    assert run_name(default) == "easy-bp32-n8-s0-d3cbf6"
    math = ["task.family=math-file", "task.math_file.path=/data/x.jsonl", "model.source=/m/Qwen"]
    assert sets_id(load_config(None, math)) == "Qwen-pool4000-5be16a"
    assert sets_id(load_config(None, [*math, "task.math_file.chat_template=off"])) == "Qwen-pool4000-5be16a"
    assert len({sets_id(load_config(None, [*math, f"task.math_file.chat_template={mode}"]))
                for mode in ("off", "auto", "on")}) == 3


def test_the_second_base_model_is_named_by_its_layout_and_keeps_the_mains_names() -> None:
    """Chapter 07's second model (a Llama) gets a base model, sets and runs of its own; the
    new model fields at their defaults leave the main model's names as they were."""
    arms = model_arms(Config())
    assert list(arms) == ["qwen2-h96-l3", "llama-h64-l4"]
    main, second = arms.values()
    assert base_model_id(main) == "qwen2-h96-l3-chain-s0-fd7ea5"
    assert base_model_id(second) == "llama-h64-l4-chain-s0-357f14"
    assert second.model.key_value_heads == 2 and second.task == main.task and second.base_model == main.base_model
    assert run_name(grid_run(main, "easy", 8, 4)) == "easy-bp8-n4-s0-2c075d"  # chapter 02's run
    assert run_name(grid_run(second, "easy", 8, 4)) == "easy-bp8-n4-s0-2dfca5"
    same = ["second_model.model.architecture=qwen2", "second_model.model.hidden_size=96", "second_model.model.num_layers=3"]
    with pytest.raises(ConfigError, match="second_model: labelled like the main model .qwen2-h96-l3."):
        model_arms(load_config(None, same))


def test_fingerprints_depend_on_content_only() -> None:
    assert fingerprint(Config().sets) == fingerprint(load_config(None, []).sets)
    assert fingerprint(Config().sets) != fingerprint(load_config(None, ["sets.pool_size=5"]).sets)


def test_seeds_are_named_by_purpose_and_independent() -> None:
    assert [int(s) for s in Seed] == [0, 1, 2, 3, 4]  # stored runs drew with these numbers
    seeds = {step_seed(0, purpose, 0) for purpose in Seed}
    assert len(seeds) == len(Seed) and step_seed(0, Seed.SAMPLING, 3) == step_seed(0, Seed.SAMPLING, 3)


def _with_new_train_field(monkeypatch: pytest.MonkeyPatch, default: int) -> None:
    """isobook as if a later version added ``train.new_knob`` (default `default`)."""
    newer = dataclasses.make_dataclass(
        "TrainConfig", [("new_knob", int, dataclasses.field(default=default, metadata={"help": "a later field"}))],
        bases=(TrainConfig,), frozen=True)
    newer.__module__ = pipeline.__name__
    monkeypatch.setattr(pipeline, "TrainConfig", newer)  # where Config's train field type is looked up


def test_a_defaulted_new_field_keeps_every_stored_run(outputs_with_sets: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    grid = ["sweep.sets=[easy]", "sweep.batch_problems=[2]", "sweep.rollouts_per_problem=[2, 4]", "sweep.budget=32",
            "sweep.workers=1", "train.seed=0"]  # train.seed: builds the train section from the class of the day
    before = run_sweep(smoke_config(outputs_with_sets, *grid), show_progress=False)
    assert before["status"].eq("finished").all() and len(before) == 2

    _with_new_train_field(monkeypatch, default=0)

    def no_training(*_: object) -> None:
        raise AssertionError("a stored run was trained again")

    monkeypatch.setattr(isobook.sweeps.execute, "_run_locally", no_training)
    newer = smoke_config(outputs_with_sets, *grid)
    assert type(newer.train).__name__ == "TrainConfig" and newer.train.new_knob == 0
    after = run_sweep(newer, show_progress=False)
    assert after["status"].eq("finished").all()
    assert after["folder"].tolist() == before["folder"].tolist()
    # set away from its default, the new field changes what is trained: other names
    changed = sweep_configs(smoke_config(outputs_with_sets, *grid, "train.new_knob=1"))
    assert {run_name(c) for c in changed}.isdisjoint(Path(f).name for f in before["folder"])


def test_the_cpu_books_store_answers_after_the_task_and_second_model_became_subsections() -> None:
    """Read from the store of a cpu book built at 015a7ba, when ``task`` and ``second_model``
    were flat sections: the knob-on arm (``task.chain.conflict``, was ``task.conflict``) and
    the second model (``second_model.model``) name the base models and sets it holds (its
    runs were renamed with the recipe's warm-up in rollouts, with the anchor at B = 128, and when only
    the histogram runs kept measuring training problems)."""
    config = Config()
    knob = with_overrides(config, ["task.chain.conflict=0.5"])
    second = model_arms(config)["llama-h64-l4"]
    assert base_model_id(knob) == "qwen2-h96-l3-chain-s0-76d9ab"
    assert sets_id(knob) == "qwen2-h96-l3-chain-s0-76d9ab-pool4000-1a040e"
    assert sets_id(second) == "llama-h64-l4-chain-s0-357f14-pool4000-69c64e"
    n_values = (4, 8, 16, 32)
    assert [run_name(grid_run(knob, "hard", 8, n, seed=1)) for n in n_values] == [
        "hard-bp8-n4-s1-20d8f9", "hard-bp8-n8-s1-f68c49", "hard-bp8-n16-s1-299d63", "hard-bp8-n32-s1-1a7ae6"]
    assert [run_name(grid_run(second, "easy", 8, n)) for n in n_values] == [
        "easy-bp8-n4-s0-2dfca5", "easy-bp8-n8-s0-109f5e", "easy-bp8-n16-s0-6dc1c2", "easy-bp8-n32-s0-ac4498"]


def test_the_second_model_keeps_the_main_models_sequence_length() -> None:
    """The smoke preset shortens ``model.max_positions`` to 64; its second model reads the
    same sequences, and its names are those written at 1774224, before ``second_model.model``."""
    smoke = load_config(Path(__file__).resolve().parents[1] / "params" / "smoke.yaml")
    second = model_arms(smoke)["llama-h32-l3"]
    assert second.model.max_positions == smoke.model.max_positions == 64
    assert sets_id(second) == "llama-h32-l3-chain-s0-90df56-pool400-89d394"


def test_the_task_families_fields_do_not_overlap() -> None:
    """`names.FLAT_SUBSECTIONS` hashes them as one flat section: a name in two families would collide."""
    families = [{f.name for f in dataclasses.fields(section)} for section in (ChainTaskConfig, MathFileTaskConfig)]
    top = {f.name for f in dataclasses.fields(TaskConfig)} - {"chain", "math_file"}
    assert not (families[0] & families[1]) and not (top & (families[0] | families[1]))
