#!/usr/bin/env python3
"""Tests of module_circles.py on small crates written to a temporary directory: a circle through a `use`, through a
path in code, through an alias and through a parent's re-export is found; one-way uses, external crates and test
modules that use their parent are not circles."""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'module_circles.py')


def run(files):
    with tempfile.TemporaryDirectory() as root:
        crate = os.path.join(root, 'demo')
        for path, text in files.items():
            full = os.path.join(crate, 'src', path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, 'w', encoding='utf-8') as out:
                out.write(text)
        done = subprocess.run([sys.executable, SCRIPT, crate], capture_output=True, text=True, check=False)
        return done.returncode, done.stdout


class ModuleCircles(unittest.TestCase):
    def test_two_modules_that_use_each_other_are_a_circle(self):
        code, out = run({
            'lib.rs': 'mod a;\nmod b;\n',
            'a.rs': 'use crate::b::B;\npub struct A(B);\n',
            'b.rs': 'pub struct B;\npub fn make() -> crate::a::A { todo!() }\n',
        })
        self.assertEqual(code, 1, out)
        self.assertIn('circle: a, b', out)
        self.assertIn('b -> a   (src/b.rs:2)', out)

    def test_a_loop_through_an_alias_and_a_re_export_is_found(self):
        code, out = run({
            'lib.rs': 'mod a;\nmod b;\nmod c;\npub use a::A;\n',
            'a.rs': 'use crate::b::B as Inner;\npub struct A(Inner);\n',
            'b.rs': 'use super::c;\npub struct B(c::C);\n',
            'c.rs': '// crate::b::B in a comment is not a use\npub struct C(crate::A);\n',
        })
        self.assertEqual(code, 1, out)
        self.assertIn('circle: a, b, c', out)

    def test_one_way_uses_external_crates_and_tests_are_not_circles(self):
        code, out = run({
            'lib.rs': 'mod a;\nmod b;\n',
            'a.rs': 'use std::sync::Arc;\nuse serde::Serialize;\npub struct A(Arc<crate::b::B>);\n'
                    '#[cfg(test)]\nmod tests {\n    use super::*;\n}\n',
            'b.rs': 'pub struct B;\nconst TEXT: &str = "crate::a::A";\n',
        })
        self.assertEqual(code, 0, out)
        self.assertIn('0 circle(s)', out)


if __name__ == '__main__':
    unittest.main()
