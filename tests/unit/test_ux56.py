"""Task ux56 (the CLI used as a new user would): each test fails on the code before its fix."""
import pytest

from gpu_garden.memory import cli
from support.cli_run import flat


def _help(capsys, command):
    with pytest.raises(SystemExit):
        cli.main([command, "--help"])
    return flat(capsys.readouterr().out)


def test_kv_help_gives_vllm_s_default_share_by_version(capsys):
    """`kv --help` said "(default 0.90)" while the plan (and its printed command) takes vLLM's 0.92 from 0.20.0
    (runtimes/vllm.py default_util): the RTX 4090 plan says "vLLM share 21.67 GiB" = 0.92 x 23.55."""
    from gpu_garden.memory.llm.runtimes import vllm

    assert (vllm.default_util(None), vllm.default_util((0, 19, 0))) == (0.92, 0.90)  # by hand: vllm#38284's 0.92
    text = _help(capsys, "kv")
    text = text[text.index("options:"):]  # past the usage lines
    share = text[text.index("--gpu-memory-utilization F"):text.index("--max-num-batched-tokens N")]
    assert "0.92 from vLLM 0.20.0" in share and "0.90 before" in share, share
