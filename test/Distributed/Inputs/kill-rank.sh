#!/bin/sh
# kill-rank.sh RANK DIR LAUNCHER...: starts LAUNCHER... (an mpirun of
# gnn-train --out-dir DIR) in the background, waits for DIR's first
# checkpoint, kills rank RANK with SIGKILL and waits for the launcher.
# Prints how the launcher ended, how long that took after the kill, and
# how many of the run's processes are left.
rank=$1
dir=$2
shift 2
"$@" > "$dir.log" 2>&1 &
launcher=$!
tries=0
while [ ! -f "$dir/epoch-1.safetensors" ]; do
  sleep 0.1
  tries=$((tries + 1))
  if [ $tries -gt 1200 ]; then
    echo "no checkpoint after 120 s"
    kill $launcher
    exit 1
  fi
done
victim=
for pid in $(pgrep -f "^[^ ]*gnn-train .*--out-dir $dir"); do
  if tr '\0' '\n' < /proc/$pid/environ 2>/dev/null |
      grep -qx "OMPI_COMM_WORLD_RANK=$rank"; then
    victim=$pid
  fi
done
if [ -z "$victim" ]; then
  echo "rank $rank not found"
  exit 1
fi
kill -9 "$victim"
start=$(date +%s)
wait $launcher
status=$?
seconds=$(($(date +%s) - start))
if [ $status -ne 0 ]; then echo "launcher failed"; fi
if [ $seconds -lt 60 ]; then echo "ended within 60 s"; fi
echo "$(pgrep -fc "^[^ ]*gnn-train .*--out-dir $dir") processes left"
