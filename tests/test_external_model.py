"""Any local Hugging Face causal-LM folder can be the base model (here a tiny Llama)."""

import json
from pathlib import Path

from isobook.config import load_config
from isobook.model.loading import load_causal_lm
from isobook.rollout import kv_decode
from isobook.sets.build import prepare_sets

from conftest import save_tiny_llama


def test_a_local_llama_folder_profiles_real_math_problems(tmp_path: Path) -> None:
    folder = tmp_path / "tiny-llama"
    save_tiny_llama(folder)
    model, _ = load_causal_lm(folder)
    assert kv_decode.supports(model)  # grouped-query attention goes through isobook's loop
    problems = tmp_path / "problems.jsonl"
    problems.write_text("\n".join(json.dumps({"q": f"{a} + {a} = ?", "a": str(2 * a)}) for a in range(12)))
    config = load_config(None, [
        f"model.source={folder}", "task.family=math-file", f"task.math_file.path={problems}",
        "task.math_file.question_field=q", "task.math_file.answer_field=a", "task.math_file.prompt_template='{question}'",
        "sets.pool_size=12", "sets.samples=4", "sets.xhard_samples=8", "sets.validation_size=2",
        "sampling.max_new_tokens=8", f"system.outputs={tmp_path / 'outputs'}",
    ])
    result = prepare_sets(config)
    summary = result.summary
    assert summary["base_model"] == str(folder)
    assert summary["stability"] == {"problems": 0}  # no earlier checkpoint for a user's model
    assert sum(summary["histogram"]["problems"]) == 12
    never_solved = summary["histogram"]["problems"][0]
    assert summary["rollouts"] == 12 * 4 + never_solved * (8 - 4)  # xhard tops them up to 8
    assert result.folder.name.startswith("tiny-llama-pool12-")
