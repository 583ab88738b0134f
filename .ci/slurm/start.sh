#!/usr/bin/env bash
# Start munge and a single-node Slurm cluster on this machine with two count-only GPUs
# (gres files /dev/null and /dev/zero: Slurm hands out indices 0 and 1 through CUDA_VISIBLE_DEVICES,
# nothing touches real hardware). Idempotent: a cluster already answering with this config is kept.
# Run .ci/slurm/install.sh first. Needs root. Logs: /var/log/slurm/.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NODE="$(hostname -s)"
CPUS="$(nproc)"
CONF_DIR=/etc/slurm
mkdir -p "$CONF_DIR" /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge /var/log/munge /var/lib/munge

# --- munge: the key and the daemon (runs as the munge user, like the Debian service would) ---
if [ ! -s /etc/munge/munge.key ]; then
  mungekey --create --keyfile=/etc/munge/munge.key
fi
chown -R munge:munge /etc/munge /run/munge /var/log/munge /var/lib/munge
chmod 0700 /etc/munge && chmod 0400 /etc/munge/munge.key && chmod 0755 /run/munge
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  runuser -u munge -- /usr/sbin/munged
  for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
fi
munge -n | unmunge >/dev/null || { echo "slurm: munge does not answer" >&2; exit 1; }

# --- config: written to a temp file, installed only when it changed ---
new_conf="$(mktemp)"
sed -e "s/@NODE@/${NODE}/g" -e "s/@CPUS@/${CPUS}/g" "$HERE/slurm.conf.in" >"$new_conf"
changed=0
if ! cmp -s "$new_conf" "$CONF_DIR/slurm.conf"; then install -m 0644 "$new_conf" "$CONF_DIR/slurm.conf"; changed=1; fi
if ! cmp -s "$HERE/gres.conf" "$CONF_DIR/gres.conf"; then install -m 0644 "$HERE/gres.conf" "$CONF_DIR/gres.conf"; changed=1; fi
rm -f "$new_conf"

running() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
if [ "$changed" = 1 ]; then
  # A changed node definition needs fresh daemons, not just `scontrol reconfigure`.
  for pidfile in /run/slurmd.pid /run/slurmctld.pid; do
    if running "$pidfile"; then kill "$(cat "$pidfile")"; sleep 1; fi
  done
fi
running /run/slurmctld.pid || /usr/sbin/slurmctld
for _ in $(seq 100); do scontrol ping 2>/dev/null | grep -q UP && break; sleep 0.2; done
scontrol ping | grep -q UP || { echo "slurm: slurmctld did not come up; see /var/log/slurm/slurmctld.log" >&2; exit 1; }
running /run/slurmd.pid || /usr/sbin/slurmd

# --- wait for the node to register, then make sure it accepts jobs ---
state=""
for _ in $(seq 100); do
  state="$(sinfo -h -N -n "$NODE" -o '%T' 2>/dev/null | head -n1)"
  case "$state" in
    idle|mixed|allocated|completing) break ;;
    down*|drain*|unknown*|"") scontrol update nodename="$NODE" state=resume >/dev/null 2>&1 || true ;;
  esac
  sleep 0.3
done
case "$state" in
  idle|mixed|allocated|completing) ;;
  *) echo "slurm: node $NODE is '$state'; see /var/log/slurm/slurmd.log" >&2; sinfo -N -l >&2; exit 1 ;;
esac
# The controller may report a remembered state before slurmd is back: prove a job really runs.
if ! timeout 60 srun --quiet -t 1 --gpus=1 bash -c 'test -n "$CUDA_VISIBLE_DEVICES"'; then
  echo "slurm: a test job did not run; see /var/log/slurm/slurmd.log and slurmctld.log" >&2
  exit 1
fi
echo "slurm: cluster up: $(sinfo -h -N -o '%N %T cpus=%c gres=%G')"
