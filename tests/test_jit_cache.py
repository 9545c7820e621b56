"""numba's cache is dropped when any source of the package changes, and only then."""

from ns3_hpsched.jit_cache import DIGEST_FILE, drop_stale


def _package(tmp_path):
    """A package with two modules, numba cache files of each, a .pyc and another file."""
    pkg = tmp_path / "pkg"
    (pkg / "sub" / "__pycache__").mkdir(parents=True)
    (pkg / "__pycache__").mkdir()
    (pkg / "core.py").write_text("def f(): return g()\n")
    (pkg / "sub" / "callee.py").write_text("def g(): return 1\n")
    for path in ("__pycache__/core.f-1.py311.nbi", "__pycache__/core.f-1.py311.1.nbc",
                 "sub/__pycache__/callee.g-1.py311.nbi", "__pycache__/core.cpython-311.pyc",
                 "__pycache__/notes.txt"):
        (pkg / path).write_text("x")
    return pkg


def _numba_files(pkg):
    return sorted(p.name for p in pkg.rglob("*.nb[ic]"))


def test_a_changed_callee_in_another_file_drops_every_cached_function(tmp_path, monkeypatch):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    pkg = _package(tmp_path)
    assert drop_stale(pkg)  # no digest yet: whatever is cached may be stale
    assert _numba_files(pkg) == [] and (pkg / "__pycache__" / DIGEST_FILE).exists()
    assert {p.name for p in (pkg / "__pycache__").iterdir()} == {
        "core.cpython-311.pyc", "notes.txt", DIGEST_FILE}  # nothing else is touched

    (pkg / "__pycache__" / "core.f-1.py311.nbi").write_text("x")  # cached again, sources as they were
    assert not drop_stale(pkg) and _numba_files(pkg) == ["core.f-1.py311.nbi"]

    (pkg / "sub" / "callee.py").write_text("def g(): return 2\n")  # only the callee's file changes
    assert drop_stale(pkg) and _numba_files(pkg) == []
    assert not drop_stale(pkg)


def test_a_cache_numba_keeps_elsewhere_is_left_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "elsewhere"))
    pkg = _package(tmp_path)
    assert not drop_stale(pkg) and len(_numba_files(pkg)) == 3
