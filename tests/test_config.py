"""Config loading: presets, overrides, and errors that name the field and what it allows."""

from dataclasses import replace
from pathlib import Path

import pytest

from isobook.analysis.envelope import confirmatory_runs
from isobook.book.build import chapter_parameters
from isobook.config import Config, ConfigError, describe, load_config, with_overrides
from isobook.store.names import run_folder
from isobook.sweeps import model_arms, sweep_configs

ROOT = Path(__file__).resolve().parents[1]


def test_presets_load_and_defaults_match_the_cpu_preset() -> None:
    smoke = load_config(ROOT / "params" / "smoke.yaml")
    cpu = load_config(ROOT / "params" / "cpu.yaml")
    assert smoke.sets.pool_size < cpu.sets.pool_size
    assert cpu == Config()
    gpu = load_config(ROOT / "params" / "gpu-qwen2.5-0.5b.yaml")
    assert gpu.model.source != "isobook" and gpu.task.family == "math-file"
    assert len(sweep_configs(gpu)) > len(sweep_configs(cpu)) and gpu.sweep.gpus_per_run == 1.0
    assert (gpu.system.engine, gpu.system.precision, gpu.system.micro_batch_tokens) == ("vllm", "auto", 16384)
    assert list(model_arms(gpu)) == ["Qwen2.5-0.5B-Instruct", "second-model"]  # chapter 07: a local folder, no hub id


def test_the_long_book_is_the_default_with_three_chapters_at_four_times_the_budget() -> None:
    long = load_config(ROOT / "params" / "cpu-long.yaml")
    # Same base models, sets and runs, extended: the rates chosen where the default book chose them, so the
    # primaries' confirmatory runs and the reuse grid (the same 32 problems, to C/D 512) are the default's, longer.
    default = Config()
    assert replace(long, book=default.book, lr_envelope=default.lr_envelope, data_reuse=default.data_reuse) == default
    assert long.lr_envelope.choose_at == default.sweep.budget and long.data_reuse.problems == default.data_reuse.problems
    assert long.data_reuse.budget / long.data_reuse.problems == 512
    default_runs = {run_folder(run) for run in confirmatory_runs(Config(), "hard", {4: 0.5})}
    long_runs = confirmatory_runs(replace(long, sweep=replace(long.sweep, budget=16384)), "hard", {4: 0.5})
    assert {run_folder(run) for run in long_runs} == default_runs and {r.train.budget for r in long_runs} == {16384}
    budgets = {name: given.get("budget") for name, given in chapter_parameters("long.yaml", [], long).items()}
    assert budgets == {"00_introduction": None, "01_recipe": None, "02_n_versus_m": 4 * long.sweep.budget,
                       "03_bp_versus_n": None, "04_interference": 4 * long.sweep.budget, "05_data": None,
                       "06_playbook": None, "07_models_and_baselines": None,
                       "08_what_makes_n_grow": 4 * long.sweep.budget}
    with pytest.raises(ConfigError, match=r"book.budgets: '2_n' is not a chapter; allowed: 01_recipe, 02_n_versus_m"):
        chapter_parameters("long.yaml", [], load_config(None, ["book.budgets={2_n: 8192}"]))
    with pytest.raises(ConfigError, match=r"book.budgets: '00_introduction' takes no budget; allowed: 01_recipe, "):
        chapter_parameters("long.yaml", [], load_config(None, ["book.budgets={00_introduction: 8192}"]))


def test_the_lr_anchor_file_grids_around_the_default() -> None:
    anchor = load_config(ROOT / "params" / "lr-anchor.yaml")
    assert anchor.recipe == Config().recipe  # the chosen anchor is the default
    assert anchor.train.batch_rollouts == anchor.recipe.reference_batch


def test_overrides_apply_on_top_of_the_file() -> None:
    config = load_config(ROOT / "params" / "smoke.yaml", ["sets.pool_size=123", "base_model.lr=5e-3",
                                                          "sets.easy=[0.25, 0.5]", "task.math_file.path=null"])
    assert config.sets.pool_size == 123
    assert config.base_model.lr == 0.005
    assert config.sets.easy == (0.25, 0.5)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("sets.pool_sizee=3", r"sets.pool_sizee: unknown field; allowed: .*pool_size"),
        ("sets.pool_size=many", r"sets.pool_size: expected int, got 'many'"),
        ("sets.pool_size=0", r"sets.pool_size: 0 is out of range; allowed: \[1, inf\]"),
        ("sampling.top_p=1.5", r"sampling.top_p: 1.5 is out of range; allowed: \[0.001, 1.0\]"),
        ("task.family=poetry", r"task.family: 'poetry' is not allowed; allowed: chain, math-file"),
        ("model.num_heads=5", r"model.num_heads: must divide hidden_size=96"),
        ("task.chain.max_carries=11", r"task.chain.max_carries: needs min_carries=1 <= max_carries <= max_ops=10"),
        ("sets.hard=[0.5, 0.1]", r"sets.hard: needs 0 <= low <= high <= 1"),
        ("sets.mixtures={m: {hard: 0.7}}", r"sets.mixtures.m: fractions must sum to 1"),
        ("sets.mixtures={m: {medium: 1.0}}", r"sets.mixtures.m: unknown set \['medium'\]"),
        ("task.family=math-file", r"task.math_file.path: required when family is 'math-file'"),
        ("task.math_file.chat_template=maybe", r"task.math_file.chat_template: 'maybe' is not allowed; allowed: auto, on, off"),
        ("nonsense=1", r"nonsense: unknown field; allowed: bandit, base_model, baseline, book, data_reuse, evaluation, "
                       r"interference, lr_envelope, misconceptions, model"),
        ("pool_size", r"expected key=value"),
        ("train.set=medium", r"train.set: 'medium' is not a problem set; allowed: easy, hard, veryeasy, xhard, mix-dual"),
        ("train.n_train=9", r"train.n_train: must be <= rollouts_per_problem=8, got 9"),
        ("recipe.lr_scaling=cubic", r"recipe.lr_scaling: 'cubic' is not allowed; allowed: constant, linear, sqrt"),
        ("recipe.zero_variance=some", r"recipe.zero_variance: 'some' is not allowed; allowed: none, all, regularisers"),
        ("evaluation.samples=2", r"evaluation.samples: must be >= k=4, got 2"),
        ("evaluation.train_pass_rollouts=[0, x]", r"evaluation.train_pass_rollouts\[1\]: expected int, got 'x'"),
        ("system.device=tpu", r"system.device: 'tpu' is not a device; allowed: auto, cpu, cuda, cuda:N"),
        ("system.engine=sglang", r"system.engine: 'sglang' is not allowed; allowed: torch, vllm"),
        ("system.precision=fp8", r"system.precision: 'fp8' is not allowed; allowed: auto, fp32, bf16"),
        ("interference.seeds=[3, 3]", r"interference.seeds: needs at least two distinct seeds >= 0, got \[3, 3\]"),
        ("interference.conflict=0.5", r"interference.conflict: replaced; allowed: nothing \(the book runs no dialect"),
        ("lr_envelope.multipliers=[0.5, 2]", r"lr_envelope.multipliers: needs two or more positive multiples, 1 among"),
        ("lr_envelope.seeds=[0]", r"lr_envelope.seeds: needs at least two distinct seeds"),
        ("data_reuse.budget=3000", r"data_reuse.budget: needs a power of two"),
        ("data_reuse.set=medium", r"data_reuse.set: 'medium' is not a problem set"),
        ("interference.sets=[medium]", r"interference.sets: 'medium' is not a problem set; allowed: easy, hard"),
        ("book.budgets={02_n_versus_m: 0}", r"book.budgets.02_n_versus_m: 0 is out of range; allowed: \[1, inf\]"),
        ("book.budgets={02_n_versus_m: many}", r"book.budgets.02_n_versus_m: expected int, got 'many'"),
        ("model.architecture=gpt2", r"model.architecture: 'gpt2' is not allowed; allowed: qwen2, llama"),
        ("model.num_kv_heads=3", r"model.num_kv_heads: must divide num_heads=4, got 3"),
        ("second_model.model.num_heads=3", r"second_model.model.num_heads: must divide hidden_size=64, got 3"),
        ("second_model.model.num_kv_heads=3", r"second_model.model.num_kv_heads: must divide num_heads=4, got 3"),
        ("second_model.set=medium", r"second_model.set: 'medium' is not a problem set; allowed: easy, hard"),
        ("baseline.n_train=16", r"baseline.n_train: must be < rollouts_per_problem=16, got 16"),
        ("baseline.rollouts_per_problem=12", r"baseline.rollouts_per_problem: needs a power of two, got 12"),
        ("baseline.n_train=3", r"baseline.n_train: needs a power of two, got 3"),
        ("baseline.seeds=[0]", r"baseline.seeds: needs at least two distinct seeds >= 0, got \[0\]"),
    ],
)
def test_bad_values_fail_naming_the_field(override: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(None, [override])


@pytest.mark.parametrize(("override", "moved"), [("task.min_ops=3", "task.chain.min_ops"),
                                                ("task.path=x.jsonl", "task.math_file.path"),
                                                ("second_model.hidden_size=32", "second_model.model.hidden_size")])
def test_a_field_that_moved_into_a_subsection_names_its_new_place(override: str, moved: str) -> None:
    with pytest.raises(ConfigError, match=rf"^{override.split('=')[0]}: replaced; allowed: {moved}$"):
        load_config(None, [override])


def test_a_subsection_given_in_part_keeps_the_rest_of_its_default() -> None:
    """``second_model.model`` defaults to a Llama unlike ``model``: a params file that sets
    one of its fields changes that field only."""
    second = load_config(None, ["second_model.model.hidden_size=128"]).second_model.model
    assert (second.architecture, second.hidden_size, second.num_layers, second.num_kv_heads) == ("llama", 128, 4, 2)
    assert load_config(None, ["task.chain.conflict=0.5"]).task.chain == replace(Config().task.chain, conflict=0.5)


def test_a_section_built_in_code_names_its_usual_place_and_one_read_elsewhere_its_own() -> None:
    with pytest.raises(ConfigError, match=r"^train.n_train: must be <= rollouts_per_problem=8, got 16$"):
        replace(Config().train, n_train=16)  # as grid_run builds a run's train section
    with pytest.raises(ConfigError, match=r"^second_model.model.num_heads: must divide hidden_size=64, got 3$"):
        load_config(None, ["second_model.model.num_heads=3"])  # a ModelConfig, away from model


def test_missing_params_file_is_named() -> None:
    with pytest.raises(ConfigError, match="params: no such file"):
        load_config("params/nope.yaml")


def test_on_and_off_stay_words_where_a_field_allows_them(tmp_path: Path) -> None:
    params = tmp_path / "params.yaml"
    params.write_text("task:\n  math_file:\n    chat_template: off\nrecipe:\n  track_kl: off\n")  # YAML 1.1: bare off is False
    config = load_config(params)
    assert config.task.math_file.chat_template == "off"
    assert config.recipe.track_kl is False  # a boolean field keeps YAML's reading
    assert load_config(None, ["task.math_file.chat_template=on"]).task.math_file.chat_template == "on"


@pytest.mark.parametrize("preset", sorted(p.name for p in (ROOT / "params").glob("*.yaml")))
def test_describe_is_a_params_file_of_the_same_config(preset: str, tmp_path: Path) -> None:
    config = load_config(ROOT / "params" / preset)
    printed = tmp_path / "printed.yaml"
    printed.write_text(describe(config))
    assert load_config(printed) == config


def test_describe_comments_each_field_with_its_help_and_allowed_values() -> None:
    lines = describe(Config()).splitlines()
    assert "  hidden_size: 96         # hidden width of isobook's own model; allowed: [8, inf]" in lines
    assert "  family: chain" in next(line for line in lines if line.startswith("  family:"))
    assert next(line for line in lines if line.startswith("  family:")).endswith(
        "# problem family; allowed: chain, math-file")
    assert next(line for line in lines if line.startswith("  outputs:")).endswith(
        "# folder for models, sets and runs")  # no range, no 'allowed'
    # A value with a newline stays on one line, as a YAML double-quoted string.
    assert r'  prompt_template: "{question}\nPut the final answer within \\boxed{{}}."' in "\n".join(lines)


def test_only_the_histogram_runs_measure_training_problems() -> None:
    config = Config()
    assert config.evaluation.train_pass_rollouts == ()
    histogram = with_overrides(config, config.interference.histogram_changes())
    assert histogram.evaluation.train_pass_rollouts == (0, 512, 4096)
    assert replace(histogram, evaluation=config.evaluation) == config


def test_primaries_are_at_most_six_known_claims_on_seeds_that_chose_no_rate() -> None:
    assert Config().primaries.claims == ("own-best-rate", "data-reuse")
    with pytest.raises(ConfigError, match=r"primaries.claims: 'n-grows' is not a primary claim; allowed: "
                                          r"own-best-rate, data-reuse"):
        load_config(None, ["primaries.claims=[n-grows]"])
    with pytest.raises(ConfigError, match=r"primaries.claims: at most 6 distinct claims"):
        load_config(None, ["primaries.claims=[data-reuse, data-reuse]"])
    with pytest.raises(ConfigError, match=r"primaries.seeds: \[1\] also choose the learning rates"):
        load_config(None, ["primaries.seeds=[1, 2]"])
    assert load_config(None, ["primaries.seeds=[1, 2]", "lr_envelope.sets=[]"]).primaries.seeds == (1, 2)
    with pytest.raises(ConfigError, match=r"data_reuse.seeds: replaced; allowed: primaries.seeds"):
        load_config(None, ["data_reuse.seeds=[0, 1]"])
    with pytest.raises(ConfigError, match=r"lr_envelope.choose_at: needs a power of two"):
        load_config(None, ["lr_envelope.choose_at=3000"])
