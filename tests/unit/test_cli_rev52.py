"""rev52's findings (a newcomer's walk through README, docs/triage.md, kv.md, estimate.md on the CLI): the names and the
help a user types and reads."""
import json

import pytest

from support.cli_run import estimate


@pytest.mark.parametrize("name,family", [("FLUX.1-dev", "flux1"), ("FLUX.1", "flux1"), ("Wan2.1-T2V-1.3B", "wan21")])
def test_an_estimate_by_the_hub_name_with_its_dots(capsys, name, family):
    """`estimate FLUX.1-dev` (the repo's name; README calls it FLUX.1-dev, the report prints "FLUX.1 (flux1 dev)") was
    refused as no bundled layout while flux-dev, flux.2 and sd1.5 were read: the dot was kept in the name only."""
    rc, out, err = estimate(capsys, name, "--vram", "24", "--ram", "64", "--json")
    assert rc == 0, err
    j = json.loads(out)
    assert j["family"] == family
    assert any(a.startswith(f"{name}: sized from the bundled layout of ") for a in j["assumptions"]), j["assumptions"]
