"""training/sweep.py: weights leave a device in parts under the size limit and come back
whole; the base mix is average.py's rule."""

from __future__ import annotations

from pathlib import Path

import torch

from training import sweep


def test_parts_round_trip_under_the_limit(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(sweep, "PART_BYTES", 4000)
    g = torch.Generator().manual_seed(3)
    state = {
        "emb.weight": torch.randn(50, 30, generator=g),  # 3000 bytes in fp16: fits
        "big.weight": torch.randn(300, 20, generator=g),  # 12000 bytes: cut by rows
        "pos_ids": torch.arange(7),
    }
    parts = tmp_path / "parts"
    parts.mkdir()
    names = sweep.save_parts(state, parts, "best")
    assert len(names) >= 3
    assert all((parts / n).stat().st_size <= 4000 + 1000 for n in names)  # + header
    like = tmp_path / "like"
    like.mkdir()
    (like / "config.json").write_text("{}")
    sweep.join(parts, tmp_path / "model", like)
    from safetensors.torch import load_file

    back = load_file(str(tmp_path / "model" / "model.safetensors"))
    assert set(back) == set(state)
    assert torch.equal(back["pos_ids"], state["pos_ids"])
    for k in ("emb.weight", "big.weight"):
        assert back[k].dtype == torch.float16
        assert torch.equal(back[k], state[k].half())
    assert (tmp_path / "model" / "config.json").exists()


def test_mixed_state_is_the_average() -> None:
    tuned = {"w": torch.tensor([2.0, 4.0]), "ids": torch.tensor([1, 2])}
    base = {"w": torch.tensor([0.0, 0.0]), "ids": torch.tensor([1, 2])}
    out = sweep.mixed_state(tuned, base, 0.25)
    assert torch.allclose(out["w"], torch.tensor([0.5, 1.0]))
    assert torch.equal(out["ids"], tuned["ids"])
