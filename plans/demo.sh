#!/bin/bash
# The main job end to end, from a fresh clone on Debian 12 (README, command 1).
# Installs what is missing, builds, and judges every example plan as the agent
# would, printing "ok" or the error result document for each.
#
# The transport (RabbitMQ) and the executor are later milestones; when they
# land, this script grows into the full round trip: a throwaway broker on
# 127.0.0.1, the agent, a plan sent and its result printed.
set -euo pipefail
cd "$(dirname "$0")/.."

packaging/build-deps.sh
[ -d build ] || meson setup build >/dev/null
ninja -C build agent/muranoagent >/dev/null

agent=build/agent/muranoagent
"$agent" --version
status=0
for plan in plans/examples/*.yaml plans/examples/*.json; do
    [ -e "$plan" ] || continue
    printf '%-36s ' "$plan"
    "$agent" check "$plan" || status=1
done

# One plan with a mistake in it, to show the error document the engine gets.
bad=$(mktemp --suffix=.yaml)
trap 'rm -f "$bad"' EXIT
cat >"$bad" <<'PLAN'
FormatVersion: 2.1.0
ID: 0f0e0d0c0b0a09080706050403020100
Body: return deploy().stdout
Scripts:
  deploy:
    Type: Application
    EntryPoint: missing.sh
    Options: {}
Files: {}
PLAN
printf '%-36s ' "(a plan with a missing entry point)"
"$agent" check "$bad" 2>/dev/null || true
exit $status
