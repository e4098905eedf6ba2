"""ux50's kv findings (a newcomer's review): SGLang's context limit (B2), a card name under Ollama (S6), what "fits"
hides (S7), and the weights a --config folder's safetensors give (S8, D)."""
import json
import re

import pytest

from gpu_garden.memory import cli
from support.cli_run import unwrap
from support.safetensors_files import sparse_safetensors

QWEN7 = ["kv", "--model", "Qwen/Qwen2.5-7B-Instruct", "--runtime", "sglang", "--vram", "24"]
LIMIT = 32768  # Qwen2.5-7B-Instruct's config.json: max_position_embeddings 32768, no rope_scaling


def _text(argv, capsys):
    rc = cli.main(argv)
    return rc, unwrap(capsys.readouterr().out)  # term.py's wrapping undone: these pin whole lines


def _json(argv, capsys):
    rc = cli.main(argv + ["--json"])
    return rc, json.loads(capsys.readouterr().out)


# B2: SGLang's ModelConfig._derive_context_length raises for a --context-length above the derived length unless
# SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 (model_config.py at sgl-project/sglang 001adf56)
def test_sglang_context_above_the_model_is_refused(capsys):
    rc, out = _text(QWEN7 + ["--ctx", "131072"], capsys)
    assert rc == 1
    verdict = next(line for line in out.splitlines() if line.startswith("on 24.00 GiB"))
    assert "SGLang refuses --context-length 131,072" in verdict and "32,768" in verdict
    assert "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 python -m sglang.launch_server" in out
    rc, r = _json(QWEN7 + ["--ctx", "131072"], capsys)
    assert rc == 1 and r["fits"] is False and r["fits_as_requested"] is False
    assert "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN" in r["refused"]


def test_sglang_refusal_without_vram_exits_1(capsys):
    rc, out = _text(["kv", "--model", "Qwen/Qwen2.5-7B-Instruct", "--runtime", "sglang", "--ctx", "65536"], capsys)
    assert rc == 1 and "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1" in out


def test_sglang_context_at_the_limit_starts(capsys):
    rc, r = _json(QWEN7 + ["--ctx", str(LIMIT)], capsys)
    assert rc == 0 and r["fits"] is True and not r.get("refused")
    assert not r["command"].startswith("SGLANG_")


def test_sglang_largest_context_is_not_the_pool_above_the_limit(capsys):
    # the pool (max_total_num_tokens) holds more than 32,768 tokens on 24 GiB; no request may be longer than the limit
    rc, out = _text(QWEN7 + ["--ctx", str(LIMIT)], capsys)
    line = next(line for line in out.splitlines() if line.startswith("largest context"))
    stated = int(re.search(r": f16 ([\d,]+)$", line).group(1).replace(",", ""))
    assert stated == LIMIT
    rc, r = _json(QWEN7 + ["--ctx", str(LIMIT)], capsys)
    assert r["sglang_max_total_tokens"] > LIMIT  # the case the line is about
    assert r["max_ctx"] == LIMIT and r["max_ctx_by_kv_dtype"]["f16"] == LIMIT


def test_sglang_given_version_keeps_the_memory_verdict_and_says_the_limit(capsys):
    # a release's refusal is said on the verdict line and in a note, the memory verdict kept (batch 17's 0.4.3.post4 run
    # started above its limit: kv cannot see the variable). fixR: the check came with sglang#1778 (merged after
    # 2024-10-24), so from 0.4.0 the line says it refuses unless the variable is set; before, that it may
    rc, out = _text(QWEN7 + ["--ctx", "131072", "--runtime-version", "0.5.6"], capsys)
    assert rc == 0
    line = next(line for line in out.splitlines() if line.startswith("on 24.00 GiB"))
    assert "SGLang refuses it unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1" in line, line
    assert "0.5.6 has the check (sgl-project/sglang#1778" in out and "was not read" not in out
    rc, out = _text(QWEN7 + ["--ctx", "131072", "--runtime-version", "0.3.2"], capsys)
    assert rc == 0
    assert "SGLang may refuse it" in next(line for line in out.splitlines() if line.startswith("on 24.00 GiB"))
    assert "whether 0.3.2 has that check was not read" in out


# S6: --gpu-name under Ollama gives the verdict from the card's total (cards.VISIBLE_GIB: an RTX 4090 is 23.55 GiB as
# vLLM's logs print it), says that Ollama fits on free memory; a bare number names the GeForce card; a name of cards of
# different memory lists them
OLLAMA7 = ["kv", "--model", "qwen2.5:7b"]


def test_ollama_gpu_name_gives_a_verdict_on_an_idle_card(capsys):
    rc, r = _json(OLLAMA7 + ["--gpu-name", "RTX 4090"], capsys)
    assert r["vram"] == int(23.55 * (1 << 30)) and r["fits"] is True and rc == 0
    assert not any("sizes only" in n for n in r["notes"])
    assert any("Ollama schedules on the free memory" in n and "idle card" in n for n in r["notes"])


def test_llama_cpp_gpu_name_gives_a_verdict_on_an_idle_card(capsys):
    # fixR: llama.cpp took no total from the name ("no --vram given: sizes only, no verdict"); the same 23.55 GiB
    # (cards.VISIBLE_GIB's RTX 4090, vLLM's total_gpu_memory) and the same idle-card note as Ollama's
    rc, r = _json(["kv", "--model", "Qwen/Qwen3-8B", "--runtime", "llama.cpp", "--gpu-name", "RTX 4090"], capsys)
    assert r["vram"] == int(23.55 * (1 << 30)) and r["fits"] is True and rc == 0
    assert not any("sizes only" in n for n in r["notes"])
    assert any("llama.cpp allocates in the free memory, so the verdict assumes an idle card" in n for n in r["notes"])


def test_common_spellings_of_a_known_card(capsys):
    for name in ("4090", "RTX4090", "NVIDIA GeForce RTX 4090", "RTX 4090 24GB", "3090"):
        _, r = _json(OLLAMA7 + ["--gpu-name", name], capsys)
        assert r["vram"] is not None, name
        assert not any("does not know this card" in n for n in r["notes"]), name


def test_a_card_without_a_figure_stays_unknown(capsys):
    _, r = _json(OLLAMA7 + ["--gpu-name", "M2 Max"], capsys)
    assert r["vram"] is None and any("kv does not know this card" in n for n in r["notes"])


def test_an_ambiguous_card_lists_the_candidates(capsys):
    rc = cli.main(OLLAMA7 + ["--gpu-name", "A100"])
    err = capsys.readouterr().err
    assert rc == 2 and "'A100 40GB' (39.39 GiB)" in err and "'A100 80GB' (79.25 GiB)" in err
    rc, r = _json(OLLAMA7 + ["--gpu-name", "NVIDIA A100-SXM4-40GB"], capsys)
    assert r["vram"] == int(39.39 * (1 << 30))


# S7: a "fits" verdict says what it gives up on its own line
def _verdict(out):
    return next(line for line in out.splitlines() if line.startswith("on "))


def test_a_partial_offload_is_in_the_verdict_line(capsys):
    rc, out = _text(["kv", "--model", "llama3.1:70b", "--vram", "8"], capsys)
    _, r = _json(["kv", "--model", "llama3.1:70b", "--vram", "8"], capsys)
    on_gpu, host = r["gpu_layers_used"], r["host_weights"] / (1 << 30)
    assert rc == 0 and 0 < on_gpu < 80  # the case: a 70B's 80 layers do not fit 8 GiB
    assert 33 < host < 35  # ux50's reading: 68 of 80 layers of a 39.6 GiB Q4_K_M file, ~34 GiB
    line = _verdict(out)
    assert f"only {on_gpu} of 80 layers on the GPU" in line
    assert f"~{host:.2f} GiB of weights stay in system RAM" in line
    assert "not checked" in line  # kv has no host-RAM input


def test_all_layers_on_the_gpu_say_nothing_more(capsys):
    _, out = _text(["kv", "--model", "llama3.1:8b", "--vram", "24"], capsys)
    assert _verdict(out) == "on 24.00 GiB: fits"


def test_vllm_fewer_requests_than_parallel_is_in_the_verdict_line(capsys):
    argv = ["kv", "--model", "neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8-dynamic", "--vram", "24", "--parallel", "8",
            "--ctx", "16384"]
    rc, out = _text(argv, capsys)
    _, r = _json(argv, capsys)
    assert r["concurrency"] < 8  # the case: vLLM prints a concurrency below 8x
    line = _verdict(out)
    assert f"holds only {r['concurrency']:.2f} of the 8 requests" in line
    assert rc == 1  # --parallel not held as asked: kv --help's exit 1 (fixR; it exited 0)
    # an fp8 cache halves a token's bytes: the same pool holds twice the tokens, so more than 8 requests
    assert "--kv-cache-dtype fp8 holds" in line and r["parallel_fix"]["concurrency"] >= 8
    assert r["parallel_fix"]["concurrency"] == pytest.approx(2 * r["concurrency"], rel=0.01)


# S8: the safetensors beside a --config count as its weights only where their parameters are the config's; a broken
# stray file is skipped. D: a GGUF given to --config points to --gguf
from test_llm_kvpolish import QWEN_BYTES, QWEN_TENSORS, _qwen05_config, _safetensors  # noqa: E402


def _clip_l_tensors():
    """openai/clip-vit-large-patch14's text encoder as ComfyUI's clip_l.safetensors holds it: 12 layers of width 768,
    MLP 3072, a 49408-row token table (~123 M parameters)"""
    t = {"text_model.embeddings.token_embedding.weight": (49408, 768),
         "text_model.embeddings.position_embedding.weight": (77, 768)}
    for i in range(12):
        a = f"text_model.encoder.layers.{i}."
        for p in ("q_proj", "k_proj", "v_proj", "out_proj"):
            t[a + f"self_attn.{p}.weight"], t[a + f"self_attn.{p}.bias"] = (768, 768), (768,)
        t.update({a + "mlp.fc1.weight": (3072, 768), a + "mlp.fc2.weight": (768, 3072)})
    return {k: ("F16", v) for k, v in t.items()}


def test_a_text_encoder_named_model_safetensors_is_not_the_weights(tmp_path):
    from gpu_garden.memory.llm import kv as K
    _qwen05_config(tmp_path)
    _safetensors(tmp_path / "model.safetensors", _clip_l_tensors())
    s = K.describe(config=str(tmp_path / "config.json"))
    assert s.weights_bytes is None and not K.weights(s)[1].startswith("exact")
    assert any("model.safetensors (0.12 B parameters, not the config's 0.49 B)" in n and "not counted" in n
               for n in s.notes)


def test_the_models_own_file_is_still_exact(tmp_path):
    from gpu_garden.memory.llm import kv as K
    _qwen05_config(tmp_path)
    _safetensors(tmp_path / "model.safetensors", QWEN_TENSORS)
    s = K.describe(config=str(tmp_path / "config.json"))
    assert s.weights_bytes == QWEN_BYTES and K.weights(s)[1] == "exact, model.safetensors"


def test_the_parameter_check_breaks_on_a_2x_error():
    from gpu_garden.memory.llm.files import _params_mismatch
    n = 494032768
    assert _params_mismatch({"w": ("BF16", (n // 2,))}, n, {}) is not None
    assert _params_mismatch({"w": ("BF16", (2 * n,))}, n, {}) is not None
    assert _params_mismatch({"w": ("BF16", (int(n * 0.9),))}, n, {}) is None


def test_a_gptq_checkpoint_counts_its_packed_weights(tmp_path):
    # GPTQ int4 packs 8 weights into each I32 of qweight (in / 8, out): without that the file holds ~0.19 B elements
    from gpu_garden.memory.llm import kv as K
    _qwen05_config(tmp_path)
    cfg = json.loads((tmp_path / "config.json").read_text())
    cfg["quantization_config"] = {"quant_method": "gptq", "bits": 4, "group_size": 128}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    packed = {}
    for name, (dt, shape) in QWEN_TENSORS.items():
        if ".layers." in name and name.endswith("proj.weight"):
            out_f, in_f = shape
            base = name[:-len("weight")]
            packed[base + "qweight"] = ("I32", (in_f // 8, out_f))
            packed[base + "scales"] = ("F16", (in_f // 128, out_f))
        else:
            packed[name] = (dt, shape)
    _sparse(tmp_path / "model.safetensors", packed)
    s = K.describe(config=str(tmp_path / "config.json"))
    assert s.weights_source == "model.safetensors", s.notes


def _sparse(path, tensors):
    """A sparse .safetensors file whose I32 tensors take 4 bytes an element (test_llm_kvpolish's writer takes 2)."""
    sparse_safetensors(path, tensors, {"I32": 4})


def test_a_broken_stray_file_does_not_fail_the_command(tmp_path, capsys):
    _qwen05_config(tmp_path)
    _safetensors(tmp_path / "model.safetensors", QWEN_TENSORS)
    (tmp_path / "bad.safetensors").write_bytes(b"\x01\x02\x03")
    rc, r = _json(["kv", "--config", str(tmp_path / "config.json"), "--vram", "24"], capsys)
    assert rc == 0 and r["weights_how"].startswith("exact, model.safetensors")
    assert any("bad.safetensors (unreadable" in n and "not counted" in n for n in r["notes"])


def test_a_gguf_given_to_config_points_to_gguf(tmp_path, capsys):
    for name in ("model.gguf", "model.bin"):
        f = tmp_path / name
        f.write_bytes(b"GGUF\x03\x00\x00\x00" + bytes(64))
        rc = cli.main(["kv", "--config", str(f)])
        err = capsys.readouterr().err
        assert rc == 2 and "give it with --gguf FILE" in err and "decode" not in err, name
