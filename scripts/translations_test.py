#!/usr/bin/env python3
"""Tests of translations.py on small page pairs written to a temporary directory: a faithful translation passes; a
changed command in a code block or in inline code, a missing or moved section, a changed link, a missing pair or
translation, or a missing language link fails, naming the page, the section and the item. Last, the committed pages
of the repository pass."""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'translations.py')

ENGLISH = '''# Guide

[简体中文](guide.zh-CN.md)

Read [the other page](other.md) and [the site](https://example.com/a).

## 1. Install

Run `helm install` first, then `kubectl get pods`:

```sh
helm install demo chart/ --namespace demo
kubectl get pods -n demo
```

## 2. Verify

`sudo ascend-doctor --section driver` checks it; see [compat](docs/compat.md).

```yaml
key: value
```
'''

CHINESE = '''<!-- translation-of: guide.md -->
# 指南

[English](guide.md)

请阅读[另一页](other.md)和[网站](https://example.com/a)。

## 1. 安装

先运行 `helm install`，再运行 `kubectl get pods`：

```sh
helm install demo chart/ --namespace demo
kubectl get pods -n demo
```

## 2. 验证

用 `sudo ascend-doctor --section driver` 检查；参见[兼容性](docs/compat.md)。

```yaml
key: value
```
'''


def run(files, required=()):
    with tempfile.TemporaryDirectory() as root:
        for path, text in files.items():
            full = os.path.join(root, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, 'w', encoding='utf-8') as out:
                out.write(text)
        done = subprocess.run([sys.executable, SCRIPT, '--root', root, '--required', *required],
                              capture_output=True, text=True, check=False)
        return done.returncode, done.stdout + done.stderr


def pair(english=ENGLISH, chinese=CHINESE, **more):
    files = {'guide.md': english, 'guide.zh-CN.md': chinese, 'other.md': '# Other\n', 'docs/compat.md': '# C\n'}
    files.update(more)
    return files


class Translations(unittest.TestCase):
    def fails(self, files, *messages, required=()):
        code, out = run(files, required)
        self.assertEqual(code, 1, out)
        for message in messages:
            self.assertIn(message, out)

    def passes(self, files, required=()):
        code, out = run(files, required)
        self.assertEqual(code, 0, out)
        return out

    def test_a_faithful_translation_passes(self):
        out = self.passes(pair(), required=['guide.md'])
        self.assertIn('1 Chinese page(s), 0 problem(s)', out)

    def test_a_command_changed_in_one_code_block_fails(self):
        self.fails(pair(english=ENGLISH.replace('kubectl get pods -n demo', 'kubectl get pods -n prod')),
                   'guide.zh-CN.md: section 2 "1. 安装": code block 1 differs from guide.md: line 2 is '
                   "'kubectl get pods -n prod' in English, 'kubectl get pods -n demo' in Chinese")
        self.fails(pair(chinese=CHINESE.replace('key: value', 'key: other')),
                   'section 3 "2. 验证": code block 1 differs from guide.md')

    def test_a_code_block_dropped_from_the_translation_fails(self):
        self.fails(pair(chinese=CHINESE.replace('```yaml\nkey: value\n```\n', '')),
                   'section 3 "2. 验证": 0 code block(s), guide.md has 1')

    def test_a_changed_inline_command_fails(self):
        changed = CHINESE.replace('`sudo ascend-doctor --section driver`', '`sudo ascend-doctor --section runtime`')
        self.fails(pair(chinese=changed),
                   'guide.zh-CN.md: section 3 "2. 验证": inline code missing (in guide.md, not here): '
                   '`sudo ascend-doctor --section driver`',
                   'inline code not in guide.md: `sudo ascend-doctor --section runtime`')

    def test_an_inline_command_wrapped_over_two_lines_is_the_same(self):
        self.passes(pair(chinese=CHINESE.replace('`sudo ascend-doctor --section driver`',
                                                 '`sudo ascend-doctor\n--section driver`')))

    def test_a_missing_section_fails(self):
        self.fails(pair(chinese=CHINESE[:CHINESE.index('## 2. 验证')]),
                   'guide.zh-CN.md: section 3: missing; guide.md has ## "2. Verify" here')

    def test_a_moved_section_fails(self):
        install, verify = CHINESE.index('## 1. 安装'), CHINESE.index('## 2. 验证')
        swapped = CHINESE[:install] + CHINESE[verify:] + '\n' + CHINESE[install:verify]
        self.fails(pair(chinese=swapped),
                   'section 2 "2. 验证": heading ## "2. 验证" does not match ## "1. Install" of guide.md')
        # The same move with the numbers taken off the headings is still caught, by the sections' content.
        self.fails(pair(english=ENGLISH.replace('## 1. ', '## ').replace('## 2. ', '## '),
                        chinese=swapped.replace('## 1. ', '## ').replace('## 2. ', '## ')),
                   'section 2 "验证": code block 1 differs from guide.md')

    def test_a_changed_link_fails(self):
        self.fails(pair(chinese=CHINESE.replace('(docs/compat.md)', '(docs/compatibility.md)')),
                   'guide.zh-CN.md: section 3 "2. 验证": link 1 points to docs/compatibility.md, guide.md has '
                   'docs/compat.md there')
        swapped = CHINESE.replace('[另一页](other.md)和[网站](https://example.com/a)',
                                  '[网站](https://example.com/a)和[另一页](other.md)')
        self.fails(pair(chinese=swapped), 'section 1 "指南": link 1 points to https://example.com/a')

    def test_a_link_to_a_translated_page_must_point_to_the_translation(self):
        translated = {'docs/compat.zh-CN.md': '<!-- translation-of: compat.md -->\n# 兼容\n\n[English](compat.md)\n',
                      'docs/compat.md': '# C\n\n[简体中文](compat.zh-CN.md)\n'}
        self.fails(pair(**translated),
                   'link 1 points to docs/compat.md, guide.md has docs/compat.md there (expected docs/compat.zh-CN.md)')
        self.passes(pair(chinese=CHINESE.replace('(docs/compat.md)', '(docs/compat.zh-CN.md)'), **translated))

    def test_a_partial_translation_compares_the_sections_it_declares(self):
        partial = CHINESE.replace('<!-- translation-of: guide.md -->',
                                  '<!-- translation-of: guide.md sections: "Guide", "2. Verify" -->')
        partial = partial[:partial.index('## 1. 安装')] + partial[partial.index('## 2. 验证'):]
        self.passes(pair(chinese=partial))
        self.fails(pair(chinese=partial.replace('"2. Verify"', '"2. Check"')),
                   'the header names section "2. Check", which guide.md does not have')
        self.fails(pair(chinese=partial.replace('`sudo ascend-doctor --section driver`', '`ascend-doctor`')),
                   'section 2 "2. 验证": inline code missing')

    def test_a_chinese_page_without_its_english_page_fails(self):
        files = pair()
        del files['guide.md']
        self.fails(files, 'guide.zh-CN.md: its English page guide.md does not exist')

    def test_a_required_page_without_translation_fails(self):
        self.fails(pair(**{'deploy/README.md': '# Deploy\n'}),
                   "deploy/README.md: a page of the operator's path without its Chinese translation "
                   'deploy/README.zh-CN.md', required=['guide.md', 'deploy/README.md'])
        self.fails(pair(), "gone.md: a page of the operator's path, missing", required=['gone.md'])

    def test_the_language_links_and_the_header_are_required(self):
        self.fails(pair(english=ENGLISH.replace('[简体中文](guide.zh-CN.md)', '')),
                   'guide.md: no link to its translation: [简体中文](guide.zh-CN.md)')
        self.fails(pair(chinese=CHINESE.replace('[English](guide.md)', '')),
                   'guide.zh-CN.md: no link back to its English page: [English](guide.md)')
        self.fails(pair(chinese=CHINESE.replace('<!-- translation-of: guide.md -->\n', '')),
                   'guide.zh-CN.md: no header `<!-- translation-of: guide.md -->`')

    def test_the_committed_pages_pass(self):
        done = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True, check=False)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn(' 0 problem(s)', done.stdout)


if __name__ == '__main__':
    unittest.main()
