"""The README and docs/ name only what exists, and docs/architecture.md names every module: a
newcomer follows them, and a stale path or layout row sends them the wrong way."""

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
REPO = Path(__file__).resolve().parent.parent
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
CODE = re.compile(r"`([^`\n]+)`")
PLACEHOLDER = re.compile(r"[<>*{}\[\]$ ]|\b[A-Z][A-Z_]{2,}\b|\.\.\.|…")
TOP = {p.name for p in REPO.iterdir() if p.name not in {"results", ".venv", ".tox", ".pytest-tmp", ".git"}}


def named_paths(doc):
    """(kind, text, resolved path) of every relative link and every `path/...` in backticks whose
    first part is an entry of the repository's top level."""
    text = doc.read_text()
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        yield "link", target, (doc.parent / target.split("#")[0]).resolve()
    for code in CODE.findall(text):
        if "/" not in code or PLACEHOLDER.search(code) or code.split("/")[0] not in TOP:
            continue
        yield "code", code, REPO / code.split(":")[0]


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: d.name)
def test_every_path_a_doc_names_exists(doc):
    missing = [f"{kind} {text}" for kind, text, path in named_paths(doc) if not path.exists()]
    assert not missing, f"{doc.name} names what does not exist: {missing}"


def test_the_readme_is_a_guide_of_at_most_300_lines_with_install_before_the_first_command():
    text = (REPO / "README.md").read_text()
    assert len(text.splitlines()) <= 300
    install = text.index("## Install")
    assert install < text.index("```sh"), "the first command comes before the install section"
    assert "exit code" in text.lower() and re.search(r"\b3\b.*nothing (was )?compared", text), "exit code 3 unexplained"
    assert "tox -e test" in text   # the command .ci/run runs


def test_architecture_names_every_module_of_analysis():
    lines = (REPO / "docs" / "architecture.md").read_text().splitlines()
    missing = []
    for module in sorted((REPO / "analysis").rglob("*.py")):
        if module.name == "__init__.py":
            continue
        folder = module.parent.relative_to(REPO / "analysis").as_posix()
        folder = "analysis/" if folder == "." else folder + "/"
        if not any(f"- `{folder}`:" in line and f"`{module.stem}`" in line for line in lines):
            missing.append(module.relative_to(REPO).as_posix())
    assert not missing, f"docs/architecture.md does not name: {missing}"
