"""kv-accuracy round 66 (task ellm44, batch 72 after first sight)."""
import json

import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.names import MODELS_DIR

GiB, MiB = 1 << 30, 1 << 20


# --- vLLM: an AutoRound build's MTP module at the format's bits -----------------------------------------------------
# Qwen3.6-27B's MTP module (mtp_num_hidden_layers 1): one full-attention decoder layer, fc (2d -> d) and three norms.
# Worked by hand (hidden 5120, 24 heads x 256 with the output gate, 4 KV heads, ffn 17408):
#   layer matmuls: q 5120 x 12288 = 62,914,560, k and v 2 x 5120 x 1024 = 10,485,760, o 6144 x 5120 = 31,457,280,
#     mlp 3 x 5120 x 17408 = 267,386,880: 372,244,480
#   layer norms 2 x 5120 + 2 x 256 = 10,752; fc 2 x 5120 x 5120 = 52,428,800; three norms 15,360
#   module 372,244,480 + 10,752 + 52,428,800 + 15,360 = 424,699,392 parameters; all 16-bit: 849,398,784 bytes (810.05 MiB)
# Lorbus/Qwen3.6-27B-int4-AutoRound (block_name_to_quantize: the language model's layers and mtp; mtp.fc kept bf16 by
# extra_config): the layer's matmuls at AutoRound's 4 + (16 + 4) / 128 = 4.15625 bits, the rest 16-bit:
#   372,244,480 x 4.15625 = 1,547,141,120 bits = 193,392,640 bytes
#   + (424,699,392 - 372,244,480) x 2 = 104,909,824  ->  298,302,464 bytes = 284.48 MiB
# adrienbrault/qwen3.6-27b-rtx5090 README at 082f441 reads the MTP drafter as 0.28 GiB (298,302,464 B = 0.2778 GiB) and
# the weights as 17.73 GiB; kv had 18.201 (+2.7 %), now 18.201 - (849,398,784 - 298,302,464) / GiB = 17.688.
MTP_16 = 849_398_784
MTP_AR = 298_302_464


def _weights(model, dtype, mtp=None, tp=1, config=None):
    spec = llm.describe(config=config) if config else llm.describe(model=model)
    knobs = {"mtp_tokens": mtp} if mtp else {}
    return llm.plan(spec, "vllm", ctx=8192, weights_dtype=dtype, vram=32 * GiB, tensor_parallel_size=tp,
                    **knobs)


def test_mtp_module_params_split_into_matmuls_and_the_rest():
    s = llm.describe(model="Qwen/Qwen3.6-27B")
    assert (s.mtp_layers, s.mtp_params, s.mtp_linear) == (1, 424_699_392, 372_244_480)


def test_lorbus_build_mtp_layers_at_autoround_bits():
    base = _weights("Qwen/Qwen3.6-27B", "auto_round")["weights"]
    with_mtp = _weights("Qwen/Qwen3.6-27B", "auto_round", mtp=4)
    assert with_mtp["weights"] - base == MTP_AR
    assert round(MTP_AR / MiB, 2) == 284.48 and round(MTP_AR / GiB, 2) == 0.28
    assert any("Lorbus/Qwen3.6-27B-int4-AutoRound" in n and "MTP drafter" in n for n in with_mtp["notes"])
    # the Lorbus repo id itself: the same module
    lorbus = _weights("Lorbus/Qwen3.6-27B-int4-AutoRound", None, mtp=4)
    assert lorbus["weights"] - _weights("Lorbus/Qwen3.6-27B-int4-AutoRound", None)["weights"] == MTP_AR


def test_lorbus_mtp_split_over_tensor_parallel():
    # the module's bytes // tp on each GPU: 298,302,464 // 2 = 149,151,232
    two = _weights("Qwen/Qwen3.6-27B", "auto_round", mtp=3, tp=2)["weights"]
    assert two - _weights("Qwen/Qwen3.6-27B", "auto_round", tp=2)["weights"] == MTP_AR // 2


@pytest.mark.parametrize("model, dtype", [
    ("Qwen/Qwen3.6-27B", "nvfp4"),   # ModelOpt / compressed-tensors NVFP4 exports keep the module bf16 (natfii: 0.8 GiB)
    ("Qwen/Qwen3.8-27B", "auto_round"),  # syv-ai's Qwen3.8-27B-W4A16-AutoRound ships it bf16 (850 MB): no build entry
    ("Qwen/Qwen3.6-27B", "gptq"),
    ("Qwen/Qwen3.6-27B", None),
])
def test_other_builds_keep_the_mtp_module_16_bit(model, dtype):
    assert _weights(model, dtype, mtp=2)["weights"] - _weights(model, dtype)["weights"] == MTP_16


def _config(tmp_path, blocks):
    cfg = json.loads((MODELS_DIR / "Qwen3.6-27B.json").read_text(encoding="utf-8"))
    cfg.pop("_source", None), cfg.pop("_notes", None)
    cfg["quantization_config"] = {"quant_method": "auto-round", "bits": 4, "group_size": 128,
                                  "block_name_to_quantize": blocks}
    p = tmp_path / "config.json"
    p.write_text(json.dumps(cfg))
    return str(p)


def test_config_block_names_decide(tmp_path):
    # vLLM's INC config_parser: a layer is quantized when its name starts with an entry of block_name_to_quantize
    # ('mtp' takes mtp.layers.0.*); groups of 128 as the blocks: the same 298,302,464 bytes as above. A list naming the
    # language model's layers alone leaves the module 16-bit (849,398,784).
    on = _config(tmp_path, "model.language_model.layers,mtp")
    s = llm.describe(config=on)
    assert s.quant == "auto_round" and s.mtp_quant is True
    r = _weights(None, None, mtp=1, config=on)["weights"] - _weights(None, None, config=on)["weights"]
    assert r == MTP_AR
    off = _config(tmp_path, ["model.language_model.layers"])
    assert llm.describe(config=off).mtp_quant is False
    assert _weights(None, None, mtp=1, config=off)["weights"] - _weights(None, None, config=off)["weights"] == MTP_16
