#!/usr/bin/python3
"""Survey of every Body in the execution plan templates of the Murano repos.

Provenance tool for tests/data/body: it walks the whole history (all refs) of
the mirrored repositories, reads every version of every `.template` file and
prints each distinct Body with the first template path and commit where it
appeared, its script names and types, and how many template versions carry
it. The tests never run this; it documents where the corpus came from.

Usage: extract.py [--json] [MIRROR_ROOT]   (default /work/.mirror)
"""

import json
import os
import subprocess
import sys

import yaml

# (mirror directory, pathspecs): murano-apps and the tempest plugin whole,
# Murano itself only for its core library and its test templates.
SOURCES = [
    ('openstack+murano-apps', ['*.template']),
    ('openstack+murano', ['meta/*.template', 'murano/tests/*.template']),
    ('openstack+murano-tempest-plugin', ['*.template']),
]

ZERO = '0' * 40


def git(repo, *argv):
    return subprocess.run(['git', '-C', repo] + list(argv), check=True,
                          stdout=subprocess.PIPE).stdout


def template_versions(repo, pathspecs):
    """Yield (commit, path, blob) for every added or modified template blob,
    oldest first, so that the first sighting of a blob is its origin."""
    out = git(repo, 'log', '--all', '--reverse', '--format=C %H', '--raw',
              '--no-abbrev', '--no-renames', '--', *pathspecs).decode()
    commit = None
    for line in out.splitlines():
        if line.startswith('C '):
            commit = line[2:]
        elif line.startswith(':'):
            meta, path = line.split('\t', 1)
            blob = meta.split()[3]
            if blob != ZERO:
                yield commit, path, blob


def load_template(text):
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    return doc if isinstance(doc, dict) else None


def scripts_of(doc):
    scripts = doc.get('Scripts')
    if not isinstance(scripts, dict):
        return {}
    out = {}
    for name, s in scripts.items():
        s = s if isinstance(s, dict) else {}
        out[name] = {'type': s.get('Type'), 'options': s.get('Options')}
    return out


def survey(root):
    bodies = {}
    versions = 0
    seen = set()
    for mirror, pathspecs in SOURCES:
        repo = os.path.join(root, mirror, 'repo')
        if not os.path.isdir(repo):
            print('missing mirror: ' + repo, file=sys.stderr)
            continue
        for commit, path, blob in template_versions(repo, pathspecs):
            if (mirror, path, blob) in seen:
                continue
            seen.add((mirror, path, blob))
            doc = load_template(git(repo, 'cat-file', 'blob', blob).decode('utf-8', 'replace'))
            if doc is None or not isinstance(doc.get('Body'), str):
                continue
            versions += 1
            body = doc['Body']
            entry = bodies.setdefault(body, {
                'body': body,
                'origin': '%s %s@%s' % (mirror.split('+', 1)[1], path, commit[:8]),
                'scripts': scripts_of(doc),
                'parameters': doc.get('Parameters'),
                'format_version': doc.get('FormatVersion'),
                'versions': 0,
                'paths': [],
            })
            entry['versions'] += 1
            where = '%s:%s' % (mirror.split('+', 1)[1], path)
            if where not in entry['paths']:
                entry['paths'].append(where)
    return versions, list(bodies.values())


def main():
    argv = sys.argv[1:]
    as_json = '--json' in argv
    argv = [a for a in argv if a != '--json']
    root = argv[0] if argv else '/work/.mirror'
    versions, bodies = survey(root)
    if as_json:
        json.dump({'template_versions': versions, 'bodies': bodies}, sys.stdout, indent=1)
        print()
        return
    print('%d template versions with a Body, %d distinct Bodies' % (versions, len(bodies)))
    for i, b in enumerate(bodies, 1):
        print('--- #%d  %s  (%d versions)' % (i, b['origin'], b['versions']))
        print('scripts: %s' % json.dumps(b['scripts']))
        print('parameters: %s' % json.dumps(b['parameters']))
        print(b['body'], end='' if b['body'].endswith('\n') else '\n')


if __name__ == '__main__':
    main()
