#!/usr/bin/env python3
"""The Chinese pages of the operator's path against their English pages: a translation may change every word of prose,
and nothing an operator types or follows. Exit status 1 when any page drifted, lacks its pair or its translation.

Run by scripts/checks/translations.sh; tested by translations_test.py.

Usage: translations.py [--root DIR] [--required PAGE ...]
  --root: the repository (default: the one this script is in)
  --required: the English pages that must have a translation (default: OPERATORS_PATH below; empty for none)

Pairs. Every `X.zh-CN.md` below the root is the translation of `X.md` beside it; a Chinese page whose English page is
missing fails. Each Chinese page starts with a header naming its English page, and, for a partial translation, the
English sections it translates, by their exact heading text, in the English order:

    <!-- translation-of: README.md -->
    <!-- translation-of: README.md sections: "Quickstart", "Chips and driver APIs" -->

The English page links to its translation (`[简体中文](X.zh-CN.md)`) and the translation back (`[English](X.md)`);
these two language links are required, and left out of the comparison below.

Sections. A page is cut at its ATX headings (`#` to `######`, outside fenced code): a section runs from its heading
to the next heading of any level, and the text before the first heading is not compared. The Chinese page must have
the English page's sections (all of them, or the declared ones), matched by position: the same heading level, and
the same numbers and inline code spans in the heading (`## 1. Driver and firmware` and `## 1. 驱动与固件`). Within
each pair of sections:
  - fenced code blocks: the same blocks in the same order, info string and content byte for byte (comments included);
  - inline code spans: the same spans as a multiset (word order may move them within a section, none may change,
    appear or disappear); every span counts, commands, flags, paths, check ids, values alike, because the rule
    "only spans that look like commands" would let a changed path through. A span wrapped over a line break reads
    as the same span on one line;
  - link targets (`[text](target)`, images too): the same targets in the same order, except that a link to an
    English page that has a translation must point to the translation (`deploy/README.md` in English,
    `deploy/README.zh-CN.md` in Chinese).
A reordered section therefore fails as the first section whose heading or content no longer matches its pair.
"""
import argparse
import os
import re
import sys
from collections import Counter

# The English pages of the operator's path: each must have a Chinese translation beside it.
OPERATORS_PATH = [
    'README.md',                  # the introduction and quickstart
    'deploy/README.md',           # the Helm install; driver, runtime, device plugin, monitoring; troubleshooting chain
    'docs/ascend-doctor-json.md',  # the doctor's checks in troubleshooting order, its exit codes
    'docs/compatibility.md',      # what each component needs
]
# Pages of the operator's path not written yet: each is required as soon as its English page exists.
OPERATORS_PATH_WHEN_WRITTEN = [
    'docs/migration.md',          # the migration guide from Huawei's stack
]

SUFFIX = '.zh-CN.md'
HEADER = re.compile(r'<!--\s*translation-of:\s*(\S+?)(?:\s+sections:\s*(.*?))?\s*-->', re.S)
FENCE = re.compile(r'^ {0,3}(`{3,}|~{3,})(.*)$')
HEADING = re.compile(r'^ {0,3}(#{1,6})(?:\s+(.*?))?\s*#*\s*$')
LINK = re.compile(r'\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
COMMENT = re.compile(r'<!--.*?-->', re.S)


class Section:
    def __init__(self, level, title):
        self.level, self.title = level, title
        self.lines = []
        self.code_blocks = []  # (info string, content)

    def prose(self):
        return '\n'.join(self.lines)


def sections(text):
    """The sections of a page, in order (the text before the first heading not among them)."""
    text = COMMENT.sub('', text)
    found, current, fence = [], Section(0, ''), None
    for line in text.split('\n'):
        if fence is not None:
            marker, info, body = fence
            if re.match(r'^ {0,3}' + re.escape(marker[0]) + '{%d,}\\s*$' % len(marker), line):
                current.code_blocks.append((info, '\n'.join(body)))
                fence = None
            else:
                body.append(line)
            continue
        opening = FENCE.match(line)
        if opening and not (opening.group(1)[0] == '`' and '`' in opening.group(2)):
            fence = (opening.group(1), opening.group(2).strip(), [])
            continue
        heading = HEADING.match(line)
        if heading:
            current = Section(len(heading.group(1)), (heading.group(2) or '').strip())
            found.append(current)
            continue
        current.lines.append(line)
    if fence is not None:
        current.code_blocks.append((fence[1], '\n'.join(fence[2])))
    return found


def code_spans(text):
    """The inline code spans of some prose, and the prose with each span blanked (for the link search)."""
    spans, rest, i = [], [], 0
    while i < len(text):
        if text[i] != '`':
            rest.append(text[i])
            i += 1
            continue
        run = len(text[i:]) - len(text[i:].lstrip('`'))
        close = re.compile(r'(?<!`)' + '`' * run + r'(?!`)')
        end = close.search(text, i + run)
        if not end:
            rest.append(text[i:i + run])
            i += run
            continue
        span = re.sub(r'[ \t]*\n[ \t]*', ' ', text[i + run:end.start()])
        if len(span) > 2 and span.startswith(' ') and span.endswith(' ') and span.strip():
            span = span[1:-1]
        spans.append(span)
        rest.append(' ')
        i = end.end()
    return spans, ''.join(rest)


def heading_marks(title):
    """What a heading keeps in every language: its numbers and its inline code."""
    spans, rest = code_spans(title)
    return re.findall(r'\d+', rest), spans


def translated_target(target, page_dir, root):
    """The target a Chinese page must use for an English page's link: the translation where one exists."""
    path, hashmark, anchor = target.partition('#')
    if re.match(r'^[a-z][a-z0-9+.-]*:', path) or not path.endswith('.md') or path.endswith(SUFFIX):
        return target
    zh = path[:-len('.md')] + SUFFIX
    if os.path.isfile(os.path.normpath(os.path.join(root, page_dir, zh))):
        # A heading's anchor is made from its words, so it cannot be kept across languages: the page is what counts.
        return zh
    return target


def first_difference(a, b):
    a_lines, b_lines = a.split('\n'), b.split('\n')
    for number, (x, y) in enumerate(zip(a_lines, b_lines), 1):
        if x != y:
            return 'line %d is %r in English, %r in Chinese' % (number, x, y)
    return '%d line(s) in English, %d in Chinese' % (len(a_lines), len(b_lines))


def check_pair(root, zh_rel):
    """The problems of one Chinese page against its English page, each a line naming page, section and item."""
    en_rel = zh_rel[:-len(SUFFIX)] + '.md'
    page_dir = os.path.dirname(zh_rel)
    with open(os.path.join(root, zh_rel), encoding='utf-8') as f:
        zh_text = f.read()
    if not os.path.isfile(os.path.join(root, en_rel)):
        return ['%s: its English page %s does not exist' % (zh_rel, en_rel)]
    with open(os.path.join(root, en_rel), encoding='utf-8') as f:
        en_text = f.read()
    problems = []

    def problem(message):
        problems.append('%s: %s' % (zh_rel, message))

    header = HEADER.search(zh_text)
    if not header:
        return ['%s: no header `<!-- translation-of: %s -->` naming its English page'
                % (zh_rel, os.path.basename(en_rel))]
    if header.group(1) != os.path.basename(en_rel):
        problem('the header names %s, but the page beside it is %s' % (header.group(1), os.path.basename(en_rel)))
    en_name, zh_name = os.path.basename(en_rel), os.path.basename(zh_rel)
    if not re.search(r'\]\(\s*' + re.escape(zh_name) + r'\s*\)', en_text):
        problems.append('%s: no link to its translation: [简体中文](%s)' % (en_rel, zh_name))
    if not re.search(r'\]\(\s*' + re.escape(en_name) + r'\s*\)', zh_text):
        problem('no link back to its English page: [English](%s)' % en_name)

    en_sections, zh_sections = sections(en_text), sections(zh_text)
    if header.group(2) is not None:
        wanted = re.findall(r'"([^"]*)"', header.group(2))
        if not wanted:
            problem('the header\'s sections: list names no section (write them as "Heading", "Heading")')
        titles = [s.title for s in en_sections]
        for title in wanted:
            if title not in titles:
                problem('the header names section "%s", which %s does not have (its headings: %s)'
                        % (title, en_rel, ', '.join('"%s"' % t for t in titles)))
        if [t for t in titles if t in wanted] != [t for t in wanted if t in titles]:
            problem('the header\'s sections are not in the order of %s' % en_rel)
        en_sections = [s for s in en_sections if s.title in wanted]

    for index in range(max(len(en_sections), len(zh_sections))):
        number = index + 1
        if index >= len(zh_sections):
            en = en_sections[index]
            problem('section %d: missing; %s has %s "%s" here' % (number, en_rel, '#' * en.level, en.title))
            continue
        zh = zh_sections[index]
        where = 'section %d "%s"' % (number, zh.title)
        if index >= len(en_sections):
            problem('%s: %s has no section %d (only %d)' % (where, en_rel, number, len(en_sections)))
            continue
        en = en_sections[index]
        if en.level != zh.level or heading_marks(en.title) != heading_marks(zh.title):
            problem('%s: heading %s "%s" does not match %s "%s" of %s (level, numbers and code must be the same; '
                    'a section missing, added or moved?)'
                    % (where, '#' * zh.level, zh.title, '#' * en.level, en.title, en_rel))
            continue
        problems.extend(compare_sections(zh_rel, where, en_rel, page_dir, root, en, zh))
    return problems


def compare_sections(zh_rel, where, en_rel, page_dir, root, en, zh):
    problems = []

    def problem(message):
        problems.append('%s: %s: %s' % (zh_rel, where, message))

    for number, (en_block, zh_block) in enumerate(zip(en.code_blocks, zh.code_blocks), 1):
        if en_block != zh_block:
            if en_block[0] != zh_block[0]:
                detail = 'info string %r in English, %r in Chinese' % (en_block[0], zh_block[0])
            else:
                detail = first_difference(en_block[1], zh_block[1])
            problem('code block %d differs from %s: %s' % (number, en_rel, detail))
    if len(en.code_blocks) != len(zh.code_blocks):
        problem('%d code block(s), %s has %d' % (len(zh.code_blocks), en_rel, len(en.code_blocks)))

    en_spans, en_rest = code_spans(en.prose())
    zh_spans, zh_rest = code_spans(zh.prose())
    only_en = Counter(en_spans) - Counter(zh_spans)
    only_zh = Counter(zh_spans) - Counter(en_spans)
    def listed(spans):
        return ', '.join('`%s`' % s for s in sorted(spans.elements()))

    if only_en:
        problem('inline code missing (in %s, not here): %s' % (en_rel, listed(only_en)))
    if only_zh:
        problem('inline code not in %s: %s' % (en_rel, listed(only_zh)))

    en_name, zh_name = os.path.basename(en_rel), os.path.basename(zh_rel)
    en_links = [t for t in LINK.findall(en_rest) if t != zh_name]
    zh_links = [t for t in LINK.findall(zh_rest) if t != en_name]
    expected = [translated_target(t, page_dir, root) for t in en_links]
    for number, (want, got) in enumerate(zip(expected, zh_links), 1):
        if want != got:
            problem('link %d points to %s, %s has %s there (expected %s)'
                    % (number, got, en_rel, en_links[number - 1], want))
            break
    else:
        if len(expected) != len(zh_links):
            problem('%d link(s), %s has %d: %s' % (len(zh_links), en_rel, len(expected),
                                                  ' '.join(expected[len(zh_links):] or zh_links[len(expected):])))
    return problems


def chinese_pages(root):
    found = []
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if not d.startswith('.') and d not in ('target', 'node_modules'))
        for name in sorted(files):
            if name.endswith(SUFFIX):
                found.append(os.path.relpath(os.path.join(directory, name), root))
    return found


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--root', default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument('--required', nargs='*', default=None)
    args = parser.parse_args(argv)
    root = args.root
    if args.required is None:
        required = OPERATORS_PATH + [p for p in OPERATORS_PATH_WHEN_WRITTEN if os.path.isfile(os.path.join(root, p))]
    else:
        required = args.required

    problems = []
    pages = chinese_pages(root)
    for page in pages:
        problems.extend(check_pair(root, page))
    for english in required:
        if not os.path.isfile(os.path.join(root, english)):
            problems.append('%s: a page of the operator\'s path, missing (moved? update OPERATORS_PATH in '
                            'scripts/translations.py)' % english)
        elif english[:-len('.md')] + SUFFIX not in pages:
            problems.append('%s: a page of the operator\'s path without its Chinese translation %s'
                            % (english, english[:-len('.md')] + SUFFIX))
    for line in problems:
        print(line)
    print('translations: %d Chinese page(s), %d problem(s)' % (len(pages), len(problems)))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
