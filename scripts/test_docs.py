#!/usr/bin/python3
"""Check the documents a user reads (README.md, CHANGELOG.md, docs/*.md):

1. every relative link names a file that exists, and every #anchor a heading
   of that file (as GitHub makes anchors of headings);
2. every ```sql example runs as written, each in a new database of the
   running server (PGHOST, PGPORT, PGUSER: scripts/cluster.sh --preload
   gives one), with TimeZone UTC: tlbf is created there first unless the
   example creates it.  A line just before the example's fence may say
       <!-- run after: ../README.md#remember-keys-in-a-table -->
   (a link, relative to the document, to a heading): the first example under
   that heading runs first, in the same database, for the tables this one
   uses; or
       <!-- not run: why; test/t/001_multinode.pl runs it -->
   for an example that needs what this test has not (Citus, several
   servers): it is skipped and the reason printed, and the reason must name
   the test that runs it.

Usage: scripts/cluster.sh --preload /usr/bin/python3 scripts/test_docs.py
       (links only, no server: scripts/test_docs.py --links)
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCUMENTS = ['README.md', 'CHANGELOG.md'] + sorted(
    os.path.join('docs', f) for f in os.listdir(os.path.join(ROOT, 'docs')) if f.endswith('.md'))
LINK = re.compile(r'\[(?:[^\]]|\][^(])*?\]\(([^)\s]+)\)')
MARKER = re.compile(r'^<!-- (not run|run after): (.*) -->$')
# The settings the examples run with, so that what they show does not
# depend on the server's or the client's configuration.
SETTINGS = '-c TimeZone=UTC -c DateStyle=ISO,MDY -c IntervalStyle=postgres -c extra_float_digits=1'


def strip_fences(text):
    return re.sub(r'^```.*?^```', '', text, flags=re.S | re.M)


def strip_code(text):
    """The text without fenced blocks and code spans (links there are not links)."""
    return re.sub(r'`[^`\n]*`', '', strip_fences(text))


def anchor_of(heading):
    """The anchor GitHub makes of a heading's title."""
    return re.sub(r'[^\w\- ]', '', heading.strip().lower()).replace(' ', '-')


def anchors(path):
    """The anchors of a Markdown file: its headings' (as GitHub makes them) and <a id>s."""
    text = strip_fences(open(path, encoding='utf-8').read())
    found = set(re.findall(r'<a (?:id|name)="([^"]+)"', text))
    for line in text.split('\n'):
        m = re.match(r'^#{1,6} (.*)$', line)
        if m:
            found.add(anchor_of(m.group(1)))
    return found


def check_links():
    problems = []
    count = 0
    for doc in DOCUMENTS:
        base = os.path.dirname(os.path.join(ROOT, doc))
        for target in LINK.findall(strip_code(open(os.path.join(ROOT, doc), encoding='utf-8').read())):
            if re.match(r'^[a-z]+:', target):
                continue
            count += 1
            path, _, anchor = target.partition('#')
            full = os.path.normpath(os.path.join(base, path)) if path else os.path.join(ROOT, doc)
            if not os.path.exists(full):
                problems.append('%s: link to %s: no such file' % (doc, target))
            elif anchor and full.endswith('.md') and anchor not in anchors(full):
                problems.append('%s: link to %s: no heading with that anchor' % (doc, target))
    print('links: %d relative links in %d documents' % (count, len(DOCUMENTS)))
    return problems


class Example:
    def __init__(self, doc, line, heading, marker, sql):
        self.doc = doc            # its document, relative to ROOT
        self.line = line          # the line of its opening fence
        self.heading = heading    # the anchor of the heading it is under
        self.marker = marker      # (kind, text) of the marker before it, or None
        self.sql = sql

    def where(self):
        return '%s:%d' % (self.doc, self.line)


def examples(doc):
    """The ```sql examples of a document, in order."""
    lines = open(os.path.join(ROOT, doc), encoding='utf-8').read().split('\n')
    heading = ''
    previous = ''
    i = 0
    while i < len(lines):
        fence = re.match(r'^(\s*)```(\S*)\s*$', lines[i])
        if fence:
            # a block ends at a fence indented as its opening one (a block in
            # a list item is indented with the item)
            start, indent = i, fence.group(1)
            i += 1
            while lines[i].rstrip() != indent + '```':
                i += 1
            if fence.group(2) == 'sql':
                m = MARKER.match(previous.strip())
                body = [l[len(indent):] if l.startswith(indent) else l.lstrip() for l in lines[start + 1:i]]
                yield Example(doc, start + 1, heading, m.groups() if m else None, '\n'.join(body) + '\n')
        else:
            m = re.match(r'^#{1,6} (.*)$', lines[i])
            if m:
                heading = anchor_of(m.group(1))
        if lines[i].strip():
            previous = lines[i]
        i += 1


def psql(database, sql, options=''):
    env = dict(os.environ, PGCLIENTENCODING='UTF8',
               PGOPTIONS=(options + ' ' + os.environ.get('PGOPTIONS', '')).strip())
    return subprocess.run(['psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', database, '-f', '-'],
                          input=sql, capture_output=True, text=True, encoding='utf-8', env=env)


def prerequisites(example, by_heading):
    """The examples to run before this one, first first: those its "run after" names, in turn."""
    chain = []
    while example.marker and example.marker[0] == 'run after':
        path, _, anchor = example.marker[1].partition('#')
        doc = os.path.normpath(os.path.join(os.path.dirname(example.doc), path)) if path else example.doc
        before = by_heading.get((doc, anchor))
        if before is None:
            raise ValueError('run after %s: no ```sql example under that heading' % example.marker[1])
        if before.marker and before.marker[0] == 'not run':
            raise ValueError('run after %s: that example is not run' % example.marker[1])
        if before in chain or before is example:
            raise ValueError('run after %s: a loop' % example.marker[1])
        chain.insert(0, before)
        example = before
    return chain


def check_examples():
    problems = []
    all_examples = [e for doc in DOCUMENTS for e in examples(doc)]
    by_heading = {}
    for e in all_examples:
        by_heading.setdefault((e.doc, e.heading), e)
    for n, example in enumerate(all_examples, 1):
        if example.marker and example.marker[0] == 'not run':
            reason = example.marker[1]
            tests = re.findall(r'\btest/[\w./-]*\w', reason)
            if not tests or not all(os.path.exists(os.path.join(ROOT, t)) for t in tests):
                problems.append('%s: not run: the reason must name the test that runs it (a file under test/): %s'
                                % (example.where(), reason))
            print('%s: not run: %s' % (example.where(), reason))
            continue
        try:
            before = prerequisites(example, by_heading)
        except ValueError as e:
            problems.append('%s: %s' % (example.where(), e))
            continue
        sql = ''.join(b.sql for b in before) + example.sql
        if not re.search(r'CREATE EXTENSION\s+tlbf\b', sql):
            sql = 'CREATE EXTENSION tlbf;\n' + sql
        # UTF8 and the C locale whatever the cluster's: the documents are UTF-8
        database = 'docs_example_%d' % n
        setup = psql('postgres', "DROP DATABASE IF EXISTS %s; CREATE DATABASE %s TEMPLATE template0 "
                     "ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C';" % (database, database))
        if setup.returncode != 0:
            return problems + ['could not create database %s: %s' % (database, setup.stderr)]
        result = psql(database, sql, SETTINGS)
        psql('postgres', 'DROP DATABASE %s' % database)
        if result.returncode != 0:
            problems.append('%s: the example fails: %s' % (example.where(), result.stderr.strip()))
        else:
            print('%s: ran%s' % (example.where(),
                                 ''.join(' after %s' % b.where() for b in before)))
    return problems


def main():
    problems = check_links()
    if '--links' not in sys.argv:
        problems += check_examples()
    for p in problems:
        print('FAILED: ' + p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
