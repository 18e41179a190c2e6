#!/bin/sh
echo "deploying $1"
