#!/usr/bin/env python3
"""Write yaml-cases.json: values and the text PyYAML's
yaml.dump(value, default_flow_style=False) gives for them, which is how the
reference agent writes Puppet's default.yaml. tests/test-exec-yaml.c checks
agent/exec/exec-yaml.c against every case.

Run from this directory with PyYAML installed: python3 gen-yaml-cases.py
The random part is seeded, so the file only changes with PyYAML."""
import json
import random

import yaml

# Hand-picked: what puppet attributes look like, and each rule of PyYAML's
# scalar analysis, style choice, key form and line folding.
CASES = [
    {},
    {"backends": "yaml", "logger": "console", "hierarchy": "%{env}",
     "yaml": {"datadir": "/etc/puppet/hieradata"}},
    {"module::att1": "value1", "module::att2": "value2"},
    {"m::port": 8080, "m::debug": True, "m::ratio": 0.75, "m::none": None,
     "m::users": ["alice", "bob"], "m::empty_list": [], "m::empty_dict": {},
     "m::nested": {"b": [1, {"c": "d"}], "a": "x"}},
] + [
    {"s": v} for v in [
        "", " ", "a b", " lead", "trail ", "yes", "No", "on", "OFF", "true",
        "null", "~", "Null", "1", "-1", "+1", "0x1F", "0b101", "0o7", "017",
        "1_000", "1:20", "1.5", ".5", "1e3", "1.0e+3", ".inf", "-.Inf", ".NaN",
        "2001-12-14", "2001-12-14 21:59:43.10 -5", "2001-12-14t21:59:43.10-05:00",
        "=", "<<", "!", "&", "*", "#x", "x #y", "x#y", "- x", "-x", "-", "? x",
        "?x", ": x", ":x", "x:", "x: y", "a::b", "---", "---x", "...", "@x",
        "%x", "`x", "|x", ">x", "'x'", '"x"', "it's", "[x]", "{x}", "x,y",
        "a\nb", "a\n\nb", "a \nb", "a\n b", "\nx", "x\n", "\tx", "x\ty",
        "\x00", "\x07", "\x1b", "\x7f", "\x85", "\xa0", "\u2028", "\u2029",
        "\ufeff", "\xe9", "\u65e5\u672c", "\U0001f600", "back\\slash",
        "word " * 30, "x" * 100 + " " + "y" * 10, "'" + "q " * 50 + "'",
        "\u00e9 " * 45, "a  b" * 30,
    ]
] + [
    {"k" * n: 1} for n in (121, 122, 123, 124, 200)
] + [
    {"": 1, "a\nb": 2, " ": 3},
    {"list": [[1, 2], [3], [], [{}], [{"a": [1]}]]},
    {"deep": {"a": {"b": {"c": {"d": ["e", {"f": "g"}]}}}}},
    {"floats": [1e16, 1e17, 1e-5, 1e-4, -0.0, 123456789.0, 1.5e300, 2.5]},
    {"ints": [0, -0, 9223372036854775807, -9223372036854775808]},
]


def word(rnd):
    return "".join(rnd.choice("ab'\"\n #:-\xe9\t\\") if rnd.random() < 0.08
                   else rnd.choice("abcdef") for _ in range(rnd.randint(0, 25)))


def text(rnd):
    return (" " * rnd.choice([1, 1, 1, 2, 3])).join(
        word(rnd) for _ in range(rnd.randint(0, 20)))


def value(rnd, depth=0):
    r = rnd.random()
    if depth > 3 or r < 0.55:
        return rnd.choice([text(rnd), text(rnd), rnd.randint(-10**9, 10**9),
                           rnd.choice([True, False, None, 0.5, 1e20])])
    if r < 0.8:
        return [value(rnd, depth + 1) for _ in range(rnd.randint(0, 3))]
    return {text(rnd)[:rnd.choice([5, 50, 130])]: value(rnd, depth + 1)
            for _ in range(rnd.randint(0, 3))}


def main():
    rnd = random.Random(20240601)
    cases = list(CASES)
    cases += [{text(rnd)[:rnd.choice([5, 30, 125])]: value(rnd) for _ in range(3)}
              for _ in range(60)]
    out = [[c, yaml.dump(c, default_flow_style=False)] for c in cases]
    with open("yaml-cases.json", "w") as f:
        f.write('{"pyyaml": %s, "cases": [\n' % json.dumps(yaml.__version__))
        f.write(",\n".join(json.dumps(c) for c in out))
        f.write("\n]}\n")


if __name__ == "__main__":
    main()
