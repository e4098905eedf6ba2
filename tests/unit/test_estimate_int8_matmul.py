"""bitsandbytes 8-bit (LLM.int8, load_in_8bit) in the sampling phase: each linear holds an int8 copy of its input and
an int32 accumulator of its output (then an fp16 result) while it runs (phases.INT8_*, read from bitsandbytes'
MatMul8bitLt.forward and int8_scaled_mm). The expected figures below are worked out by hand from that code path for
HunyuanVideo's single-stream block (hidden 3072, MLP 12288: linear1 3072 -> 3 * 3072 + 12288 = 21504 outputs)."""
import pytest

from gpu_garden.memory.estimate import formula as E, phases, sample_acts
from support.hunyuan_table import HV_ARCH, hv_dit

# per token: input + modulated input in bf16 (2 x 3072 x 2), int8 input (3072), int32 accumulator and fp16 result of
# the 21504 outputs (21504 x (4 + 2))
PER_TOKEN = 2 * 3072 * 2 + 3072 + 21504 * 6



def _sample(**pol):
    comps = hv_dit()
    return E.estimate(comps, 768, 512, 121, 1, cfg=False, policy={"_no_knobs": True, "arch": HV_ARCH, **pol})


def check():
    lat = phases.latent_geometry("hunyuan-video", 768, 512, 121, 1)
    expected = lat["tokens"] * PER_TOKEN + phases.sampler_state_bytes(lat, 2, 1, 1)
    got = phases.int8_matmul_peak("hunyuan-video", HV_ARCH, lat, 1, 2, 1)
    assert got == expected, (got, expected)
    e = _sample(weights_dtype="bnb-int8")
    assert e["breakdown"]["sample"]["activations"] == max(expected, _sample(weights_dtype="fp8", int8_matmul=False)["_ctx"]["act"]
                                                        - _largest_cast_of(_sample(weights_dtype="fp8")))


def _largest_cast_of(e):
    from gpu_garden.memory.estimate import weights as W
    return W.largest_cast(e["_ctx"]["components"][0]["table"])


def test_int8_peak_follows_bitsandbytes_code_path():
    check()


def test_bnb_int8_weights_dtype_turns_it_on_and_stores_one_byte():
    e8, f8 = _sample(weights_dtype="bnb-int8"), _sample(weights_dtype="fp8")
    # one byte a weight as fp8, plus one fp32 absmax per output row of each Linear (SCB), and the Conv3d patch embedding
    # left in bf16 (bitsandbytes swaps nn.Linear only; fp8 requantizes it)
    scb = 4 * (20 * 12288 + 40 * 21504)
    assert e8["_ctx"]["components"][0]["resident"] == f8["_ctx"]["components"][0]["resident"] + scb + 3072 * 16 * 2 * 2
    assert e8["breakdown"]["sample"]["activations"] > 1.4 * f8["breakdown"]["sample"]["activations"]
    assert any("LLM.int8" in a for a in e8["assumptions"]) and not any("LLM.int8" in a for a in f8["assumptions"])


def test_unets_are_left_alone():
    lat = phases.latent_geometry("sdxl", 1024, 1024)
    assert phases.int8_matmul_peak("sdxl", {"block": "unet", "hidden": 320}, lat, 2, 2) == 0


MUTATIONS = [
    ("fp16 accumulator instead of int32", lambda m: m.setattr(phases, "INT8_ACC", 2)),
    ("no int8 input copy", lambda m: m.setattr(phases, "INT8_IN", 0)),
    ("widest linear read as the MLP only", lambda m: m.setattr(phases, "int8_widest_linear", lambda a: a["ffn"])),
    ("int8 peak never taken", lambda m: m.setattr(sample_acts, "int8_matmul_peak", lambda *a, **k: 0)),
]


@pytest.mark.parametrize("name,mutate", MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_a_deliberate_error_breaks_the_check(monkeypatch, name, mutate):
    mutate(monkeypatch)
    with pytest.raises(AssertionError):
        check()
