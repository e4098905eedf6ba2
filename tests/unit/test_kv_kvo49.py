"""kvo49: three leftovers of the last review of `gpu-garden kv`.
1. Under vLLM's pipeline parallelism the verdict is the largest stage's (the GPU that decides whether it fits), named,
   and agrees with the reason below it (the verdict showed stage 0's weights, the reason the largest stage's).
2. A --weights-dtype over a GGUF repo tag or an Ollama tag: the printed command loads what was estimated, or says
   plainly why no command does.
3. An Ollama tag of another model on a built-in's geometry (a fine-tune, a distill, a later release): the vLLM/SGLang
   note names the repo the figures' config.json came from as the base architecture, not as the user's model."""
import re

from support.cli_run import json_out, text, unwrap


def _text(argv, capsys):
    """kv's text with term.py's wrapping undone (support.cli_run.unwrap): these pin whole lines."""
    rc, out = text(argv, capsys)
    return rc, unwrap(out)


# Qwen3-32B (Qwen/Qwen3-32B config.json): hidden 5120, 64 heads x 128 (q 8192), 8 KV heads x 128 (k, v 1024 each),
# MLP 25600, q/k norms of 128, vocab 151936, untied. One decoder layer: q 5120 x 8192 + k, v 5120 x 1024 each + o
# 8192 x 5120 + MLP 3 x 5120 x 25600 + norms 2 x 5120 + 2 x 128 = 487,598,336 values; the head 151936 x 5120 =
# 777,912,320. A stage of 44 layers + the head in bf16: 44 x 975,196,672 + 1,555,824,640 B + the rotary table every
# stage builds (40960 positions x 128 x 2 B = 10 MiB) = 44,474,963,968 B (+ 44/64 of the 10 KiB final norm): 41.42 GiB.
# 20 layers + the embedding (the same size as the head): 21,070,243,840 B = 19.62 GiB. vLLM's default share (0.92)
# of 24 GiB is 22.08 GiB: stage 0 keeps a KV pool, the 44-layer stage cannot even hold its weights.
QWEN32 = ["kv", "--model", "Qwen/Qwen3-32B", "--pipeline-parallel-size", "2"]



def test_pipeline_verdict_is_the_largest_stage_and_agrees_with_the_reason(capsys):
    rc, text = _text(QWEN32 + ["--pp-layer-partition", "20,44", "--vram", "24", "--ctx", "4096"], capsys)
    assert rc == 1
    # before: "on 24.00 GiB (vLLM share 22.08 GiB): does NOT fit" beside a reason of 41.42 GiB (and stage 0's
    # "KV pool 1.54 GiB" in a refusal line with an available -20.46 GiB)
    assert ("on 24.00 GiB: does NOT fit: weights alone 41.42 GiB on the pipeline stage with the most weights (stage 1 of 2, 44 layers "
            "+ the head) > vLLM's share 22.08 GiB of 24.00 GiB") in text
    assert "Weights alone (41.42 GiB on the pipeline stage with the most: stage 1 of 2, 44 layers + the head)" in text
    assert "weights               19.62 GiB" in text  # the table stays rank 0's, as vLLM's rank 0 logs it
    assert "--kv-cache-memory" not in text and "--max-model-len auto" not in text  # no pool on stage 1: no autofit
    r = json_out(QWEN32 + ["--pp-layer-partition", "20,44", "--vram", "24", "--ctx", "4096"], capsys)
    assert r["pp_deciding_stage"] == 1 and r["autofit"] == []


def test_pipeline_verdict_names_stage_0_when_it_is_the_largest(capsys):
    # 44 layers + the embedding on stage 0: 41.42 GiB, the same arithmetic as the head's stage above
    _, text = _text(QWEN32 + ["--pp-layer-partition", "44,20", "--vram", "24", "--ctx", "4096"], capsys)
    assert ("does NOT fit: weights alone 41.42 GiB on the pipeline stage with the most weights (stage 0 of 2, 44 layers + the "
            "embedding) > vLLM's share 22.08 GiB of 24.00 GiB") in text  # before: no stage named
    assert "Weights alone (41.42 GiB on the pipeline stage with the most: stage 0 of 2, 44 layers + the embedding)" in text


def test_pipeline_refusal_line_gives_the_refusing_stage_pool(capsys):
    # 48 GiB: both stages start with a pool, but one request of 32,768 tokens does not fit the 44-layer stage's
    _, text = _text(QWEN32 + ["--pp-layer-partition", "20,44", "--vram", "48", "--ctx", "32768"], capsys)
    line = next(x for x in text.splitlines() if "vLLM refuses to start" in x)
    m = re.match(r"KV pool ([\d.]+) GiB \(on stage 1 of 2, 44 layers \+ the head\): vLLM refuses to start: .* more than "
                 r"the available ([\d.]+) GiB", line)
    assert m, line  # before: "KV pool 23.62 GiB: ... more than the available 1.62 GiB" (stage 0's pool, stage 1's check)
    assert m.group(1) == m.group(2)


def test_pipeline_fixed_pool_suggestion_fits_every_stage(capsys):
    # --kv-cache-memory is allocated on every stage: the suggestion is the smallest stage's pool, not rank 0's
    r = json_out(QWEN32 + ["--pp-layer-partition", "20,44", "--vram", "48", "--ctx", "32768"], capsys)
    suggested = next(int(a["flag"].split()[1]) for a in r["autofit"] if a["flag"].startswith("--kv-cache-memory"))
    pools = [st["pool"] for st in r["pp_stages"]]
    assert pools[1] < pools[0]
    assert suggested != pools[0]  # before kvo49: rank 0's pool
    # fix67e (aud67a F10): this request does not fit as asked, and stage 1's default pool (1.62 GiB) holds no request
    # of 32,768 tokens, so the suggestion is the printed command's pool: stage 1's 44 layers x 2,048 B (fp8, 8 KV heads
    # x 128, k and v) x 32,768 tokens = 2,952,790,016 B, allocated on every stage (stage 0's share holds 23.6 GiB)
    assert "--kv-cache-dtype fp8" in r["command"] and "--max-model-len 32768" in r["command"]
    assert suggested == 44 * 2048 * 32768 < pools[0]


# 2. --weights-dtype over a GGUF repo tag or an Ollama tag: the command loads the file the figures are for
BART = "bartowski/Qwen2.5-7B-Instruct-GGUF"


def test_llamacpp_command_pulls_the_gguf_repo_file_the_figures_are_for(capsys):
    # before: "llama-server -m MODEL.gguf ..." whatever the name; with the tag :Q4_K_M the user runs -hf REPO:Q4_K_M,
    # the file the note says the figures are not for
    r = json_out(["kv", "--model", f"{BART}:Q4_K_M", "--runtime", "llama.cpp", "--weights-dtype", "q8_0", "--ctx", "8192"],
                 capsys)
    assert r["command"].startswith(f"llama-server -hf {BART}:Q8_0 -c 8192 ")
    r = json_out(["kv", "--model", f"hf.co/{BART}:Q4_K_M", "--runtime", "llama.cpp", "--ctx", "8192"], capsys)
    assert r["command"].startswith(f"llama-server -hf {BART}:Q4_K_M -c 8192 ")  # the tag's own file; no hf.co/ for -hf
    r = json_out(["kv", "--model", "unsloth/Qwen3-8B-GGUF", "--runtime", "llama.cpp", "--ctx", "8192"], capsys)
    assert r["command"].startswith("llama-server -hf unsloth/Qwen3-8B-GGUF -c 8192 ")  # no tag: the default Q4_K_M


def test_ollama_hub_gguf_runs_the_file_the_figures_are_for(capsys):
    argv = ["kv", "--model", f"hf.co/{BART}:Q4_K_M", "--runtime", "ollama", "--weights-dtype", "q8_0", "--ctx", "8192"]
    r = json_out(argv, capsys)
    assert r["model_to_run"]["command"] == f"ollama run hf.co/{BART}:Q8_0"  # before: no such key, nothing to run
    _, text = _text(argv, capsys)
    # fix49a (rev23 S3): printed as the Modelfile's FROM, beside the PARAMETER lines that `ollama run` alone ignores
    assert f"\n  FROM hf.co/{BART}:Q8_0  (the Q8_0 file these figures are for; hf.co/{BART}:Q4_K_M pulls the " \
           "Q4_K_M file)\n" in text


def test_ollama_library_tag_says_plainly_kv_has_no_tag_to_run(capsys):
    # qwen2.5:7b is the library's Q4_K_M build; kv holds no list of the library's tags, so it names none
    argv = ["kv", "--model", "qwen2.5:7b", "--runtime", "ollama", "--weights-dtype", "q8_0", "--ctx", "8192"]
    r = json_out(argv, capsys)
    run = r["model_to_run"]
    assert run["command"] is None
    assert run["why"].startswith("ollama run qwen2.5:7b loads the library's Q4_K_M build, not the q8_0 weights these "
                                 "figures are for")
    assert "ollama.com/library/qwen2.5/tags, tags ending in -q8_0" in run["why"]
    _, text = _text(argv, capsys)
    assert "\n  (no tag to run: ollama run qwen2.5:7b loads the library's Q4_K_M build" in text
    same = json_out(argv[:-4] + ["--weights-dtype", "Q4_K_M", "--ctx", "8192"], capsys)
    assert "model_to_run" not in same  # the tag's own build: the tag runs what was estimated


def test_ollama_tag_naming_its_build_gets_the_same_tag_at_the_figures_type(capsys):
    r = json_out(["kv", "--model", "llama3.1:8b-instruct-q4_K_M", "--runtime", "ollama", "--weights-dtype", "q8_0",
                  "--ctx", "8192"], capsys)
    assert r["model_to_run"]["command"] == "ollama run llama3.1:8b-instruct-q8_0"
    assert "composed from the tag, not read from the library's list" in r["model_to_run"]["why"]


# 3. an Ollama tag of another model on a built-in's geometry: the repo named is the base architecture, not the model
def _pull_note(model, runtime, capsys):
    r = json_out(["kv", "--model", model, "--runtime", runtime, "--ctx", "4096"], capsys)
    return next(n for n in r["notes"] if "cannot pull an Ollama tag" in n)


def test_fine_tune_tag_note_names_the_repo_as_the_base_architecture(capsys):
    # deepseek-r1:7b is DeepSeek-R1-Distill-Qwen-7B, sized on Qwen2.5-7B's config.json (Qwen/Qwen2.5-7B-Instruct); before:
    # "'deepseek-r1:7b' reads as Qwen2.5-7B ...; serving the repo needs its own plan: kv --model Qwen/Qwen2.5-7B-Instruct"
    note = _pull_note("deepseek-r1:7b", "vllm", capsys)
    assert ("'deepseek-r1:7b' is another model on Qwen2.5-7B's architecture: Qwen/Qwen2.5-7B-Instruct, whose config.json "
            "sized the figures, is that base architecture, not the tag's model") in note
    assert "kv --model Qwen/Qwen2.5-7B-Instruct" not in note
    assert note.endswith("to plan the model itself on vLLM, give its own Hugging Face repo: kv --model USER/REPO "
                         "--runtime vllm")
    # a coder fine-tune (qwen2.5-coder: a word the built-in lacks) and a later release with its own context
    # (phi3:mini-128k, names.RELEASE_CONTEXT), on SGLang too
    assert "'qwen2.5-coder:7b' is another model on Qwen2.5-7B's architecture" in _pull_note("qwen2.5-coder:7b", "sglang",
                                                                                           capsys)
    assert "'phi3:mini-128k' is another model on Phi-3-mini-4k's architecture" in _pull_note("phi3:mini-128k", "vllm",
                                                                                          capsys)


def test_tag_of_the_built_in_itself_keeps_naming_its_repo(capsys):
    # qwen2.5:7b is Qwen2.5-7B-Instruct itself: its repo is the model, and the note says to plan it
    note = _pull_note("qwen2.5:7b", "vllm", capsys)
    assert "'qwen2.5:7b' reads as Qwen2.5-7B, whose config.json was read from Qwen/Qwen2.5-7B-Instruct" in note
    assert note.endswith("serving the repo needs its own plan: kv --model Qwen/Qwen2.5-7B-Instruct --runtime vllm")
    assert "reads as Llama-3.2-11B-Vision" in _pull_note("llama3.2-vision", "vllm", capsys)
