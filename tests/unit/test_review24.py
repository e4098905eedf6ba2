"""Task review24: mends found reviewing session 23. Each test fails before its mend (checked by reverting it once)."""
import argparse
import os
import re

from gpu_garden.memory import cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _kv_parser():
    p = cli.build_parser()
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["kv"]


# 1. README's `gpu-garden kv` synopsis names every option kv takes. --speculative-config (vLLM's DFlash drafter, this
# session), --language-model-only, --mamba-ssm-cache-dtype, --lm-head-dtype, --swa-full-tokens-ratio and
# --max-mamba-cache-size were in `kv --help` only. Breaking it: any of them taken out of the README block.
def test_readme_kv_synopsis_names_every_kv_option():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    block = re.search(r"```\ngpu-garden kv \(.*?```", text, re.S).group(0)
    named = set(re.findall(r"--[a-z][a-z0-9-]+", block))
    options = {o for a in _kv_parser()._actions for o in a.option_strings if o.startswith("--") and o != "--help"}
    assert options - named == set()


# 2. The printed --speculative-config is JSON vLLM can read and one shell word, whatever the drafter's path holds: it
# was formatted with '"model":"%s"', so a Windows folder (C:\models\dflash: \m and \d are no JSON escapes) or a path with a
# double quote printed a config vLLM's json.loads refuses, and one with a single quote broke the shell's quoting.
# Breaking it: flags.mtp_flags back to the % format.
def test_printed_speculative_config_is_json_of_the_given_path(tmp_path):
    import json
    import shlex

    from gpu_garden.memory.llm import kv as llm

    cfg = {"architectures": ["DFlashDraftModel"], "hidden_size": 4096, "num_hidden_layers": 1,
           "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 12288,
           "dflash_config": {"target_layer_ids": [1, 17, 33]}}
    for name in ("C:\\models\\dflash", "it's \"the\" drafter"):
        d = tmp_path / name
        d.mkdir()
        (d / "config.json").write_text(json.dumps(cfg))
        r = llm.plan(llm.describe(model="Qwen/Qwen3-8B"), "vllm", ctx=8192,
                     speculative_config={"method": "dflash", "model": str(d), "num_speculative_tokens": 3})
        f = next(f for f in r["flags"] if f["name"] == "--speculative-config")
        assert json.loads(f["value"]) == {"method": "dflash", "model": str(d), "num_speculative_tokens": 3}
        assert shlex.split(f["text"]) == ["--speculative-config", f["value"]]


# 3. PEP 440 orders a development build of a post-release after the release it follows: 0.8.5.post1.dev3 is past 0.8.5
# (and before 0.8.5.post1). parse_version's dev branch (378b1623) read every .devN as before its release, so
# 0.8.5.post1.dev3 read as (0, 8, 4, PRE, -1), older than 0.8.5 itself; a plain X.Y.Z.devN still reads before X.Y.Z.
# Breaking it: the "post" guard on the _DEV branch taken out.
def test_a_post_release_dev_build_reads_after_its_release():
    from gpu_garden.memory.llm.runtimes import parse_version

    assert parse_version("0.8.5.post1.dev3") >= (0, 8, 5)
    assert parse_version("0.8.5.post1.dev3") < (0, 8, 6)
    assert parse_version("0.20.1.dev0+g101584af0") < (0, 20, 1)


# 4. Keys of the user's --speculative-config that kv does not read (draft_tensor_parallel_size, max_model_len, ...) were
# dropped from the printed vllm command without a word (parse kept method, tokens and model only). They are kept in the
# command and named in a note. Breaking it: parse's "others" emptied.
def test_speculative_config_keys_kv_does_not_read_are_kept_and_named(tmp_path):
    import json

    from gpu_garden.memory.llm import kv as llm

    cfg = {"architectures": ["DFlashDraftModel"], "hidden_size": 4096, "num_hidden_layers": 1,
           "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 12288,
           "dflash_config": {"target_layer_ids": [1, 17, 33]}}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    given = {"method": "dflash", "model": str(tmp_path), "num_speculative_tokens": 3, "draft_tensor_parallel_size": 1}
    r = llm.plan(llm.describe(model="Qwen/Qwen3-8B"), "vllm", ctx=8192, speculative_config=json.dumps(given))
    f = next(f for f in r["flags"] if f["name"] == "--speculative-config")
    assert json.loads(f["value"]) == given
    assert any("draft_tensor_parallel_size: not read" in n for n in r["notes"])


# 5. --speculative-config given for SGLang or Ollama is refused without pointing at llama.cpp's option: the refusal said
# "(llama.cpp's MTP: --mtp-tokens)" for every runtime. llama.cpp's refusal still names it. Breaking it: the hint back
# for every runtime.
def test_speculative_config_refusal_names_llamacpp_only_for_llamacpp():
    import pytest

    from gpu_garden.memory.errors import UserError
    from gpu_garden.memory.llm import kv as llm

    sc = {"method": "mtp", "num_speculative_tokens": 3}
    for runtime, hint in (("sglang", False), ("ollama", False), ("llama.cpp", True)):
        with pytest.raises(UserError) as e:
            llm.plan(llm.describe(model="Qwen/Qwen3.6-27B"), runtime, ctx=4096, speculative_config=sc)
        assert "is vLLM's" in str(e.value) and ("llama.cpp's MTP" in str(e.value)) == hint
