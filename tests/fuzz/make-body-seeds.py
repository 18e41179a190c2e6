#!/usr/bin/python3
"""Writes the seed corpus of fuzz-body: one file per distinct Body of the
Body corpus (tests/data/body/*.yaml), named after the first case that has
it. `@TMP@` becomes `.`, so that the seeds' file writes land in the fuzzer's
scratch directory. Run it after changing the corpus and commit the seeds:

    tests/fuzz/make-body-seeds.py
"""

import glob
import os

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, '..', 'data', 'body')
OUT = os.path.join(HERE, 'corpus-body')


# Seeds that come from fixed findings, not from the YAML corpus: kept.
KEEP = {'slow-parse-unbalanced-brackets'}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name in os.listdir(OUT):
        if name not in KEEP:
            os.unlink(os.path.join(OUT, name))
    seen = set()
    for path in sorted(glob.glob(os.path.join(CORPUS, '*.yaml'))):
        with open(path) as f:
            cases = yaml.load(f, Loader=yaml.CSafeLoader) or []
        for case in cases:
            body = case['body'].replace('@TMP@', '.')
            if body in seen:
                continue
            seen.add(body)
            with open(os.path.join(OUT, case['name']), 'w') as f:
                f.write(body)
    print('%d seeds in %s' % (len(seen), os.path.relpath(OUT)))


if __name__ == '__main__':
    main()
