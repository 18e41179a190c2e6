#!/bin/sh
# How the fixtures in this directory were made (run once, at test-writing
# time; the outputs are committed, and the tests never run openssl).
#
#   engine.key          the engine's private key (RSA-2048), as murano-engine's
#                       [engine] signing_key; only needed to re-make signatures
#   engine-pkcs1.pem    its public key, PKCS#1, as Murano writes engine_key
#   engine-spki.pem     the same key as SubjectPublicKeyInfo
#   other-pkcs1.pem     another RSA-2048 public key
#   short-pkcs1.pem     a 512-bit RSA public key (refused: too short)
#   ec-spki.pem         a P-256 public key (refused: not RSA)
#   queue.txt           the agent's input queue name (no newline)
#   plan.json           a plan body as the engine publishes it (no newline)
#   plan.sig            openssl's RSA PKCS#1 v1.5 SHA-256 signature over
#                       queue.txt || plan.json
#   plan-noqueue.sig    the same over plan.json alone (the wrong bytes)
#   plan-engine.sig     the signature made by murano's own Agent._sign code
#                       (python3-cryptography); identical to plan.sig
#   agent-v2.template   the shape of Murano's Agent-v2 template, cut short
#   agent.conf          that template with engine_key filled in as
#                       Agent.signing_key('\t') renders it
set -eu
cd "$(dirname "$0")"

openssl genrsa -out engine.key 2048
openssl rsa -in engine.key -RSAPublicKey_out -out engine-pkcs1.pem
openssl rsa -in engine.key -pubout -out engine-spki.pem
openssl genrsa 2048 | openssl rsa -RSAPublicKey_out -out other-pkcs1.pem
openssl genrsa 512 | openssl rsa -RSAPublicKey_out -out short-pkcs1.pem
openssl ecparam -genkey -name prime256v1 | openssl ec -pubout -out ec-spki.pem

printf '%s' 'e3b0c44298fc1c149afbf4c8996fb924-h9f86d081884c7d659a2feaa0c55ad015' > queue.txt
printf '%s' '{"Action": "Execute", "Body": "return deploy().stdout", "Files": {}, "FormatVersion": "2.1.0", "ID": "0f5b8a1c2d3e4f5061728394a5b6c7d8", "Name": "Deploy", "Parameters": {}, "Scripts": {"deploy": {"EntryPoint": "deploy.sh", "Files": [], "Options": {"captureStderr": true, "captureStdout": true}, "Type": "Application", "Version": "1.0.0"}}, "Stamp": 17153280001234}' > plan.json

cat queue.txt plan.json > signed.tmp
openssl dgst -sha256 -sign engine.key -out plan.sig signed.tmp
openssl dgst -sha256 -sign engine.key -out plan-noqueue.sig plan.json
rm signed.tmp

python3 - <<'PY'
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding

with open('engine.key', 'rb') as f:
    key = serialization.load_pem_private_key(f.read(), password=None)
queue = open('queue.txt').read()
msg = open('plan.json').read()
# murano/engine/system/agent.py, Agent._sign
sig = key.sign((queue + msg).encode('utf-8'), padding.PKCS1v15(), hashes.SHA256())
open('plan-engine.sig', 'wb').write(sig)
assert sig == open('plan.sig', 'rb').read()
try:
    sig.decode('utf-8')
    raise SystemExit('plan.sig happens to be UTF-8; make the fixtures again')
except UnicodeDecodeError:
    pass

# murano/engine/system/agent.py, Agent.signing_key(line_prefix='\t')
pub = key.public_key().public_bytes(serialization.Encoding.PEM,
                                    serialization.PublicFormat.PKCS1).decode()
prefix = '\t'
rendered = prefix + prefix.join(pub.splitlines(True))
template = open('agent-v2.template').read()
open('agent.conf', 'w').write(template.replace('%SIGNING_KEY%', rendered))
PY
