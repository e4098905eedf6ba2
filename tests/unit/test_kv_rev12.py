"""rev12 S2 (session 46, fix13): the chunk size each Mamba-2 config class vLLM starts gives when a config.json has none,
read in transformers 5.25.0 (models/<arch>/configuration_<arch>.py): NemotronHConfig chunk_size 128 (line 130),
GraniteMoeHybridConfig mamba_chunk_size 256 (line 102), BambaConfig mamba_chunk_size 256 (line 81), FalconH1Config
mamba_chunk_size 256 (line 84), Mamba2Config chunk_size 256 (line 87), Zamba2Config chunk_size 256 (line 88). fix12 had
the first two only; the Mamba-1 classes (Mamba, Jamba, FalconMamba, Zamba) have none."""


def test_every_mamba2_class_default_chunk():
    from gpu_garden.memory.llm.params import MAMBA2_CHUNK_DEFAULT
    assert dict(MAMBA2_CHUNK_DEFAULT) == {"nemotron_h": 128, "granitemoehybrid": 256, "bamba": 256, "falcon_h1": 256,
                                          "mamba2": 256, "zamba2": 256}         # was nemotron_h and granitemoehybrid alone
    # looked up by the arch's prefix (params.recurrent_state): a Mamba-1 arch matches none
    for arch in ("mamba", "jamba", "falcon_mamba", "zamba"):
        assert not any(arch.startswith(a) for a, _ in MAMBA2_CHUNK_DEFAULT), arch


# D2. The prefix-caching note (vllm_hybrid.prefix_note) where the flag is not given: it said what the flag would bring
# where kv (with_cache_mode) refuses it, and named Mamba-2 alone among the classes that keep prefix caching before 0.15.0
def test_the_prefix_note_says_where_the_flag_is_refused():
    from dataclasses import replace
    import pytest
    from test_kv_hybrid_pool import _nano
    from gpu_garden.memory.errors import UserError
    from gpu_garden.memory.llm import kv as llm
    from gpu_garden.memory.llm.runtimes.vllm_hybrid import prefix_note, with_cache_mode
    head = "prefix caching off, as vLLM leaves it for a hybrid model unless --enable-prefix-caching is given: one state page " \
           "a request in each state group ("
    jamba = replace(_nano(), arch="jamba", mamba_chunk=0)     # an "all"-mode class whose config gives no chunk size
    with pytest.raises(UserError, match="mamba_cache_mode 'all'"):
        with_cache_mode(jamba, {"prefix_caching": True, "version": (0, 15, 0)})
    assert prefix_note(jamba, {"version": (0, 15, 0)}) == head + (
        "kv refuses the flag here: the config gives no mamba chunk size, which mamba_cache_mode 'all' aligns its blocks to)")
    # was "(with it a state page per block of the context, mamba_cache_mode 'all')"; with its chunk it still reads so
    assert prefix_note(_nano(), {"version": (0, 15, 0)}).endswith("(with it a state page per block of the context, "
                                                                  "mamba_cache_mode 'all')")
    qwen = llm.describe(model="Qwen/Qwen3.6-27B")               # an "align"-mode model (no SupportsMambaPrefixCaching)
    for v in ((0, 15, 0), (0, 16, 0)):
        with pytest.raises(UserError, match="0.15-0.16 does not start"):
            with_cache_mode(qwen, {"prefix_caching": True, "version": v, "spec_tokens": 2})
        assert prefix_note(qwen, {"version": v, "spec_tokens": 2}) == head + (
            "kv refuses the flag here: vLLM 0.15-0.16 does not start a hybrid model with it and a speculative config)")
    assert prefix_note(qwen, {"version": (0, 17, 0), "spec_tokens": 2}) == head + "two with it)"   # was so on 0.15-0.16 too
    assert prefix_note(qwen, {"version": (0, 15, 0)}) == head + "two with it)"
    # before 0.15.0: the classes that keep it are Mamba-1 (mamba, jamba) and Mamba-2 ones (vllm_hybrid.MAMBA_PREFIX_ARCHS)
    assert prefix_note(qwen, {"version": (0, 14, 1)}) == head + (
        "one with it too: vLLM 0.14.1 turns prefix caching off for qwen3_5_text (before 0.15.0 only a class with "
        "SupportsMambaPrefixCaching, Mamba-1 or Mamba-2, keeps it; vllm#30877))")
