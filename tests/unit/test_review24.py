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
