#!/usr/bin/python3
"""Expected outcomes of the Body corpus, computed by CPython itself.

Every case in tests/data/body/*.yaml is run the way the reference agent runs a
plan's Body (murano-agent's execution_plan_runner.py, spec section 3.5): the
Body is re-indented into `def __execution_plan_main():`, called inside
`try/except Exception`, with a Bunch `args` and one fake callable per script
that records its calls and answers with the case's canned replies. The
outcome (result and its json.dumps text, or the error's code, class, message
and line), the calls and the files written are stored in each case's
`expect:` section, and the YAML files are rewritten in one canonical layout
that both PyYAML and the C test's libyaml loader read the same way.

Cases are authored without `expect:`; this tool fills it. `expect_override:`
marks the few cases where muranoagent deliberately differs from Python (for
example the resource limits); the tool neither runs nor changes those.

Usage:
    expected.py            rewrite every corpus file with fresh expectations
    expected.py --check    report (and exit 1) when a file is not up to date
    expected.py FILE...    only these files

Use /usr/bin/python3 (3.11): SyntaxError texts differ between versions. The
unit tests never run this tool.
"""

import copy
import difflib
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.dirname(HERE)

CASE_KEYS = ['name', 'origin', 'note', 'body', 'parameters', 'scripts', 'files', 'limits',
             'expect_override', 'expect']
REPLY_KEYS = ['exitCode', 'stdout', 'stderr']
LIMIT_KEYS = ['max_steps', 'max_depth', 'max_memory', 'max_string', 'open_root']

# The same masks as tests/test-body-corpus.c: the temporary directory's path
# becomes @TMP@, and random uuid4 values (uuid.uuid4() and its .hex) become
# @UUID4@ / @UUID4HEX@, so that expectations are reproducible. At each
# position the dashed form is tried first, then the 32-digit form.
UUID_RE = re.compile(r'([0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})'
                     r'|([0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15})')


class CorpusError(Exception):
    pass


def mask_text(s, tmp):
    s = s.replace(tmp, '@TMP@')
    return UUID_RE.sub(lambda m: '@UUID4@' if m.group(1) else '@UUID4HEX@', s)


def mask(v, tmp):
    if isinstance(v, str):
        return mask_text(v, tmp)
    if isinstance(v, list):
        return [mask(x, tmp) for x in v]
    if isinstance(v, dict):
        return {mask_text(k, tmp): mask(x, tmp) for k, x in v.items()}
    return v


# ---------------------------------------------------------------- the reference's runtime


class Bunch(dict):
    """The reference's args and script results: a dict whose attributes are
    its keys, so a missing attribute raises KeyError, not AttributeError."""

    def __getattr__(self, item):
        return self[item]

    def __setattr__(self, key, value):
        self[key] = value

    def __delattr__(self, key):
        del self[key]


class CustomException(Exception):
    """What the reference's executors raise for a failed script (ErrorCode
    100 with the script's result as AdditionalInfo)."""

    def __init__(self, code, message, additional_info):
        super().__init__(message)
        self.code = code
        self.additional_info = additional_info


def as_json(v):
    return json.loads(json.dumps(v))


class FakeScript:
    """One plan script: `name(...)` and `name.anything(...)` both call it."""

    def __init__(self, name, replies, calls):
        self._fake_name = name
        self._fake_replies = list(replies)
        self._fake_calls = calls

    def _fake_call(self, function, a, kw):
        self._fake_calls.append({'script': self._fake_name, 'function': function,
                                 'args': as_json(list(a)), 'kwargs': as_json(kw)})
        reply = self._fake_replies.pop(0) if self._fake_replies else {}
        if 'raise' in reply:
            r = reply['raise']
            raise CustomException(r['code'], r['message'],
                                  copy.deepcopy(r.get('additionalInfo')))
        return Bunch({k: copy.deepcopy(reply.get(k, 0 if k == 'exitCode' else None))
                      for k in REPLY_KEYS})

    def __call__(self, *a, **kw):
        return self._fake_call(None, a, kw)

    def __getattr__(self, item):
        return lambda *a, **kw: self._fake_call(item, a, kw)


def wrap(body):
    """The reference's program text: tabs expanded to 4, the smallest
    indentation of the lines that hold a non-space character removed from
    every line, every line indented by 4 under a def, then the call."""
    lines = body.expandtabs(4).split('\n')
    indents = [len(ln) - len(ln.lstrip(' ')) for ln in lines if ln.strip(' ')]
    cut = min(indents) if indents else sys.maxsize
    text = '\n'.join('    ' + ln[cut:] for ln in lines)
    return ('def __execution_plan_main():\n' + text +
            '\ntry:\n    __execution_plan_result = __execution_plan_main()\n'
            'except Exception as e:\n    __execution_plan_exception = e\n')


def body_line(exc, body):
    """Line of the Body (1 = its first line) where exc arose, 0 if none.
    Python numbers the agent's `def` line 1, hence the - 1. A compile error
    that Python finds in the wrapper after the Body (an empty Body, an
    unterminated triple-quoted string) is put on the Body's last line:
    BodyOutcome.line is a line of the Body."""
    if isinstance(exc, SyntaxError):
        if exc.filename == '<string>' and exc.lineno:
            return min(max(exc.lineno - 1, 0), len(body.split('\n')))
        return 0
    line = 0
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == '<string>' and tb.tb_lineno:
            line = tb.tb_lineno - 1
        tb = tb.tb_next
    return max(line, 0)


def error_of(exc, line):
    err = {'code': 1, 'type': type(exc).__name__, 'message': str(exc)}
    if isinstance(exc, CustomException):
        err['code'] = exc.code
        err['additionalInfo'] = as_json(exc.additional_info)
    err['line'] = line
    return err


def execute(body, scripts, parameters):
    """Run one Body. Returns (outcome, calls); outcome is {'result': ...,
    'result_json': ...} or {'error': {...}}."""
    calls = []
    env = {'args': Bunch(copy.deepcopy(parameters) or {})}
    for name, replies in scripts.items():
        env[name] = FakeScript(name, replies, calls)
    try:
        exec(compile(wrap(body), '<string>', 'exec'), env)
    except Exception as e:  # compile errors; the wrapper catches the rest
        return {'error': error_of(e, body_line(e, body))}, calls
    if '__execution_plan_exception' in env:
        e = env['__execution_plan_exception']
        return {'error': error_of(e, body_line(e, body))}, calls
    result = env['__execution_plan_result']
    try:
        text = json.dumps(result)
    except Exception as e:  # serialisation happens outside the Body: no line
        return {'error': error_of(e, 0)}, calls
    return {'result': json.loads(text), 'result_json': text}, calls


# ---------------------------------------------------------------- cases


def check_case(case, where):
    if not isinstance(case, dict):
        raise CorpusError('%s: a case must be a mapping' % where)
    for k in case:
        if k not in CASE_KEYS:
            raise CorpusError('%s: unknown key %r' % (where, k))
    for k in ('name', 'body'):
        if not isinstance(case.get(k), str):
            raise CorpusError('%s: %s must be a string' % (where, k))
    if case.get('parameters') is not None and not isinstance(case['parameters'], dict):
        raise CorpusError('%s: parameters must be a mapping or null' % where)
    for name, replies in (case.get('scripts') or {}).items():
        if not isinstance(replies, list):
            raise CorpusError('%s: replies of %s must be a list' % (where, name))
        for r in replies:
            if 'raise' in r:
                if set(r) != {'raise'} or not set(r['raise']) <= {'code', 'message',
                                                                  'additionalInfo'}:
                    raise CorpusError('%s: bad raise reply of %s' % (where, name))
            elif not set(r) <= set(REPLY_KEYS):
                raise CorpusError('%s: bad reply of %s: %r' % (where, name, r))
    for k in (case.get('limits') or {}):
        if k not in LIMIT_KEYS:
            raise CorpusError('%s: unknown limit %r' % (where, k))


def files_of(root):
    out = {}
    for d, _, names in os.walk(root):
        for n in names:
            path = os.path.join(d, n)
            with open(path, 'rb') as f:
                data = f.read()
            try:
                out[os.path.relpath(path, root)] = data.decode('utf-8')
            except UnicodeDecodeError:
                raise CorpusError('%s: not UTF-8 text' % path)
    return out


def check_json_form(v, where):
    if isinstance(v, bool) or v is None:
        return
    if isinstance(v, float) and (v != v or v in (float('inf'), float('-inf'))):
        raise CorpusError('%s: %r has no JSON form: use expect_override' % (where, v))
    if isinstance(v, list):
        for x in v:
            check_json_form(x, where)
    if isinstance(v, dict):
        for x in v.values():
            check_json_form(x, where)


def run_case(case):
    tmp = tempfile.mkdtemp(prefix='body-corpus-')
    cwd = os.getcwd()
    try:
        before = {}
        for name, content in (case.get('files') or {}).items():
            path = os.path.join(tmp, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, 'w') as f:
                f.write(content)
            before[name] = content
        os.chdir(tmp)
        try:
            outcome, calls = execute(case['body'].replace('@TMP@', tmp),
                                     case.get('scripts') or {}, case.get('parameters'))
        finally:
            os.chdir(cwd)
        expect = {'calls': mask(calls, tmp)}
        if 'error' in outcome:
            expect['error'] = mask(outcome['error'], tmp)
        else:
            expect['result'] = mask(outcome['result'], tmp)
            expect['result_json'] = mask_text(outcome['result_json'], tmp)
        written = {mask_text(k, tmp): mask_text(v, tmp)
                   for k, v in sorted(files_of(tmp).items()) if before.get(k) != v}
        if written:
            expect['files'] = written
        return expect
    finally:
        subprocess.run(['rm', '-rf', '--', tmp], check=True)


# ---------------------------------------------------------------- canonical YAML

PRINTABLE = re.compile('[\x20-\x7e\xa1-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd'
                       '\U00010000-\U0010ffff]')
PLAIN = re.compile(r'[A-Za-z_][A-Za-z0-9_.@/+-]*( [A-Za-z0-9_.@/+()-][A-Za-z0-9_.@/+()-]*)*')
INDENT = '  '


def dq(s):
    out = ['"']
    for ch in s:
        if ch == '"':
            out.append('\\"')
        elif ch == '\\':
            out.append('\\\\')
        elif ch == '\n':
            out.append('\\n')
        elif ch == '\t':
            out.append('\\t')
        elif PRINTABLE.fullmatch(ch):
            out.append(ch)
        elif ord(ch) <= 0xff:
            out.append('\\x%02x' % ord(ch))
        elif ord(ch) <= 0xffff:
            out.append('\\u%04x' % ord(ch))
        else:
            out.append('\\U%08x' % ord(ch))
    out.append('"')
    return ''.join(out)


def loads_both(text):
    a = yaml.load(text, Loader=yaml.SafeLoader)
    b = yaml.load(text, Loader=yaml.CSafeLoader)
    return a if a == b else object()


def scalar(s):
    """A one-line string: plain when both YAML loaders read it back as the
    same string, double-quoted otherwise."""
    if PLAIN.fullmatch(s) and loads_both('k: ' + s) == {'k': s}:
        return s
    return dq(s)


def float_text(v):
    if v != v:
        return '.nan'
    if v in (float('inf'), float('-inf')):
        return '.inf' if v > 0 else '-.inf'
    r = repr(v)
    # PyYAML's float resolver (YAML 1.1) wants a dot in the mantissa.
    if 'e' in r and '.' not in r:
        m, e = r.split('e')
        r = m + '.0e' + e
    return r


def flow(v):
    if v is None:
        return 'null'
    if v is True:
        return 'true'
    if v is False:
        return 'false'
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return float_text(v)
    if isinstance(v, str):
        return dq(v)
    if isinstance(v, list):
        return '[' + ', '.join(flow(x) for x in v) + ']'
    if isinstance(v, dict):
        return '{' + ', '.join(dq(k) + ': ' + flow(x) for k, x in v.items()) + '}'
    raise CorpusError('cannot write %r' % (v,))


def text_block(key, s, depth):
    """`key: |` with s as a literal block when it survives both loaders,
    else `key: "..."`."""
    pad = INDENT * depth
    if s and '\r' not in s and all(PRINTABLE.fullmatch(c) or c in '\n\t' for c in s):
        chomp = '+' if s.endswith('\n\n') else ('' if s.endswith('\n') else '-')
        lines = s.split('\n')
        if s.endswith('\n'):
            lines.pop()
        ind = str(len(INDENT)) if (not lines[0] or lines[0][0] == ' ') else ''
        content = pad + INDENT
        text = [pad + key + ': |' + ind + chomp]
        text += [(content + ln) if ln else '' for ln in lines]
        out = '\n'.join(text) + '\n'
        probe = '\n'.join(ln[len(pad):] for ln in out.split('\n'))
        if loads_both(probe) == {key: s}:
            return out
    return pad + key + ': ' + dq(s) + '\n'


def emit_replies(scripts, depth):
    pad = INDENT * depth
    out = ''
    for name, replies in scripts.items():
        if not replies:
            out += pad + scalar(name) + ': []\n'
            continue
        out += pad + scalar(name) + ':\n'
        for r in replies:
            out += pad + INDENT + '- ' + flow(r) + '\n'
    return out


def emit_expect(key, exp, depth):
    pad = INDENT * depth
    out = pad + key + ':\n'
    inner = pad + INDENT
    for k, v in exp.items():
        if k == 'calls':
            if not v:
                out += inner + 'calls: []\n'
            else:
                out += inner + 'calls:\n'
                for c in v:
                    out += inner + INDENT + '- ' + flow(c) + '\n'
        elif k == 'files':
            out += inner + 'files:\n'
            for name, content in v.items():
                out += text_block(scalar(name), content, depth + 2)
        elif k == 'result_json':
            out += inner + k + ': ' + dq(v) + '\n'
        else:
            out += inner + k + ': ' + flow(v) + '\n'
    return out


def emit_case(case):
    out = ''
    first = True
    for k in CASE_KEYS:
        if k not in case:
            continue
        v = case[k]
        lead = '- ' if first else INDENT
        first = False
        if k in ('name', 'origin'):
            out += lead + k + ': ' + scalar(v) + '\n'
        elif k in ('note', 'body'):
            block = text_block(k, v, 1)
            out += lead + block[len(INDENT):]
        elif k == 'scripts':
            out += lead + k + (':\n' + emit_replies(v, 2) if v else ': {}\n')
        elif k == 'files':
            out += lead + k + ':\n'
            for name, content in v.items():
                out += text_block(scalar(name), content, 2)
        elif k in ('expect', 'expect_override'):
            out += lead + emit_expect(k, v, 1)[len(INDENT):]
        else:
            out += lead + k + ': ' + flow(v) + '\n'
    return out


def header_of(text):
    head = []
    for line in text.split('\n'):
        if line.startswith('#') or (not line.strip() and head):
            head.append(line)
        else:
            break
    while head and not head[-1].strip():
        head.pop()
    return '\n'.join(head) + '\n\n' if head else ''


def process(path, names):
    with open(path) as f:
        old = f.read()
    cases = yaml.load(old, Loader=yaml.CSafeLoader) or []
    if not isinstance(cases, list):
        raise CorpusError('%s: the document must be a list of cases' % path)
    out = header_of(old)
    emitted = []
    for i, case in enumerate(cases):
        where = '%s[%d]' % (os.path.basename(path), i)
        check_case(case, where)
        if case['name'] in names:
            raise CorpusError('%s: duplicate name %s' % (where, case['name']))
        names.add(case['name'])
        case = dict(case)
        case.pop('expect', None)
        # Override cases are not run: some of them would not end in Python
        # (the step limit) or would exhaust its memory.
        if 'expect_override' not in case:
            case['expect'] = run_case(case)
            check_json_form(case['expect'], case['name'])
        emitted.append(case)
        out += emit_case(case) + '\n'
    out = out.rstrip('\n') + '\n'
    if loads_both(out) != emitted:
        raise CorpusError('%s: the written YAML does not read back as written' % path)
    return old, out, len(cases)


def main():
    argv = sys.argv[1:]
    check = '--check' in argv
    files = [a for a in argv if a != '--check'] or sorted(glob.glob(os.path.join(CORPUS,
                                                                             '*.yaml')))
    if 'PYTHONHASHSEED' not in os.environ:
        # Fixed string hashing, so that a set's order is the same on every
        # run; a second pass with another seed (below) catches cases whose
        # expectations depend on it.
        os.environ['PYTHONHASHSEED'] = '0'
        os.execv(sys.executable, [sys.executable] + sys.argv)
    names = set()
    stale = 0
    total = 0
    for path in files:
        old, new, n = process(path, names)
        total += n
        if old == new:
            continue
        if check:
            stale += 1
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True),
                                                       new.splitlines(True), path, path))
        else:
            with open(path, 'w') as f:
                f.write(new)
            print('updated %s' % path)
    print('%d cases in %d files' % (total, len(files)), file=sys.stderr)
    if stale:
        return 1
    if not check:
        env = dict(os.environ, PYTHONHASHSEED='4242')
        r = subprocess.run([sys.executable, os.path.abspath(__file__), '--check'] + files,
                           env=env)
        if r.returncode:
            print('expectations depend on the string hash seed', file=sys.stderr)
            return 1
    return 0


if __name__ == '__main__':
    try:
        sys.exit(main())
    except CorpusError as e:
        print('expected.py: %s' % e, file=sys.stderr)
        sys.exit(2)
