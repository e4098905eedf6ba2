"""Task kv50: with an EAGLE-3 or DFlash drafter vLLM's profile forward keeps the target's tapped hidden states
(runtimes/vllm_drafter.AUX_METHODS: gpu_model_runner sets use_aux_hidden_state_outputs, and models/interfaces.py
_maybe_add_hidden_state appends hidden_states + residual after each tapped layer, held until the forward returns;
vLLM 0.20.2 sdist). Expected values are worked here by hand from the taps, the hidden size, 16 bits and the batched
tokens, not taken from kv. Each test fails on the code before it (no aux term: the difference is 0)."""
import json

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import vllm_drafter
from gpu_garden.memory.units import GiB

from support.pack import REPO

DFLASH = {"method": "dflash", "model": "z-lab/Qwen3.6-27B-DFlash", "num_speculative_tokens": 5}
DRAFTERS = REPO / "benchmarks" / "data" / "drafters"


def _club3090_76(**knobs):
    # club-3090#76: Qwen3.6-27B int4 AutoRound at TP 2 on 3090s, 200,000 tokens, the dual-dflash-noviz compose (0.95,
    # one sequence, 8192 batched tokens, --language-model-only), nightly 0.20.2rc1
    return llm.plan(llm.describe(model="Qwen/Qwen3.6-27B"), "vllm", ctx=200000, weights_dtype="auto_round",
                    tensor_parallel_size=2, gpu_memory_utilization=0.95, max_num_seqs=1, max_num_batched_tokens=8192,
                    language_model_only=True, gpu_name="NVIDIA GeForce RTX 3090", prefix_caching=True,
                    runtime_version="0.20.2rc1.dev9+g01d4d1ad3", vram=23.56 * GiB, **knobs)


def _llama31_eagle3(model, **knobs):
    # manojarulmurugan's Colab runs: Llama-3.1-8B fp16 on an A100 40GB, 8192 tokens, 0.85, 8192 batched tokens, 0.24.0
    return llm.plan(llm.describe(model="meta-llama/Llama-3.1-8B-Instruct"), "vllm", ctx=8192, weights_dtype="fp16",
                    gpu_memory_utilization=0.85, gpu_name="NVIDIA A100-SXM4-40GB", max_num_batched_tokens=8192,
                    runtime_version="0.24.0", vram=39.49 * GiB,
                    speculative_config={"method": "eagle3", "model": str(model), "num_speculative_tokens": 5}, **knobs)


# 1. club-3090#76 (the DFlash drafter's fc reads 5 taps, target_layer_ids [1, 16, 31, 46, 61]): the profile forward of
# 8192 tokens holds 5 tensors of 8192 x 5120 values in bf16, unsplit at TP 2: 5 x 5120 x 2 x 8192 = 419,430,400 B
# (400 MiB) on each GPU, beside the forward's last layers (the vision tower is off: the forward is the peak). The pool
# shrinks by as much: kv's available KV memory 11.42 -> 11.03 GiB against the printed 10.36 (#95's same compose:
# 10.16). Since task kv66/kv67 vLLM's MRotaryEmbedding table (Qwen 3.6's rope has an mrope_section) is 262,144 x 4
# positions x 64 rotary values x 2 B = 134,217,728 B a rank instead of 33,554,432, 100,663,296 B more weights on each
# GPU, so both pools shrink by that: with the drafter 11,842,689,019 B (11.03 GiB, kv50's) - 100,663,296 =
# 11,742,025,723 B = 10.936 GiB, 10.94 (closer to the printed 10.36). Breaking it: separate_drafter not setting s["aux_hidden"], or activation() leaving aux_hidden out.
def test_dflash_taps_held_in_the_profile_forward_of_club3090_76():
    assert 5 * 5120 * 2 * 8192 == 419430400
    base = _club3090_76()
    with_d = _club3090_76(speculative_config=DFLASH)
    got = with_d["overhead"]["activation_profile"] - base["overhead"]["activation_profile"]
    assert got == 419430400
    assert base["kv_capacity_bytes"] - with_d["kv_capacity_bytes"] == 419430400 + (with_d["weights"] - base["weights"]) \
        + (with_d["overhead"]["cuda_graphs"] - base["overhead"]["cuda_graphs"])
    assert with_d["kv_capacity_bytes"] == 11_842_689_019 - 100_663_296 == 11_742_025_723
    assert round(with_d["kv_capacity_bytes"] / GiB, 2) == 10.94


# 2. EAGLE-3 on Llama-3.1-8B: three taps (vLLM's default aux layers 2, 16, 29 of 32) of 4096 values: 3 x 4096 x 2 x
# 8192 = 201,326,592 B more in the forward, whose plain term is 8192 x (3 x 14336 + 2 x 4096) x 2 x 1.08 (FORWARD_FACTOR)
# = 905,969,664 (0.844 -> 1.031 GiB; the run printed 1.64 GiB of activation peak on
# 0.23.1rc1, the drafter's own forward beside the taps not modelled). EAGLE-1 drafts from the last hidden state: no
# taps (its fc reads token embedding + hidden state), so its profile is the target's. Breaking it: AUX_METHODS holding
# "eagle", or the eagle3 row not read.
def test_eagle3_taps_and_eagle1_none():
    assert 3 * 4096 * 2 * 8192 == 201326592
    plain = 8192 * (3 * 14336 + 2 * 4096) * 2 * 108 // 100
    assert plain == 905969664
    e3 = _llama31_eagle3(DRAFTERS / "EAGLE3-LLaMA3.1-Instruct-8B")
    assert e3["overhead"]["activation_profile"] == plain + 201326592
    g1 = vllm_drafter.read_drafter("eagle", str(DRAFTERS / "EAGLE-LLaMA3-Instruct-8B"))
    assert g1["aux"] is False and g1["fc_in"] == 2 * 4096


# 3. An EAGLE-3 config that turns the taps off (eagle_config.use_aux_hidden_state false, which llm_base_proposer's
# _get_eagle3_use_aux_hidden_state_from_config reads) adds nothing; DFlash keeps them whatever its config says (the
# runner sets use_aux_hidden_state_outputs = True for it). Breaking it: uses_aux ignoring eagle_config.
def test_eagle3_config_without_taps(tmp_path):
    cfg = json.loads((DRAFTERS / "EAGLE3-LLaMA3.1-Instruct-8B" / "config.json").read_text())
    cfg["eagle_config"] = {"use_aux_hidden_state": False}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    off = _llama31_eagle3(tmp_path)
    assert off["overhead"]["activation_profile"] == 8192 * (3 * 14336 + 2 * 4096) * 2 * 108 // 100 == 905969664
    assert vllm_drafter.uses_aux("dflash", {"eagle_config": {"use_aux_hidden_state": False}}) is True
