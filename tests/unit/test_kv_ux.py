"""`gpu-garden kv` as a new user reads it: the verdict first when the weights do not fit, totals that are the sum of
the lines above them, typo suggestions closest first, the --vram each runtime means, the user's model in commands."""
import json
import re

import pytest

from gpu_garden.memory import cli
from support.cli_run import unwrap
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB, MiB

UNIT = {"B": 1, "KiB": 1 << 10, "MiB": MiB, "GiB": GiB}
ROW = re.compile(r"^  (\S.{0,18}?|  \S.{0,16}?)\s+(-?[\d.]+) (B|KiB|MiB|GiB)(?:\s|$)")


def _kv(argv, capsys):
    rc = cli.main(["kv"] + argv)
    return rc, unwrap(capsys.readouterr().out)  # term.py's wrapping undone: these pin whole lines


def _table(text):
    """The rows of the table (label, bytes) up to and including the total."""
    rows = []
    for line in text.split("\n\n", 1)[1].splitlines():
        m = ROW.match(line)
        if m:
            rows.append((m.group(1).strip(), float(m.group(2)) * UNIT[m.group(3)]))
        if line.strip().startswith("total on GPU"):
            return rows
    raise AssertionError("no total line in:\n" + text)


def test_vllm_weights_over_the_share_say_so_first(capsys):
    rc, out = _kv(["--model", "Qwen/Qwen3-8B", "--runtime", "vllm", "--vram", "12"], capsys)
    assert rc == 1
    after = out.split("\n\n")[2].splitlines()
    # the share: vLLM's own default from 0.21, 0.92 x 12 GiB = 11.04 GiB (0.90 before: 10.80; ellm41)
    assert after[0] == "on 12.00 GiB: does NOT fit: weights alone 15.27 GiB > vLLM's share 11.04 GiB of 12.00 GiB"
    assert "AWQ/GPTQ 4-bit ~5.68 GiB" in after[1]  # the advice follows the verdict
    assert out.count("quantized checkpoint") == 1
    # lines that cannot apply without any KV pool are left out
    for gone in ("KV pool", "GPU KV cache size", "--max-model-len auto", "largest context"):
        assert gone not in out
    rows = dict(_table(out))
    assert rows["total on GPU"] > rows["weights"]  # what the model needs, not the share


def test_sglang_weights_over_the_share_say_so(capsys):
    rc, out = _kv(["--model", "Qwen/Qwen3-8B", "--runtime", "sglang", "--vram", "12"], capsys)
    assert rc == 1
    assert "does NOT fit: weights alone 15.26 GiB > SGLang's static share" in out
    assert "largest context" not in out
    rows = dict(_table(out))
    assert rows["total on GPU"] > rows["weights"]


CASES = [
    ["--model", "gemma3:27b", "--vram", "24"],
    ["--model", "gemma3:27b"],
    ["--model", "qwen2.5:7b"],
    ["--model", "qwen2.5:7b", "--vram", "4"],
    ["--model", "gemma3:12b", "--runtime", "ollama", "--ctx", "8192", "--vram", "11.1"],
    ["--model", "Qwen/Qwen3-8B", "--runtime", "vllm", "--vram", "24", "--ctx", "8192"],
    ["--model", "Qwen/Qwen3-8B", "--runtime", "vllm", "--vram", "12"],
    ["--model", "Qwen/Qwen3-8B", "--runtime", "llama.cpp", "--vram", "12"],
    ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--runtime", "llama.cpp"],
    ["--model", "Qwen/Qwen3-8B", "--runtime", "sglang", "--vram", "24"],
    ["--model", "gpt-oss:20b", "--vram", "16"],
]


@pytest.mark.parametrize("argv", CASES, ids=[" ".join(a) for a in CASES])
def test_every_total_is_the_sum_of_the_lines_above_it(argv, capsys):
    _, out = _kv(argv, capsys)
    rows = _table(out)
    labels = [k for k, _ in rows]
    terms = [v for k, v in rows[:-1] if k not in ("in host RAM",)]
    if "on the GPU" in labels:  # the token table stays in RAM: the weights' GPU part is summed, not the whole
        terms = terms[1:]
    shown = rows[-1][1]
    # each row is rounded to 2 decimals of its unit: at most 0.005 GiB each
    assert abs(sum(terms) - shown) <= 0.006 * GiB * len(rows), (argv, rows)
    if "no --vram" in out:
        assert "verdict below" not in out


@pytest.mark.parametrize("model,runtime", [("gemma3:27b", "ollama"), ("qwen2.5:7b", "ollama"),
                                           ("gpt-oss:20b", "ollama"), ("Qwen/Qwen3-8B", "llama.cpp"),
                                           ("gemma3:27b", "llama.cpp")])
def test_the_table_total_is_the_runtimes_full_load(model, runtime):
    # the evaluators' own totals (every layer on the GPU, no --vram), against the fields the table prints
    r = llm.plan(llm.describe(model=model), runtime=runtime)
    assert r["weights_gpu_full"] + r["kv_total"] + sum(r["overhead"].values()) == pytest.approx(r["total"], abs=8)
    if runtime == "ollama":
        assert r["placement_need"] == pytest.approx(r["total"] + r["partial_graph_extra"], abs=8)


@pytest.mark.parametrize("typed,first", [("qwen2.5:7bb", "qwen2.5:7b"), ("Qwen/Qwen3-8", "Qwen/Qwen3-8B"),
                                         ("qwen25:7b", "qwen2.5:7b"), ("lama3.1:8b", "llama3.1:8b"),
                                         ("Qwen3-8", "Qwen3-8B")])
def test_a_typo_gets_the_closest_names_first_and_is_never_resolved(typed, first, capsys):
    rc = cli.main(["kv", "--model", typed])
    err = capsys.readouterr().err
    assert rc == 2 and f"unknown model {typed!r}" in err
    close = err.split("(closest: ", 1)[1].split(")", 1)[0].split(", ")
    assert close[0] == first and len(close) <= 6
    assert "7BB" not in err  # the tag's size as typed, not a garbled built-in name


def test_no_suggestion_for_a_name_like_none():
    from gpu_garden.memory.llm import names
    assert names.suggestions("xyzzy") == [] and names.suggestions("q" * 5000) == []


def test_gpu_name_without_vram_takes_the_cards_visible_total(capsys, monkeypatch):
    from gpu_garden.memory.budget import probe
    monkeypatch.setattr(probe, "snapshot", lambda *a, **k: {"devices": []})
    # a 24 GB RTX 4090 is 23.55 GiB as torch (vLLM's total_gpu_memory) reports it: llm_measured.json's 4090 rows
    rc = cli.main(["kv", "--model", "Qwen/Qwen3-8B", "--ctx", "8192", "--gpu-name", "NVIDIA GeForce RTX 4090", "--json"])
    import json
    r = json.loads(capsys.readouterr().out)
    assert r["vram"] == int(23.55 * GiB) and rc == 0
    assert any("23.55 GiB" in n and "RTX 4090" in n for n in r["notes"])
    cli.main(["kv", "--model", "Qwen/Qwen3-8B", "--ctx", "8192", "--gpu-name", "some unknown card", "--json"])
    assert json.loads(capsys.readouterr().out)["vram"] is None  # a card not in the table is not guessed


@pytest.mark.parametrize("runtime,key", [("ollama", "free"), ("llama.cpp", "total"), ("vllm", "total")])
def test_without_vram_ollama_takes_the_free_memory_the_others_the_total(runtime, key, capsys, monkeypatch):
    from gpu_garden.memory.budget import probe
    dev = {"backend": "cuda", "total": 24 * GiB, "free": 20 * GiB}
    monkeypatch.setattr(probe, "snapshot", lambda *a, **k: {"devices": [dev]})
    cli.main(["kv", "--model", "qwen2.5:7b", "--runtime", runtime, "--ctx", "4096", "--json"])
    import json
    r = json.loads(capsys.readouterr().out)
    assert r["vram"] == dev[key]
    assert any(f"its {key} memory" in n for n in r["notes"])


def test_commands_name_the_users_model(capsys, tmp_path):
    _, out = _kv(["--model", "Qwen/Qwen3-8B", "--ctx", "8192"], capsys)
    assert "  vllm serve Qwen/Qwen3-8B --max-model-len 8192" in out
    _, out = _kv(["--model", "Qwen/Qwen3-8B", "--runtime", "sglang", "--vram", "24"], capsys)
    assert "--model-path Qwen/Qwen3-8B " in out
    _, out = _kv(["--model", "qwen3:8b", "--runtime", "vllm", "--ctx", "8192"], capsys)
    assert "vllm serve MODEL " in out  # an Ollama tag is no name vLLM loads


@pytest.mark.parametrize("alias", ["llamacpp", "llama-cpp", "LLaMA.cpp"])
def test_llama_cpp_aliases(alias, capsys):
    rc, out = _kv(["--model", "Qwen/Qwen3-8B", "--runtime", alias], capsys)
    assert rc == 0 and "runtime llama.cpp" in out and "llama-server -m" in out


def test_a_file_without_the_gguf_magic_says_so(tmp_path, capsys):
    f = tmp_path / "random.bin"
    f.write_bytes(b"\x00\x01random bytes, long enough to hold a header" * 4)
    rc = cli.main(["kv", "--gguf", str(f)])
    assert rc == 2 and "not a GGUF file (no GGUF magic)" in capsys.readouterr().err


def test_round_11_vllm_settings_have_flags(capsys):
    import json
    cli.main(["kv", "--model", "Qwen/Qwen3.5-9B", "--language-model-only", "--vram", "24", "--ctx", "8192", "--json"])
    r = json.loads(capsys.readouterr().out)
    assert "--language-model-only" in r["command"] and any("no vision tower" in n for n in r["notes"])
    cli.main(["kv", "--model", "Qwen/Qwen3-8B", "--lm-head-dtype", "int8", "--ctx", "8192", "--json"])
    r8 = json.loads(capsys.readouterr().out)
    cli.main(["kv", "--model", "Qwen/Qwen3-8B", "--ctx", "8192", "--json"])
    r16 = json.loads(capsys.readouterr().out)
    # Qwen3-8B's untied head: 151,936 x 4,096 at 8 + 16/128 bits instead of 16
    assert r16["weights"] - r8["weights"] == pytest.approx(151936 * 4096 * (2 - (8 + 16 / 128) / 8), abs=2)


@pytest.mark.parametrize("argv", [["--model", "Qwen/Qwen3-8B", "--runtime", "vllm", "--vram", "24"],
                                  ["--model", "Qwen/Qwen3-8B", "--runtime", "llama.cpp", "--ngl", "20"],
                                  ["--model", "gemma3:27b", "--vram", "24"]])
def test_json_names_the_tables_total(argv, capsys):
    # the text's "total on GPU" and the JSON's field of the same meaning are one figure (review: JSON "total" is the
    # verdict's figure, vLLM's share + outside or a partial offload, which the table does not print as its total)
    _, out = _kv(argv, capsys)
    shown = _table(out)[-1][1]
    _, js = _kv(argv + ["--json"], capsys)
    assert abs(json.loads(js)["total_all_layers"] - shown) <= 0.006 * GiB


def test_tied_table_host_row_says_it_is_a_second_copy(capsys):
    """ux21b: Ollama's gemma3:12b prints the host-RAM row and the GPU row under weights; with a tied table the GPU
    row alone equals the weights line, so the host row must say it is a second copy (figures unchanged)."""
    rc, out = _kv(["--model", "gemma3:12b", "--runtime", "ollama"], capsys)
    rows = dict(_table(out))
    assert rows["on the GPU"] == rows["weights"]  # the table counted once, as the output layer
    assert rows["in host RAM"] > 0
    host = next(x for x in out.splitlines() if x.strip().startswith("in host RAM"))
    assert "a second copy of the token table" in host and "not on the GPU" in host


def test_untied_table_host_row_stays_a_part_of_the_weights(capsys):
    """An untied table (Llama-3.1-8B on llama.cpp): host + GPU rows are the weights line, no 'second copy'."""
    rc, out = _kv(["--model", "meta-llama/Llama-3.1-8B", "--runtime", "llama.cpp"], capsys)
    rows = dict(_table(out))
    assert abs(rows["in host RAM"] + rows["on the GPU"] - rows["weights"]) <= 0.01 * rows["weights"]
    assert "second copy" not in out
