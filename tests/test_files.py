"""Writing outputs safely: a path that cannot be written is named before the work, and a file is
replaced whole or not at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from coloretto.files import output_file_problem, write_atomically


def test_an_output_path_that_cannot_be_written_is_named(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("x")
    assert output_file_problem(tmp_path / "new.json") is None
    assert output_file_problem(tmp_path) == f"{tmp_path} is a directory, not a file"
    assert (
        output_file_problem(tmp_path / "missing" / "x.json")
        == f"the directory {tmp_path / 'missing'} does not exist"
    )
    assert output_file_problem(tmp_path / "a-file" / "x.json") == f"{tmp_path / 'a-file'} is not a directory"


def test_a_file_is_replaced_whole_keeping_its_permissions(tmp_path: Path) -> None:
    path = tmp_path / "record.json"
    write_atomically(path, "first")
    assert path.read_text() == "first" and path.stat().st_mode & 0o777 == 0o644
    path.chmod(0o600)
    write_atomically(path, "second")
    assert path.read_text() == "second" and path.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["record.json"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary_one(tmp_path: Path) -> None:
    path = tmp_path / "record.json"
    path.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        write_atomically(path, "half \udcff")  # a lone surrogate cannot be written as UTF-8
    assert path.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["record.json"]
