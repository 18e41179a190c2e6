#!/usr/bin/python3
"""Run one plan file through the real Python murano-agent and print the result
document it would publish.

This is the generator of the expectations in tests/data/compat (see
generate.sh beside it); the tests never run it. It drives the reference's own
main loop, `MuranoAgent._loop_func`, with only the broker taken away:

* delivery: `_wait_plan` is replaced by a generator that hands the plan file's
  bytes to the real `ExecutionPlanQueue.put_execution_plan`, as a message
  without message_id, reply_to or signature (so `ID` defaults to '' and
  `ReplyTo` to None, as in `get_execution_plan`);
* publishing: `_send_result` writes `json.dumps(result)` (what `MqClient.send`
  puts in the message body) instead of connecting to RabbitMQ.

Everything else is the reference's code, imported from an extracted tree of
openstack/murano-agent at 9ae3969 (never copied into this repository):
persisting, loading, stamp check, `validation.validate_plan`, the
`ExecutionPlanRunner`, the executors, `ExecutionResult` and
`put_execution_result`. `CONF.storage` is a fresh temporary directory.

The reference's executors let a script's uncaptured output go to the agent's
own stdout, which is the service log on a real VM. Here the process's stdout
is pointed at stderr before anything runs, and the result document alone is
written to the original stdout, so the output is comparable with
`muranoagent run` (whose uncaptured output goes to its log). stdin is
/dev/null, as under a service manager.

The reference's `cmd/run.py` also monkey-patches eventlet; that changes how
`subprocess` waits, not what it returns, so it is left out (eventlet is not
needed here).

YAML plans are read with `yaml.safe_load` and handed to the queue as the
engine would send them, `json.dumps()` text. JSON plans are handed over as
their bytes.

Usage: run-reference.py [--ref DIR] [--storage STORAGE] PLAN
  DIR is the extracted reference tree (default /tmp/ref), made with
  git -C /work/.mirror/openstack+murano-agent/repo archive 9ae3969 | tar -x -C /tmp/ref
Use /usr/bin/python3 (3.11) with Debian's python3-oslo.config, -oslo.log,
-oslo.utils, -oslo.service, -kombu, -git, -requests, -yaml,
-semantic-version and -cryptography.
"""

import argparse
import json
import logging
import os
import shutil
import sys
import tempfile


def load_body(path):
    """The message body the engine would publish for this plan file."""
    with open(path, 'rb') as f:
        data = f.read()
    if path.endswith(('.yaml', '.yml')):
        import yaml
        return json.dumps(yaml.safe_load(data.decode('utf-8'))).encode('ascii')
    return data


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--ref', default='/tmp/ref')
    ap.add_argument('--storage', help='CONF.storage (an empty directory; default: a new '
                    'temporary directory), removed afterwards')
    ap.add_argument('plan')
    opts = ap.parse_args()

    body = load_body(opts.plan)
    sys.path.insert(0, os.path.abspath(opts.ref))

    # The result goes to the original stdout; everything else (logs, a
    # script's uncaptured output) to stderr.
    result_fd = os.dup(1)
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)

    from muranoagent import app
    from muranoagent.common import config

    storage = opts.storage or tempfile.mkdtemp(prefix='compat-ref-')
    config.CONF([], project='muranoagent', default_config_files=[])
    config.CONF.set_override('storage', storage)

    sent = []

    class HarnessAgent(app.MuranoAgent):
        def _wait_plan(self):
            self._queue.put_execution_plan(body, None, '', None)
            yield

        def _send_result(self, result):
            sent.append(json.dumps(result))
            return True

    old_cwd = os.getcwd()
    try:
        agent = HarnessAgent()
        agent._load()
        messages = agent._wait_plan()
        # Delivery, then the plan (an invalid plan's result is sent here),
        # then the persisted result. A plan that is dropped (bad JSON, old
        # Stamp) sends nothing.
        for _ in range(3):
            if sent:
                break
            try:
                agent._loop_func(messages)
            except StopIteration:
                break
    finally:
        os.chdir(old_cwd)
        shutil.rmtree(storage, ignore_errors=True)

    if not sent:
        sys.stderr.write('run-reference: the reference sent no result\n')
        return 1
    os.write(result_fd, (sent[0] + '\n').encode('ascii'))
    return 0


if __name__ == '__main__':
    sys.exit(main())
