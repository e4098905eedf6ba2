"""--weights-dtype bnb-int8 / bnb-nf4: what bitsandbytes holds (headers.BNB_BYTES, weights.bnb_requant). It swaps the
nn.Linear modules only; LLM.int8 keeps the int8 weight plus one fp32 absmax per output row, 4-bit nf4 two weights a
byte plus one fp32 absmax per 64-weight block, and a 4-bit Linear dequantizes its weight to 16 bits as it runs. The
expected bytes are written out by hand for a small HunyuanVideo-keyed table."""
import pytest

from gpu_garden.memory.estimate import families, formula as E, headers, weights as W

OUT, IN = 12288, 3072
LINEAR = OUT * IN
CONV = 3072 * 16 * 1 * 2 * 2  # img_in.proj, a Conv3d: bitsandbytes leaves it alone
EMBED = 1000 * 3072  # an nn.Embedding table
SMALL = 3072 * 2 + 3072 * 2  # a norm weight and the Linear's bias, bf16


def _table():
    t = {"txt_in.individual_token_refiner.blocks.0.norm1.weight": ("BF16", (3072,)),
         "img_in.proj.weight": ("BF16", (3072, 16, 1, 2, 2)), "y_embedder.embedding_table.weight": ("BF16", (1000, 3072)),
         "double_blocks.0.img_mlp.fc1.bias": ("BF16", (OUT,))}
    for i in range(2):
        t[f"double_blocks.{i}.img_mlp.fc1.weight"] = ("BF16", (OUT, IN))
    return t


def _est(wdt):
    comps = [c for c in families.split_components(_table(), "hunyuan-video") if c["role"] == "diffusion_model"]
    return E.estimate(comps, 512, 512, 1, 1, cfg=False, policy={"_no_knobs": True, "weights_dtype": wdt})


def _dm_bytes(e):
    return e["_ctx"]["components"][0]["resident"]


def check():
    kept = 2 * (CONV + EMBED + 3072 + OUT)  # as stored: the conv kernel, the embedding table, the norm and the bias
    assert _dm_bytes(_est("bnb-int8")) == kept + 2 * (LINEAR + 4 * OUT)
    assert _dm_bytes(_est("bnb-nf4")) == kept + 2 * (LINEAR // 2 + 4 * (LINEAR // 64))
    # a 4-bit Linear runs on a 16-bit copy of its weight (bitsandbytes MatMul4Bit: dequantize_4bit(...).to(A.dtype))
    assert (_est("bnb-nf4")["breakdown"]["sample"]["activations"] - _est("bf16")["breakdown"]["sample"]["activations"]
            == 2 * LINEAR)
    assert any("Linear layers only" in a for a in _est("bnb-nf4")["assumptions"])


def test_bitsandbytes_storage_is_written_out():
    check()


def test_the_cli_offers_nf4():
    import argparse
    from gpu_garden.memory.estimate import report
    p = argparse.ArgumentParser()
    report.add_cli_arguments(p)
    args = p.parse_args(["x.safetensors", "--width", "512", "--height", "512", "--weights-dtype", "bnb-nf4"])
    assert report.policy_from_args(args)["weights_dtype"] == "bnb-nf4"
    assert W.weights_dtype("bnb-nf4") == "BNB_4BIT" and W.weights_dtype("bnb-int8") == "BNB_INT8"


MUTATIONS = [
    ("SCB per input column", lambda m: m.setitem(headers.BNB_BYTES, "BNB_INT8", lambda n, s: n + 4 * s[1])),
    ("absmax per 32 weights", lambda m: m.setitem(headers.BNB_BYTES, "BNB_4BIT", lambda n, s: -(-n // 2) + 4 * -(-n // 32))),
    ("no absmax", lambda m: m.setitem(headers.BNB_BYTES, "BNB_4BIT", lambda n, s: -(-n // 2))),
    ("conv kernels swapped too", lambda m: m.setattr(W, "bnb_requant", lambda t, d: W.requant(t, d, min_elems=1))),
    ("embedding tables swapped too", lambda m: m.setattr(W, "EMBEDDING_KEYS", ())),
]


@pytest.mark.parametrize("name,mutate", MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_a_deliberate_error_breaks_the_check(monkeypatch, name, mutate):
    mutate(monkeypatch)
    with pytest.raises(AssertionError):
        check()
