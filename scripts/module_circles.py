#!/usr/bin/env python3
"""Import circles between the modules of Rust crates: the module graph from `crate::`, `super::`, `self::` and
child-module paths, and its strongly connected components. Exit status 1 when any crate has a circle.

A circle makes two modules one unit in disguise: neither can be read, tested or moved without the other. Run by
scripts/checks/module-circles.sh on every crate; tested by module_circles_test.py.

Usage: module_circles.py CRATE_DIR [CRATE_DIR...] [-v] [--top]
  -v: print every edge with file:line of the first use
  --top: fold every module into its top-level module (a::b -> a), so a circle through a parent counts too

Nodes are file modules (src/a/b.rs or src/a/b/mod.rs -> a::b, lib.rs -> crate root). Inline modules
(`mod tests { }`, `pub mod code { }`) are folded into their file's module. A path is resolved along
child modules and through `use` aliases (so `crate::Error` re-exported by lib.rs from `error` counts as
`error`). Comments and string literals are ignored. src/bin/* and src/main.rs are separate crates: skipped.
"""
import os
import re
import sys
from collections import defaultdict


def strip(src):
    """Blank out comments and string/char literals, keeping newlines (so line numbers survive)."""
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith('//', i):
            j = src.find('\n', i)
            j = n if j < 0 else j
            i = j
            continue
        if src.startswith('/*', i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith('/*', j):
                    depth, j = depth + 1, j + 2
                elif src.startswith('*/', j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(''.join('\n' if ch == '\n' else ' ' for ch in src[i:j]))
            i = j
            continue
        m = re.compile(r'b?r(#*)"').match(src, i)
        if m and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == '_')):
            end = '"' + m.group(1)
            j = src.find(end, m.end())
            j = n if j < 0 else j + len(end)
            out.append('""' + '\n' * src[i:j].count('\n'))
            i = j
            continue
        if c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == '\\' else 1
            j += 1
            out.append('""' + '\n' * src[i:j].count('\n'))
            i = j
            continue
        if c == "'":
            m = re.compile(r"'(\\.[^']*|[^\\'])'").match(src, i)
            if m:
                out.append("' '")
                i = m.end()
                continue
        out.append(c)
        i += 1
    return ''.join(out)


def expand_use(tree):
    """Expand a use tree without whitespace (`a::{b,c::{d@e},self}`, `@` standing for ` as `) into segment lists."""
    tree = re.sub(r'\s+', '', tree)
    res = []

    def split_top(s):
        parts, depth, cur = [], 0, ''
        for ch in s:
            if ch == '{':
                depth += 1
            elif ch == '}':
                depth -= 1
            if ch == ',' and depth == 0:
                parts.append(cur)
                cur = ''
            else:
                cur += ch
        if cur:
            parts.append(cur)
        return parts

    def rec(prefix, s):
        if not s:
            return
        b = s.find('{')
        if b >= 0 and (s.find('::') < 0 or b <= len(s)) and s.endswith('}') and ('::{' in s or s.startswith('{')):
            head = s[:b].rstrip(':')
            inner = s[b + 1:-1]
            pre = prefix + ([x for x in head.split('::') if x] if head else [])
            for part in split_top(inner):
                rec(pre, part)
            return
        path = s
        segs = prefix + [x for x in path.split('::') if x]
        if segs and segs[-1] == 'self':
            segs = segs[:-1]
        res.append(segs)

    rec([], tree)
    return res


def expand_use_raw(raw):
    """The (segments, alias) pairs of a use tree as written: ` as ` is marked before whitespace is removed."""
    raw = re.sub(r'\s+as\s+', '@', raw)
    pairs = []
    for segs in expand_use(raw):
        alias = None
        if segs and '@' in segs[-1]:
            last, alias = segs[-1].split('@', 1)
            segs = segs[:-1] + [last]
        pairs.append((segs, alias))
    return pairs


class Crate:
    def __init__(self, root, top=False):
        self.top = top
        self.root = root.rstrip('/')
        self.name = os.path.basename(self.root)
        self.src = os.path.join(self.root, 'src')
        self.files = {}  # module tuple -> path
        for dirpath, dirs, files in os.walk(self.src):
            rel = os.path.relpath(dirpath, self.src)
            if rel.split(os.sep)[0] == 'bin':
                continue
            for f in files:
                if not f.endswith('.rs'):
                    continue
                parts = [] if rel == '.' else rel.split(os.sep)
                if f in ('lib.rs',) and not parts:
                    mod = ()
                elif f == 'main.rs' and not parts:
                    continue
                elif f == 'mod.rs':
                    mod = tuple(parts)
                else:
                    mod = tuple(parts + [f[:-3]])
                self.files[mod] = os.path.join(dirpath, f)
        self.mods = set(self.files)
        self.aliases = defaultdict(dict)  # module -> name -> (segments, module it was written in, depth)
        self.refs = []  # (module, segments, depth, line, in_use)
        self.glob = defaultdict(list)
        for mod, path in self.files.items():
            self.scan(mod, path)

    def scan(self, mod, path):
        text = strip(open(path, encoding='utf-8').read())
        # inline-module depth at each offset
        depth_at = []
        stack = []  # brace stack: True if it opens an inline mod
        inline = 0
        pending_mod = False
        tokens = re.finditer(r'\bmod\s+[A-Za-z_][A-Za-z0-9_]*\s*\{|[{}]', text)
        marks = []
        for t in tokens:
            s = t.group(0)
            if s == '}':
                if stack and stack.pop():
                    inline -= 1
                marks.append((t.end(), inline))
            elif s == '{':
                stack.append(False)
            else:
                stack.append(True)
                inline += 1
                marks.append((t.end(), inline))

        def depth(pos):
            d = 0
            for p, v in marks:
                if p <= pos:
                    d = v
                else:
                    break
            return d

        def line(pos):
            return text.count('\n', 0, pos) + 1

        used = []
        for m in re.finditer(r'\buse\s+([^;]*);', text):
            d = depth(m.start())
            span = (m.start(), m.end())
            used.append(span)
            for segs, alias in expand_use_raw(m.group(1)):
                if not segs:
                    continue
                if segs[-1] == '*':
                    self.glob[mod].append((segs[:-1], d))
                    self.refs.append((mod, segs[:-1], d, line(m.start()), True))
                    continue
                name = alias or segs[-1]
                if d == 0:
                    self.aliases[mod][name] = (segs, d)
                self.refs.append((mod, segs, d, line(m.start()), True))
        for m in re.finditer(r'(?<![A-Za-z0-9_:])((?:crate|super|self)(?:\s*::\s*[A-Za-z_][A-Za-z0-9_]*)+)', text):
            if any(a <= m.start() < b for a, b in used):
                continue
            segs = re.split(r'\s*::\s*', m.group(1))
            self.refs.append((mod, segs, depth(m.start()), line(m.start()), False))
        # bare child-module paths like `args::Args` (2018 edition relative paths)
        kids = {c[-1] for c in self.mods if len(c) == len(mod) + 1 and c[:len(mod)] == mod}
        for m in re.finditer(r'(?<![A-Za-z0-9_:])([A-Za-z_][A-Za-z0-9_]*)\s*::', text):
            if m.group(1) in kids and not any(a <= m.start() < b for a, b in used):
                self.refs.append((mod, [m.group(1), '_'], depth(m.start()), line(m.start()), False))

    def resolve(self, mod, segs, d, seen=None):
        """Module that a path written in `mod` (at inline depth d) finally lands in, or None if external."""
        seen = seen or set()
        key = (mod, tuple(segs))
        if key in seen:
            return None
        seen.add(key)
        segs = list(segs)
        if not segs:
            return mod
        if segs[0] == 'crate':
            cur, segs = (), segs[1:]
        elif segs[0] in ('super', 'self'):
            cur = mod
            while segs and segs[0] in ('super', 'self'):
                if segs[0] == 'super':
                    if d > 0:
                        d -= 1
                    else:
                        cur = cur[:-1]
                segs = segs[1:]
        else:
            # relative path: child module or alias of this module, else external crate / local item
            if tuple(mod) + (segs[0],) in self.mods:
                cur = mod
            elif segs[0] in self.aliases[mod]:
                cur = mod
            else:
                return None
        while segs:
            nxt = cur + (segs[0],)
            if nxt in self.mods:
                cur, segs = nxt, segs[1:]
                continue
            al = self.aliases[cur].get(segs[0])
            if al is not None:
                target, _ = al
                if target[:1] in (['crate'], ['super'], ['self']) or (cur + (target[0],)) in self.mods:
                    r = self.resolve(cur, target + segs[1:], 0, seen)
                    return r if r is not None else cur
            # glob re-exports: `pub use foo::*;`
            for gsegs, gd in self.glob[cur]:
                gm = self.resolve(cur, gsegs, gd, seen)
                if gm is not None and gm != cur and gm in self.mods:
                    sub = self.resolve(gm, ['self'] + segs, 0, seen)
                    if sub is not None and sub != gm:
                        return sub
            return cur
        return cur

    def graph(self):
        edges = defaultdict(dict)  # a -> b -> (line, file)
        for mod, segs, d, ln, in_use in self.refs:
            tgt = self.resolve(mod, segs, d)
            if tgt is None or tgt == mod or tgt not in self.mods:
                continue
            if mod == ():
                continue  # lib.rs: module declarations and re-exports only
            source = self.files[mod]
            if self.top:
                mod, tgt = mod[:1], tgt[:1]
                if mod == tgt or tgt == ():
                    continue
            edges[mod].setdefault(tgt, (source, ln))
        return edges


def scc(nodes, edges):
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    sys.setrecursionlimit(10000)

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(comp)

    for v in sorted(nodes):
        if v not in index:
            strong(v)
    return out


def name(m):
    return '::'.join(m) if m else 'crate'


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('-')]
    verbose = '-v' in sys.argv
    total = 0
    for root in args:
        c = Crate(root, top='--top' in sys.argv)
        edges = c.graph()
        nodes = {m[:1] for m in c.mods} if c.top else c.mods
        comps = [sorted(x) for x in scc(nodes, edges) if len(x) > 1]
        print(f'{c.name}: {len(c.mods)} modules, {sum(len(v) for v in edges.values())} edges, '
              f'{len(comps)} circle(s)')
        for comp in sorted(comps):
            total += 1
            print('  circle: ' + ', '.join(name(m) for m in comp))
            for a in comp:
                for b, (f, ln) in sorted(edges[a].items()):
                    if b in comp:
                        print(f'    {name(a)} -> {name(b)}   ({os.path.relpath(f, root)}:{ln})')
        if verbose:
            for a in sorted(edges):
                for b, (f, ln) in sorted(edges[a].items()):
                    print(f'  {name(a)} -> {name(b)}   ({os.path.relpath(f, root)}:{ln})')
    sys.exit(1 if total else 0)


if __name__ == '__main__':
    main()
