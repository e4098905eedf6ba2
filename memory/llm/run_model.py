"""The model a printed command loads (report.py's last step before printing): the user's repo id, folder or GGUF file
in place of MODEL, a GGUF repo as llama-server's -hf pulls it (or vLLM's repo:TYPE), at the type the figures are for;
for Ollama, the name to run where the name given loads another file than the figures' or none (model_to_run); and for
an Ollama tag or a GGUF repo on vLLM or SGLang, which load neither, a note on what MODEL is."""
import json
import os
import re
import shlex

from . import gguf_repo as GR
from .ollama_tags import _TAG_QUANT
from .runtimes import RUNTIME_NAMES


def _file_type(t) -> str:
    """A GGUF type as a file is named: upper case, fp16 as F16, Unsloth's UD- prefix kept (its files and tags are named
    UD-Q4_K_XL: dropping it printed -hf unsloth/Qwen3-8B-GGUF:Q4_K_XL, rev23 B2)."""
    return GR.tag_type(str(t)) or str(t).strip().upper()


def gguf_pull(args, spec):
    """For a GGUF repo name (gguf_repo.py: user/repo[:TYPE], hf.co/...): (repo, the type the figures are for or None
    for the repo's default file, the file the name itself pulls); None for any other name. --weights-dtype sizes the
    weights over the name's tag (plan._given_weights), so it is the file to pull."""
    hub = GR.split(args.model) if getattr(args, "model", None) else None
    if not hub:
        return None
    repo, quant, tagged, _ = hub
    named = GR.file_tag(quant)  # no tag: the default file, or the one the repo's name gives
    wd = getattr(args, "weights_dtype", None)
    if wd is None or GR.same_file(wd, named, spec.unsloth) or GR.same_file(wd, quant, spec.unsloth):
        return repo, named if tagged else None, named
    return repo, _file_type(wd), named


def with_model(command: str, args, spec=None) -> str:
    """The printed command with the user's model in place of MODEL where it names one the runtime loads: a Hugging
    Face repo id or a model folder (vLLM, SGLang), the GGUF file or a GGUF repo at the figures' type (llama.cpp:
    -hf user/repo:TYPE, which pulls that file; with --weights-dtype Q8_0 over :Q4_K_M, the Q8_0 file)."""
    model = None
    if args.gguf and "MODEL.gguf" in command:
        return command.replace("MODEL.gguf", shlex.quote(args.gguf), 1)
    pull = gguf_pull(args, spec) if spec is not None and "-m MODEL.gguf" in command else None
    if pull:
        command = command.replace("-m MODEL.gguf", "-hf " + shlex.quote(pull[0] + (f":{pull[1]}" if pull[1] else "")), 1)
        # -hf also downloads and loads the repo's projector unless --no-mmproj is given (common/arg.cpp, the -hf
        # help): with --mmproj priced the placeholder file is redundant, without it the projector is kept off (rev23 B3)
        if " --mmproj MMPROJ.gguf" in command:
            return command.replace(" --mmproj MMPROJ.gguf", "", 1)
        if not spec.vision or _before_mmproj_flag(args):  # a build before -hf fetched projectors needs no flag
            return command
        return command + " --no-mmproj"
    hub = gguf_pull(args, spec) if spec is not None and re.search(_SERVE, command) else None
    if hub and "vllm serve MODEL" in command:
        # a GGUF repo has no config.json: vLLM loads one file of it as repo:TYPE (vLLM's docs/features/quantization/
        # gguf.md), at the type the figures are for (rev23 B5); --tokenizer only where the built-in's repo is the GGUF
        # repo's own model (a distill's or an Instruct GGUF's base repo is another tokenizer, or gated: rev25 B2)
        tok = own_tokenizer(args, spec)
        return re.sub(r"vllm serve MODEL(?= |$)", lambda m: f"vllm serve {shlex.quote(hub[0] + ':' + (hub[1] or hub[2]))}"
                      + (f" --tokenizer {shlex.quote(tok)}" if tok else ""), command, 1)
    if hub:  # SGLang: MODEL kept, gguf_serve_note says why
        return command
    local = gguf_file_of_repo(args)
    if local and "vllm serve MODEL" in command:  # (fixX, rev52 A) the GGUF file that was sized, not the 16-bit repo
        return re.sub(r"vllm serve MODEL(?= |$)", lambda m: f"vllm serve {shlex.quote(local)} --tokenizer "
                      f"{shlex.quote(args.model.strip())}", command, 1)
    if args.model and re.fullmatch(r"[\w.-]+/[\w.-]+", args.model.strip()):
        model = args.model.strip()
    elif args.config:
        model = args.config if os.path.isdir(args.config) else os.path.dirname(args.config) or "."
    if model and ("vllm serve MODEL" in command or "--model-path MODEL" in command):
        return re.sub(r"(vllm serve|--model-path) MODEL(?= |$)", lambda m: f"{m.group(1)} {shlex.quote(model)}", command, 1)
    return command


_SERVE = r"(vllm serve|--model-path) MODEL(?= |$)"


def gguf_file_of_repo(args) -> str | None:
    """For a Hugging Face repo id (not a GGUF repo) sized on vLLM at a quantized GGUF --weights-dtype (UD-Q4_K_XL,
    Q4_K_M): the local GGUF file vLLM would load, ./NAME-TYPE.gguf, a placeholder path (vLLM loads one GGUF file given
    by its path, with --tokenizer the original repo: vLLM's GGUF docs); None otherwise. The repo itself holds 16-bit
    weights: `vllm serve REPO` loads those, not what was sized (rev52 A)."""
    model, wd = (getattr(args, "model", None) or "").strip(), getattr(args, "weights_dtype", None)
    if getattr(args, "runtime", None) != "vllm" or not wd or not re.fullmatch(r"[\w.-]+/[\w.-]+", model) or GR.split(model):
        return None
    t = GR.tag_type(str(wd))
    if not t or t in ("F16", "BF16", "F32"):  # a 16-bit type under vLLM is the repo's own weights
        return None
    return f"./{model.split('/')[-1]}-{t}.gguf"
# llama.cpp's -hf fetches a repo's projector from ggml-org/llama.cpp#12694 (2025-04-01), and --no-mmproj stands in
# common/arg.cpp by #13093 (2025-04-24; its diff's context); neither PR's build number is pinned here (rev26 S1: two
# searches found no release tag for either). b4881 (the llama_context refactor, e0dbec0bc, March 2025) is the latest
# build known to be before both: one given below it gets no flag; one from b4881 to #13093's gets the flag, which it may
# lack, and mmproj_flag_note says so (rev25 S3)
MMPROJ_FLAG_AFTER = (4881,)


def _before_mmproj_flag(args) -> bool:
    from .runtimes import parse_version
    v = parse_version(getattr(args, "runtime_version", None), "llama.cpp")
    return v is not None and v < MMPROJ_FLAG_AFTER


def mmproj_flag_note(res, args, spec) -> None:
    """The printed -hf command's --no-mmproj: which builds take it (rev25 S3)."""
    cmd = res.get("command") or ""
    if args.runtime == "llama.cpp" and cmd.endswith(" --no-mmproj"):
        res["notes"].append("--no-mmproj keeps -hf from loading the repo's projector (llama.cpp fetches it with -hf from "
                            "April 2025, ggml-org/llama.cpp#12694); an older build lacks the flag and, fetching no "
                            "projector, needs none: leave it out there; builds up to about May 2026 still download the "
                            "projector file, loading none (ggml-org/llama.cpp#23265)")


def own_tokenizer(args, spec) -> str | None:
    """The built-in's source repo where the GGUF repo's name is that model itself: every word of the repo's name but
    GGUF is in the source's owner/name (unsloth/Qwen3-8B-GGUF is Qwen/Qwen3-8B), as _tag_is_the_model reads an Ollama
    tag; None for another model on its geometry (bartowski/DeepSeek-R1-Distill-Qwen-7B-GGUF is not Qwen/Qwen2.5-7B-
    Instruct) or a base repo named for an Instruct GGUF."""
    repo, hub = source_repo(spec), GR.split(args.model) if getattr(args, "model", None) else None
    if not repo or not hub:
        return None
    return repo if _words(hub[0].split("/")[-1]) - {"gguf"} <= _words(repo) else None

def source_repo(spec) -> str | None:
    """The Hugging Face repo a built-in's config.json was read from (its file's _source), None where not known."""
    from .names import MODELS_DIR
    try:
        src = json.loads((MODELS_DIR / f"{spec.name}.json").read_text(encoding="utf-8")).get("_source") or ""
    except (OSError, ValueError):
        src = ""
    m = re.match(r"https://huggingface\.co/([\w.-]+/[\w.-]+)/", src)
    return m.group(1) if m else None


def llamacpp_16bit_note(res, args) -> None:
    """llama.cpp sized from a Hub checkpoint's config.json with no --weights-dtype: a 16-bit GGUF (rev52 K), with no word
    that a quantized GGUF, the usual llama.cpp file, is another size; say how to size one."""
    if args.runtime != "llama.cpp" or args.gguf or getattr(args, "weights_dtype", None) \
            or res.get("weights_dtype") not in ("bf16", "fp16", "f16") or "-m MODEL.gguf" not in (res.get("command") or ""):
        return
    res["notes"].append(f"sized as a 16-bit GGUF ({res['weights_dtype']}, the checkpoint's own dtype); for a quantized "
                        "GGUF give its type: --weights-dtype Q4_K_M (or Q8_0, ...), or the GGUF repo itself as --model")


def gguf_serve_note(res, args, spec) -> None:
    """A GGUF repo named on vLLM or SGLang, which load a repo by its config.json, which a GGUF repo lacks (rev23 B5):
    vLLM's repo:TYPE form and what it needs, or for SGLang why MODEL is left in place."""
    if args.runtime not in ("vllm", "sglang") or not res.get("command"):
        return
    local = gguf_file_of_repo(args)
    if local and args.runtime == "vllm":
        res["notes"].append(f"{args.weights_dtype} is a GGUF type: the command loads that GGUF file (download it and give "
                            f"its path in place of {local}) with {args.model.strip()}'s tokenizer; vLLM loads a single-file "
                            f"GGUF only (a split file must be merged first); `vllm serve {args.model.strip()}` would load "
                            "the repo's own 16-bit weights, not what was sized")
        return
    pull = gguf_pull(args, spec)
    if not pull:
        return
    if args.runtime == "vllm":
        tok = own_tokenizer(args, spec)
        said = (f"with {tok}'s tokenizer, the model's own repo" if tok else
                "with the tokenizer vLLM converts from the GGUF file (slow, and for large vocabularies unstable, vLLM's "
                "GGUF docs say; they advise --tokenizer with the model's own Hugging Face repo, which kv does not know "
                "for this name" + (f": {source_repo(spec)}, whose config.json sized the figures, is another model's or "
                                   "a base repo" if source_repo(spec) else "") + ")")
        res["notes"].append(f"{args.model.strip()!r} is a GGUF repo, with no config.json for vLLM to read: the command "
                            f"loads its {pull[1] or pull[2]} file as repo:TYPE {said}; one single-file GGUF only (a "
                            "split file must be merged first); repo:TYPE needs a vLLM build whose GGUF docs show it "
                            "(vllm serve unsloth/Qwen3-0.6B-GGUF:Q4_K_M; kv does not know the first such release, and "
                            "older builds took only exact GGML type names there): on an older one download the file and "
                            "give its path as MODEL; builds whose GGUF support moved out of vLLM need the "
                            "vllm-gguf-plugin package")
    else:
        res["notes"].append(f"{args.model.strip()!r} is a GGUF repo, with no config.json for SGLang to read: MODEL is "
                            "left in place (a Hugging Face repo id or a local model folder); the figures above are for "
                            f"the repo's {pull[1] or pull[2]} GGUF weights, not for an original checkpoint's")


def _words(name: str) -> set:
    return set(re.findall(r"[a-z]+|\d+(?:\.\d+)*", name.lower()))


def _tag_is_the_model(tag: str, builtin: str) -> bool:
    """Whether an Ollama tag's model is the built-in itself (qwen2.5:7b is Qwen2.5-7B, llama3.2-vision Llama-3.2-11B-
    Vision), not another model sized on its geometry: every word of the library's name is in the built-in's
    (qwen2.5-coder, deepseek-r1:7b and mistral-small3.2 keep a word the built-in lacks), and the tag names no later
    release with a context of its own (names.RELEASE_CONTEXT: phi3:mini-128k is not Phi-3-mini-4k's repo)."""
    from .names import _release_context
    lib = tag.strip().split(":")[0]
    return _words(lib) <= _words(builtin) and _release_context(tag, builtin) is None


def ollama_tag_note(res, args, spec) -> None:
    """vLLM and SGLang load a Hugging Face repo id or a local folder, not an Ollama tag (kv --model qwen2.5:7b --runtime
    vllm printed 'vllm serve MODEL' and nothing more): the repo the built-in's config.json was read from, when known."""
    if not spec.ollama or not re.search(_SERVE, res["command"]):
        return
    repo = source_repo(spec)
    # the figures' weights: --weights-dtype's, else the tag's build (SGLang's answer names no weights_dtype)
    given = getattr(args, "weights_dtype", None)
    from .weights import shown_type
    sized = shown_type(res.get("weights_dtype") or given or spec.quant)
    tag = bool(sized) and not given  # --weights-dtype sizes a plain file, never the tag's build (rev67f F5)
    figures = (f"the figures above are for the tag's {sized} build" if tag else
               f"the figures above are for {sized} weights (--weights-dtype)" if sized else "")
    if repo and not _tag_is_the_model(args.model, spec.name):
        # a fine-tune, distill or later release on the built-in's geometry: that repo is not the user's model
        said = (f"{args.model!r} is another model on {spec.name}'s architecture: {repo}, whose config.json "
                "sized the figures, is that base architecture, not the tag's model"
                + (f"; {figures}" if figures else "") + f"; to plan the model itself on {RUNTIME_NAMES[args.runtime]}, "
                f"give its own Hugging Face repo: kv --model USER/REPO --runtime {args.runtime}")
    elif repo:
        said = (f"{args.model!r} reads as {spec.name}, whose config.json was read from {repo}; "
                + (f"{figures}, not that repo's " + (f"{spec.dtype} " if spec.dtype else "") + "weights; " if tag else
                   f"{figures}; " if figures else "")
                + f"serving the repo needs its own plan: kv --model {repo} --runtime {args.runtime}")
    else:
        said = f"the Hugging Face repo of {args.model!r} is not known here" + (f"; {figures}" if figures else "")
    res["notes"].append(f"{RUNTIME_NAMES[args.runtime]} cannot pull an Ollama tag: MODEL is a Hugging Face repo id or a "
                        f"local model folder; {said}")


def modelfile_from(args, spec):
    """(the name an Ollama Modelfile's FROM takes, None) where the model given is one Ollama loads: a library tag (or a
    user's, name:tag: a Hub repo id has no ':'), a GGUF repo's hf.co/ name or the --gguf file; else (None, why). A Hugging
    Face repo id of a checkpoint (Qwen/Qwen3-8B) was printed as FROM and `ollama run` though Ollama cannot pull it
    (rev26 B1)."""
    given, path = (args.model or "").strip(), getattr(args, "gguf", None)
    form = GR._FORM.fullmatch(given) if given else None
    if given and (spec.ollama or ":" in given and not form or form and form.group("hf") and gguf_pull(args, spec)):
        return given, None
    if path:
        return path, None
    what = f"{given!r} is neither" if given else "no model name was given (--config)"
    return None, ("Ollama needs a GGUF: a library tag or hf.co/USER/REPO-GGUF:TYPE (or a GGUF file with --gguf); "
                  + what)


def _ollama_spelling(t: str) -> str | None:
    """A GGUF type as the Ollama library's tags end in it (q8_0, q4_K_M, fp16, bf16); None for a type its tags do not
    use (the IQ types)."""
    return {"F16": "fp16", "BF16": "bf16"}.get(t) or ("q" + t[1:] if re.fullmatch(r"Q[2-8]_(?:K(?:_[SML])?|[01])", t)
                                                      else None)


def _a(name) -> str:
    """'a' or 'an' before a name as it is spoken: a GGUF type or a card name spelled letter by letter (an IQ4_XS, an F16,
    a Q8_0, an NVIDIA, an RTX 4090, an H100; rev23 S3) or read as a word (a GeForce, an Apple); the one helper, report.py
    calls it too."""
    word = str(name).split()[0] if str(name).split() else ""
    spelled = word.isupper() or any(ch.isdigit() for ch in word)  # NVIDIA, RTX, H100, Q8_0: read letter by letter
    first = word[:1].upper()
    vowel = first in "AEFHILMNORSX" if spelled and first.isalpha() else first in "AEIOU"
    return ("an " if vowel else "a ") + str(name)


def ollama_run_line(res, args, spec) -> None:
    """Ollama runs the tag or hf.co name it is given: where that loads another file than the one --weights-dtype sized,
    or is a Hub repo named without hf.co/ (Ollama pulls a Hub GGUF as hf.co/{username}/{repository}:{quantization},
    huggingface/hub-docs docs/hub/ollama.md at 00375367 line 53; rev23 S2), res["model_to_run"] = {"command":
    ollama run NAME, "model": the NAME that loads the figures' file (a Modelfile's FROM), both None where kv cannot
    name one, "why"} (kv --model qwen2.5:7b --weights-dtype q8_0 sized q8_0 weights beside a command that, with the
    tag given, loads the library's Q4_K_M build)."""
    if args.runtime != "ollama":
        return
    wd = getattr(args, "weights_dtype", None)
    pull = gguf_pull(args, spec)
    given = (args.model or "").strip()
    hub_form = bool(pull) and bool(GR._FORM.fullmatch(given).group("hf"))
    if pull and (not hub_form or (pull[1] and pull[1] != pull[2])):  # a Hub GGUF: its hf.co name pulls a file by type
        name, sized = f"hf.co/{pull[0]}" + (f":{pull[1]}" if pull[1] else ""), pull[1] or pull[2]
        res["model_to_run"] = {"command": f"ollama run {name}", "model": name,
                               "why": f"the {sized} file these figures are for; " + (
                                   f"{given} pulls the {pull[2]} file" if hub_form else
                                   f"Ollama pulls a Hub repo only as hf.co/USER/REPO[:TYPE], not as {given}")}
        return
    if not wd:
        return
    if not spec.ollama or str(wd).lower() == str(spec.quant).lower():
        return
    lib, _, tag = args.model.strip().partition(":")
    from .weights import MISTRAL3_PATCHED, internal_name
    variant = internal_name(spec.quant)  # kv's own name for the library's build (Q4_K_M_QKV16): never printed
    if variant and GR.same_file(wd, variant[1], spec.unsloth):  # the tag's own file type, sized without the build's quirk
        quirk = ("its output tensor kept at the base type" if str(spec.quant).endswith(MISTRAL3_PATCHED)
                 else "its fused attn_qkv kept in F16")
        res["model_to_run"] = {"command": f"ollama run {given}", "model": given,
                               "why": f"the library's {variant[1]} build, the type these figures are for, but sized as a "
                                      f"plain {variant[1]} file: this build differs ({quirk}); leave out --weights-dtype "
                                      "to size the build itself"}
        return
    t = _file_type(wd)
    said, hub = _ollama_spelling(t), f"{_a(t)} file from the Hub: ollama run hf.co/USER/REPO-GGUF:{t}"
    m = _TAG_QUANT.search(tag.lower())
    if said and m:  # the tag names its build: the same tag with the figures' type in its place
        new = tag[:m.start(1)] + said + tag[m.end(1):]
        res["model_to_run"] = {"command": f"ollama run {lib}:{new}", "model": f"{lib}:{new}",
                               "why": f"the tag given with {said} in place of {tag[m.start(1):m.end(1)]}, the weights "
                                      f"these figures are for; composed from the tag, not read from the library's list "
                                      f"(ollama.com/library/{lib}/tags): where it has no such tag, {hub}"}
        return
    res["model_to_run"] = {"command": None, "model": None,
                           "why": f"ollama run {args.model.strip()} loads the library's "
                                  f"{variant[1] if variant else spec.quant} build, not the "
                                  f"{wd} weights these figures are for; kv does not hold the library's tags: run its "
                                  f"{t} tag of this size where it has one (ollama.com/library/{lib}/tags"
                                  + (f", tags ending in -{said}" if said else "") + f"), or {hub}"}
