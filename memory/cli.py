"""`gpu-garden` command line. Each subcommand's work lives in its own module, imported lazily so
`gpu-garden --help` stays instant; exit codes: 0 ok, 1 nothing found / does not fit, 2 usage or input error.
An error is one line on stderr; under --json it is also one JSON object on stdout (_report_error)."""
import argparse
import difflib
import importlib
import json
import math
import os
import sys

from .cli_args import OnOff, add_json
from .errors import UserError
from .units import gib_arg

# subcommand -> (module in this package, function taking the parsed args and returning an exit code)
COMMANDS = {
    "demo": ("demo", "run_cli"),
    "budget": ("budget.probe", "run_cli"),
    "estimate": ("estimate.formula", "run_cli"),
    "triage": ("triage.engine", "run_cli"),
    "kv": ("llm.kv", "run_cli"),
    "trace": ("trace.tracer", "run_cli"),
}


def _positive(kind):
    """argparse type: a number above 0 (a count, a size); 0 must not read as 'not given'."""
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a {'whole ' if kind is int else ''}number: {text!r}") from None
        if not (math.isfinite(value) and value > 0):
            raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
        return value
    return parse


def _fraction(text):
    """argparse type: a share of memory in (0, 1]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (math.isfinite(value) and 0 < value <= 1):
        raise argparse.ArgumentTypeError(f"must be a share above 0 and at most 1, got {text}")
    return value


class _UsageExit(SystemExit):
    """A usage error: exit 2 as argparse's own (SystemExit), its line already on stderr; main() adds the JSON form."""
    def __init__(self, command, message):
        super().__init__(2)
        self.command, self.message = command, message


def _usage_error(prog, message):
    """One line on stderr naming the help to read, exit 2 (argparse would print the whole usage too)."""
    message = f"{message} (see {prog} --help)"
    print(f"{prog}: error: {message}", file=sys.stderr)
    raise _UsageExit(prog.split()[1] if " " in prog else None, message)


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        _usage_error(self.prog, message)


def _report_error(command, message, kind, as_json) -> None:
    """An error as one line on stderr and, under --json, also as one JSON object on stdout, so that a pipe into a JSON
    reader gets an answer it can read: {"error": the line's message, "kind": usage (the command line) | input (a file
    or value the subcommand refused) | io (a path it could not read or write), "command": the subcommand}."""
    prog = "gpu-garden" + (f" {command}" if command else "")
    print(f"{prog}: error: {message}", file=sys.stderr)
    if as_json:
        print(json.dumps({"error": message, "kind": kind, "command": command}), flush=True)


def _runtime(value: str) -> str:
    """llamacpp, llama-cpp, llama_cpp, llama-server (the server's binary) -> llama.cpp; argparse checks the choices after."""
    v = value.strip().lower()
    return "llama.cpp" if v in ("llamacpp", "llama-cpp", "llama_cpp", "llama.cpp", "llama-server", "llama_server") else v


def _int_or_word(value: str):
    """A count, or a word the runtime takes in its place (llama.cpp's -ngl auto / all): checked where it is read."""
    try:
        return int(value)
    except ValueError:
        return value


CPU_MOE_ALL = 1024  # --cpu-moe: every layer (more than any model's layer count; the plan takes the model's)


def _nonneg_int(value):
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a whole number >= 0, got {value!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"a whole number >= 0, got {value!r}")
    return n


# A runtime's or ComfyUI's own spelling of an option, as users copy it from their command line -> what the
# subcommand calls it. An unrecognized argument in this table gets the option to type instead.
RUNTIME_SPELLINGS = {
    "kv": {
        "--max-model-len": ("--ctx N", "vLLM's --max-model-len"),
        "--context-length": ("--ctx N", "SGLang's --context-length"),
        "-c": ("--ctx N", "llama.cpp's -c"), "--ctx-size": ("--ctx N", "llama.cpp's --ctx-size"),
        "-np": ("--parallel N", "llama.cpp's -np"),
        "-ngl": ("--ngl N", "llama.cpp's -ngl"), "--n-gpu-layers": ("--ngl N", "llama.cpp's --n-gpu-layers"),
        "--gpu-layers": ("--ngl N", "llama.cpp's --gpu-layers"),
        "--kv-cache-dtype": ("--kv-dtype T", "vLLM's and SGLang's --kv-cache-dtype"),
        "-ctk": ("--kv-dtype T", "llama.cpp's -ctk"), "--cache-type-k": ("--kv-dtype T", "llama.cpp's --cache-type-k"),
        "-ctv": ("--kv-dtype-v T", "llama.cpp's -ctv"), "--cache-type-v": ("--kv-dtype-v T", "llama.cpp's --cache-type-v"),
        "-fa": ("--flash-attn on|off|auto", "llama.cpp's -fa"),
        "-ub": ("--ubatch N", "llama.cpp's -ub"), "--ubatch-size": ("--ubatch N", "llama.cpp's --ubatch-size"),
        "-b": ("--batch N", "llama.cpp's -b"), "--batch-size": ("--batch N", "llama.cpp's --batch-size"),
        "-ts": ("--tensor-split A,B,..", "llama.cpp's -ts"),
        "-ot": ("--override-tensor PATTERN=CPU", "llama.cpp's -ot"),
        "-ncmoe": ("--n-cpu-moe N", "llama.cpp's -ncmoe"), "-cmoe": ("--cpu-moe", "llama.cpp's -cmoe"),
        "-tp": ("--tensor-parallel-size N", "vLLM's -tp"), "--tp": ("--tensor-parallel-size N", "SGLang's --tp"),
        "--tp-size": ("--tensor-parallel-size N", "SGLang's --tp-size"),
        "-pp": ("--pipeline-parallel-size N", "vLLM's -pp"), "-dp": ("--data-parallel-size N", "vLLM's -dp"),
        "--dp": ("--data-parallel-size N", "SGLang's --dp"), "--dp-size": ("--data-parallel-size N", "SGLang's --dp-size"),
        "--quantization": ("--weights-dtype T", "vLLM's --quantization"), "-q": ("--weights-dtype T", "vLLM's -q"),
        "-m": ("--gguf FILE (or --model NAME)", "llama.cpp's -m"),
    },
    "estimate": {
        "--batch-size": ("--batch B", "EmptyLatentImage's batch_size"),
        "--fp32-vae": ("--vae-dtype fp32", "ComfyUI's --fp32-vae"), "--fp16-vae": ("--vae-dtype fp16", "ComfyUI's --fp16-vae"),
        "--bf16-vae": ("--vae-dtype bf16", "ComfyUI's --bf16-vae"),
        "--fp8_e4m3fn-unet": ("--weights-dtype fp8", "ComfyUI's --fp8_e4m3fn-unet"),
        "--fp16-unet": ("--weights-dtype fp16", "ComfyUI's --fp16-unet"), "--bf16-unet": ("--weights-dtype bf16", "ComfyUI's --bf16-unet"),
        "--fp32-unet": ("--weights-dtype fp32", "ComfyUI's --fp32-unet"),
        "--cpu": ("--device cpu", "ComfyUI's --cpu"),
    },
}


def _ctx(text: str) -> int:
    """argparse type of kv --ctx: a whole number; 'auto' (the runtime fitting the context itself) says what to type."""
    if text.strip().lower() == "auto":
        raise argparse.ArgumentTypeError(_CTX_AUTO)
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number of tokens: {text!r}") from None


_CTX_AUTO = ("'auto' (the runtime fits the context itself) is not a length kv can plan: leave --ctx out, give "
             "--vram, and read the 'largest context' line")


def _unrecognized(command, extras, options=()) -> str:
    """The error for arguments no option of `command` reads, with the option to type for a runtime's own spelling."""
    hints = []
    table = RUNTIME_SPELLINGS.get(command, {})
    for i, arg in enumerate(extras):
        name, eq, value = arg.partition("=")
        if name not in table:
            continue
        instead, what = table[name]
        hint = f"{what} is {instead} here"
        if not eq and i + 1 < len(extras) and not extras[i + 1].startswith("-"):
            value = extras[i + 1]
        if instead.split()[0] == "--ctx" and value.strip().lower() == "auto":  # a row that means --ctx
            hint += "; " + _CTX_AUTO
        hints.append(hint)
    known = [o for o in (options or ()) if o.startswith("--")]
    for arg in extras:  # (fixX, rev52 D) a close match for a mistyped option: --modle -> --model
        name = arg.partition("=")[0]
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.75) if name.startswith("--") else []
        if close and name not in table:
            hints.append(f"did you mean {close[0]}?")
    return "unrecognized arguments: " + " ".join(extras) + "".join("; " + h for h in hints)


def _unknown_first(parser, argv) -> None:
    """An option the subcommand does not know, named before argparse's required-option error hides it (`kv --modle
    qwen3:8b` said only "one of the arguments --config --gguf --model is required", rev52 D): the command line is read
    once more with nothing required, and any unrecognized argument is the usage error (exit 2)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    subs = next((a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)), {})
    command = next((a for a in argv if not a.startswith("-")), None)
    sub = subs.get(command)
    if sub is None or "-h" in argv or "--help" in argv:
        return
    rest = argv[argv.index(command) + 1:]
    rest = rest[:rest.index("--")] if "--" in rest else rest
    if all(a.partition("=")[0] in sub._option_string_actions for a in rest if a.startswith("--")):
        return  # every long option is one it knows (or an abbreviation argparse takes: read below)
    for action in sub._actions:
        action.required = False
    for group in sub._mutually_exclusive_groups:
        group.required = False
    _, extras = sub.parse_known_args(rest)  # a bad value is the same usage error the full read would give
    if extras:
        _usage_error(f"gpu-garden {command}", _unrecognized(command, extras, sub._option_string_actions))


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="gpu-garden", description="See GPU memory, estimate a run's footprint, and triage out-of-memory logs.")
    p.add_argument("--version", action="version", version="gpu-garden " + _version())
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    s = sub.add_parser("demo", help="this machine's budget, a sample estimate and a triaged sample log, on embedded data")
    add_json(s)

    s = sub.add_parser("budget", help="memory per device, split by owner")
    add_json(s, "the snapshot as one JSON object (with --watch, one a line)")
    s.add_argument("--watch", type=float, metavar="SECONDS", help="print a new snapshot every SECONDS until interrupted")

    s = sub.add_parser("estimate", help="per-phase peak memory of model files or a whole workflow, as ComfyUI would run it")
    from .estimate.report import add_cli_arguments  # light: no torch, no comfy
    add_cli_arguments(s)
    s.add_argument("--measured", metavar="RUNS.jsonl",
                   help="also show the peak measured here by recorded runs of the same model files and size (the flight recorder's runs.jsonl)")

    s = sub.add_parser("triage", help="find out-of-memory errors in a log, name the cause, print the fix",
                       epilog="exit status: 0 an out-of-memory error was found, 1 none was found, 2 a missing file, "
                              "a directory, a model file (safetensors, GGUF), a compressed file, or a usage error")
    s.add_argument("file", nargs="?", default="-", metavar="FILE", help="log file, or - for standard input (default)")
    add_json(s)

    from .llm.report import KV_EXIT_STATUS  # light: no torch
    from .llm.ollama_ctx import tiers_help  # light: the tiers' one table
    s = sub.add_parser("kv", help="LLM memory: weights + KV cache + runtime overhead, and the flags that fit",
                       epilog=KV_EXIT_STATUS, allow_abbrev=False)  # --swa-full is no --swa-full-tokens-ratio
    src = s.add_mutually_exclusive_group(required=True)
    src.add_argument("--config", metavar="FILE", help="Hugging Face config.json, its model folder (exact weights from the safetensors there), or a .safetensors file")
    src.add_argument("--gguf", metavar="FILE", help="GGUF model file (metadata and exact tensor sizes from its header)")
    src.add_argument("--model", metavar="NAME", help="a built-in model name, Hugging Face repo id or Ollama tag (see --model list), or a local "
                     "model folder, config.json, .safetensors or GGUF file (read as --config / --gguf; the runtime is still vllm "
                     "unless --runtime names another)")
    s.add_argument("--ctx", type=_ctx, help="vLLM --max-model-len, llama.cpp -c (shared by the slots), Ollama num_ctx (per request); "
                   "default: what the runtime picks (docs/kv.md): the model's own (config.json) for vLLM and SGLang; "
                   "llama.cpp: 4096 (b4020-b7399), else the model's trained context (--fit builds lower it to fit, "
                   "not below 4096); Ollama: 2048 before 0.6.7, 4096, and from 0.15.5 by the GPUs' total memory "
                   f"({tiers_help()})")
    s.add_argument("--parallel", type=int, default=1, help="requests at once (vLLM: checked against its concurrency; -np; OLLAMA_NUM_PARALLEL)")
    s.add_argument("--kv-dtype", help="KV cache type: f16, bf16, fp8 (vLLM), q8_0, q4_0 (llama.cpp/Ollama; -ctk); "
                   "default: the runtime's (vLLM's auto: the model's dtype, fp32 for an fp32 model; else f16)")
    s.add_argument("--kv-dtype-v", help="llama.cpp V cache type when it differs from K (-ctv)")
    s.add_argument("--weights-dtype", help="size the weights as bf16, fp16, fp8, int8, w8a8, w4a16, awq, gptq, Q4_K_M, Q8_0, IQ4_XS, ...; "
                   "an Unsloth Dynamic type (UD-Q4_K_XL, UD-IQ2_XXS, ...) alone gives a range")
    wsize = s.add_mutually_exclusive_group()
    wsize.add_argument("--weights-gib", type=_positive(float), metavar="N",
                       help="the weights as the file's size in GiB (an Unsloth Dynamic GGUF without --gguf): taken as given")
    wsize.add_argument("--weights-size", metavar="SIZE",
                       help="the same with units, as the Hugging Face Hub lists a file: 17.3GB (decimal), 16.1GiB, bytes")
    s.add_argument("--vram", type=gib_arg, metavar="GIB", help="GPU memory to fit in. vLLM/SGLang: the card's total as torch reports it (a '24 GB' RTX 4090 "
                   "is 23.55 GiB; default with --gpu-name: that card's, if known); Ollama: the free memory it "
                   "schedules on (nvidia-smi's free, or the 'available' in Ollama's log); llama.cpp: the card's "
                   "total; default with --gpu-name, Ollama and llama.cpp too: that card's total, for an idle card; "
                   "default: this machine's first GPU (Ollama: its free memory)")
    s.add_argument("--runtime", type=_runtime, choices=["vllm", "llama.cpp", "ollama", "sglang"],
                   help="default: ollama for an Ollama library tag (qwen3:8b) or hf.co/user/repo-GGUF[:quant], else vllm (a "
                        "local GGUF file too: --runtime llama.cpp for llama-server -m)")
    s.add_argument("--runtime-version", metavar="V", help="e.g. 0.11.0 (vLLM), b6500 (llama.cpp), 0.12.3 (Ollama); an untagged "
                   "build with the release it is based on: '0.1.dev1+ge08a6f3ae based on 0.23.0'; none given: vLLM, SGLang and llama.cpp as the newest release kv "
                   "models; Ollama as its own engine (0.29's and earlier: 0.30 or later runs llama-server, give that "
                   "version to size it)")
    s.add_argument("--gpu-memory-utilization", type=float, metavar="F", help="vLLM's share of the GPU (default: the version's, 0.92 from vLLM 0.20.0, 0.90 "
                   "before)")
    s.add_argument("--max-num-batched-tokens", type=_positive(int), metavar="N", help="vLLM profile batch (sets the activation peak)")
    s.add_argument("--max-num-seqs", type=_positive(int), metavar="N", help="vLLM sequences per step (sampler part of the activation peak)")
    s.add_argument("--gpu-name", "--gpu", metavar="NAME", help="the card's name (vLLM keeps its small defaults on an A100); "
                   "--gpu is the same option")
    s.add_argument("--vllm-engine", choices=["v0", "v1"], help="vLLM engine as VLLM_USE_V1 sets it (default: the version's)")
    s.add_argument("--vllm-sampler", choices=["native", "flashinfer"], help="vLLM's top-k/top-p sampler as its log names it (default: native)")
    s.add_argument("--moe-backend", metavar="NAME", help="vLLM's --moe-backend, one of vLLM's names (cutlass: an NVFP4 MoE runs vLLM's own "
                   "CUTLASS experts, whose profile batch holds more per token; default: vLLM's pick)")
    s.add_argument("--vllm-mla-disable", action="store_true", default=None,
                   help="vLLM with VLLM_MLA_DISABLE=1: an MLA model's cache holds every head's K and V (qk_nope + "
                        "qk_rope each), not the latent")
    s.add_argument("--vllm-entrypoint", choices=["serve", "llm", "unsloth"], help="vllm serve (default), the offline LLM() class (larger batch defaults), or unsloth (its LLM(), bitsandbytes scales kept packed, LoRA slots at rank 64 unless --max-lora-rank)")
    s.add_argument("--llamacpp-entrypoint", choices=["server", "library"], help="llama-server (default: its prompt graph "
                   "reserves -np rows of logits) or another program on libllama's defaults (llama-simple, a binding: a whole ubatch's)")
    s.add_argument("--tensor-parallel-size", type=int, metavar="N", help="vLLM tensor parallelism: figures per GPU, --vram one GPU's")
    s.add_argument("--data-parallel-size", type=int, metavar="N",
                   help="vLLM --data-parallel-size (one engine's figures; a MoE's routed experts over TP x DP GPUs) or "
                        "SGLang --dp with --enable-dp-attention (one DP rank's); --vram one GPU's")
    s.add_argument("--enable-dp-attention", action="store_true", default=None,
                   help="SGLang --dp N --enable-dp-attention (with --data-parallel-size N): attention over TP/N GPUs, one pool a DP rank")
    s.add_argument("--pipeline-parallel-size", type=int, metavar="N",
                   help="vLLM pipeline parallelism: stage 0's figures, the smallest stage's tokens; --vram one GPU's")
    s.add_argument("--pp-layer-partition", metavar="A,B,..", help="vLLM's VLLM_PP_LAYER_PARTITION: layers per stage")
    s.add_argument("--nccl-nvls", choices=["on", "off", "auto"],
                   help="vLLM tensor parallelism: NCCL's NVLS buffers (~2.1 GiB a GPU) on an NVSwitch board; off for a "
                        "4-GPU HGX board or NCCL_NVLS_ENABLE=0 (default auto: by the card's name)")
    s.add_argument("--enforce-eager", action="store_true", default=None, help="vLLM without CUDA graphs")
    s.add_argument("--language-model-only", action="store_true", default=None,
                   help="vLLM --language-model-only: a vision-language model's tower is neither loaded nor profiled")
    s.add_argument("--limit-mm-per-prompt", metavar="JSON",
                   help="vLLM --limit-mm-per-prompt, as JSON ('{\"image\": 2, \"video\": 0}', a value a count or "
                        "{\"count\": N}) or the image=2,video=0 form of vLLM before 0.10: the profile encodes at most "
                        "max_num_seqs x this many items; a modality at 0 is not profiled, and a tower whose modalities "
                        "are all 0 is neither loaded nor profiled (a modality not given: vLLM's 999); an image's width and "
                        "height ({\"image\": {\"count\": 1, \"width\": 512, \"height\": 512}}) shrink each profiled "
                        "copy of a Qwen-VL image, not their number; the other options and towers keep their largest item")
    s.add_argument("--mm-encoder-tp-mode", choices=["weights", "data"],
                   help="vLLM --mm-encoder-tp-mode under tensor parallelism (default weights: the vision tower's "
                        "matmuls split over the GPUs); data: the whole tower on every GPU, the profile's copies shared "
                        "out whole (Qwen3-VL and Qwen 3.5+ towers; vLLM falls back to weights for a model without it)")
    s.add_argument("--enable-prefix-caching", action=OnOff, default=None,
                   help="vLLM --enable-prefix-caching: a hybrid model's gated-DeltaNet / Mamba-2 state keeps one page "
                        "more a request (vLLM's 'align' mode); vLLM leaves it off for hybrid models unless given")
    s.add_argument("--mamba-ssm-cache-dtype", "--mamba-ssm-dtype", dest="mamba_ssm_cache_dtype",
                   choices=["auto", "float32", "float16", "bfloat16"],
                   help="a gated-DeltaNet / Mamba-2 layer's ssm state element (default auto: the config's, float32 for "
                        "Qwen 3.5+): vLLM's --mamba-ssm-cache-dtype (it sets the state page and the attention block) or "
                        "SGLang's --mamba-ssm-dtype (it sets each request state of its recurrent-state pool)")
    s.add_argument("--lm-head-dtype", choices=["int8", "int4"],
                   help="vLLM: a checkpoint whose quantization also targets lm_head (groups of 128)")
    s.add_argument("--mtp-tokens", type=int, metavar="N", help="MTP speculative decoding of a Qwen 3.5+ model, N draft tokens: vLLM --speculative-config method mtp (its drafter layer joins the KV pool, its module the weights); llama.cpp --spec-type draft-mtp --spec-draft-n-max N (1 + N recurrent-state snapshots, the MTP context's f16 cache)")
    s.add_argument("--speculative-config", metavar="JSON", help="vLLM --speculative-config as vLLM takes it: method mtp is --mtp-tokens; method dflash, eagle or eagle3 with \"model\" the drafter's config.json (or its folder), or a published DFlash drafter's Hub repo id kv keeps a table of (z-lab/Qwen3.6-27B-DFlash, z-lab/Qwen3.6-35B-A3B-DFlash), counts its weights and its layers' share of the KV pool (a kind of their own in vLLM's layer groups)")
    s.add_argument("--draft-kv-dtype", help="llama.cpp draft-mtp: the MTP context's cache type, K and V (-ctkd / -ctvd; f16 by default)")
    s.add_argument("--max-lora-rank", type=int, metavar="R", help="vLLM --enable-lora: the LoRA slots' rank (sized at load; default 16 with --max-loras, Unsloth's 64)")
    s.add_argument("--max-loras", type=int, metavar="N", help="vLLM --enable-lora: LoRA slots (default 1)")
    s.add_argument("--quant-group", type=int, metavar="G", help="vLLM/SGLang, an AWQ/GPTQ/compressed-tensors 4-bit checkpoint named without its config.json: the group_size its quantization_config states (default 128; cyankiwi's Qwen3.6-35B-A3B-AWQ-4bit states 32)")
    s.add_argument("--quant-skip", metavar="A,B,..", help="modules a bitsandbytes/AWQ checkpoint keeps in 16 bits, as its log or config prints them (llm_int8_skip_modules / modules_to_not_convert)")
    s.add_argument("--mem-fraction-static", type=_fraction, metavar="F", help="SGLang's static share for weights + KV pool (default: SGLang's by version: 0.4's table by TP, later by the card's size)")
    s.add_argument("--swa-full-tokens-ratio", type=_fraction, metavar="R", help="SGLang, a hybrid sliding-window model (Gemma 4, gpt-oss, Llama 4): the sliding layers' pool as a share of the full layers' tokens (default 0.8)")
    s.add_argument("--max-mamba-cache-size", type=_positive(int), metavar="N", help="SGLang, a gated-DeltaNet / Mamba-2 hybrid: N request states of the recurrent layers (default: --mamba-full-memory-ratio's split of the pool)")
    s.add_argument("--attention-backend", metavar="NAME", help="SGLang's --attention-backend as given (default: SGLang's pick; on ROCm aiter, which cuts --mem-fraction-static x 0.85 above an 8192-token context)")
    s.add_argument("--kv-cache-memory", type=_positive(float), metavar="GIB", help="vLLM >= 0.10.1: a fixed KV pool instead of a share")
    s.add_argument("--cuda-graph-gib", type=_positive(float), metavar="N",
                   help="vLLM: the CUDA graph memory its log printed ('Estimated CUDA graph memory: N GiB', or 'Graph capturing finished ... took N GiB') instead of kv's estimate")
    s.add_argument("--free-gib", type=_positive(float), metavar="N", help="vLLM, SGLang: GiB free on the GPU when it starts "
                   "(nvidia-smi's total - used; other processes hold the rest): V1 >= 0.9.1 refuses a larger share; "
                   "SGLang sizes its pool from it")
    s.add_argument("--cpu-offload-gb", type=float, metavar="N", help="vLLM --cpu-offload-gb N: up to N GiB of the "
                   "decoder layers' weights per GPU stay in pinned host RAM (whole parameters, in layer order); the "
                   "GPU's weights and the KV budget change by as much")
    s.add_argument("--flash-attn", choices=["on", "off", "auto"], help="llama.cpp -fa / OLLAMA_FLASH_ATTENTION (default: the version's)")
    s.add_argument("--swa-full", action="store_true", default=None, help="llama.cpp --swa-full: the sliding-window layers keep a full -c cache")
    s.add_argument("--kv-unified", action=OnOff, default=None, help="llama.cpp -kvu / --no-kv-unified: one cache the slots share (default: the version's, on for -np 1)")
    s.add_argument("--ubatch", type=_positive(int), metavar="N", help="llama.cpp micro-batch -ub (default 512; it runs at min(-c, -b, -ub): -ub 4096 given alone runs at -b's default 2048, see --batch); Ollama >= 0.30: its num_batch (-b/-ub; default: its scheduler's 512/1024/2048 by context)")
    s.add_argument("--batch", type=_positive(int), metavar="N", help="llama.cpp logical batch -b / --batch-size (default 2048, llama-server's and libllama's): it caps -ub. Not for Ollama: its num_batch (--ubatch) is -b and -ub at once")
    s.add_argument("--ngl", type=_int_or_word, metavar="N", help="layers on the GPU (llama.cpp -ngl, Ollama num_gpu; "
                   "-1 / auto: the build's default placement, -2 / all: every layer; default: the runtime's placement)")
    s.add_argument("--num-gpus", type=_positive(int), metavar="N", help="GPUs of --vram each: Ollama spreads the model over them (memory.required.full adds a reserve, a layer buffer and a graph per GPU); llama.cpp splits the layers (equally, or by --tensor-split) and each card holds its own context and compute buffer")
    s.add_argument("--tensor-split", metavar="A,B,..", help="llama.cpp -ts over several GPUs (its default: their free memory): layers and KV buffer per GPU")
    s.add_argument("--mla-cache", choices=["latent", "latent+v", "full"],
                   help="DeepSeek MLA cache in llama.cpp: latent (2026 builds), latent+v (2025), full (before early 2025)")
    s.add_argument("--mmproj", action="store_true", default=None, help="llama.cpp: a vision projector is loaded (--mmproj)")
    moe = s.add_mutually_exclusive_group()  # one setting: README's [--n-cpu-moe N | --cpu-moe]
    moe.add_argument("--n-cpu-moe", type=_nonneg_int, metavar="N", help="llama.cpp --n-cpu-moe N: the routed MoE experts "
                     "(ffn_gate/up/down_exps) of the first N layers stay in host RAM; the GPU holds the rest")
    moe.add_argument("--cpu-moe", dest="n_cpu_moe", action="store_const", const=CPU_MOE_ALL,
                     help="llama.cpp --cpu-moe: every layer's routed experts stay in host RAM")
    s.add_argument("--override-tensor", action="append", metavar="PATTERN=CPU", help="llama.cpp -ot PATTERN=CPU: the "
                   "routed experts (ffn_gate/up/down_exps) of the layers whose tensor names the regex matches stay in host RAM")
    s.add_argument("--gguf-types", metavar="TYPE=N,...", help="llama.cpp: a MoE GGUF's tensor types as its loader "
                   "printed them, e.g. f32=361,q8_0=373,q4_K=96,q5_K=48,q6_K=1 (the loader's own lines may be pasted "
                   "as printed); the routed experts, the output head and the rest are placed by them. Replaces "
                   "--weights-dtype's recipe; refused with --gguf or --weights-gib")
    add_json(s)

    s = sub.add_parser("trace", help="exact peak memory of ComfyUI's real model forward, traced on fake tensors")
    s.add_argument("--comfyui", metavar="DIR", required=True, help="ComfyUI checkout")
    from .trace.comfy_checkout import family_names  # light: no torch, no comfy (the families' one table)
    s.add_argument("--family", required=True, help="the model family: " + ", ".join(family_names()))
    s.add_argument("--checkpoint", metavar="FILE", help="build the model from this .safetensors file's header instead of the "
                   "family's standard config: a path, or a file name in the checkout's models/ folders as ComfyUI's "
                   "loaders find it (sample: checkpoints, unet, diffusion_models; decode/encode: vae; text: "
                   "text_encoders, clip)")
    s.add_argument("--width", type=int, required=True, metavar="PX", help="image or video width in pixels")
    s.add_argument("--height", type=int, required=True, metavar="PX", help="height in pixels")
    s.add_argument("--frames", type=int, default=1, help="video frames (default 1)")
    s.add_argument("--batch", type=int, default=1, help="latent batch (default 1)")
    s.add_argument("--attention", choices=["flash", "math"], default="flash",
                   help="the attention kernel the trace runs (default flash); both kernels' peaks are reported")
    s.add_argument("--phase", choices=["sample", "decode", "encode", "text"], default="sample",
                   help="sample (default): one diffusion step; decode/encode: the VAE; text: the text encoders on one prompt")
    s.add_argument("--cfg", action=OnOff, default=None,
                   help="cond+uncond batched in one forward (default: as the family's usual workflow)")
    s.add_argument("--dtype", choices=["float16", "bfloat16", "float32"],
                   help="weight/compute dtype (default: what ComfyUI picks on a current NVIDIA GPU)")
    s.add_argument("--lowvram", action="store_true", help="weights stay off the device and are cast in per layer")
    add_json(s)
    return p


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # replaced or closed stdin
        return False


def _default_runtime(model) -> str:
    """Ollama for a name in Ollama's own syntax: a library build (its GGUF quant is what Ollama serves) or a Hub GGUF
    as `ollama run hf.co/user/repo[:quant]` pulls it (hf.co or huggingface.co, Hugging Face's Ollama page); else vLLM."""
    if model and model.strip().lower().startswith(("hf.co/", "huggingface.co/")):
        return "ollama"
    if model:
        from .llm.ollama_tags import ollama_tag  # light: no torch
        try:
            if ollama_tag(model) is not None:
                return "ollama"
        except Exception:  # a name kv will reject with its own message
            pass
    return "vllm"


def _kv_local_model(args) -> None:
    """kv --model given a local path (~ expanded), as `vllm serve ./folder` takes one: a GGUF file is read as --gguf, a
    config.json, model folder or .safetensors file as --config, so every later step (the printed command) sees it as if
    given so. The runtime stays the default, vLLM, for a GGUF file too (`vllm serve ./model.gguf`): --runtime llama.cpp
    plans `llama-server -m FILE`. A path-like name that is not there is refused as such, not as an unknown model name."""
    name = os.path.expanduser((args.model or "").strip())
    if not name or name.lower() == "list":
        return
    if os.path.exists(name):
        gguf = name.lower().endswith(".gguf")
        if not gguf and os.path.isfile(name):
            with open(name, "rb") as f:
                gguf = f.read(4) == b"GGUF"
        args.gguf, args.config, args.model = (name, None, None) if gguf else (None, name, None)
    elif name.startswith(("/", "./", "../", "~", ".\\")) or name.lower().endswith((".gguf", ".json", ".safetensors")):
        raise UserError(f"{name}: no such file or folder (a local model is its folder, config.json, .safetensors or "
                        "GGUF file; a Hugging Face repo id is user/repo)")
    else:  # Qwen/Qwen3-8B/ or Qwen/Qwen3-8B@main: the repo id, printed so in the command
        from .llm.names import bare_id
        args.model = bare_id(args.model)


def _version() -> str:
    try:
        from importlib.metadata import version
        return version("comfyui-gpu-garden")
    except Exception:
        return "dev"


def main(argv=None) -> int:
    """Exit 2 on a usage error raises SystemExit(2) (argparse's way); an input error returns 2."""
    try:
        return _main(argv)
    except _UsageExit as exc:  # its line is on stderr; --json may not be parsed yet, so the arguments are read for it
        if "--json" in (sys.argv[1:] if argv is None else argv):
            print(json.dumps({"error": exc.message, "kind": "usage", "command": exc.command}), flush=True)
        raise


def _main(argv) -> int:
    _unknown_first(build_parser(), argv)
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    if extras:  # named with the subcommand's help, and what to type for a runtime's own spelling of an option
        prog = "gpu-garden" + (f" {args.command}" if getattr(args, "command", None) else "")
        sub = parser._subparsers._group_actions[0].choices.get(args.command) if args.command else parser
        _usage_error(prog, _unrecognized(getattr(args, "command", None), extras, sub._option_string_actions))
    if not args.command:  # a usage error like the others: one line on stderr, nothing on stdout (the help went to stdout)
        _usage_error("gpu-garden", f"give a COMMAND: {', '.join(COMMANDS)}")
    for name, value in vars(args).items():  # float() takes nan and inf; no option means either
        if isinstance(value, float) and not math.isfinite(value):
            prog = f"gpu-garden {args.command}"
            _usage_error(prog, f"--{name.replace('_', '-')} must be a finite number, got {value}")
    if args.command == "triage" and args.file == "-" and _isatty(sys.stdin):
        print("gpu-garden triage: reading a log from standard input: paste it, then Ctrl-D (Windows: Ctrl-Z, Enter); "
              "or give a FILE", file=sys.stderr)
    module, func = COMMANDS[args.command]
    if args.command == "estimate" and getattr(args, "measured", None):
        module, func = "recorder.measured", "run_estimate_cli"  # runs the estimate, then adds the measured peak
    try:
        if args.command == "kv":
            _kv_local_model(args)
            args.runtime = args.runtime or _default_runtime(args.model)
        run = getattr(importlib.import_module("." + module, __package__), func)
        return int(run(args) or 0)
    except UserError as exc:
        _report_error(args.command, str(exc), "input", getattr(args, "json", False))
        return getattr(exc, "exit_code", 2)  # errors.RuntimeRefusal: 1
    except RecursionError:  # json.loads on a file of deeply nested brackets (a workflow, a config.json)
        _report_error(args.command, "the input is nested too deeply to read (not a workflow, config or log that a tool "
                      "wrote)", "input", getattr(args, "json", False))
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # a path the subcommand could not read or write (--write into a missing folder)
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        _report_error(args.command, f"{exc.strerror or exc}{where}", "io", getattr(args, "json", False))
        return 2


if __name__ == "__main__":
    sys.exit(main())
