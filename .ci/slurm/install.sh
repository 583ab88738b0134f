#!/usr/bin/env bash
# Install munge and a single-node Slurm (controller, node daemon, client) from Debian's packages.
# Idempotent: does nothing when the binaries are already there. Needs root (CI runs as root).
set -euo pipefail

if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v sbatch >/dev/null \
   && command -v munged >/dev/null; then
  echo "slurm: already installed ($(dpkg-query -W -f='${Version}' slurm-client))"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends slurmctld slurmd munge slurm-client >/dev/null
echo "slurm: installed ($(dpkg-query -W -f='${Version}' slurm-client))"
