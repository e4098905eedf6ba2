"""Live memory per device, split by owner. `probe.snapshot()` samples; `Snapshot.to_json()` is the wire form."""
