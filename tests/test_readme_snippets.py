"""README.md's Python snippets: each says what it needs, and those the install has run, in order, as one
program (scripts/readme-snippets); scripts/wheel-check runs the core ones on a fresh install of the wheel."""
from __future__ import annotations

import importlib.machinery
import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "readme-snippets"


def _module():
    loader = importlib.machinery.SourceFileLoader("readme_snippets", str(SCRIPT))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader("readme_snippets", loader))
    loader.exec_module(module)
    return module


def test_every_python_snippet_says_what_it_needs():
    blocks = _module().snippets((ROOT / "README.md").read_text())
    assert len(blocks) >= 5
    untagged = [code.splitlines()[0] for tag, code in blocks if tag is None]
    assert not untagged, f"README python blocks without a <!-- snippet: ... --> line: {untagged}"


def test_the_snippets_this_install_can_run_run(tmp_path):
    program = _module().runnable((ROOT / "README.md").read_text())
    assert "# --- README snippet (core)" in program
    (tmp_path / "readme.py").write_text(program)
    out = subprocess.run([sys.executable, "readme.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert out.returncode == 0, out.stderr[-3000:]
    assert "Oslo" in out.stdout  # the first example's show()
