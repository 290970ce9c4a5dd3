#!/usr/bin/env python3
"""Keeps the front door true: the README's commands run, and the docs' links resolve.

Two checks, both run by `.ci/run`:

1. Commands. Every `hlorun ...` command in a fenced or indented code block, or in an
   inline code span, of the checked pages that names a file or folder of this
   repository is run from the repository root and must exit 0. The README's own
   `cargo run --release -p service --bin hlorun -- ...` counts as `hlorun ...`: the
   command is run with the binary given by --hlorun, so the check needs no second
   build. Commands that name no repository path (synopses with placeholders, paths
   of the reader's own) are listed as skipped, never silently dropped.
2. Links. Every relative Markdown link in README.md, docs/ and the other checked
   pages must name an existing file or folder, and an anchor into a Markdown page
   must name one of its headings (GitHub's heading ids).

Usage: python3 scripts/check_front_door.py --hlorun target/debug/hlorun
Exit status 0 when everything holds, 1 otherwise, with one line per failure.
"""

import argparse
import glob
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Pages whose commands are run.
COMMAND_PAGES = ["README.md", "examples/README.md", "python/README.md"]
# Pages whose links are checked (docs/ is added at run time).
LINK_PAGES = ["README.md", "examples/README.md", "python/README.md", "bench/README.md"]

CARGO_HLORUN = re.compile(r"^cargo run (?:--release )?-p service --bin hlorun --\s+")
COMMAND = re.compile(r"^(?:[A-Z_][A-Z0-9_]*=\S+\s+)*hlorun\s")


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as fh:
        return fh.read()


def code_blocks(text):
    """Yields the lines of fenced and indented code blocks, continuations joined."""
    lines = text.split("\n")
    in_fence = False
    block = []
    prev_blank = True
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("```"):
            if in_fence:
                yield from join_continuations(block)
                block = []
            in_fence = not in_fence
            prev_blank = False
            continue
        if in_fence:
            block.append(line)
        elif line.startswith("    ") and (prev_blank or block):
            block.append(line)
        else:
            if block and not in_fence:
                yield from join_continuations(block)
                block = []
        prev_blank = stripped == ""
    if block:
        yield from join_continuations(block)


def join_continuations(block):
    current = ""
    for line in block:
        part = line.strip()
        if current:
            current += " " + part
        else:
            current = part
        if current.endswith("\\"):
            current = current[:-1].rstrip()
            continue
        yield current
        current = ""
    if current:
        yield current


def inline_spans(text):
    """Inline code spans outside fenced blocks."""
    out = []
    in_fence = False
    for line in text.split("\n"):
        if line.strip().startswith("```"):
            in_fence = not in_fence
            continue
        if not in_fence:
            out.extend(re.findall(r"`([^`]+)`", line))
    return out


def strip_comment(cmd):
    # A shell comment starts at a '#' after whitespace (not inside a word).
    m = re.search(r"\s#", cmd)
    return cmd[: m.start()].rstrip() if m else cmd


def commands(page):
    text = read(page)
    found = []
    for candidate in list(code_blocks(text)) + inline_spans(text):
        cmd = strip_comment(candidate.strip())
        cmd = CARGO_HLORUN.sub("hlorun ", cmd)
        if COMMAND.match(cmd) and cmd not in found:
            found.append(cmd)
    return found


def names_repo_path(cmd):
    try:
        words = shlex.split(cmd)
    except ValueError:
        return False
    for word in words[1:]:
        if word.startswith("-") or "/" not in word and "." not in word:
            continue
        # Brace expansion (`x/{a,b}.npy`): check the part before the brace.
        path = word.split("{", 1)[0].rstrip("/") if "{" in word else word
        if path and not os.path.isabs(path) and not path.startswith("..") and os.path.exists(
            os.path.join(ROOT, path)
        ):
            return True
    return False


def run_commands(hlorun, pages, timeout, verbose):
    failures = []
    ran = skipped = 0
    for page in pages:
        for cmd in commands(page):
            if not names_repo_path(cmd):
                skipped += 1
                if verbose:
                    print(f"skip  {page}: {cmd}  (names no repository path)")
                continue
            script = 'hlorun() { "$HLORUN_BIN" "$@"; }\n' + cmd
            env = dict(os.environ, HLORUN_BIN=hlorun, HLORUN_NO_PROGRESS="1")
            try:
                proc = subprocess.run(
                    ["bash", "-c", script],
                    cwd=ROOT,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    text=True,
                    timeout=timeout,
                )
                rc, err = proc.returncode, (proc.stderr or proc.stdout).strip()
            except subprocess.TimeoutExpired:
                rc, err = "timeout", f"ran past {timeout} s"
            ran += 1
            if rc == 0:
                print(f"ok    {page}: {cmd}")
            else:
                last = err.splitlines()[-1] if err else ""
                print(f"FAIL  {page}: {cmd}  (exit {rc}: {last})")
                failures.append(f"{page}: `{cmd}` exited {rc}: {last}")
    print(f"skipped {skipped} command(s) that name no repository path (--verbose lists them)")
    return ran, failures


def slug(heading):
    """GitHub's id for a heading."""
    text = re.sub(r"`", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    ids = set()
    counts = {}
    in_fence = False
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip().startswith("```"):
                in_fence = not in_fence
                continue
            m = None if in_fence else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m:
                base = slug(m.group(1))
                n = counts.get(base, 0)
                counts[base] = n + 1
                ids.add(base if n == 0 else f"{base}-{n}")
    return ids


def links(page):
    text = read(page)
    # Drop fenced blocks and inline code: links there are not links.
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    return re.findall(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", text)


def check_links(pages):
    failures = []
    checked = 0
    for page in pages:
        base = os.path.dirname(os.path.join(ROOT, page))
        for target in links(page):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # a URL, not a repository path
            checked += 1
            path, _, anchor = target.partition("#")
            full = os.path.normpath(os.path.join(base, path)) if path else os.path.join(ROOT, page)
            if not os.path.exists(full):
                failures.append(f"{page}: link `{target}`: no such file")
                continue
            if anchor and full.endswith(".md") and anchor not in anchors(full):
                failures.append(f"{page}: link `{target}`: no heading with id '{anchor}'")
    return checked, failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hlorun", help="the hlorun binary that runs the commands")
    parser.add_argument("--links-only", action="store_true", help="check the links alone")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per command")
    parser.add_argument("--verbose", action="store_true", help="list the skipped commands")
    args = parser.parse_args()

    docs = sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))
    link_pages = [p for p in LINK_PAGES if os.path.exists(os.path.join(ROOT, p))] + docs
    failures = []
    checked, bad = check_links(link_pages)
    failures += bad
    print(f"links: {checked} checked in {len(link_pages)} pages, {len(bad)} broken")

    if not args.links_only:
        if not args.hlorun:
            parser.error("--hlorun BIN is needed to run the commands (or --links-only)")
        hlorun = os.path.abspath(args.hlorun)
        if not os.access(hlorun, os.X_OK):
            parser.error(f"{hlorun} is not an executable")
        ran, bad = run_commands(hlorun, COMMAND_PAGES + docs, args.timeout, args.verbose)
        failures += bad
        print(f"commands: {ran} run, {len(bad)} failed")
        if ran == 0:
            failures.append("no command was run: the README lost its commands?")

    for failure in failures:
        print(f"error: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
