"""The README and docs/ are part of the product: the README's first screen says what it is and
how to start, every link in them leads somewhere, the accuracy table is current, and the
commands they name are real."""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import accuracy_table  # noqa: E402

README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
FIRST_SCREEN = 45  # lines a reader sees before scrolling, on a tall terminal or GitHub's page

FENCE = re.compile(r"^```.*?^```", re.S | re.M)
INDENTED_CODE = re.compile(r"^(?: {4}|\t).*$", re.M)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.M)


def prose(text: str) -> str:
    """The text a renderer reads links from: code blocks and code spans taken out."""
    return CODE_SPAN.sub("", INDENTED_CODE.sub("", FENCE.sub("", text)))


def anchors(text: str) -> set[str]:
    """GitHub's anchors for a markdown file's headings: lower case, punctuation dropped,
    spaces to hyphens, a repeated one suffixed -1, -2, …"""
    seen: dict[str, int] = {}
    out = set()
    for title in HEADING.findall(FENCE.sub("", text)):
        slug = re.sub(r"[^\w\- ]", "", title.replace("`", "").lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def broken_links(md: Path) -> list[str]:
    """Each relative link (or image) in a markdown file whose file, or heading, is missing."""
    broken = []
    for target in LINK.findall(prose(md.read_text())):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        where = (md.parent / path).resolve() if path else md
        if not where.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and where.suffix == ".md" and anchor not in anchors(where.read_text()):
            broken.append(f"{target} (no such heading in {where.name})")
    return broken


def test_accuracy_table_in_docs_is_current():
    current = accuracy_table.in_doc(accuracy_table.DOC.read_text())
    assert current is not None, f"{accuracy_table.DOC} lost its accuracy-table markers"
    assert current == accuracy_table.generated(), \
        "the accuracy table is stale: run .venv/bin/python scripts/accuracy_table.py --write"


def test_readme_names_the_commands_ci_runs():
    readme = README.read_text()
    first_screen = "\n".join(readme.splitlines()[:20])
    assert "./scripts/test" in first_screen and "./scripts/demo" in first_screen
    assert "./scripts/test" in (ROOT / ".ci" / "run").read_text()


def test_readme_first_screen_has_the_quick_start_a_picture_and_each_doc():
    first_screen = "\n".join(README.read_text().splitlines()[:FIRST_SCREEN])
    quick_start = first_screen.split("## Quick start", 1)
    assert len(quick_start) == 2, "no Quick start section on the README's first screen"
    for must in ("set -g @plugin", "#{agentstate}", "#{agentstate_window}", "prefix + I",
                 "pipx install", "run-shell 'tmux-agentstate tmux-init'", "tmux-agentstate doctor"):
        assert must in quick_start[1], f"the quick start lacks {must!r}"
    picture = re.search(r"!\[[^\]]+\]\(docs/[^)]+\.png\)", first_screen)
    assert picture, "no picture on the first screen"
    linked = set(LINK.findall(prose(first_screen)))
    missing = [d.name for d in DOCS if f"docs/{d.name}" not in linked]
    assert not missing, f"the README's first screen does not link {missing}"


def test_every_relative_link_in_readme_and_docs_leads_somewhere():
    assert DOCS, "docs/*.md is gone"
    broken = {md.relative_to(ROOT).as_posix(): broken_links(md) for md in [README, *DOCS]}
    assert not {k: v for k, v in broken.items() if v}


def test_the_link_checker_sees_a_missing_file_and_a_missing_heading(tmp_path):
    (tmp_path / "there.md").write_text("# Title\n\n## Keys and `options`: more\n")
    (tmp_path / "pic.png").write_bytes(b"")
    md = tmp_path / "index.md"
    md.write_text("[ok](there.md) [ok](there.md#keys-and-options-more) ![ok](pic.png)\n"
                  "[web](https://example.com/x) `[code](nowhere.md)`\n\n    [block](nowhere.md)\n"
                  "[gone](gone.md) ![gone](gone.png) [bad](there.md#nope) [self](#title)\n"
                  "# Title\n")
    assert broken_links(md) == ["gone.md (no such file)", "gone.png (no such file)",
                                "there.md#nope (no such heading in there.md)"]


def test_cli_help_lists_the_contract_commands():
    out = subprocess.run([sys.executable, "-m", "tmux_agentstate", "--help"], capture_output=True,
                         text=True).stdout
    for name in ("classify", "watch", "start", "stop", "status", "list", "popup", "hook",
                 "launch", "explain", "send", "answer", "doctor", "manifests", "report"):
        assert name in out
