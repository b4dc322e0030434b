"""The response cache never follows a symlink inside its folder (issue 21): a dangling
CACHEDIR.TAG symlink creates no file anywhere, a symlinked two-letter folder is neither read
nor written (a warning says so), and an entry that is a symlink is a miss. An entry edited in
place is served (the docstring says so: the cache is no integrity boundary)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_nl2sql.llm.cache import FORMAT, ResponseCache

KEY = "ab" + "0" * 62


def _put(cache: ResponseCache, key: str = KEY, content: str = "{}") -> bool:
    return cache.put(key, content=content, model="m", usage=(1, 1))


def test_a_dangling_cachedir_tag_symlink_creates_nothing(tmp_path: Path) -> None:
    folder, target = tmp_path / "cache", tmp_path / "elsewhere" / "planted.txt"
    folder.mkdir()
    target.parent.mkdir()
    os.symlink(target, folder / "CACHEDIR.TAG")
    with pytest.warns(UserWarning, match="CACHEDIR.TAG is a symlink"):
        assert _put(ResponseCache(folder))
    assert not target.exists()
    assert os.path.islink(folder / "CACHEDIR.TAG")


def test_a_symlinked_shard_folder_is_neither_written_nor_read(tmp_path: Path) -> None:
    folder, outside = tmp_path / "cache", tmp_path / "outside"
    folder.mkdir()
    outside.mkdir()
    os.symlink(outside, folder / KEY[:2])
    cache = ResponseCache(folder)
    with pytest.warns(UserWarning, match="is a symlink; the cache does not follow it"):
        assert _put(cache) is False
    assert list(outside.iterdir()) == []
    # an entry placed behind the link is not served either
    (outside / f"{KEY}.json").write_text(json.dumps(
        {"format": FORMAT, "content": "{}", "refusal": None, "finish_reason": None, "model": "m", "usage": [1, 1]}))
    assert cache.get(KEY) is None


def test_an_entry_that_is_a_symlink_is_a_miss(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache")
    assert _put(cache)
    entry = tmp_path / "cache" / KEY[:2] / f"{KEY}.json"
    real = tmp_path / "real.json"
    real.write_bytes(entry.read_bytes())
    entry.unlink()
    os.symlink(real, entry)
    assert cache.get(KEY) is None


def test_an_entry_edited_in_place_is_served_as_the_docstring_says(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache")
    assert _put(cache, content='{"kind": "sql", "sql": "SELECT 1"}')
    entry = tmp_path / "cache" / KEY[:2] / f"{KEY}.json"
    data = json.loads(entry.read_text())
    data["content"] = '{"kind": "sql", "sql": "SELECT 2"}'
    entry.write_text(json.dumps(data))
    assert cache.get(KEY)["content"].endswith('"SELECT 2"}')
    import pytest_nl2sql.llm.cache as module

    assert "edited in place" in module.__doc__ and "is served as a hit" in module.__doc__
