"""A GGUF repo named as llama.cpp and Ollama pull it: `user/repo[:quant]` (llama-server / llama-cli `-hf`) and
`hf.co/user/repo[:quant]` (`ollama run hf.co/...`). The tag is the file's quantization, whichever GGUF runtime
loads it. Without a tag both ask the Hub's manifest for 'latest' (llama.cpp common/download.cpp
common_get_hf_file: tag = "latest" when none), which picks Q4_K_M, "or falls back to the first file in the repo if
Q4_K_M doesn't exist" (common/arg.cpp, the -hf help): sized as Q4_K_M, with a note saying so."""
import re

from ..errors import UserError
from . import unsloth as UD

DEFAULT_TAG = "Q4_K_M"
# repos with no Q4_K_M file, whose first (only) file 'latest' falls back to: (repo pattern, its type, why)
ONLY_FILE = ((re.compile(r"ggml-org/gpt-oss-\d+b-gguf", re.I), "MXFP4_MOE",
              "ggml-org's gpt-oss GGUF holds one file, llama.cpp's MXFP4 MoE type"),
             (re.compile(r"lmstudio-community/gpt-oss-\d+b-gguf", re.I), "MXFP4_MOE",
              "lmstudio-community's gpt-oss GGUF holds MXFP4 MoE files only"),
             # the QAT file priced as google/gemma-3-*-it-qat-q4_0-gguf's (weights.QAT_Q4_0: F16 embedding); these
             # repos' own embedding type was not read
             (re.compile(r"(?:ggml-org|lmstudio-community)/gemma-3-\d+b-it-qat-gguf", re.I), "Q4_0_QAT",
              "the repo holds Gemma 3's QAT Q4_0 file only: its blocks Q4_0, the embedding priced F16"))
_FORM = re.compile(r"(?:https?://)?(?P<hf>(?:hf\.co|huggingface\.co)/)?(?P<repo>[\w.-]+/[\w.-]+)(?::(?P<tag>[^:/]*))?")


def _gguf_types() -> set:
    from .weights import BARTOWSKI_L, GGUF_BPW, MXFP4_MOE, ROLE_TYPES, internal_name
    # kv's own names (an Ollama library build's variant, Q4_K_M_QKV16; MXFP4_EXPERTS_F16) are no file's type
    return {t for t in set(GGUF_BPW) | set(ROLE_TYPES) | set(BARTOWSKI_L) | {MXFP4_MOE} if not internal_name(t)}


# the dense dtypes' other names (--weights-dtype fp16, a checkpoint's float32) -> the GGUF type holding them
# (convert_hf_to_gguf --outtype f16 / f32 / bf16)
DENSE_GGUF = {"FP16": "F16", "FLOAT16": "F16", "FP32": "F32", "FLOAT32": "F32", "BFLOAT16": "BF16"}


def tag_type(tag: str) -> str | None:
    """The GGUF type a tag names (upper case; Unsloth's UD- names kept), None when it names none."""
    t = tag.strip().upper()
    t = DENSE_GGUF.get(t, t)
    if t in _gguf_types() or UD.NAME.fullmatch(t):
        return t
    return None


def same_file(a, b, unsloth: bool) -> bool:
    """Whether two GGUF types name one file: as tag_type spells them (fp16 is F16), and in an Unsloth repo with its UD-
    prefix aside (--weights-dtype Q4_K_XL over a UD-Q4_K_XL tag); plan.py and run_model.py compare a tag with
    --weights-dtype by this one rule."""
    def bare(t):
        u = (tag_type(str(t)) or str(t).strip().upper()).replace("UD_", "UD-", 1)
        return u[3:] if unsloth and u.startswith("UD-") else u
    return bare(a) == bare(b)


# a QAT repo's Q4_0 (google/gemma-3-*-it-qat-q4_0-gguf): Q4_0 blocks with an F16 embedding (weights.QAT_Q4_0)
_QAT = {"Q4_0": "Q4_0_QAT"}
# the type as a file of it is named, for a tag that pulls it (the QAT file is gemma-3-27b-it-q4_0.gguf)
_FILE_TAG = {"Q4_0_QAT": "Q4_0", "MXFP4_MOE": "MXFP4"}


def file_tag(quant: str) -> str:
    """The tag that pulls a file of this type (llama.cpp -hf, vLLM repo:TYPE)."""
    return _FILE_TAG.get(quant, quant)


def _named_in_repo(repo: str):
    """(type, why) where a GGUF repo's name ends in a type (google/gemma-3-27b-it-qat-q4_0-gguf,
    user/Qwen3-8B-Q4_K_M-GGUF from gguf-my-repo): such a repo holds that file, which 'latest' falls back to."""
    words = repo.split("/")[-1].split("-")
    if len(words) < 3 or words[-1].lower() != "gguf" or not tag_type(words[-2]):
        return None
    t = tag_type(words[-2])
    if words[-3].lower() == "qat" and t in _QAT:
        return _QAT[t], f"the repo's name gives QAT {t}: its blocks {t}, the embedding F16"
    return t, "the repo's name gives its type"


def names_gguf_repo(name: str) -> bool:
    """The name is surely a Hub GGUF repo: hf.co/... or a repo whose name ends in GGUF."""
    m = _FORM.fullmatch(name.strip())
    return bool(m and (m.group("hf") or re.search(r"(?:^|[-_.])gguf$", m.group("repo"), re.I)))


def split(name: str):
    """(repo, quant, tagged, note) for a GGUF repo name with or without its tag (tagged: the name carries it; the
    default gives way to --weights-dtype), None for any other name. A tag that names no
    GGUF type is refused where the name is surely a Hub GGUF repo (hf.co/ or a -GGUF repo); elsewhere
    ('user/model:22b', an Ollama user's tag) the name is left as it is."""
    m = _FORM.fullmatch(name.strip())
    if not m:
        return None
    repo, tag, hub = m.group("repo"), m.group("tag"), bool(m.group("hf"))
    gguf_repo = hub or re.search(r"(?:^|[-_.])gguf$", repo, re.I) is not None
    if tag is not None and tag.strip() and tag.strip().lower() != "latest":
        quant = tag_type(tag)
        own = _named_in_repo(repo) if quant else None
        if own and file_tag(own[0]) == quant:  # ':Q4_0' in a QAT Q4_0 repo is its QAT file
            quant = own[0]
        elif own and not same_file(quant, own[0], False):
            raise UserError(f"{name.strip()!r}: the repo's name says it holds {file_tag(own[0])} files, and the tag "
                            f"{tag!r} names another type, which it lacks: drop the tag or name a repo of that type")
        if quant:
            return repo, quant, True, f"{name.strip()!r}: {quant} weights from the tag (the GGUF file it names)"
        if gguf_repo:
            raise UserError(f"{name.strip()!r}: the tag {tag!r} names no GGUF quantization kv knows (Q4_K_M, Q8_0, "
                            "IQ4_XS, UD-Q4_K_XL, ...); give the file with --gguf FILE or its size with --weights-gib")
        return None
    if tag is not None and not tag.strip():
        raise UserError(f"{name.strip()!r}: the tag after ':' is empty; name the quantization (…:Q4_K_M) or drop the ':'")
    if not gguf_repo:
        return None
    only = next(((t, why) for pat, t, why in ONLY_FILE if pat.fullmatch(repo)), None) or _named_in_repo(repo)
    if only:
        return repo, only[0], False, f"weights taken as {only[0]} from the name {name.strip()!r} (no tag: {only[1]})"
    return repo, DEFAULT_TAG, False, (f"weights taken as {DEFAULT_TAG} from the name {name.strip()!r} (no tag: the file "
                                      "llama.cpp's -hf and Ollama's hf.co pull by default, the repo's first file where "
                                      "it has none)")


def refuse_checkpoint_repo(name: str, hub, source_repos) -> None:
    """A known checkpoint's own repo (a built-in's _source) read as a GGUF repo, whichever form names it (a tag,
    hf.co/, https://huggingface.co/): it holds safetensors, no file of that type (vLLM's repo:TYPE, -hf, hf.co/...)."""
    if not hub or re.search(r"(?:^|[-_.])gguf$", hub[0], re.I) or hub[0].lower() not in source_repos:
        return
    repo, quant = hub[0], hub[1]
    raise UserError(f"{name.strip()!r}: {repo} holds the safetensors checkpoint, no GGUF file: name a GGUF repo "
                    f"of it with the tag ({repo}-GGUF:{quant} where its publisher has one, or a quantizer's "
                    f"user/{repo.split('/')[1]}-GGUF:{quant}), or give {repo} with --weights-dtype {quant}"
                    + ("" if hub[2] else f" ({repo} alone: the checkpoint)"))


def refuse_checkpoint_type(name: str, hub, named) -> None:
    """A repo whose name gives a checkpoint's type (Qwen/Qwen3-8B-FP8: fp8) with a GGUF tag contradicts itself."""
    repo, quant, tagged, _ = hub
    if tagged and not names_gguf_repo(name) and named and not tag_type(named):
        raise UserError(f"{name.strip()!r}: {repo} names a {named} checkpoint and the tag {quant} a GGUF file: "
                        f"give one ({repo}, or a GGUF repo of the model with the tag)")
