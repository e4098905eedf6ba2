"""Ollama library names and tags (`qwen2.5:7b`, `llama3.1:8b-instruct-q8_0`, `gemma3:12b`) resolved to a built-in name
and a weight format (names.py reads them with the other names). A tag without a quantization is the library's default
build (the `:latest` and size tags on ollama.com): Q4_K_M, except the libraries published before Ollama switched its
defaults, whose default builds are Q4_0 (OLLAMA_Q4_0_LIBRARIES: llama3:70b is the 40 GB `70b-instruct-q4_0`; its 30-layer
GPU buffer in ollama/ollama#3301 is Q4_0-sized)."""
import re

from ..errors import UserError

OLLAMA_DEFAULT_QUANT = "Q4_K_M"
# libraries whose default tag is a Q4_0 build (sizes on ollama.com: llama3 8b 4.7 GB / 70b 40 GB, gemma2 9b 5.4 GB,
# mistral 7b 4.1 GB, mixtral 8x7b 26 GB, phi3 mini 2.2 GB: Q4_0 sizes, not Q4_K_M)
OLLAMA_Q4_0_LIBRARIES = ("llama3", "gemma2", "mistral", "mixtral", "phi3", "llama2",
                         "deepseek-v2", "deepseek-coder-v2", "codegeex4",
                         # tinyllama (January 2024): the blob PandiaJason/nanos's Ollama 0.24.0 log loads right after
                         # pulling it is general.file_type 2, 'file type = Q4_0', 606.53 MiB
                         "tinyllama",
                         # deepseek-coder (November 2023): the 33b blob Ollama 0.3.14 loads for deepseek-coder:33b is
                         # general.file_type 2 (Q4_0), 561 tensors (simo-hue/LLM-Mob-As-Mobility-Interpreter ollama_gpu0.log)
                         "deepseek-coder")

# Ollama library name -> (built-in name pattern with {size}, default size tag)
OLLAMA_LIBRARY = {
    "llama3": ("Llama-3-{size}", "8b"), "llama3.1": ("Llama-3.1-{size}", "8b"), "llama3.2": ("Llama-3.2-{size}", "3b"),
    "qwen2.5": ("Qwen2.5-{size}", "7b"), "qwen3": ("Qwen3-{size}", "8b"), "qwen2.5vl": ("Qwen2.5-VL-{size}", "7b"),
    "gemma2": ("Gemma-2-{size}", "9b"), "gemma3": ("Gemma-3-{size}", "4b"), "mistral": ("Mistral-7B-v0.3", "7b"),
    "mistral-nemo": ("Mistral-Nemo-12B", "12b"), "mixtral": ("Mixtral-{size}", "8x7b"), "phi3": ("Phi-3-mini-4k", "mini"),
    "deepseek-v3": ("DeepSeek-V3", "671b"), "qwen3-next": ("Qwen3-Next-80B-A3B", "80b"),
    "gpt-oss": ("gpt-oss-{size}", "20b"), "deepseek-r1": (None, "8b"),
    # ollama.com/library: llama3.3 is 70b only; the coder libraries are fine-tunes on their base geometry
    # (qwen2.5-coder:7b is Qwen2.5-7B's, qwen3-coder:30b Qwen3-30B-A3B's); mistral-small3.1 and 3.2 are the 24b
    # Mistral3 vision models (one geometry)
    "llama3.3": ("Llama-3.3-{size}", "70b"), "qwen2.5-coder": ("Qwen2.5-{size}", "7b"),
    "qwen3-coder": ("Qwen3-{size}", "30b"), "mistral-small3.1": ("Mistral-Small-3.1-{size}", "24b"),
    "mistral-small3.2": ("Mistral-Small-3.1-{size}", "24b"),
    # llama2 (7b/13b/70b, Q4_0 builds like the other early libraries); mistral-small:24b is Mistral-Small-24B-2501
    "llama2": ("Llama-2-{size}", "7b"), "mistral-small": ("Mistral-Small-{size}", "24b"),
    # llama3.2-vision (11b, the default tag) is Meta's Llama-3.2-11B-Vision (mllama: 40 layers, 8 of them cross-attention)
    "llama3.2-vision": ("Llama-3.2-{size}-Vision", "11b"),
    # tinyllama: one size, 1.1b (the default), TinyLlama-1.1B-Chat v1.0 (general.name TinyLlama: 22 layers, 4 KV heads,
    # n_ff 5632, 2048 positions in the blob's GGUF metadata)
    "tinyllama": ("TinyLlama-{size}", "1.1b"),
    # deepseek-v2 and deepseek-coder-v2 (June 2024): the 16b tags (the default) are DeepSeek-V2-Lite's geometry
    # (deepseek2, 27 layers, 64 experts); their 236b tags are full DeepSeek-V2, which has no built-in description
    "deepseek-v2": (None, "16b"), "deepseek-coder-v2": (None, "16b"),
    # glm-4.7-flash (January 2026): one model, zai-org/GLM-4.7-Flash; tags latest (Q4_K_M), q8_0, bf16
    "glm-4.7-flash": ("GLM-4.7-Flash", "30b"),
    # qwen3.5 (March 2026): Qwen's Qwen3.5 sizes, the MoE ones by their total ('qwen3.5:122b' is Qwen3.5-122B-A10B);
    # which size 'latest' is was not read, so a tag must name one
    "qwen3.5": ("Qwen3.5-{size}", None),
    # qwen3.6 (2026): Qwen's Qwen3.6 sizes, 'qwen3.6:27b' the dense 27B and 'qwen3.6:35b' Qwen3.6-35B-A3B by its total;
    # the default build is Q4_K_M as for the other K-quant libraries (bric.pe.kr's Ollama 0.24 post lists qwen3.6:27b
    # as '27.8B, Q4, ~17.4 GB': 27.8 B at Q4_K_M's 4.9 bits is 17.0 GB, and the vision tower adds to it); which
    # size 'latest' is was not read, so a tag must name one
    "qwen3.6": ("Qwen3.6-{size}", None),
    # qwen3.8 (2026): 'qwen3.8:27b' is Qwen3.8-27B (luongnv89's DGX Spark comparison serves it on Ollama 0.32.14, "17 GB":
    # 27.8 B at Q4_K_M's 4.9 bits is 17.0 GB); the default build Q4_K_M as for qwen3.6; which size 'latest' is was not
    # read, so a tag must name one
    "qwen3.8": ("Qwen3.8-{size}", None),
    # gemma4 (April 2026, Ollama 0.20): gemma4:26b is the 26B-A4B MoE (ollama#15353 'architecture=gemma4
    # file_type=Q4_K_M', 31 layers with the output), gemma4:31b the dense 31B, gemma4:e2b / e4b the per-layer-embedding
    # E2B / E4B (ollama#15749: 'offloaded 42/43 layers' for e4b's 42 layers and output). 'latest' is e4b: the two tags
    # share one manifest and one GGUF blob in public reports (`ollama list` prints gemma4:latest with ID c6eb396dbd59
    # and its modelfile FROM blob sha256-4c27e0f5...; a gemma4:e4b report on Ollama 0.32.14 prints digest
    # c6eb396dbd59... and the same blob, 9,608,350,718 bytes, 8.0B, Q4_K_M)
    "gemma4": ("Gemma-4-{size}", "e4b"),
    # codegeex4 (July 2024): one model, THUDM/codegeex4-all-9b; a library of before the Q4_K_M switch, its default
    # build Q4_0 (the yyc3 iMac-M4 run prints 4.7 GiB of weights and a 333.00 MiB Q4_0 token table)
    "codegeex4": ("CodeGeeX4-ALL-9B", "9b"),
    # qwen3-coder-next and qwen3-embedding: library names in ollama/ollama integration/reg_library_test.go (its inventory
    # of ollama.com/library with local tags, fb307609). qwen3-coder-next is one model, Qwen3-Coder-Next (Qwen3-Next-
    # 80B-A3B's geometry, SAME_GEOMETRY); qwen3-embedding names Qwen's Qwen3-Embedding sizes, of which 8B is built in;
    # neither library's default build nor which size 'latest' is was read: the K-quant default, as for qwen3-next
    "qwen3-coder-next": ("Qwen3-Next-80B-A3B", "80b"), "qwen3-embedding": ("Qwen3-Embedding-{size}", None),
    # codestral (May 2024): one model, mistralai/Codestral-22B-v0.1 (tag 22b, the default). Its default build is a
    # K-quant, not Q4_0: Ollama 0.22.1 loading codestral:22b prints general.name 'Codestral 22B v0.1', file type
    # 'Q4_K - Medium', 12.42 GiB (manuelGarciaAcha/Agentic_MalGen ollama-server.log), bartowski's Q4_K_M file size
    # (13.34 GB = 12.42 GiB; its Q4_0 would be about 12.6 GB)
    "codestral": ("Codestral-{size}", "22b"),
    # devstral-small-2 (December 2025): one size, 24b (the default), mistralai/Devstral-Small-2-24B-Instruct-2512 in
    # its K-quant default: Ollama 0.21.0 loading devstral-small-2:24b prints architecture=mistral3 file_type=Q4_K_M,
    # 41 layers with the output, and a 5.0 GiB f16 cache at 32768 cells = 40 layers x 8 KV heads x 128
    # (SeanceTable/auto-iteration ollama.log, batch 50); a project's log of pulling it on Ollama 0.24.0 says "24B,
    # Q4_K_M, approximately 15 GB", all 41 layers loaded. Not devstral (the 2505/2507 Devstral Small 1.x, another library)
    "devstral-small-2": ("Devstral-Small-2-{size}", "24b"),
    # phi4-reasoning (May 2025): 14b (the default), microsoft/Phi-4-reasoning on Phi-4's geometry with 32768 positions
    # (names.RELEASE_CONTEXT) in the K-quant default: Ollama 0.13.5 prints general.name 'Phi 4 Reasoning', file type
    # 'Q4_K - Medium' for it (Small-ed1/ContextHarbor ollama.log, batch 49). Its 'plus' tag (Phi-4-reasoning-plus, the
    # same architecture by its model card; its config not read here) resolves to the same geometry
    "phi4-reasoning": ("Phi-4", "14b"),
    # phi4 (January 2025): one size, 14b (the default), microsoft/phi-4 (Phi-4, built in from its config.json) in the
    # K-quant default: ollama/ollama's README row of 57f038ec7 (2025-01-08, #8350) lists 'Phi 4 | 14B | 9.1GB | ollama
    # run phi4', Phi-4's 14.66 B at Q4_K_M (8.43 GiB = 9.05 GB, as microsoft/phi-4-gguf's Q4_K_M file prints), where
    # Q4_0 would be about 8.3 GB; published before the March 2025 quantizer, so no F16 attn_qkv (not in
    # OLLAMA_QKV_F16_LIBRARIES). The library is in reg_library_test.go's inventory (fb307609)
    "phi4": ("Phi-4", "14b"),
    # deepseek-coder (November 2023): DeepSeek's DeepSeek-Coder 1.3b / 6.7b / 33b (Llama architecture), all built in
    # (deepseek-coder:33b prints general.name deepseek-ai, 62 blocks, 56 heads, 8 KV heads, n_ff 19200: the
    # DeepSeek-Coder-33B description; 6.7b-instruct-q5_K_M 32 blocks, 32 heads = 32 KV heads, n_ff 11008: 6.7B's). Which size 'latest' is was not read, so a tag must name one. Not deepseek-coder-v2
    "deepseek-coder": ("DeepSeek-Coder-{size}", None),
    # phi4-mini (February 2025): one size, 3.8b (the default), microsoft/Phi-4-mini-instruct (built in from its
    # config.json, Phi-4-mini) in the K-quant default: Ollama 0.17.4 loading phi4-mini:latest prints general.name
    # 'Phi 4 Mini Instruct', arch phi3, 32 layers, 8 KV heads, 'file type = Q4_K - Medium', 'file size = 2.31 GiB
    # (5.18 BPW)' (AETS-MAGI/vega-hbmx run_20260308_212345, batch 74): a build without the F16 attn_qkv of
    # OLLAMA_QKV_F16_LIBRARIES. Not phi4 (14b) and not phi4-mini-reasoning (another library)
    "phi4-mini": ("Phi-4-mini", "3.8b"),
    # llama4 (April 2025): 'scout' = '16x17b' = 'latest', Meta's Llama-4-Scout-17B-16E in the K-quant default (Ollama
    # loading llama4:scout prints memory.weights.total 60.6 GiB and a 1.6 GiB projector, ollama#10739); its maverick /
    # 128x17b tags (Llama-4-Maverick, not built in) are refused by OLLAMA_LIBRARY_SIZES
    "llama4": ("Llama-4-Scout-17B-16E", "16x17b"),
}
# libraries whose tags name different models by a variant word after the size, with no model read for the rest: the
# variants read. ollama.com/library/llava: LLaVA 1.6 on Vicuna (7b, 13b) and Hermes-Yi (34b), and the
# '7b-v1.6-mistral-*' builds on Mistral-7B-Instruct-v0.2 (shainakumar/cs6501workshop's Ollama 0.17.0 log of
# llava:7b-v1.6-mistral-q4_0 prints n_ff 14336, 8 KV heads, rope base 1e6: LLaVA-1.6-Mistral-7B's geometry).
# The other llava tags (the Vicuna and Yi builds) have no built-in description; their default build was not read
# ollama.com/library/command-r: its 35b tags have named two models, c4ai-command-r-v01 (64 KV heads, no GQA: the
# 35b-v0.1-* builds, the library's only model before the 08-2024 release) and c4ai-command-r-08-2024 (another config,
# not built in). A tag naming v0.1 is Command-R-v01: Ollama 0.1.30 loading the library's command-r in April 2024 prints
# general.name 'c4ai-command-r-v01', 40 blocks, head_count_kv 64, file_type 2 (Q4_0) (g29times/ollama ollama-serve.log
# at e9bb54b0, batch 51). Which build a bare command-r or command-r:35b pulls depends on the pull date: not read
# llama4: its quantized tags name the model, not the 16x17b size (17b-scout-16e-instruct-q4_K_M / -q8_0 / -fp16); a
# library of OLLAMA_LIBRARY too: its other tags (scout, 16x17b) fall back to it, 17b-maverick-* is refused there
OLLAMA_TAG_VARIANTS = {"llava": (("7b-v1.6-mistral", "LLaVA-1.6-Mistral-7B"),),
                       "command-r": (("35b-v0.1", "Command-R-v01"),),
                       "llama4": (("17b-scout-16e", "Llama-4-Scout-17B-16E"),)}
# libraries whose size tags name different architectures (ollama.com/library/deepseek-r1: 671b is DeepSeek-R1
# itself, 7b/14b/32b/70b the distills on their base models, 8b -- the default tag -- DeepSeek-R1-0528-Qwen3-8B
# since May 2025, before that the Llama-3.1-8B distill)
OLLAMA_SIZE_MODELS = {"deepseek-r1": {"671b": "DeepSeek-R1", "7b": "Qwen2.5-7B", "14b": "Qwen2.5-14B",
                                      "32b": "Qwen2.5-32B", "70b": "Llama-3.3-70B", "8b": "Qwen3-8B",
                                      "1.5b": "Qwen2.5-1.5B"},
                      "deepseek-v2": {"16b": "DeepSeek-V2-Lite"}, "deepseek-coder-v2": {"16b": "DeepSeek-V2-Lite"}}
# libraries whose pattern would compose sizes the library does not have: the sizes read. qwen3-coder's tags in
# ollama/ollama's own sources (fb307609: cmd/launch/deprecated_models_test.go qwen3-coder:30b, cmd/launch/models.go
# qwen3-coder:480b); qwen3-coder:4b is not Qwen3-4B
# phi3: mini (3.8b, also tagged 'instruct') is built in; its medium (14b) tags are not, and are refused rather than
# read as the mini
OLLAMA_LIBRARY_SIZES = {"qwen3-coder": ("30b", "480b"), "phi3": ("mini", "3.8b", "instruct"), "phi4-mini": ("3.8b",),
                        "phi4": ("14b",), "llama4": ("16x17b", "scout")}
# a mixture-of-experts tag names the total size only ('qwen3:30b', 'qwen3:235b'); the built-in names add the
# active size ('Qwen3-30B-A3B'): the tag resolves to the one built-in that extends its name by -A<n>B
_ACTIVE_SUFFIX = re.compile(r"-A\d+(?:\.\d+)?B$")
# libraries whose builds are not GGUF K-quants: Ollama's gpt-oss tags are OpenAI's MXFP4 checkpoint converted as
# is (convert_gptoss.go writes the experts as MXFP4 and keeps every other tensor's type: bf16), "file_type=MXFP4"
OLLAMA_LIBRARY_QUANT = {"gpt-oss": "mxfp4"}
# size tags whose default build is not the library's: llama3.2:1b is a Q8_0 build (`ollama list` prints llama3.2:1b
# as ID baf6a787fdff, 1.3 GB, attogram/ollama-bash-lib demos/list.md; /api/tags for that digest gives
# "quantization_level": "Q8_0", size 1321098329; its GGUF blob 74701a8c35f6 is 1321082688 bytes: 1.24 B params at
# Q8_0's 8.5 bits, where the 1b-instruct-q4_K_M tag is about 0.8 GB), while llama3.2:3b is the Q4_K_M default
OLLAMA_SIZE_QUANT = {("llama3.2", "1b"): "Q8_0"}
# libraries built by Ollama's quantizer of March 2025 - January 2026 on a fused-attn_qkv architecture (Phi-3/Phi-4):
# their attn_qkv stayed F16 (weights.OLLAMA_QKV_F16). phi4-reasoning (May 2025): 40 f16 tensors in its Q4_K_M file.
# phi4-mini-reasoning (Phi-4-mini, fused attn_qkv, same release) fits too: its Q4_K_M blob is 3155072553 bytes in an
# Ollama 0.34.4 /api/tags, where Phi-4-mini's geometry sizes 3.14 GB with attn_qkv in F16 and 2.48 GB without; it is
# not listed because no Phi-4-mini description is built in (the tag is refused before this table is read)
OLLAMA_QKV_F16_LIBRARIES = ("phi4-reasoning",)
# quantization words an Ollama tag can carry, longest first
_TAG_QUANT = re.compile(r"(?:^|-)(q[2-8]_k_[sml]|q[2-8]_k|q[458]_[01]|iq[1-4]_[a-z]+|fp16|bf16|f16|qat)(?:$|-)")


def ollama_tag(name: str):
    """(built-in name, quantization, note) for an Ollama library name[:tag], or None when `name` is not one."""
    from .names import _canonical, builtin_names  # names imports this module
    n = name.strip().lower()
    if "/" in n:
        return None
    lib, colon, tag = n.partition(":")
    if lib in OLLAMA_TAG_VARIANTS:
        found = _variant_tag(name, lib, tag)
        if found or lib not in OLLAMA_LIBRARY:
            return found
    if lib not in OLLAMA_LIBRARY:
        return None
    if colon and not tag.strip():  # 'qwen2.5:' is no tag Ollama pulls; without the colon it is 'latest'
        raise UserError(f"Ollama tag {name!r}: the tag after ':' is empty; name one ({lib}:<size>, {lib}:latest) or "
                        f"drop the ':'")
    if not tag and any(_canonical(b) == _canonical(n) for b in builtin_names()):
        return None  # 'deepseek-v3' is also a built-in name: without a tag, the built-in wins
    pattern, default_size = OLLAMA_LIBRARY[lib]
    tag = tag or "latest"
    size = default_size if tag == "latest" else tag.split("-")[0]
    if size is None:
        raise UserError(f"Ollama tag {name!r}: which size the {lib} library's 'latest' is was not read; name one "
                        f"({lib}:<size>, as on ollama.com/library/{lib})")
    if lib in OLLAMA_LIBRARY_SIZES and size not in OLLAMA_LIBRARY_SIZES[lib]:
        raise UserError(f"Ollama tag {name!r}: the {lib} library's sizes read are {', '.join(OLLAMA_LIBRARY_SIZES[lib])}; "
                        f"{size} is not one of them (it is not read as another library's model of that size): give the "
                        "model's config.json with --config FILE (or a GGUF with --gguf FILE)")
    if lib in OLLAMA_SIZE_MODELS:
        pattern = OLLAMA_SIZE_MODELS[lib].get(size, f"{lib}-{{size}}")
    m = _TAG_QUANT.search(tag)
    quant = {"fp16": "F16", "f16": "F16", "bf16": "BF16", "qat": "Q4_0_QAT"}.get(m.group(1), m.group(1).upper()) if m else None
    default = (OLLAMA_SIZE_QUANT.get((lib, size)) or OLLAMA_LIBRARY_QUANT.get(lib)
               or ("Q4_0" if lib in OLLAMA_Q4_0_LIBRARIES else OLLAMA_DEFAULT_QUANT))
    note = (f"Ollama tag {name!r}: " + (f"{quant} weights from the tag" if quant else
                                        f"the library's default build, {default}"))
    built = pattern.format(size=size.upper())
    names = builtin_names()
    if built not in names:
        moe = [n for n in names if n.startswith(built) and _ACTIVE_SUFFIX.fullmatch(n[len(built):])]
        if len(moe) == 1:
            note += f"; {size} names the total size of the mixture-of-experts {moe[0]}"
            built = moe[0]
    if lib == "deepseek-r1" and size in OLLAMA_SIZE_MODELS[lib] and built != "DeepSeek-R1":
        note += f"; {lib}:{size} is a distilled model with {built}'s architecture"
    q = quant or default
    from .weights import OLLAMA_QKV_F16, ROLE_TYPES  # weights imports spec, which imports names, which imports this
    if lib in OLLAMA_QKV_F16_LIBRARIES and q in ROLE_TYPES:  # weights.OLLAMA_QKV_F16
        q += OLLAMA_QKV_F16
        note += "; its fused attn_qkv kept in F16 (Ollama's 2025 quantizer took it for a vision tensor)"
    if lib == "mistral-small3.1" and q.startswith(("Q2_K", "Q3_K", "Q4_K", "Q5_K")):  # weights.MISTRAL3_PATCHED
        q += "_MISTRAL3"
        note += "; its output tensor keeps the base type (the 0.6 quantizer did not recognise mistral3's output)"
    return built, q, note


def _variant_tag(name: str, lib: str, tag: str):
    """A library of OLLAMA_TAG_VARIANTS: the tag must start with a variant read and name its quantization (None for
    any other tag of a library OLLAMA_LIBRARY also reads)."""
    for prefix, built in OLLAMA_TAG_VARIANTS[lib]:
        if tag == prefix or tag.startswith(prefix + "-"):
            m = _TAG_QUANT.search(tag[len(prefix):])
            if not m:
                raise UserError(f"Ollama tag {name!r}: the {lib} library's default build was not read; name the "
                                f"quantization ({lib}:{prefix}-q4_0, as on ollama.com/library/{lib})")
            quant = {"fp16": "F16", "f16": "F16", "bf16": "BF16"}.get(m.group(1), m.group(1).upper())
            return built, quant, f"Ollama tag {name!r}: {quant} weights from the tag; {lib}:{prefix} is {built}"
    if lib in OLLAMA_LIBRARY:
        return None  # read as the library's other tags are
    read = ", ".join(f"{lib}:{p}-<quant>" for p, _ in OLLAMA_TAG_VARIANTS[lib])
    raise UserError(f"Ollama tag {name!r}: of the {lib} library only {read} is read (the others have no built-in "
                    "description): give the model's config.json with --config FILE (or a GGUF with --gguf FILE)")
