"""rev52's findings (a newcomer's walk through README, docs/triage.md, kv.md, estimate.md on the CLI): the names and the
help a user types and reads."""
import json

import pytest

from support.cli_run import estimate, run


@pytest.mark.parametrize("name,family", [("FLUX.1-dev", "flux1"), ("FLUX.1", "flux1"), ("Wan2.1-T2V-1.3B", "wan21")])
def test_an_estimate_by_the_hub_name_with_its_dots(capsys, name, family):
    """`estimate FLUX.1-dev` (the repo's name; README calls it FLUX.1-dev, the report prints "FLUX.1 (flux1 dev)") was
    refused as no bundled layout while flux-dev, flux.2 and sd1.5 were read: the dot was kept in the name only."""
    rc, out, err = estimate(capsys, name, "--vram", "24", "--ram", "64", "--json")
    assert rc == 0, err
    j = json.loads(out)
    assert j["family"] == family
    assert any(a.startswith(f"{name}: sized from the bundled layout of ") for a in j["assumptions"]), j["assumptions"]


@pytest.mark.parametrize("typed,meant", [("q4km", "Q4_K_M"), ("Q4-K-M", "Q4_K_M")])
def test_a_mistyped_gguf_type_on_ollama_is_named_as_a_typo(capsys, typed, meant):
    """`kv --model qwen3:8b --weights-dtype q4km` said "(q4km is a vLLM or SGLang checkpoint's type: kv --model REPO
    --runtime vllm)": a typo of Q4_K_M sent the user to another runtime. A real checkpoint format still says that."""
    rc, _, err = run(["kv", "--model", "qwen3:8b", "--weights-dtype", typed], capsys)
    assert rc == 2 and f"{typed} is no type kv knows; did you mean {meant}?" in err, err
    assert "checkpoint's type" not in err
    rc, _, err = run(["kv", "--model", "qwen3:8b", "--weights-dtype", "awq"], capsys)
    assert rc == 2 and "awq is a vLLM or SGLang checkpoint's type: kv --model REPO --runtime vllm" in err, err
