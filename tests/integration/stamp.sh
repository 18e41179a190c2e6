#!/bin/bash
# A plan refused for its Stamp, and a stamp no engine could have made
# (docs/journal.md, "Stamps"). A plan whose Stamp is not above the last
# accepted one gets an error result, ErrorCode 105 naming both stamps, where
# the reference sent nothing and the engine waited out its hour; the next
# plan runs. Then a stamp file planted with INT64_MAX while the agent is
# down: the agent warns at start, and a plan stamped with the current time
# runs and replaces it (the reference would refuse every later plan, in
# silence). Nothing is left in the journal.
# The plans' scripts are written in single quotes: $1 is theirs.
# shellcheck disable=SC2016
# shellcheck source=tests/integration/common.sh
. "$(dirname "$0")/common.sh"

agent_conf a
q=$(qname a)
rq=$q-results
amqp declare "$q" "$rq" >/dev/null || bail "cannot declare the queues"
agent_start a
agent_wait_consuming a || bail "the agent did not start consuming"

script=$(printf '#!/bin/sh\necho "ran $1"\n')
now=$(($(date +%s) * 10000))
script_plan "$T/first.json" first "$script" 5000
script_plan "$T/older.json" older "$script" 4000
script_plan "$T/next.json" next "$script" 6000
script_plan "$T/fresh.json" fresh "$script" "$now"

same "three stamped plans, the second older: three answers" 3 \
    "$(answer r1 "$T/first.json" "$T/older.json" "$T/next.json")"
same "the older one refused with ErrorCode 105, the others run" \
    "$(printf 'first\t0\t"ran first"\nolder\t105\t{"Message": "%s", "AdditionalInfo": null}\nnext\t0\t"ran next"' \
        "The plan's Stamp 4000 is not newer than the last accepted stamp 5000 (an old or duplicate message); it was not run")" \
    "$(results_table "$T/r1" | cut -f1,2,4)"
check "the refusal is logged with the plan's ID" log_has a "older.*Stamp 4000 is not newer"
same "the refusal carries no ReplyTo (the plan did not run)" "" \
    "$(grep -o '"ReplyTo"' "$T/r1/00002.body")"

agent_stop a
same "SIGTERM: the agent exits 0" 0 "$AGENT_STATUS"
# A stamp file without the agent's seal (planted) is ignored.
printf '9223372036854775807' >"$T/a/storage/plans/stamp"
agent_start a
agent_wait_consuming a 2 || bail "the agent did not start again"
check "a stamp file without the agent's seal is ignored, and logged" \
    log_has a "the stamp file does not carry the agent's seal; ignored \\(last stamp 0\\)"
agent_stop a
# One the agent sealed (an engine whose clock was far ahead, say): the
# seal as journal-seal.c makes it, with the agent's key.
printf '9223372036854775807' >"$T/a/storage/plans/stamp"
python3 - "$T/a/storage" <<'PY'
import hashlib, hmac, os, sys
key = open(sys.argv[1] + "/journal.key", "rb").read()
path = sys.argv[1] + "/plans/stamp"
msg = b"muranoagent-seal-1\0stamp\0stamp\0" + open(path, "rb").read()
os.setxattr(path, "user.muranoagent.seal", hmac.new(key, msg, hashlib.sha256).digest())
PY
agent_start a
agent_wait_consuming a 3 || bail "the agent did not start again"
check "a stamp far ahead of the clock is reported at start" \
    log_has a "the last stamp 9223372036854775807 is more than a day ahead"
same "a plan stamped now still runs" "$(printf 'fresh\t0\t"ran fresh"')" \
    "$(answer r2 "$T/fresh.json" >/dev/null; results_table "$T/r2" | cut -f1,2,4)"
check "the replacement is logged" log_has a "replaced by the plan's Stamp $now"
same "the stamp file holds the plan's Stamp" "$now" "$(cat "$T/a/storage/plans/stamp")"
same "the same plan again is answered from its record, not run" 1 "$(answer r3 "$T/fresh.json")"
check "with the same document" cmp "$T/r2/00001.body" "$T/r3/00001.body"

same "nothing more comes" 0 "$(amqp drain --idle 1500 "$rq")"
same "the journal holds no entry" "" "$(journal_entries a)"
agent_stop a
same "SIGTERM: the agent exits 0" 0 "$AGENT_STATUS"

done_testing
