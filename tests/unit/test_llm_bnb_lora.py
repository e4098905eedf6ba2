"""vLLM bitsandbytes weights as the loader keeps them, and LoRA slots (runtimes/vllm.py lora_slot_bytes, bnb_tower).
Expected weights are vLLM's "Model loading took" lines of johnson7788/RLDecisionAgent's Unsloth runs (the skip lists
are the llm_int8_skip_modules those logs print); the LoRA bytes are hand-derived from vLLM's slot shapes
(lora/layers create_lora_weights: A of rank x input, B of output x rank per projection, in the model's dtype)."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import vllm as V
from gpu_garden.memory.llm.runtimes import vllm_loader as VL

GiB = 1 << 30
Q05_SKIP = ["lm_head", "multi_modal_projector", "merger", "modality_projection", "model.layers.0.self_attn",
            "model.layers.0.mlp", "model.layers.2.mlp", "model.layers.3.mlp", "model.layers.21.mlp",
            "model.layers.0.self_attn.q_proj"]
Q34_SKIP = ["embed_tokens", "embedding", "lm_head", "multi_modal_projector", "merger", "modality_projection",
            "model.layers.6.self_attn", "model.layers.0.self_attn", "model.layers.35.mlp", "model.layers.34.mlp",
            "model.layers.3.self_attn", "model.layers.5.mlp", "model.layers.3.mlp", "model.layers.6.mlp",
            "model.layers.1.mlp", "model.layers.2.mlp"]


def _weights(model, **knobs):
    knobs.setdefault("vllm_entrypoint", "unsloth")
    r = llm.plan(llm.describe(model=model), "vllm", ctx=8192, weights_dtype="bnb-4bit", runtime_version="0.8.5",
                 **knobs)
    return r["weights"] / GiB


def test_lora_slots_hand_derived_qwen25_05b_rank8():
    # Qwen2.5-0.5B: hidden 896, 14 heads / 2 KV heads of 64, intermediate 4864, 24 layers. Per layer rank x (in+out):
    # q 896+896, k 896+128, v 896+128, o 896+896, gate/up 896+4864 each, down 4864+896 = 22912; x 8 x 24 x 2 bytes
    assert VL.lora_slot_bytes(llm.describe(model="Qwen2.5-0.5B"), 8) == 22912 * 8 * 24 * 2


def test_lora_slots_shard_with_tensor_parallel():
    # TP 2 on Qwen2.5-7B (hidden 3584, 28 heads / 4 KV of 128, intermediate 18944, 28 layers): column-parallel
    # outputs and row-parallel inputs halve, the other sides stay whole
    spec = V.per_rank(llm.describe(model="Qwen2.5-7B"), 2)
    per = (3584 + 1792) + (3584 + 256) * 2 + (1792 + 3584) + (3584 + 9472) * 2 + (9472 + 3584)
    assert VL.lora_slot_bytes(spec, 16) == per * 16 * 28 * 2


def test_unsloth_qwen25_05b_with_its_skip_list_and_arts_rank():
    # printed 0.5151-0.5153 GiB (vLLM 0.8.5 / 0.10.0 V0); every matmul in 4 bits gave 0.430, no LoRA 0.505
    assert _weights("unsloth/qwen2.5-0.5b-instruct-unsloth-bnb-4bit", quant_skip=Q05_SKIP,
                    max_lora_rank=8) == pytest.approx(0.5151, rel=0.01)


def test_unsloth_qwen3_4b_2507_with_its_skip_list_and_arts_rank():
    # printed 3.4153 GiB; without the skip list 2.53 (-26 %), without the LoRA slots 3.37 (-1.5 %)
    assert _weights("unsloth/qwen3-4b-instruct-2507-unsloth-bnb-4bit", quant_skip=Q34_SKIP,
                    max_lora_rank=8) == pytest.approx(3.4153, rel=0.01)


def test_unsloth_enables_lora_at_rank_64_unless_given():
    base = _weights("unsloth/qwen3-4b-instruct-2507-unsloth-bnb-4bit", quant_skip=Q34_SKIP, max_lora_rank=0)
    dflt = _weights("unsloth/qwen3-4b-instruct-2507-unsloth-bnb-4bit", quant_skip=Q34_SKIP)
    # Qwen3-4B per layer: q 2560+4096, k/v 2560+1024, o 4096+2560, gate/up/down 2560+9728 = 57344 x rank
    assert dflt - base == pytest.approx(57344 * 64 * 36 * 2 / GiB, rel=1e-6)


def test_vllm_serve_has_no_lora_unless_asked():
    spec = llm.describe(model="Qwen3-4B")
    plain = llm.plan(spec, "vllm", ctx=8192, runtime_version="0.10.0")
    asked = llm.plan(spec, "vllm", ctx=8192, runtime_version="0.10.0", max_lora_rank=16, max_loras=4)
    assert not any(n.startswith("LoRA") for n in plain["notes"])
    assert (asked["weights"] - plain["weights"]) == 57344 * 16 * 4 * 36 * 2
    assert "--enable-lora --max-lora-rank 16 --max-loras 4" in asked["command"]
    assert "lora" not in plain["command"]


def _vl(model, version="0.9.2", **knobs):
    spec = llm.describe(model=model)
    return llm.plan(spec, "vllm", ctx=16384, weights_dtype="bnb-4bit", runtime_version=version, max_num_seqs=1,
                    vllm_entrypoint="unsloth", **knobs)["weights"] / GiB


def test_tower_quantized_on_load_when_the_skip_list_does_not_name_it():
    # unsloth/Qwen2.5-VL-3B-Instruct (bf16) quantized on load, llm_int8_skip_modules [] printed, LoRA 64 (Unsloth's
    # default): printed 2.5988 GiB. The tower in 16 bits gave 3.13 (+21 %); without the LoRA slots 2.26 (-13 %)
    assert _vl("unsloth/Qwen2.5-VL-3B-Instruct", quant_skip=[]) == pytest.approx(2.5988, rel=0.05)


def test_tower_kept_in_16_bits_when_the_skip_list_names_it():
    # unsloth/qwen2.5-vl-7b-instruct-unsloth-bnb-4bit, its list names 'visual': printed 6.794 GiB (V0 on a T4)
    skip = ["embed_tokens", "embedding", "lm_head", "multi_modal_projector", "merger", "modality_projection", "router",
            "visual", "model.visual.blocks.0.mlp"]
    assert _vl("unsloth/qwen2.5-vl-7b-instruct-unsloth-bnb-4bit", quant_skip=skip) == pytest.approx(6.794, rel=0.02)


def test_bnb_tower_bytes():
    proj = {"params": 1000, "linear": 800}
    assert VL.bnb_tower(proj, [], 4.0) == 800 * 4 // 8 + 200 * 2
    assert VL.bnb_tower(proj, ["model.visual"], 4.0) is None
    assert VL.bnb_tower(proj, ["visual"], 4.0) is None
    # vLLM is_layer_skipped_bnb: an entry inside the tower keeps that layer only, the tower is still quantized
    assert VL.bnb_tower(proj, ["visual.blocks.0.mlp"], 4.0) == 800 * 4 // 8 + 200 * 2
    assert VL.bnb_tower(proj, ["lm_head", "model.layers.0.mlp"], 4.0) == 800 * 4 // 8 + 200 * 2


@pytest.mark.parametrize("knobs", [{"max_lora_rank": -1}, {"max_lora_rank": 1024}, {"max_loras": 0},
                                   {"max_lora_rank": 12}, {"max_lora_rank": True},   # vLLM's MaxLoRARanks only
                                   {"quant_skip": "lm_head"}, {"quant_skip": [1, 2]}])
def test_bad_lora_and_skip_settings_are_refused(knobs):
    with pytest.raises(UserError):
        llm.plan(llm.describe(model="Qwen2.5-0.5B"), "vllm", ctx=4096, **knobs)


def test_lora_is_vllms_only():
    with pytest.raises(UserError, match="vLLM"):
        llm.plan(llm.describe(model="Qwen2.5-0.5B"), "llama.cpp", ctx=4096, max_lora_rank=8)


def test_max_loras_alone_turns_lora_on_at_vllms_default_rank():
    # vLLM LoRAConfig: max_lora_rank 16 unless given. Qwen3-4B: 57344 values per rank a layer (see above), 36 layers, bf16
    spec = llm.describe(model="Qwen3-4B")
    plain = llm.plan(spec, "vllm", ctx=8192, runtime_version="0.10.0")
    four = llm.plan(spec, "vllm", ctx=8192, runtime_version="0.10.0", max_loras=4)
    assert four["weights"] - plain["weights"] == 57344 * 16 * 4 * 36 * 2
    assert "--enable-lora --max-lora-rank 16 --max-loras 4" in four["command"]
