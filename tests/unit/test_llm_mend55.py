"""mend55: what kv says of layers left on the CPU when the user's own -ngl / num_gpu fits, and DeepSeek-V4's
--weights-gib refusal on a built-in model."""
from gpu_garden.memory.llm import kv as K

GiB = 2 ** 30


def test_an_asked_num_gpu_that_fits_is_placed_as_asked_not_all_that_fits():
    # Llama-3.1-405B Q2_K under Ollama on 192 GiB with num_gpu 100: it fits (every layer would not: 237 GiB), so
    # "only 100 of 126 layers fit on the GPU" was false: 100 is what was asked. Deliberate error checked: the old
    # plan_verdict.py / report.py (the note and the verdict line said "only 100 of 126 layers").
    s = K.describe(model="Llama-3.1-405B")
    r = K.plan(s, "ollama", weights_dtype="Q2_K", vram=192 * GiB, ngl=100)
    assert r["fits"] and r["gpu_layers_used"] == 100
    notes = "\n".join(r["notes"])
    assert "100 of 126 layers on the GPU, as asked (num_gpu 100); the rest run from RAM on the CPU" in notes
    text = K.format_plan(r)
    assert "only 100 of 126" not in text.replace("\n", " ") and "only 100 of 126" not in notes
    assert "fits with the flags below: 100 of 126 layers on the GPU, as asked;" in " ".join(text.split())


def test_a_placement_the_plan_chose_still_says_only_what_fits():
    s = K.describe(model="DeepSeek-R1-Distill-Qwen-14B")
    r = K.plan(s, "llama.cpp", ctx=8192, weights_dtype="Q4_K_M", vram=6 * GiB)
    n = r["gpu_layers_used"]
    assert f"only the output layer and {n - 1} of 48 repeating layers fit on the GPU" in "\n".join(r["notes"])
    asked = K.plan(s, "llama.cpp", ctx=8192, weights_dtype="Q4_K_M", vram=6 * GiB, ngl=n)
    assert f"the output layer and {n - 1} of 48 repeating layers on the GPU, as asked (-ngl {n})" in "\n".join(asked["notes"])


def test_weights_gib_on_a_built_in_deepseek_v4_is_refused_without_talking_of_gguf(capsys):
    # DeepSeek-V4's built-ins carry their checkpoint's weights (deepseek_v4.checkpoint_bytes): the refusal said "the
    # weights are read from the file already: give --gguf FILE or --weights-gib", but no file was given. Deliberate
    # error checked: the old unsloth.given (its one GGUF message for every spec with weights).
    from gpu_garden.memory import cli
    rc = cli.main(["kv", "--model", "DeepSeek-V4-Flash", "--weights-gib", "300", "--vram", "80"])
    err = capsys.readouterr().err
    assert rc == 2
    assert "DeepSeek-V4-Flash's weights are sized already, from the checkpoint's tensors" in err
    assert "--gguf" not in err and "drop the flag" in err
