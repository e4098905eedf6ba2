"""The model a printed command loads (report.py's last step before printing): the user's repo id, folder or GGUF file
in place of MODEL, and for an Ollama tag on vLLM or SGLang, which load no tag, a note on the repo the figures'
config.json came from."""
import json
import os
import re
import shlex

from .runtimes import RUNTIME_NAMES


def with_model(command: str, args) -> str:
    """The printed command with the user's model in place of MODEL where it names one the runtime loads: a Hugging
    Face repo id or a model folder (vLLM, SGLang), the GGUF file (llama.cpp)."""
    model = None
    if args.gguf and "MODEL.gguf" in command:
        return command.replace("MODEL.gguf", shlex.quote(args.gguf), 1)
    if args.model and re.fullmatch(r"[\w.-]+/[\w.-]+", args.model.strip()):
        model = args.model.strip()
    elif args.config:
        model = args.config if os.path.isdir(args.config) else os.path.dirname(args.config) or "."
    if model and ("vllm serve MODEL" in command or "--model-path MODEL" in command):
        return re.sub(r"(vllm serve|--model-path) MODEL(?= |$)", lambda m: f"{m.group(1)} {shlex.quote(model)}", command, 1)
    return command


def ollama_tag_note(res, args, spec) -> None:
    """vLLM and SGLang load a Hugging Face repo id or a local folder, not an Ollama tag (kv --model qwen2.5:7b --runtime
    vllm printed 'vllm serve MODEL' and nothing more): the repo the built-in's config.json was read from, when known."""
    if not spec.ollama or not re.search(r"(vllm serve|--model-path) MODEL(?= |$)", res["command"]):
        return
    from .names import MODELS_DIR
    try:
        src = json.loads((MODELS_DIR / f"{spec.name}.json").read_text(encoding="utf-8")).get("_source") or ""
    except (OSError, ValueError):
        src = ""
    m = re.match(r"https://huggingface\.co/([\w.-]+/[\w.-]+)/", src)
    # the figures' weights: --weights-dtype's, else the tag's build (SGLang's answer names no weights_dtype)
    sized = res.get("weights_dtype") or getattr(args, "weights_dtype", None) or spec.quant
    tag = sized and sized == spec.quant
    figures = (f"the figures above are for the tag's {sized} build" if tag else
               f"the figures above are for {sized} weights (--weights-dtype)" if sized else "")
    if m:
        repo = m.group(1)
        said = (f"{args.model!r} reads as {spec.name}, whose config.json was read from {repo}; "
                + (f"{figures}, not that repo's " + (f"{spec.dtype} " if spec.dtype else "") + "weights; " if tag else
                   f"{figures}; " if figures else "")
                + f"serving the repo needs its own plan: kv --model {repo} --runtime {args.runtime}")
    else:
        said = f"the Hugging Face repo of {args.model!r} is not known here" + (f"; {figures}" if figures else "")
    res["notes"].append(f"{RUNTIME_NAMES[args.runtime]} cannot pull an Ollama tag: MODEL is a Hugging Face repo id or a "
                        f"local model folder; {said}")
