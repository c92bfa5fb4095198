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
   the test that runs it;
3. what an example shows a statement gives, in comments right after it, is
   what it gives:
       SELECT tlbf_contains(...);   -- → t
   "-- →" at the end of the statement's last line, or starting the lines
   right after it: its rows as psql prints them unaligned and without
   headers (columns joined by |), or the command's tag (INSERT 0 2);
       SELECT ...;
       --  seen ad-2? | seen ad-9?
       -- ------------+------------
       --  t          | f
   comment lines right after the statement, the second a ruler of dashes:
   the table psql prints (aligned, without the row count).  Trailing blanks
   do not count.

Usage: scripts/cluster.sh --preload /usr/bin/python3 scripts/test_docs.py
       (links only, no server: scripts/test_docs.py --links)
"""
import itertools
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


def statement_ends(sql):
    """The offset just past each ';' that ends a statement of sql (not one in a
    string, a quoted name or a comment), and whether text follows the last."""
    ends = []
    pending = False
    dollar = re.compile(r'\$([A-Za-z_][A-Za-z_0-9]*)?\$')
    i = 0
    while i < len(sql):
        c = sql[i]
        identifier_before = i > 0 and (sql[i - 1].isalnum() or sql[i - 1] == '_')
        if sql.startswith('--', i):
            i = sql.find('\n', i)
            if i < 0:
                break
        elif sql.startswith('/*', i):
            depth, i = 1, i + 2
            while i < len(sql) and depth:
                if sql.startswith('/*', i):
                    depth, i = depth + 1, i + 2
                elif sql.startswith('*/', i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            continue
        elif c == "'":
            # E'...' takes backslash escapes; '' is a quote either way
            backslashes = i > 0 and sql[i - 1] in 'Ee' and not (i > 1 and (sql[i - 2].isalnum()
                                                                          or sql[i - 2] == '_'))
            i += 1
            while i < len(sql) and sql[i] != "'":
                i += 2 if backslashes and sql[i] == '\\' else 1
            pending = True
        elif c == '"':
            i = sql.find('"', i + 1)
            if i < 0:
                break
            pending = True
        elif c == '$' and not identifier_before and dollar.match(sql, i):
            tag = dollar.match(sql, i).group(0)
            i = sql.find(tag, i + len(tag))
            if i < 0:
                break
            i += len(tag)
            pending = True
            continue
        elif c == ';':
            ends.append(i + 1)
            pending = False
        elif not c.isspace():
            pending = True
        i += 1
    return ends, pending


ARROW = re.compile(r'^\s*--\s*→ ?(.*)$')
COMMENT = re.compile(r'^\s*-- ?(.*)$')
RULER = re.compile(r'^-+(\+-+)*$')


def shown_output(lines, end_line, rest):
    """What the document shows the statement ending on lines[end_line] gives
    (rest: the text after its ';'): ('value' or 'table', the lines shown, the
    indices of the lines that show them), or None."""
    after = lines[end_line + 1:]
    arrows = [ARROW.match(l).group(1) for l in itertools.takewhile(ARROW.match, after)]
    if ARROW.match(rest):
        return 'value', [ARROW.match(rest).group(1)] + arrows, range(end_line, end_line + 1 + len(arrows))
    if rest.strip():
        return None
    if arrows:
        return 'value', arrows, range(end_line + 1, end_line + 1 + len(arrows))
    comments = [COMMENT.match(l).group(1) for l in itertools.takewhile(COMMENT.match, after)]
    if len(comments) >= 2 and RULER.match(comments[1].strip()):
        return 'table', comments, range(end_line + 1, end_line + 1 + len(comments))
    return None


# psql writes these around the output of a statement whose output is shown
START = '@@ output of statement %d @@'
END = '@@ end of output @@'


def script(example):
    """The example as a psql script that brackets each statement whose output
    the document shows with START and END, printed in the form the document
    shows, and what each of those should give: {statement number: (the line
    of the document where it ends, the lines shown)}.  Raises ValueError if
    the example does not follow the convention."""
    sql = example.sql
    lines = sql.split('\n')
    ends, pending = statement_ends(sql)
    if pending:
        raise ValueError('the last statement does not end with ";"')
    parts, expected, used, start = [], {}, set(), 0
    for n, end in enumerate(ends):
        end_line = sql.count('\n', 0, end)
        shown = shown_output(lines, end_line, sql[end:].split('\n', 1)[0])
        if shown is None:
            parts.append(sql[start:end])
        else:
            form, shown_lines, shown_at = shown
            used.update(shown_at)
            expected[n] = (example.line + 1 + end_line, shown_lines)
            # not quiet for the statement itself: a command's tag is its output
            settings = ('unaligned', 'on') if form == 'value' else ('aligned', 'off')
            parts.append('\n\\pset format %s\n\\pset tuples_only %s\n\\echo %s\n\\set QUIET off\n'
                         % (settings + (START % n,)))
            parts.append(sql[start:end])
            parts.append('\n\\set QUIET on\n\\echo %s\n' % END)
        start = end
    parts.append(sql[start:])
    for i, line in enumerate(lines):
        if i not in used and re.search(r'--\s*→', line):
            raise ValueError('"-- →" on line %d is not right after a statement' % (example.line + 1 + i))
    # the documents show tables without psql's "(1 row)"
    return '\\pset footer off\n' + ''.join(parts), expected


def compare(example, expected, output):
    """Problems where what psql printed differs from what the document shows."""
    problems = []
    for n, (line, shown) in sorted(expected.items()):
        m = re.search(re.escape(START % n) + r'\n(.*?)' + re.escape(END), output, re.S)
        got = [l.rstrip() for l in m.group(1).split('\n')] if m else ['(nothing)']
        shown = [l.rstrip() for l in shown]
        while got and not got[-1]:      # psql ends a table with an empty line
            got.pop()
        if got != shown:
            problems.append('%s:%d: the example shows\n    %s\n  but the statement gives\n    %s'
                            % (example.doc, line, '\n    '.join(shown), '\n    '.join(got)))
    return problems


def psql(database, sql, options=''):
    # options last, so that they win over the caller's; PGTZ would set TimeZone
    env = dict(os.environ, PGCLIENTENCODING='UTF8',
               PGOPTIONS=(os.environ.get('PGOPTIONS', '') + ' ' + options).strip())
    env.pop('PGTZ', None)
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
                problems.append('%s: not run: the reason must name the test that runs it, a file under '
                                'test/: %s' % (example.where(), reason))
            print('%s: not run: %s' % (example.where(), reason))
            continue
        try:
            before = prerequisites(example, by_heading)
            run, expected = script(example)
        except ValueError as e:
            problems.append('%s: %s' % (example.where(), e))
            continue
        # what the examples before show was compared when they ran
        sql = ''.join(b.sql for b in before) + run
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
            # (psql's line numbers count the lines of the script, not of the document)
            error = re.sub(r'^psql:<stdin>:\d+: ', '', result.stderr.strip(), flags=re.M)
            problems.append('%s: the example fails: %s' % (example.where(), error))
            continue
        differences = compare(example, expected, result.stdout)
        problems += differences
        print('%s: ran%s%s' % (example.where(), ''.join(' after %s' % b.where() for b in before),
                               ', %d of %d shown outputs as shown'
                               % (len(expected) - len(differences), len(expected)) if expected else ''))
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
