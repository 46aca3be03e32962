# Sourced by the *-group.sh scripts, which run inside a memory group made by `antsched mem
# run`: each process they start goes into `pids`, and on exit, SIGINT or SIGTERM every one is
# stopped by PID, so that the group is empty and `mem run` can remove it.
pids=()
stop() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap 'stop; exit 130' INT
trap 'stop; exit 143' TERM
trap stop EXIT
