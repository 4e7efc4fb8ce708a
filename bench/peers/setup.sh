#!/usr/bin/env bash
# Creates bench/peers/.venv from PyPI with DGL and the PyTorch it loads
# (requirements.txt), then checks that both import and that torch runs on an
# optimized BLAS with every core. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")"
if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq && $sudo apt-get install -y -qq python3-venv
fi
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -r requirements.txt
.venv/bin/python check_env.py
