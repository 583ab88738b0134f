#!/usr/bin/env bash
# Stop the single-node test cluster started by start.sh (munge is left running; it is harmless).
set -uo pipefail
for pidfile in /run/slurmd.pid /run/slurmctld.pid; do
  if [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then kill "$(cat "$pidfile")"; fi
done
echo "slurm: stopped"
