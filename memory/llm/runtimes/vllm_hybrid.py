"""vLLM's prefix caching on a hybrid (attention + Mamba-2 / gated-DeltaNet state) model: how many state pages a request
holds, and for Mamba-2 models how the attention block is sized (task kvhyb, read in the PyPI wheels' source).

CacheConfig.mamba_cache_mode (vllm/config/cache.py) is "none" unless prefix caching is on; MambaModelConfig.
verify_and_update_config (vllm/model_executor/models/config.py) then picks it by release:
  - 0.11.0 (config.py line 297): "Hybrid or mamba-based model detected: disabling prefix caching": every hybrid runs
    without it, one state page a request;
  - 0.11.1 to 0.14.1 (vllm#25752 "Mamba2 Automatic Prefix Caching", 2025-10-04, and vllm#27339; 0.14.1 config.py
    lines 333-347): a model class with SupportsMambaPrefixCaching keeps prefix caching, the state paged per block of
    tokens (mamba_block_size = the attention block), any other hybrid (Qwen3-Next's gated DeltaNet) has it turned off;
  - from 0.15.0 (vllm#30877 "Mamba Prefix Caching with align mode", 2026-01-24; 0.15.0 config.py lines 333-353):
    mamba_cache_mode "all" for a class with SupportsMambaPrefixCaching, "align" (two pages a request) for any other;
  - from 0.20.0 (vllm#40454, 2026-04-21; 0.20.0 config.py lines 352-360, absent from 0.19.1): "align" also for a
    SupportsMambaPrefixCaching class when speculative decoding is on.
MambaSpec.max_memory_usage_bytes (vllm/v1/kv_cache_interface.py; 0.14.1 lines 292-294, 0.15.0 lines 293-300) is then
cdiv(max_model_len, block_size) pages in "all" mode (block_size the attention block; 0.14.1 has that form alone, with
mamba_block_size = max_model_len, one page, when prefix caching is off), 2 + num_speculative_blocks in "align", 1 + it
without. In "all" mode the attention block is whole chunks, not 16-token steps (0.14.1 config.py line 455, 0.20.0
platforms/interface.py lines 585-595): chunk = lcm(model's mamba chunk size, kernel block alignment 16), block = chunk x
cdiv(cdiv(state page, attention bytes a token), chunk) (cache.vllm_layout with LLMSpec.mamba_cache_all).

The classes with SupportsMambaPrefixCaching (vllm/model_executor/models at 1CatAI/1Cat-vLLM ae13773a0, 2026-08-22:
bamba, falcon_h1, granitemoehybrid, jamba, mamba, mamba2, nemotron_h, zamba2); Qwen3-Next and Qwen 3.5+ are not among
them. kv lays out the Mamba-2 hybrids of these (Nemotron-H, Granite 4.0-H) only.

Not read (rev11 D5): vLLM's --mamba-block-size (CacheConfig.mamba_block_size; the "all" block is mamba_block_size or
the chunk above). kv takes the chunk alone, so a run that sets it is sized at the chunk's block, not its own."""
from dataclasses import replace

from ...errors import UserError
from . import at_least

MAMBA_PREFIX_ARCHS = ("bamba", "falcon_h1", "granitemoehybrid", "jamba", "mamba", "nemotron_h", "zamba2")
HYBRID_PREFIX_FROM = (0, 11, 1)   # vllm#25752: prefix caching kept for SupportsMambaPrefixCaching classes
ALIGN_FROM = (0, 15, 0)           # vllm#30877: "align" for the other hybrids (before it, prefix caching off for them)
SPEC_ALIGN_FROM = (0, 20, 0)      # vllm#40454: "align" for every hybrid when speculative decoding is on
# "align" with a speculative config fails MambaModelConfig's `assert not vllm_config.speculative_config, "Mamba cache mode
# 'align' is currently not compatible with speculative decoding."` in 0.15.0 and 0.16.0 (config.py lines 357-360); the
# 0.17.0, 0.17.1 and 0.18.0 wheels have no such assert
ALIGN_SPEC_REFUSED = ((0, 15, 0), (0, 17, 0))


def mamba_cache_mode(spec, s) -> str:
    """vLLM's mamba_cache_mode for this model and settings: "none", "align" or "all" (module docstring)."""
    if not spec.linear_state or not s.get("prefix_caching"):
        return "none"
    v = s.get("version")
    apc = spec.arch.startswith(MAMBA_PREFIX_ARCHS)
    if not at_least(v, *HYBRID_PREFIX_FROM) or (not apc and not at_least(v, *ALIGN_FROM)):
        return "none"  # prefix caching turned off for this hybrid
    if not apc or (_spec_decode(s) and at_least(v, *SPEC_ALIGN_FROM)):
        return "align"
    return "all"


def with_cache_mode(spec, s):
    """(spec, state pages a request before speculative ones) as vLLM's mamba_cache_mode leaves them: "all" marks the
    spec (cache.vllm_layout's chunk-aligned block, a state page per block of the context), "align" holds 2, "none" 1."""
    mode = mamba_cache_mode(spec, s)
    why = _refused(spec, s, mode)
    if why == "spec":
        raise UserError(f"{spec.name}: vLLM 0.15-0.16 does not start a hybrid model with prefix caching and speculative "
                        "decoding (MambaModelConfig: \"Mamba cache mode 'align' is currently not compatible with "
                        "speculative decoding.\"); drop --enable-prefix-caching or the speculative config, or use "
                        "0.17 or later")
    if mode != "all":
        return spec, 2 if mode == "align" else 1
    if why == "chunk":
        raise UserError(f"{spec.name}: prefix caching on vLLM pages this model's Mamba state per block of tokens "
                        "(mamba_cache_mode 'all'), blocks aligned to its mamba chunk size, which the config kv read does "
                        "not give (mamba_chunk_size / chunk_size); run without --enable-prefix-caching to size it")
    return replace(spec, mamba_cache_all=True), 1


def _refused(spec, s, mode) -> str | None:
    """Why a start with prefix caching in this mode is refused: "spec" (vLLM 0.15-0.16 asserts against "align" with a
    speculative config), "chunk" ("all" with no mamba chunk size in the config kv read); None where it is taken. One test
    for with_cache_mode's errors and prefix_note's wording."""
    v = s.get("version")
    if (mode == "align" and _spec_decode(s) and v is not None and at_least(v, *ALIGN_SPEC_REFUSED[0])
            and not at_least(v, *ALIGN_SPEC_REFUSED[1])):
        return "spec"
    return "chunk" if mode == "all" and not spec.mamba_chunk else None


def _spec_decode(s) -> bool:
    """Is a speculative config given (MTP tokens, a drafter's layers, a separate drafter)?"""
    return bool(s.get("spec_tokens") or s.get("draft_layers") or s.get("drafter"))


def prefix_note(spec, s) -> str | None:
    """(rev11 S5) The plan's note on a hybrid's prefix caching, worded from mamba_cache_mode: what the flag would change
    when not given ("align" two state pages a request, "all" a page per block of the context), and that vLLM itself
    turns it off (0.11.0 for every hybrid; a gated-DeltaNet model, Qwen3-Next / Qwen 3.5+, before 0.15.0). (rev12 D2)
    Where with_cache_mode would refuse the flag ("all" with no chunk size in the config; "align" with a speculative
    config on 0.15-0.16), the note says so instead of a page count."""
    v, asked = s.get("version"), s.get("prefix_caching")
    mode = mamba_cache_mode(spec, {**s, "prefix_caching": True})
    off = None if mode != "none" else (
        f"vLLM {'.'.join(map(str, v))} turns prefix caching off for "
        + ("every hybrid model ('Hybrid or mamba-based model detected: disabling prefix caching')"
           if not at_least(v, *HYBRID_PREFIX_FROM) else
           f"{spec.arch} (before 0.15.0 only a class with SupportsMambaPrefixCaching, Mamba-1 or Mamba-2, keeps it; "
           "vllm#30877)"))
    if asked is None:
        refused = _refused(spec, {**s, "prefix_caching": True}, mode)
        return ("prefix caching off, as vLLM leaves it for a hybrid model unless --enable-prefix-caching is given: one "
                "state page a request in each state group ("
                + ("kv refuses the flag here: " + ("the config gives no mamba chunk size, which mamba_cache_mode 'all' "
                   "aligns its blocks to" if refused == "chunk" else "vLLM 0.15-0.16 does not start a hybrid model with it "
                   "and a speculative config") if refused else
                   {"align": "two with it", "all": "with it a state page per block of the context, mamba_cache_mode "
                    "'all'", "none": f"one with it too: {off}"}[mode]) + ")")
    if asked and off:
        return f"--enable-prefix-caching given, but {off}: one state page a request in each state group"
    return None
