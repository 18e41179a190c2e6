#!/bin/sh
# helpers
log() { echo "$@"; }
