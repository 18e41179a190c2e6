#!/usr/bin/env python3
"""How the fixtures in this directory were made (run once, at test-writing
time; the outputs are committed).

reference-plan.json  the bytes of murano-agent's own unit test plan.json
                     (test_execution_plan_queue.py, spec 4.2): no newline.
case-N.body/.sig     a message body and signature (raw bytes) ...
case-N.json          ... and the plan.json that the reference's
                     put_execution_plan writes for them: json.dumps of
                     {'Data': b64encode(body), 'Signature':
                     b64encode(signature or ''), 'ID': msg_id,
                     'ReplyTo': reply_to}, in that key order.
case-N.meta          msg_id on the first line, reply_to on the second
                     (absent line: None).
"""
import base64
import json
import random

open('reference-plan.json', 'w').write(
    '{"Data": "bXlwbGFu", "Signature": "", "ID": 1, "ReplyTo": "test"}')

rng = random.Random(5)
cases = [
    # A waitReady probe, unsigned, with a message_id and no reply_to.
    (b'{"Body": "return", "FormatVersion": "2.0.0", "Scripts": {}}', None,
     '0f5b8a1c2d3e4f5061728394a5b6c7d8', None),
    # Non-ASCII body (1 byte short of a Base64 group), a binary 256-byte
    # signature, a non-ASCII ID, a reply_to that needs escaping.
    ('{"Body": "return \'h\u00e9llo \u2603\'", "ID": "x"}'.encode(),
     bytes(rng.randrange(256) for _ in range(256)),
     'id-\u00fcn\u00efcode-\U0001f600', 'reply "q"\\\t'),
    # Empty body and empty signature, a message without message_id.
    (b'', b'', '', 'results'),
]
for n, (body, sig, msg_id, reply_to) in enumerate(cases, 1):
    open('case-%d.body' % n, 'wb').write(body)
    open('case-%d.sig' % n, 'wb').write(sig or b'')
    with open('case-%d.meta' % n, 'w') as f:
        f.write(msg_id + '\n')
        if reply_to is not None:
            f.write(reply_to + '\n')
    text = json.dumps({
        'Data': base64.b64encode(body).decode(),
        'Signature': base64.b64encode(sig or b'').decode(),
        'ID': msg_id,
        'ReplyTo': reply_to,
    })
    open('case-%d.json' % n, 'w').write(text)
