"""kv55: a flag the user set is printed in kv's command as given, or the plan does not fit and says which value would;
only flags kv chooses carry kv's figures."""
from gpu_garden.memory.llm import kv as llm

GiB = 1 << 30


def test_users_max_num_batched_tokens_is_echoed_even_at_a_default_value():
    # vLLM 0.10.0 on a 24 GiB card defaults to 2048 batched tokens (engine/arg_utils.py, cards under 70 GiB); the
    # user's 8192 sizes the activation peak and was dropped from the command because 8192 is the big-card default
    r = llm.plan(llm.describe(model="Qwen/Qwen3-8B"), "vllm", ctx=40960, vram=24 * GiB, runtime_version="0.10.0",
                 max_num_batched_tokens=8192)
    assert r["fits"] and r["command"].endswith(" --max-num-batched-tokens 8192")


def test_users_max_num_seqs_is_kept_where_kv_would_lower_it():
    # review14c r7's case (Qwen3.5-9B, 0.18.0, 26 GiB, 256 at once, 1024 tokens): with no --max-num-seqs kv lowers it
    # to 244 so the graph profiling cache fits; the user's 256 was lowered the same way. Kept now: the plan eats the
    # graphs instead (--enforce-eager, a flag kv chooses)
    r = llm.plan(llm.describe(model="Qwen3.5-9B"), "vllm", ctx=1024, vram=26 * GiB, runtime_version="0.18.0",
                 parallel=256, max_num_seqs=256)
    assert " --max-num-seqs 256 " in r["command"] and "--max-num-seqs 244" not in r["command"]


def test_users_ngl_is_kept_and_the_layers_that_fit_are_named():
    # Qwen3-8B Q8_0 (8.11 GiB of weights) with 40,960 cells cannot hold every layer on 8 GiB: with no -ngl kv moves
    # layers to the CPU; the user's -ngl 99 was replaced by kv's count in a command that "fits with the flags below"
    r = llm.plan(llm.describe(model="Qwen/Qwen3-8B"), "llama.cpp", ctx=40960, vram=8 * GiB, weights_dtype="Q8_0",
                 ngl=99)
    assert not r["fits"] and r["command"] == ""
    assert r["no_fit_reason"].startswith("-ngl 99 (every layer on the GPU) does not fit 8.00 GiB with the KV cache at ")
    assert "; -ngl " in r["no_fit_reason"]
    n = int(r["no_fit_reason"].split("; -ngl ")[1].split()[0])
    back = llm.plan(llm.describe(model="Qwen/Qwen3-8B"), "llama.cpp", ctx=40960, vram=8 * GiB, weights_dtype="Q8_0",
                    ngl=n, kv_dtype="q8_0")
    assert back["fits_as_requested"] and f" -ngl {n} " in back["command"]


def _exl3_config(folder, total_size=None):
    # Qwen3-8B's built-in config.json as an EXL3 checkpoint's: quantization_config as exllamav3's converter writes it
    # (quant_method, bits, head_bits), "bits": 4 as malaiwah's mixed K5/K6 builds write it
    import json
    from gpu_garden.memory.llm.spec import MODELS_DIR
    with open(f"{MODELS_DIR}/Qwen3-8B.json") as f:
        cfg = json.load(f)
    cfg["quantization_config"] = {"quant_method": "exl3", "bits": 4, "head_bits": 6}
    (folder / "config.json").write_text(json.dumps(cfg))
    if total_size:
        (folder / "model.safetensors.index.json").write_text(json.dumps(
            {"metadata": {"total_size": total_size}, "weight_map": {"lm_head.weight": "model.safetensors"}}))
    return str(folder / "config.json")


def test_exl3_checkpoint_folder_is_sized_from_its_files_not_its_bits(tmp_path):
    # 6,000,000,000 bytes in the index (5.588 GiB): taken as the weights, whatever "bits" says; 4 bits over
    # Qwen3-8B's matmuls would be about 4.3 GiB
    r = llm.plan(llm.describe(config=_exl3_config(tmp_path, 6_000_000_000)), "vllm", ctx=8192)
    assert "total_size" in r["weights_how"] and 6_000_000_000 <= r["weights"] < 6_000_000_000 + 16 * (1 << 20)


def test_exl3_config_alone_is_refused_naming_the_folder_route(tmp_path):
    # kv55: config.json's "bits" is no size (a mixed build says 4 over 5- and 6-bit layers): without the checkpoint's
    # files kv refuses, and names --config DIR (exact from its safetensors) beside --weights-gib
    import pytest
    from gpu_garden.memory.errors import UserError
    with pytest.raises(UserError, match=r"'exl3'.*config.json's 'bits'.*--config DIR.*--weights-gib"):
        llm.plan(llm.describe(config=_exl3_config(tmp_path)), "vllm", ctx=8192)


def test_users_share_is_echoed_without_vram():
    # sizes only (no --vram): the command dropped a given --gpu-memory-utilization 0.80
    r = llm.plan(llm.describe(model="Qwen/Qwen3-8B"), "vllm", ctx=40960, gpu_memory_utilization=0.8)
    assert r["command"].endswith(" --kv-cache-dtype auto --gpu-memory-utilization 0.80")
