#!/bin/sh
. ./common.sh
greeting "$1"
