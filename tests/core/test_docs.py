"""The documentation stays a front door and a reference that lives in the repository:
the README stays short, every requirement id the code cites is explained in docs/requirements.md
(with the files it names still there), and no text points at a path outside the repository."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PRODUCTION = ("events", "store", "replay", "handlers", "engine")
README_MAX_LINES = 160
REQ_ID = re.compile(r"REQ-[A-Z]+-[0-9]+")
# Paths that exist only beside the repository where it was first written, never in a clone.
# The spelled-out pattern would itself match the repository's own outside-path check: built in parts.
_SHARED = "shared"
OUTSIDE = re.compile(rf"\.\./{_SHARED}|{_SHARED}/spec|{_SHARED}/design")


def tracked(*patterns: str) -> list[Path]:
    """The repository's files (tracked or new, never ignored ones such as .venv) matching patterns."""
    out = subprocess.run(["git", "-C", str(REPO), "ls-files", "--cached", "--others", "--exclude-standard",
                          "--", *patterns], capture_output=True, text=True, check=True).stdout
    return [REPO / line for line in out.splitlines() if (REPO / line).is_file()]


def cited_ids() -> dict[str, str]:
    """Every requirement id cited in the production packages -> one file citing it."""
    cited: dict[str, str] = {}
    for path in sorted(p for pkg in PRODUCTION for p in (REPO / pkg).rglob("*.py")):
        for req in REQ_ID.findall(path.read_text(encoding="utf-8")):
            cited.setdefault(req, str(path.relative_to(REPO)))
    return cited


def test_every_cited_requirement_is_explained():
    explained = set(REQ_ID.findall((REPO / "docs" / "requirements.md").read_text(encoding="utf-8")))
    missing = {req: where for req, where in cited_ids().items() if req not in explained}
    assert not missing, f"cited in the code but not in docs/requirements.md: {missing}"


def test_the_requirements_page_names_files_that_exist():
    text = (REPO / "docs" / "requirements.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`((?:events|store|replay|handlers|engine|tests)/[\w/.-]+\.py)`", text))
    assert named, "docs/requirements.md names no file"
    gone = sorted(path for path in named if not (REPO / path).is_file())
    assert not gone, f"docs/requirements.md names files that are not in the repository: {gone}"


def test_the_readme_is_a_front_door():
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines (at most {README_MAX_LINES})"


def test_the_readme_and_docs_links_resolve_inside_the_repository():
    broken = []
    for page in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        for link in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            target = link.split("#")[0]
            if target and not link.startswith(("http://", "https://")) and not (page.parent / target).exists():
                broken.append(f"{page.relative_to(REPO)} -> {link}")
    assert not broken, "links to paths that are not in the repository:\n" + "\n".join(broken)


def test_a_link_labelled_with_a_decision_number_leads_to_that_decision():
    """A label naming decision 0005 on a link to 0003 sent readers to the wrong record, though the
    link resolved."""
    wrong = []
    for page in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        for number, target in re.findall(r"\[decision (\d{4})\]\((?:[\w./-]*/)?(\d{4})-", page.read_text(encoding="utf-8")):
            if number != target:
                wrong.append(f"{page.relative_to(REPO)}: decision {number} -> {target}")
    assert not wrong, "decision links whose label names another record:\n" + "\n".join(wrong)


def test_no_text_names_a_page_of_docs_that_is_gone():
    """Code comments and pages cite docs/ by path; a page that moves takes its citations with it."""
    gone = []
    for path in tracked("*.md", "*.py"):
        text = path.read_text(encoding="utf-8", errors="replace")
        for cited in sorted(set(re.findall(r"\bdocs/[\w./-]+\.md\b", text))):
            if not (REPO / cited).is_file():
                gone.append(f"{path.relative_to(REPO)}: {cited}")
    assert not gone, "citations of docs pages that do not exist:\n" + "\n".join(gone)


def test_nothing_refers_to_paths_outside_the_repository():
    offenders = []
    for path in tracked("*.md", "*.py"):
        if path == Path(__file__).resolve():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if OUTSIDE.search(line):
                offenders.append(f"{path.relative_to(REPO)}:{number}: {line.strip()[:100]}")
    assert not offenders, "references to files outside the repository:\n" + "\n".join(offenders)
