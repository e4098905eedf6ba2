"""Task kv52: vLLM's Marlin FP8 group scales (runtimes/vllm_loader.marlin_fp8_block_scales).

On a card without FP8 arithmetic (Turing, Ampere) vLLM runs FP8 weights through Marlin, and a block-scaled checkpoint's
128 x 128 block scales become one 16-bit scale per 128 inputs per output row (marlin_utils_fp8.py
prepare_fp8_layer_for_marlin, vLLM 0.20.2): K x N / 128 values of 2 bytes, 1/64 of the FP8 weights.

A hand-made Llama-shaped config (2 layers, hidden 1024, 8 heads and 2 KV heads of 128, MLP 4096), by hand:
  one layer's matmuls: q 1024 x 1024 + k 1024 x 256 + v 1024 x 256 + o 1024 x 1024 + gate/up 2 x 1024 x 4096
                       + down 4096 x 1024 = 1,048,576 + 262,144 + 262,144 + 1,048,576 + 8,388,608 + 4,194,304
                       = 15,204,352; two layers 30,408,704 FP8 bytes
  group scales: 30,408,704 / 128 x 2 B = 475,136 B on one GPU, 237,568 B on each of two
"""
import json

import pytest

LAYER = 1024 * 1024 + 1024 * 256 + 1024 * 256 + 1024 * 1024 + 2 * 1024 * 4096 + 4096 * 1024
SCALES_TP1 = 475_136
SCALES_TP2 = 237_568
A100 = "NVIDIA A100-SXM4-80GB"
V020 = (0, 20, 0)
CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 1024, "intermediate_size": 4096,
          "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 128,
          "vocab_size": 32000, "max_position_embeddings": 32768, "torch_dtype": "bfloat16",
          "tie_word_embeddings": False,
          "quantization_config": {"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}}
MARLIN_ROW = "vllm-kaitaku-minimax-m27-fp8-tp4-4xa100sxm4-180k-u092-fp8kv-seqs128-marlin"


@pytest.fixture
def spec(tmp_path):
    from gpu_garden.memory.llm import kv as K
    path = tmp_path / "config.json"
    path.write_text(json.dumps(CONFIG))
    return K.describe(config=str(path))


def _loader():
    from gpu_garden.memory.llm.runtimes import vllm_loader as VL
    return VL


def test_hand_figures():
    assert LAYER == 15_204_352
    assert 2 * LAYER // 128 * 2 == SCALES_TP1 and SCALES_TP1 // 2 == SCALES_TP2


def test_scales_by_hand(spec):
    VL = _loader()
    assert VL.marlin_fp8_block_scales(spec, "fp8", 1, A100, V020) == SCALES_TP1
    assert VL.marlin_fp8_block_scales(spec, "fp8", 2, A100, V020) == SCALES_TP2
    for card in ("NVIDIA GeForce RTX 3090", "NVIDIA RTX A6000", "NVIDIA A10G", "NVIDIA GeForce RTX 2080 Ti"):
        assert VL.marlin_fp8_block_scales(spec, "fp8", 1, card, None) == SCALES_TP1, card


def test_scales_gates(spec):
    from dataclasses import replace
    VL = _loader()
    # cards with FP8 arithmetic (Ada, Hopper, Blackwell) run the FP8 kernels; Volta has no Marlin FP8
    for card in ("NVIDIA H100 80GB HBM3", "NVIDIA L40S", "NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 5090",
                 "NVIDIA B200", "NVIDIA RTX 6000 Ada Generation", "Tesla V100-SXM2-32GB"):
        assert VL.marlin_fp8_block_scales(spec, "fp8", 1, card, V020) == 0, card
    assert VL.marlin_fp8_block_scales(spec, "bf16", 1, A100, V020) == 0            # FP8 weights only
    assert VL.marlin_fp8_block_scales(spec, "fp8", 1, A100, V020, rocm=True) == 0  # not ROCm
    assert VL.marlin_fp8_block_scales(spec, "fp8", 1, A100, (0, 19, 1)) == 0       # before the release read
    # channel-wise (-FP8-dynamic) and compressed-tensors checkpoints keep a value a row
    assert VL.marlin_fp8_block_scales(replace(spec, fp8_channel=True), "fp8", 1, A100, V020) == 0
    assert VL.marlin_fp8_block_scales(replace(spec, fp8_ct=True), "fp8", 1, A100, V020) == 0
    # vLLM's online --quantization fp8 of a 16-bit checkpoint: no block scales
    assert VL.marlin_fp8_block_scales(replace(spec, quant=None), "fp8", 1, A100, V020) == 0


def test_scales_in_the_plan(spec):
    from gpu_garden.memory.llm import kv as K
    kw = dict(runtime="vllm", ctx=8192, vram=79.25 * 2**30, weights_dtype="fp8", runtime_version="0.20.0")
    for tp, extra in ((1, SCALES_TP1), (2, SCALES_TP2)):
        ampere = K.plan(spec, tensor_parallel_size=tp, gpu_name=A100, **kw)
        ada = K.plan(spec, tensor_parallel_size=tp, gpu_name="NVIDIA L40S", **kw)
        assert ampere["weights"] - ada["weights"] == extra
        assert any("Marlin" in n for n in ampere["notes"]) and not any("Marlin FP8" in n for n in ada["notes"])


def test_marlin_row_weights():
    # batch 117's 4x A100 MiniMax-M2.7 start printed 54.58 GiB a GPU: within 0.5 % now (1.86 % under without the scales)
    from support.pack import load_benchmark
    b = load_benchmark("bench_llm")
    row = next(r for r in json.loads(b.DATA.read_text())["rows"] if r["id"] == MARLIN_ROW)
    ours, printed = b.score(row)["weights_gib"]
    assert printed == 54.58 and abs(ours - printed) / printed < 0.005


def test_a_per_tensor_fp8_checkpoint_adds_no_group_scales(tmp_path):
    # (rev51) vLLM's Fp8Config without weight_block_size (per-tensor scales, e.g. {"quant_method": "fp8",
    # "activation_scheme": "static"}) and ModelOpt's FP8 keep one scale a tensor; Marlin makes it a value a row
    # (negligible), not K x N / 128 values: the block-scaled checkpoint's 475,136 B must not be counted for them
    from gpu_garden.memory.llm import kv as K
    VL = _loader()
    for q in ({"quant_method": "fp8", "activation_scheme": "static"}, {"quant_method": "modelopt", "quant_algo": "FP8"}):
        path = tmp_path / "config.json"
        path.write_text(json.dumps(dict(CONFIG, quantization_config=q)))
        s = K.describe(config=str(path))
        assert s.quant == "fp8"
        assert VL.marlin_fp8_block_scales(s, "fp8", 1, A100, V020) == 0, q


@pytest.mark.parametrize("card, cc", [
    # (fixT) Ampere names as nvidia-smi prints them, with NVIDIA's compute capability (CUDA GPU table): the former name
    # pattern missed the A500 (its 'rtx a' took four digits), the A100X (a100 then a word character) and the laptop RTX 2050
    ("NVIDIA RTX A500 Laptop GPU", (8, 6)),
    ("NVIDIA A100X", (8, 0)),
    ("NVIDIA A800-SXM4-80GB", (8, 0)),
    ("NVIDIA RTX A2000 12GB", (8, 6)),
    ("NVIDIA GeForce RTX 2050", (8, 6)),
    ("NVIDIA Jetson AGX Orin", (8, 7)),
])
def test_ampere_cards_by_compute_capability(spec, card, cc):
    from gpu_garden.memory.llm import cards
    assert cards.compute_capability(card) == cc
    assert _loader().marlin_fp8_block_scales(spec, "fp8", 1, card, V020) == SCALES_TP1


def test_a_card_without_a_compute_capability_is_not_taken_for_marlin(spec):
    # the table has no row above 8.7: an Ada card, and a name it does not know, read as no Marlin card
    from gpu_garden.memory.llm import cards
    for card in ("NVIDIA RTX 4000 SFF Ada Generation", "Some Future GPU"):
        assert cards.compute_capability(card) is None
        assert _loader().marlin_fp8_block_scales(spec, "fp8", 1, card, V020) == 0, card


def test_the_scales_are_block_bytes_in_the_plan(spec):
    # (fixT) the group scales sit with the decoder's matmuls (weights_by_role "blocks"), not the embedding or the head
    from gpu_garden.memory.llm import kv as K
    kw = dict(runtime="vllm", ctx=8192, vram=79.25 * 2**30, weights_dtype="fp8", runtime_version="0.20.0")
    ampere = K.plan(spec, gpu_name=A100, **kw)["weights_by_role"]
    ada = K.plan(spec, gpu_name="NVIDIA L40S", **kw)["weights_by_role"]
    assert (ampere["blocks"] - ada["blocks"], ampere["embedding"], ampere["output"]) == (SCALES_TP1, ada["embedding"],
                                                                                          ada["output"])
