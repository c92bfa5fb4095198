#!/usr/bin/python3
"""Check the documents a user reads:

1. every relative link in README.md, CHANGELOG.md and docs/*.md names a file
   that exists, and every #anchor a heading of that file (as GitHub makes
   anchors of headings);
2. every ```sql example of README.md runs as written, each in a new database
   of the running server (PGHOST, PGPORT, PGUSER: scripts/cluster.sh
   --preload gives one): tlbf is created there first unless the example
   creates it.  An example after a line "<!-- not run: why -->" is skipped,
   and the reason printed.

Usage: scripts/cluster.sh --preload /usr/bin/python3 scripts/test_readme.py
       (links only, no server: scripts/test_readme.py --links)
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCUMENTS = ['README.md', 'CHANGELOG.md'] + sorted(
    os.path.join('docs', f) for f in os.listdir(os.path.join(ROOT, 'docs')) if f.endswith('.md'))
LINK = re.compile(r'\[(?:[^\]]|\][^(])*?\]\(([^)\s]+)\)')


def strip_fences(text):
    return re.sub(r'^```.*?^```', '', text, flags=re.S | re.M)


def strip_code(text):
    """The text without fenced blocks and code spans (links there are not links)."""
    return re.sub(r'`[^`\n]*`', '', strip_fences(text))


def anchors(path):
    """The anchors of a Markdown file: its headings' (as GitHub makes them) and <a id>s."""
    text = strip_fences(open(path, encoding='utf-8').read())
    found = set(re.findall(r'<a (?:id|name)="([^"]+)"', text))
    for line in text.split('\n'):
        m = re.match(r'^#{1,6} (.*)$', line)
        if m:
            found.add(re.sub(r'[^\w\- ]', '', m.group(1).strip().lower()).replace(' ', '-'))
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


def examples():
    """(line number, skip reason or None, SQL) of each ```sql block of the README."""
    lines = open(os.path.join(ROOT, 'README.md'), encoding='utf-8').read().split('\n')
    i = 0
    while i < len(lines):
        if lines[i].strip() == '```sql':
            start = i
            previous = next((l for l in reversed(lines[:i]) if l.strip()), '')
            m = re.match(r'^<!-- not run: (.*) -->$', previous.strip())
            i += 1
            body = []
            while lines[i].strip() != '```':
                body.append(lines[i])
                i += 1
            yield start + 1, (m.group(1) if m else None), '\n'.join(body) + '\n'
        i += 1


def psql(database, sql):
    return subprocess.run(['psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', database, '-f', '-'],
                          input=sql, capture_output=True, text=True)


def check_examples():
    problems = []
    for n, (line, skip, sql) in enumerate(examples(), 1):
        if skip:
            print('README.md:%d: not run: %s' % (line, skip))
            continue
        database = 'readme_example_%d' % n
        setup = psql('postgres', 'DROP DATABASE IF EXISTS %s; CREATE DATABASE %s;' % (database, database))
        if setup.returncode != 0:
            return problems + ['could not create database %s: %s' % (database, setup.stderr)]
        if not re.search(r'CREATE EXTENSION\s+tlbf\b', sql):
            sql = 'CREATE EXTENSION tlbf;\n' + sql
        result = psql(database, sql)
        psql('postgres', 'DROP DATABASE %s' % database)
        if result.returncode != 0:
            problems.append('README.md:%d: the example fails: %s' % (line, result.stderr.strip()))
        else:
            print('README.md:%d: ran' % line)
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
