#!/bin/bash
# Runs inside the systemd guest of tests/host/systemd.sh, as the unit
# soryu-checks.service, once the system is up. Each check appends
# "ok WHAT" or "FAIL WHAT" to /srv/out/results; the host test reports them.
# Then the guest powers off.
set -u
out=/srv/out
res=$out/results
: >"$res"
ok() { echo "ok $*" >>"$res"; }
bad() { echo "FAIL $*" >>"$res"; }
state() { cat /sys/kernel/sched_ext/state 2>/dev/null || echo none; }
ops() { cat /sys/kernel/sched_ext/root/ops 2>/dev/null; }
soryu_on() { [ "$(state)" = enabled ] && [[ "$(ops)" == soryu* ]]; }
mainpid() { systemctl show -p MainPID --value scx_soryu; }
# until SECS CMD...: CMD succeeds within SECS seconds
until_ok() {
  local secs=$1 t=0
  shift
  while ! "$@"; do
    [ "$t" -lt $((secs * 2)) ] || return 1
    sleep 0.5
    t=$((t + 1))
  done
}
journal_has() { journalctl -u scx_soryu --no-pager -o cat 2>/dev/null | grep -qF -- "$1"; }

{
  echo "pid 1: $(cat /proc/1/comm), kernel $(uname -r), sched_ext $(state)"
  systemctl --version | head -n1
} >"$out/guest-info" 2>&1

# 1. enable --now loads soryu
if [ "$(systemctl is-enabled scx_soryu 2>&1)" = disabled ]; then ok "installed, not enabled"; else bad "before enable: is-enabled says '$(systemctl is-enabled scx_soryu 2>&1)'"; fi
if systemctl enable --now scx_soryu >>"$out/systemctl.log" 2>&1; then ok "systemctl enable --now scx_soryu"; else bad "systemctl enable --now scx_soryu failed"; fi
if until_ok 90 soryu_on; then ok "the kernel runs soryu (state enabled, ops $(ops))"; else bad "soryu not loaded 90 s after enable --now: state '$(state)', ops '$(ops)', unit $(systemctl is-active scx_soryu)"; fi
[ "$(systemctl is-enabled scx_soryu 2>&1)" = enabled ] && ok "enabled for the next boot" || bad "not enabled: $(systemctl is-enabled scx_soryu 2>&1)"

# 2. flags from /etc/default/scx_soryu reach the daemon
pid=$(mainpid)
args=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)
[[ $args == *"--starve-ms 150"* ]] && ok "SCX_FLAGS on its command line: $args" || bad "SCX_FLAGS not on the command line: '$args'"
until_ok 30 test -s /var/lib/soryu-test.jsonl
if head -n1 /var/lib/soryu-test.jsonl 2>/dev/null | grep -q '"starve_ms":150'; then ok "the knob reached the loaded scheduler (report header starve_ms 150)"; else bad "report header: $(head -c 300 /var/lib/soryu-test.jsonl 2>&1)"; fi

# 3. its reports are in the journal
if until_ok 30 journal_has "wake->run interactive"; then ok "journalctl -u scx_soryu shows its reports"; else bad "no report in the journal: $(journalctl -u scx_soryu --no-pager -o cat | tail -n 3 | tr '\n' '|')"; fi

# 4. SIGKILL: systemd restarts it (Restart=on-failure, RestartSec=5s)
pid=$(mainpid)
kill -KILL "$pid"
restarted() { local p; p=$(mainpid); [ "$p" != 0 ] && [ "$p" != "$pid" ] && soryu_on; }
if until_ok 60 restarted; then ok "SIGKILL of the daemon: restarted by systemd (pid $pid -> $(mainpid)), soryu loaded again"; else bad "no restart after SIGKILL: unit $(systemctl is-active scx_soryu), MainPID $(mainpid), state '$(state)'"; fi
n=$(systemctl show -p NRestarts --value scx_soryu)
[ "${n:-0}" -ge 1 ] && ok "NRestarts $n" || bad "NRestarts '${n}'"

# 5. stop restores the default scheduler
systemctl stop scx_soryu
if until_ok 30 test "$(state)" = disabled; then ok "systemctl stop: sched_ext disabled, the default scheduler back"; else bad "after stop: state '$(state)'"; fi
r=$(systemctl show -p Result --value scx_soryu)
[ "$r" = success ] && ok "stopped cleanly (Result=success)" || bad "Result=$r after stop"

# 6. a kernel without sched_ext: the unit starts nothing and says why. This
# kernel has sched_ext, so /sys/kernel is hidden under an empty tmpfs for
# the check: /sys/kernel/sched_ext is then missing, as on such a kernel.
attached() { journalctl -u scx_soryu --no-pager -o cat 2>/dev/null | grep -c 'attached:' || true; }
before=$(attached)
if mount -t tmpfs none /sys/kernel; then
  systemctl start scx_soryu >>"$out/systemctl.log" 2>&1
  rc=$?
  sleep 2
  a=$(systemctl is-active scx_soryu)
  cond=$(systemctl show -p ConditionResult --value scx_soryu)
  umount /sys/kernel
  [ "$rc" = 0 ] && [ "$a" = inactive ] && [ "$cond" = no ] &&
    ok "without /sys/kernel/sched_ext: start is skipped (ConditionResult=no, inactive)" ||
    bad "without /sys/kernel/sched_ext: start status $rc, is-active $a, ConditionResult $cond"
  [ "$(attached)" = "$before" ] && ok "... and no scheduler was attached" || bad "a scheduler was attached without sched_ext"
  if journalctl -b --no-pager -o cat 2>/dev/null | grep -q 'unmet condition check (ConditionPathIsDirectory=/sys/kernel/sched_ext)'; then
    ok "... and the journal says why"
  else
    bad "no 'unmet condition' line in the journal"
  fi
else
  bad "cannot hide /sys/kernel for the no-sched_ext check"
fi
[ "$(state)" = disabled ] && ok "sched_ext still disabled at the end" || bad "state '$(state)' at the end"

journalctl -b --no-pager >"$out/journal.txt" 2>&1
echo "done" >"$out/done"
sync
systemctl poweroff --no-block
