"""-ngl -1 / auto / all and Ollama's num_gpu -1 as the runtimes read them (llama.cpp common/arg.cpp: auto is -1, all
is -2, a number is stoi'd; common_model_params_to_llama keeps llama_model_default_params' n_gpu_layers for -1: 0 in
builds of mid-2025 and before, every layer later, the fitter's choice on --fit builds). Unsloth Studio pins -ngl -1
on the newest llama-server (unslothai/unsloth#6718); kv refused it."""
import pytest

from gpu_garden.memory.llm import kv as llm

GiB = 1 << 30


def _plan(ngl, version=None, runtime="llama.cpp", vram=24 * GiB):
    s = llm.describe(model="Qwen/Qwen3-8B")
    return llm.plan(s, runtime, ctx=8192, weights_dtype="Q4_K_M", vram=vram, ngl=ngl, runtime_version=version)


def _same(a, b):
    return (a["total"], a["fits"], a["gpu_layers_used"], a["flags"]) == (b["total"], b["fits"], b["gpu_layers_used"],
                                                                      b["flags"])


@pytest.mark.parametrize("version", [None, "b7400", "b9193"])
def test_minus_one_on_fit_builds_is_leaving_it_out(version):
    for v in (-1, "auto"):
        got = _plan(v, version)
        assert _same(got, _plan(None, version))
        assert any("--fit" in n for n in got["notes"])


def test_minus_one_before_mid_2025_is_the_cpu():
    got = _plan(-1, "b5000")
    assert _same(got, _plan(0, "b5000")) and got["gpu_layers_used"] == 0
    assert not _same(got, _plan(None, "b5000"))


def test_minus_one_between_is_refused_not_guessed():
    with pytest.raises(llm.UserError, match="give -ngl N"):
        _plan(-1, "b6500")
    with pytest.raises(llm.UserError, match="ik_llama"):
        _plan(-1, "ik_llama.cpp")


def test_all_is_every_layer_without_the_fitter():
    s = llm.describe(model="Qwen/Qwen3-8B")
    got = _plan("all", "b9193", vram=None)
    assert got["total"] == _plan(s.n_layers + 1, "b9193", vram=None)["total"]
    assert _plan(-2, "b9193", vram=None)["total"] == got["total"]
    # -ngl all keeps the 256 MiB margin, --fit its 1 GiB target: the same card holds a longer context with -ngl all
    vram = got["total"] + 600 * (1 << 20)
    a, f = _plan("all", "b9193", vram=vram), _plan(None, "b9193", vram=vram)
    assert a["overhead"]["margin"] == 256 << 20 and f["overhead"]["margin"] == 1 << 30
    assert a["max_ctx"] > f["max_ctx"]


def test_ollama_num_gpu_minus_one_is_its_own_placement():
    assert _same(_plan(-1, "0.12.0", "ollama"), _plan(None, "0.12.0", "ollama"))
    with pytest.raises(llm.UserError, match="layer count"):
        _plan(-2, "0.12.0", "ollama")


@pytest.mark.parametrize("bad", [-3, "most", 2.5, True])
def test_other_values_are_refused(bad):
    with pytest.raises(llm.UserError, match="--ngl takes"):
        _plan(bad, "b9193")


def test_the_cli_takes_llamacpps_words(capsys):
    from gpu_garden.memory import cli
    args = ["kv", "--model", "qwen3:8b", "--runtime", "llama.cpp", "--ctx", "8192", "--vram", "12", "--json"]
    assert cli.main(args + ["--ngl", "all"]) == 0 and cli.main(args + ["--ngl", "auto"]) == 0
    capsys.readouterr()
    assert cli.main(args + ["--ngl", "most"]) == 2
    assert "--ngl takes a layer count" in capsys.readouterr().err
