#!/bin/bash
# status says nothing about fork/ when it is missing or an empty folder (export names the problem).
export T=/tmp/try41-r5-$$
source "$(dirname "$0")/common.sh"
trap cleanup EXIT
cd $T/proj
echo "### no fork/:"; ts status; echo "rc=$?"
mkdir fork
echo "### empty fork/ folder:"; ts status; echo "rc=$?"
echo "### export:"; ts export
echo "### follow status: te-series apply"; ts apply --te-src $T/te-src 2>&1 | tail -2
