#!/bin/bash
# cloud-init tests, in TAP. Fills cloud-init/user-data.yaml.in as an engine
# would, validates it with "cloud-init schema", lays out the files it writes
# in a scratch root, and checks with "muranoagent --print-config" that every
# value lands. Then runs Murano's own Linux first-boot steps (spec section
# 1.4) against a scratch root and checks the agent reads what they write.
#   tests/test-cloud-init.sh [BUILD_DIR]        default BUILD_DIR: build
# With a copy of Murano's repository (MURANO_REPO, a bare git directory;
# default /work/.mirror/openstack+murano/repo) Murano's real Agent-v2.template
# and linux-init.sh are used; without one, the same steps as the spec
# describes them. cloud-init and openssl come from packaging/test-deps.sh.
set -u
cd "$(dirname "$0")/.." || exit 1
build=$(cd "${1:-build}" && pwd)
agent=$build/agent/muranoagent
template=cloud-init/user-data.yaml.in
murano_repo=${MURANO_REPO:-/work/.mirror/openstack+murano/repo}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. tests/tap.sh

for tool in cloud-init openssl python3; do
    if ! command -v "$tool" >/dev/null; then
        echo "Bail out! $tool is missing: run packaging/test-deps.sh"
        exit 1
    fi
done
[ -x "$agent" ] || { echo "Bail out! no agent build in $build"; exit 1; }

# Realistic values: an engine key in PKCS#1 PEM and a CA certificate made
# here, queue names shaped as Murano makes them, and a password with every
# character that INI or YAML could trip on.
openssl genrsa -out "$tmp/engine.key" 2048 2>/dev/null
openssl rsa -in "$tmp/engine.key" -RSAPublicKey_out -out "$tmp/engine.pub" 2>/dev/null
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tmp/ca.key" -out "$tmp/ca.pem" \
    -subj "/CN=murano test CA" -days 2 2>/dev/null
env_id=$(python3 -c 'import uuid; print(uuid.uuid4().hex)')
host_id=$(python3 -c 'import uuid; print(uuid.uuid4().hex)')
export RABBITMQ_HOST=192.0.2.10 RABBITMQ_PORT=5671 RABBITMQ_USER=murano-agent \
    RABBITMQ_PASSWORD='Zx9#q;w "p@ss:=x' RABBITMQ_VHOST=/murano RABBITMQ_SSL=true \
    RABBITMQ_INSECURE=false RABBITMQ_INPUT_QUEUE="e$env_id-h$host_id" \
    RESULT_QUEUE=-execution-results-murano-env-x2f4

# fill TEMPLATE OUT KEY_PREFIX WITH_KEY WITH_CA: plain string replacement of
# every placeholder, as Murano fills its templates. The key's lines all get
# KEY_PREFIX, as the engine's signingKey(prefix) gives them.
fill() {
    TEMPLATE=$1 OUT=$2 KEY_PREFIX=$3 WITH_KEY=$4 WITH_CA=$5 PUB=$tmp/engine.pub CA=$tmp/ca.pem \
        python3 - <<'EOF'
import base64, os
e = os.environ
text = open(e["TEMPLATE"]).read()
key = ""
if e["WITH_KEY"] == "1":
    lines = open(e["PUB"]).read().splitlines(True)
    key = e["KEY_PREFIX"] + e["KEY_PREFIX"].join(lines)
ca = base64.b64encode(open(e["CA"], "rb").read()).decode() if e["WITH_CA"] == "1" else ""
values = {"SIGNING_KEY": key, "CA_ROOT_CERT_BASE64": ca}
for name in ("RABBITMQ_HOST", "RABBITMQ_PORT", "RABBITMQ_USER", "RABBITMQ_PASSWORD",
             "RABBITMQ_VHOST", "RABBITMQ_SSL", "RABBITMQ_INSECURE", "RABBITMQ_INPUT_QUEUE",
             "RESULT_QUEUE"):
    values[name] = e[name]
for name, value in values.items():
    text = text.replace("%" + name + "%", value)
open(e["OUT"], "w").write(text)
EOF
}

# lay_out USERDATA ROOT: write the files of write_files under ROOT, with
# their modes, and print the runcmd list as JSON.
lay_out() {
    USERDATA=$1 ROOT=$2 python3 - <<'EOF'
import base64, json, os, yaml
e = os.environ
doc = yaml.safe_load(open(e["USERDATA"]))
for f in doc["write_files"]:
    path = e["ROOT"] + f["path"]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = f["content"].encode()
    if f.get("encoding") == "b64":
        data = base64.b64decode(data)
    with open(path, "wb") as out:
        out.write(data)
    os.chmod(path, int(f["permissions"], 8))
    print("file %s %s %s" % (f["path"], f["owner"], f["permissions"]))
print("runcmd " + json.dumps(doc["runcmd"]))
EOF
}

# ---- our template, with a key and a CA certificate -------------------------
fill "$template" "$tmp/user-data" '      	' 1 1
check "the filled template starts with #cloud-config" \
    test "$(head -n1 "$tmp/user-data")" = "#cloud-config"
cloud-init schema --config-file "$tmp/user-data" >"$tmp/schema" 2>&1
st=$?
note <"$tmp/schema"
check "cloud-init schema: valid" test $st -eq 0
check "cloud-init schema says so" grep -q "^Valid cloud-config" "$tmp/schema"

mkdir "$tmp/root"
lay_out "$tmp/user-data" "$tmp/root" >"$tmp/layout"
cat >"$tmp/want-layout" <<'EOF'
file /etc/murano/agent.conf root:root 0600
file /etc/murano/certs/ca_certs root:root 0644
runcmd [["systemctl", "enable", "--now", "--no-block", "muranoagent.service"]]
EOF
same_file "write_files and runcmd are as documented" "$tmp/want-layout" "$tmp/layout"
check "the CA certificate lands byte for byte" cmp -s "$tmp/ca.pem" "$tmp/root/etc/murano/certs/ca_certs"

conf=$tmp/root/etc/murano/agent.conf
"$agent" --config-file "$conf" --print-config >"$tmp/config" 2>"$tmp/stderr"
st=$?
check "muranoagent reads the written agent.conf" test $st -eq 0
note <"$tmp/stderr"
check "without a warning" test ! -s "$tmp/stderr"
cat >"$tmp/want" <<EOF
[rabbitmq]
host = 192.0.2.10
port = 5671
login = murano-agent
password = ***
virtual_host = /murano
ssl = true
ssl_version =
ca_certs = /etc/murano/certs/ca_certs
insecure = false
result_routing_key = -execution-results-murano-env-x2f4
result_exchange =
input_queue = e$env_id-h$host_id

EOF
sed -n '/^\[rabbitmq\]/,/^\[agent\]/p' "$tmp/config" | sed '$d' >"$tmp/got"
same_file "every [rabbitmq] value lands" "$tmp/want" "$tmp/got"
check "storage lands" grep -qx "storage = /var/murano/plans" "$tmp/config"
check "engine_key is set (shown masked)" grep -qx "engine_key = \*\*\*" "$tmp/config"

# The value itself, read the way oslo.config reads it: a line break, then
# the PEM lines.
CONF=$conf PUB=$tmp/engine.pub PASSWORD=$RABBITMQ_PASSWORD python3 - >"$tmp/key-check" <<'EOF'
import configparser, os
p = configparser.RawConfigParser(strict=False)
p.read(os.environ["CONF"])
want_key = "\n" + open(os.environ["PUB"]).read().strip()
print("key", "same" if p.get("DEFAULT", "engine_key") == want_key else "differs")
print("password", "same" if p.get("rabbitmq", "password") == os.environ["PASSWORD"] else "differs")
EOF
check "engine_key is the engine's PEM key, after a line break" grep -qx "key same" "$tmp/key-check"
check "the password survives YAML and INI unchanged" grep -qx "password same" "$tmp/key-check"

# ---- without a key and without a CA certificate ---------------------------
fill "$template" "$tmp/user-data-bare" '      	' 0 0
cloud-init schema --config-file "$tmp/user-data-bare" >"$tmp/schema" 2>&1
check "without key and CA: cloud-init schema: valid" test $? -eq 0
mkdir "$tmp/bare"
lay_out "$tmp/user-data-bare" "$tmp/bare" >/dev/null
"$agent" --config-file "$tmp/bare/etc/murano/agent.conf" --print-config >"$tmp/config" 2>"$tmp/stderr"
st=$?
check "without key: the agent reads it, without a warning" \
    sh -c "[ $st -eq 0 ] && [ ! -s '$tmp/stderr' ]"
check "without key: engine_key is empty, so signatures are not checked" \
    grep -qx "engine_key =" "$tmp/config"
check "without CA: the CA file exists and is empty" test -f "$tmp/bare/etc/murano/certs/ca_certs" -a \
    ! -s "$tmp/bare/etc/murano/certs/ca_certs"

# The documented key prefix matters: the prefix of Murano's own INI template
# (a TAB alone) breaks the YAML block.
fill "$template" "$tmp/user-data-tab" '	' 1 1
cloud-init schema --config-file "$tmp/user-data-tab" >"$tmp/schema" 2>&1
check "with a TAB-only key prefix cloud-init schema fails" test $? -ne 0

# ---- Murano's own Linux flow (spec section 1.4) ---------------------------
# A stand-in for service(8) that records what it is asked to do.
mkdir -p "$tmp/bin" "$tmp/murano"
cat >"$tmp/bin/service" <<EOF
#!/bin/sh
echo "\$*" >>"$tmp/service.log"
EOF
chmod +x "$tmp/bin/service"
mroot=$tmp/murano

if git -C "$murano_repo" rev-parse --verify -q 'HEAD~1' >/dev/null 2>&1; then
    rev=HEAD~1 # the repository's last commit empties it
    git -C "$murano_repo" show "$rev:meta/io.murano/Resources/Agent-v2.template" >"$tmp/Agent-v2.template"
    git -C "$murano_repo" show "$rev:meta/io.murano/Resources/linux-init.sh" >"$tmp/linux-init.sh.in"
    echo "# using Murano's own files from $murano_repo"
    real=1
else
    # The same settings and steps, as spec sections 1.3 and 1.4 give them.
    cat >"$tmp/Agent-v2.template" <<'EOF'
[DEFAULT]
debug=True
verbose=True
log_file = /var/log/murano-agent.log
storage=/var/murano/plans
engine_key =
%SIGNING_KEY%

[rabbitmq]
input_queue = %RABBITMQ_INPUT_QUEUE%
result_routing_key = %RESULT_QUEUE%
host = %RABBITMQ_HOST%
port = %RABBITMQ_PORT%
ssl = %RABBITMQ_SSL%
insecure = %RABBITMQ_INSECURE%
ca_certs = '/etc/murano/certs/ca_certs'
login = %RABBITMQ_USER%
password = %RABBITMQ_PASSWORD%
virtual_host = %RABBITMQ_VHOST%
EOF
    cat >"$tmp/linux-init.sh.in" <<'EOF'
#!/bin/sh
service murano-agent stop
[ -d /etc/murano ] || mkdir /etc/murano
echo '%AGENT_CONFIG_BASE64%' | base64 -d > /etc/murano/agent.conf
chmod 664 /etc/murano/agent.conf
[ -d /etc/murano/certs ] || mkdir /etc/murano/certs
echo '%CA_ROOT_CERT_BASE64%' | base64 -d > /etc/murano/certs/ca_certs
chmod 664 /etc/murano/certs/ca_certs
service murano-agent start
EOF
    echo "# no Murano repository at $murano_repo: using the steps of spec section 1.4"
    real=0
fi
# Agent-v2.template gets the key with TAB-prefixed lines (signingKey('\t')).
fill "$tmp/Agent-v2.template" "$tmp/agent.conf.murano" '	' 1 1
CONFIG_B64=$(base64 -w0 "$tmp/agent.conf.murano") CA_B64=$(base64 -w0 "$tmp/ca.pem") \
    ROOT=$mroot python3 - "$tmp/linux-init.sh.in" >"$tmp/linux-init.sh" <<'EOF'
import os, sys
e = os.environ
text = open(sys.argv[1]).read()
text = text.replace("%AGENT_CONFIG_BASE64%", e["CONFIG_B64"])
text = text.replace("%CA_ROOT_CERT_BASE64%", e["CA_B64"])
# The scratch root instead of the VM's /etc.
text = text.replace("/etc/murano", e["ROOT"] + "/etc/murano")
print(text, end="")
EOF
mkdir -p "$mroot/etc"
PATH=$tmp/bin:$PATH sh "$tmp/linux-init.sh" >"$tmp/init.log" 2>&1
st=$?
note <"$tmp/init.log"
check "Murano's linux-init.sh steps run (real script: $real)" test $st -eq 0
printf 'murano-agent stop\nmurano-agent start\n' >"$tmp/want-service"
same_file "they stop, then start murano-agent with service(8)" "$tmp/want-service" "$tmp/service.log"
check "agent.conf is written mode 0664, as Murano does" \
    test "$(stat -c %a "$mroot/etc/murano/agent.conf")" = 664
check "the CA certificate lands" cmp -s "$tmp/ca.pem" "$mroot/etc/murano/certs/ca_certs"

"$agent" --config-dir "$mroot/etc/murano" --print-config >"$tmp/config" 2>"$tmp/stderr"
check "muranoagent --config-dir reads what Murano wrote" test $? -eq 0
note <"$tmp/stderr"
check "no unknown-option warning (verbose is accepted)" sh -c "! grep -q unknown '$tmp/stderr'"
for line in "debug = true" "log_file = /var/log/murano-agent.log" "storage = /var/murano/plans" \
    "engine_key = ***" "host = 192.0.2.10" "port = 5671" "login = murano-agent" \
    "password = ***" "virtual_host = /murano" "ssl = true" "insecure = false" \
    "ca_certs = /etc/murano/certs/ca_certs" "result_routing_key = $RESULT_QUEUE" \
    "input_queue = $RABBITMQ_INPUT_QUEUE"; do
    check "Murano's agent.conf: $line" grep -qxF "$line" "$tmp/config"
done
CONF=$mroot/etc/murano/agent.conf PUB=$tmp/engine.pub python3 - >"$tmp/key-check" <<'EOF'
import configparser, os
p = configparser.RawConfigParser(strict=False)
p.read(os.environ["CONF"])
print("same" if p.get("DEFAULT", "engine_key") == "\n" + open(os.environ["PUB"]).read().strip() else "differs")
EOF
check "Murano's agent.conf: engine_key is the PEM key" grep -qx same "$tmp/key-check"

tap_done
