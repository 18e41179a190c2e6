#!/bin/bash
# Test 9: a plan that comes again with the same ID after it was answered
# (a broker node that died after the ack redelivers it, engine observation
# 9) is answered from the journal's done records: the same result document,
# byte for byte (same result ID and Time), and its script does not run
# again. With and without a Stamp, after a restart of the agent (the records
# are on disk), and with another body under the same ID.
# The plans' scripts are written in single quotes: $1 is theirs.
# shellcheck disable=SC2016
# shellcheck source=tests/integration/common.sh
. "$(dirname "$0")/common.sh"

agent_conf a
queues a
runlog=$T/runs.log
agent_up a

script=$(printf '#!/bin/sh\necho "$1" >> %s\necho "ran $1 $(date +%%s%%N)"\n' "$runlog")
script_plan "$T/stamped.json" stamped "$script" 777
script_plan "$T/plain.json" plain "$script"
script_plan "$T/other.json" plain "$(printf '#!/bin/sh\necho "$1" >> %s\necho other\n' "$runlog")"

same "stamped: first answer" 1 "$(answer s1 "$T/stamped.json")"
same "stamped: sent again, answered again" 1 "$(answer s2 "$T/stamped.json")"
check "stamped: the same result document, byte for byte" cmp "$T/s1/00001.body" "$T/s2/00001.body"
same "stamped: ErrorCode 0" "stamped	0" "$(results_table "$T/s2" | cut -f1,2)"
same "plain (no Stamp): first answer, then twice more at once" 3 \
    "$(answer p1 "$T/plain.json" "$T/plain.json" "$T/plain.json")"
check "plain: the three are byte-identical" \
    test "$(md5sum "$T"/p1/*.body | cut -d' ' -f1 | sort -u | wc -l)" = 1
same "the log says so, once per repeat" 3 "$(count_lines "$T/a/log" "plan already answered; sending its result again")"

agent_stop a
same "SIGTERM: the agent exits 0" 0 "$AGENT_STATUS"
agent_up a 2
same "after a restart: stamped sent again, answered" 1 "$(answer s3 "$T/stamped.json")"
check "from the record on disk, byte for byte" cmp "$T/s1/00001.body" "$T/s3/00001.body"
same "another body under plain's ID: answered" 1 "$(answer p2 "$T/other.json")"
check "with plain's recorded result (the ID decides)" cmp "$T/p1/00001.body" "$T/p2/00001.body"

same "each script ran once" "plain stamped" "$(sort "$runlog" | tr '\n' ' ' | sed 's/ $//')"
same "nothing more comes" 0 "$(amqp drain --idle 1500 "$rq")"
same "the plan queue is empty" "0 0" "$(queue_counts "$q")"
same "the journal holds no entry" "" "$(journal_entries a)"
agent_stop a
same "SIGTERM: the agent exits 0" 0 "$AGENT_STATUS"

done_testing
