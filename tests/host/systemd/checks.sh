#!/bin/bash
# Runs inside the systemd guest of tests/host/systemd.sh, as the unit
# soryu-checks.service, once the system is up. Each check appends
# "ok WHAT" or "FAIL WHAT" to /srv/out/results; the host test reports them.
# Then the guest powers off.
#
#   1-6  soryu's own unit as `make install` lays it out
#   7    soryu under sched-ext's scx.service (SCX_SCHEDULER=scx_soryu),
#        and the two units' Conflicts= both ways
#   8    the unit's start limit: a daemon that fails at once
#   9    the .deb: install, upgrade with the service running, remove,
#        reinstall, purge
set -u
out=/srv/out
res=$out/results
: >"$res"
line() { printf '%s %s\n' "$1" "$(printf '%s' "$2" | tr '\n' '|' | cut -c1-400)" >>"$res"; }
ok() { line ok "$*"; }
bad() { line FAIL "$*"; }
# expect WHAT CMD...: one check from CMD's status
expect() {
  local what=$1
  shift
  if "$@"; then ok "$what"; else bad "$what"; fi
}
state() { cat /sys/kernel/sched_ext/state 2>/dev/null || echo none; }
ops() { cat /sys/kernel/sched_ext/root/ops 2>/dev/null; }
soryu_on() { [ "$(state)" = enabled ] && [[ "$(ops)" == soryu* ]]; }
sched_off() { [ "$(state)" = disabled ]; }
prop() { systemctl show -p "$1" --value "$2"; }
mainpid() { prop MainPID "${1:-scx_soryu}"; }
# until_ok SECS CMD...: CMD succeeds within SECS seconds
until_ok() {
  local secs=$1 t=0
  shift
  while ! "$@"; do
    [ "$t" -lt $((secs * 2)) ] || return 1
    sleep 0.5
    t=$((t + 1))
  done
}
journal_has() { journalctl -u "${2:-scx_soryu}" --no-pager -o cat 2>/dev/null | grep -qF -- "$1"; }
is_active() { [ "$(systemctl is-active "$1" 2>/dev/null)" = "$2" ]; }
log() { echo "== $* ($(date +%T))" >>"$out/systemctl.log"; }

{
  echo "pid 1: $(cat /proc/1/comm), kernel $(uname -r), sched_ext $(state)"
  systemctl --version | head -n1
} >"$out/guest-info" 2>&1

# 1. enable --now loads soryu
log "1. enable --now"
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
if until_ok 30 journal_has "wake->run interactive"; then ok "journalctl -u scx_soryu shows its reports"; else bad "no report in the journal: $(journalctl -u scx_soryu --no-pager -o cat | tail -n 3)"; fi

# 4. SIGKILL: systemd restarts it (Restart=on-failure, RestartSec=5s)
log "4. SIGKILL"
pid=$(mainpid)
kill -KILL "$pid"
restarted() { local p; p=$(mainpid); [ "$p" != 0 ] && [ "$p" != "$pid" ] && soryu_on; }
if until_ok 60 restarted; then ok "SIGKILL of the daemon: restarted by systemd (pid $pid -> $(mainpid)), soryu loaded again"; else bad "no restart after SIGKILL: unit $(systemctl is-active scx_soryu), MainPID $(mainpid), state '$(state)'"; fi
n=$(prop NRestarts scx_soryu)
[ "${n:-0}" -ge 1 ] && ok "NRestarts $n" || bad "NRestarts '${n}'"

# 4b. SysRq-S, the kernel's own way back: sched_ext off at once, whatever
# the daemon does. The daemon exits non-zero on it, so the service's
# Restart=on-failure brings soryu back after RestartSec.
log "4b. SysRq-S"
pid=$(mainpid)
t0=$(date +%s)
echo S >/proc/sysrq-trigger
if until_ok 10 sched_off; then ok "SysRq-S: sched_ext disabled within $(($(date +%s) - t0)) s, the default scheduler back"; else bad "SysRq-S: state '$(state)' 10 s later"; fi
if until_ok 60 restarted; then
  ok "... then systemd restarted the service (pid $pid -> $(mainpid)) and soryu is loaded again"
else
  bad "after SysRq-S: unit $(systemctl is-active scx_soryu), state '$(state)'"
fi
journal_has "sysrq" && ok "... and the journal has the daemon's exit reason (sysrq)" ||
  bad "no sysrq exit reason in the journal: $(journalctl -u scx_soryu --no-pager -o cat | grep -i exit | tail -n 2)"
# The restarts so far count toward the start limit (section 8): clear them.
systemctl reset-failed scx_soryu

# 5. stop restores the default scheduler
log "5. stop"
systemctl stop scx_soryu
if until_ok 30 sched_off; then ok "systemctl stop: sched_ext disabled, the default scheduler back"; else bad "after stop: state '$(state)'"; fi
r=$(prop Result scx_soryu)
[ "$r" = success ] && ok "stopped cleanly (Result=success)" || bad "Result=$r after stop"

# 6. a kernel without sched_ext: the unit starts nothing and says why. This
# kernel has sched_ext, so /sys/kernel is hidden under an empty tmpfs for
# the check: /sys/kernel/sched_ext is then missing, as on such a kernel.
log "6. no sched_ext"
attached() { journalctl -u scx_soryu --no-pager -o cat 2>/dev/null | grep -c 'attached:' || true; }
before=$(attached)
if mount -t tmpfs none /sys/kernel; then
  systemctl start scx_soryu >>"$out/systemctl.log" 2>&1
  rc=$?
  sleep 2
  a=$(systemctl is-active scx_soryu)
  cond=$(prop ConditionResult scx_soryu)
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

# 7. sched-ext's scx.service (the fixture, unchanged) with
# SCX_SCHEDULER=scx_soryu in /etc/default/scx, as a user of that project's
# packages would set it.
log "7. scx.service"
systemctl daemon-reload
if systemctl start scx >>"$out/systemctl.log" 2>&1 && until_ok 90 soryu_on; then
  ok "scx.service with SCX_SCHEDULER=scx_soryu: the kernel runs soryu (ops $(ops))"
else
  bad "scx.service with SCX_SCHEDULER=scx_soryu: unit $(systemctl is-active scx), state '$(state)', ops '$(ops)'"
fi
pid=$(mainpid scx)
exe=$(readlink "/proc/$pid/exe" 2>/dev/null)
args=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)
[ "$exe" = /usr/bin/scx_soryu ] && [[ $args == *"--starve-ms 120"* ]] &&
  ok "scx.service's main process is $exe with /etc/default/scx's SCX_FLAGS: $args" ||
  bad "scx.service's main process: exe '$exe', command line '$args'"
until_ok 30 test -s /var/lib/soryu-scx.jsonl
head -n1 /var/lib/soryu-scx.jsonl 2>/dev/null | grep -q '"starve_ms":120' &&
  ok "... and its knob reached the loaded scheduler (report header starve_ms 120)" ||
  bad "scx.service's report header: $(head -c 300 /var/lib/soryu-scx.jsonl 2>&1)"
if until_ok 30 journal_has "wake->run interactive" scx; then ok "journalctl -u scx shows soryu's reports"; else bad "no soryu report under -u scx"; fi
# Starting soryu's own unit stops scx.service (Conflicts=), and the other
# way round; each time soryu ends up loaded by the unit started.
systemctl start scx_soryu >>"$out/systemctl.log" 2>&1
if until_ok 90 soryu_on && is_active scx inactive && is_active scx_soryu active &&
  [ "$(readlink "/proc/$(mainpid)/exe")" = /usr/bin/scx_soryu ]; then
  ok "systemctl start scx_soryu stops scx.service first (Conflicts=, After=): scx inactive, scx_soryu active, soryu loaded"
else
  bad "start scx_soryu beside scx: scx $(systemctl is-active scx), scx_soryu $(systemctl is-active scx_soryu), state '$(state)'"
fi
systemctl start scx >>"$out/systemctl.log" 2>&1
if until_ok 90 soryu_on && is_active scx_soryu inactive && is_active scx active; then
  ok "systemctl start scx stops scx_soryu first: the conflict holds both ways"
else
  bad "start scx beside scx_soryu: scx $(systemctl is-active scx), scx_soryu $(systemctl is-active scx_soryu), state '$(state)'"
fi
systemctl stop scx
if until_ok 30 sched_off && [ "$(prop Result scx)" = success ]; then
  ok "systemctl stop scx: sched_ext disabled, Result=success"
else
  bad "after systemctl stop scx: state '$(state)', Result=$(prop Result scx)"
fi

# 8. The start limit: a daemon that fails at once (flags it refuses) is
# restarted a few times, then left failed, and the kernel keeps its default
# scheduler.
log "8. start limit"
burst=$(prop StartLimitBurst scx_soryu)
interval=$(prop StartLimitIntervalUSec scx_soryu)
restart=$(prop Restart scx_soryu)
delay=$(prop RestartUSec scx_soryu)
[ "$restart" = on-failure ] && [ "${burst:-0}" -ge 1 ] && [ "$interval" != infinity ] && [ "$interval" != 0 ] &&
  ok "the unit says: Restart=$restart after $delay, at most $burst starts in $interval" ||
  bad "the unit says: Restart=$restart after $delay, StartLimitBurst=$burst, StartLimitIntervalSec=$interval"
cp /etc/default/scx_soryu "$out/scx_soryu.default"
echo 'SCX_FLAGS="--starve-ms 1"' >/etc/default/scx_soryu
systemctl reset-failed scx_soryu 2>/dev/null
t0=$(date +%s)
systemctl start scx_soryu >>"$out/systemctl.log" 2>&1
# Given up: failed for good (not waiting to restart), and systemd says why.
# (An automatic restart refused by the limit leaves Result= at the exit's
# reason, exit-code, and so does a refused manual start after it.)
since_has() { journalctl -u scx_soryu --since "@$t0" --no-pager -o cat 2>/dev/null | grep -qF -- "$1"; }
gave_up() { [ "$(prop ActiveState scx_soryu)/$(prop SubState scx_soryu)" = failed/failed ] && since_has "Start request repeated too quickly"; }
if until_ok 120 gave_up; then
  n=$(prop NRestarts scx_soryu)
  ok "refused flags: systemd gave up after $(($(date +%s) - t0)) s: failed, 'start request repeated too quickly' (Result=$(prop Result scx_soryu), NRestarts $n)"
  sleep 15
  n2=$(prop NRestarts scx_soryu)
  [ "$n2" = "$n" ] && is_active scx_soryu failed && sched_off &&
    ok "... and 15 s later it is still failed, not restarted again (NRestarts $n2), sched_ext disabled" ||
    bad "... 15 s later: NRestarts $n -> $n2, $(systemctl is-active scx_soryu), state '$(state)'"
  starts=$(journalctl -u scx_soryu --since "@$t0" --no-pager -o cat 2>/dev/null | grep -c 'scx_soryu: --starve-ms 1 must be longer' || true)
  [ "$starts" = "$burst" ] && ok "... the daemon started $starts times (StartLimitBurst), each refusing the flags in one line" ||
    bad "... the daemon started $starts times, StartLimitBurst is $burst"
  if systemctl start scx_soryu >>"$out/systemctl.log" 2>&1; then rc=0; else rc=$?; fi
  sleep 2
  [ "$rc" != 0 ] && is_active scx_soryu failed && sched_off &&
    ok "... and a manual start within the interval is refused too (systemctl start exits $rc)" ||
    bad "... a manual start: exit $rc, $(systemctl is-active scx_soryu), state '$(state)'"
else
  bad "refused flags: $(prop ActiveState scx_soryu)/$(prop SubState scx_soryu) (Result=$(prop Result scx_soryu), NRestarts $(prop NRestarts scx_soryu)) after 120 s"
fi
cp "$out/scx_soryu.default" /etc/default/scx_soryu
systemctl reset-failed scx_soryu
systemctl disable scx_soryu >>"$out/systemctl.log" 2>&1

# 9. The Debian package under this systemd. First what `make install` put
# here goes (as `make uninstall` would), then two builds of the package:
# VERSION and VERSION+up1.
log "9. the package"
rm -f /usr/bin/scx_soryu /usr/lib/systemd/system/scx_soryu.service /etc/default/scx_soryu
systemctl daemon-reload
read -r v1 v2 <"/srv/debs/versions"
deb1=$(ls /srv/debs/scx-soryu_"${v1}"_*.deb) deb2=$(ls /srv/debs/scx-soryu_"${v2}"_*.deb)
pkg() { dpkg-query -W -f '${db:Status-Abbrev}${Version}' scx-soryu 2>/dev/null; }
links() { find /etc/systemd/system -name 'scx_soryu*' 2>/dev/null | sort | tr '\n' ' '; }
dsh_state() { find /var/lib/systemd/deb-systemd-helper-enabled /var/lib/systemd/deb-systemd-helper-masked -name 'scx_soryu*' 2>/dev/null | tr '\n' ' '; }

if dpkg -i "$deb1" >"$out/dpkg-install.log" 2>&1 && [ "$(pkg)" = "ii $v1" ]; then ok "dpkg -i scx-soryu $v1"; else bad "dpkg -i scx-soryu $v1: $(tail -n 3 "$out/dpkg-install.log")"; fi
[ "$(systemctl is-enabled scx_soryu 2>&1)" = disabled ] && is_active scx_soryu inactive && sched_off &&
  ok "installed: disabled, not started, the kernel on its default scheduler" ||
  bad "installed: is-enabled $(systemctl is-enabled scx_soryu 2>&1), is-active $(systemctl is-active scx_soryu), state '$(state)'"
systemctl enable --now scx_soryu >>"$out/systemctl.log" 2>&1
if until_ok 90 soryu_on; then ok "systemctl enable --now: the package's unit loads soryu"; else bad "package: enable --now did not load soryu: state '$(state)'"; fi
echo 'SCX_FLAGS="--report-sec 3 --starve-ms 130"' >>/etc/default/scx_soryu
cp /etc/default/scx_soryu "$out/edited.default"
pid=$(mainpid)

# Upgrade with the service running: restarted on the new binary, with the
# edited flags, still enabled; the flags file kept as edited.
if dpkg -i "$deb2" >"$out/dpkg-upgrade.log" 2>&1 && [ "$(pkg)" = "ii $v2" ]; then ok "dpkg -i scx-soryu $v2 over $v1, the service running"; else bad "upgrade to $v2: $(tail -n 3 "$out/dpkg-upgrade.log")"; fi
new=$(mainpid)
until_ok 90 soryu_on
exe=$(readlink "/proc/$new/exe" 2>/dev/null)
args=$(tr '\0' ' ' <"/proc/$new/cmdline" 2>/dev/null)
[ "$new" != 0 ] && [ "$new" != "$pid" ] && [ "$exe" = /usr/bin/scx_soryu ] && soryu_on &&
  ok "upgrade: the service restarted (pid $pid -> $new) on the new binary ($exe), soryu loaded" ||
  bad "upgrade: pid $pid -> $new, exe '$exe', state '$(state)'"
[[ $args == *"--starve-ms 130"* ]] && cmp -s /etc/default/scx_soryu "$out/edited.default" &&
  ok "upgrade: the edited flags kept, and the restarted daemon runs with them" ||
  bad "upgrade: flags file $(cmp -s /etc/default/scx_soryu "$out/edited.default" && echo kept || echo changed), command line '$args'"
[ "$(systemctl is-enabled scx_soryu 2>&1)" = enabled ] && ok "upgrade: still enabled" || bad "upgrade: is-enabled $(systemctl is-enabled scx_soryu 2>&1)"

# Remove: stopped, the default scheduler back, the unit gone and masked
# (so the enablement link left cannot start a binary that is gone), the
# flags kept.
if dpkg -r scx-soryu >"$out/dpkg-remove.log" 2>&1 && [ "$(pkg)" = "rc $v2" ]; then ok "dpkg -r scx-soryu"; else bad "dpkg -r: $(tail -n 3 "$out/dpkg-remove.log")"; fi
is_active scx_soryu inactive && sched_off && ok "remove: the service stopped, sched_ext disabled" ||
  bad "remove: is-active $(systemctl is-active scx_soryu), state '$(state)'"
[ ! -e /usr/bin/scx_soryu ] && [ "$(systemctl is-enabled scx_soryu 2>&1)" = masked ] && cmp -s /etc/default/scx_soryu "$out/edited.default" &&
  ok "remove: binary gone, the unit masked ($(links)), /etc/default/scx_soryu kept" ||
  bad "remove: is-enabled $(systemctl is-enabled scx_soryu 2>&1), links: $(links)"
systemctl start scx_soryu >>"$out/systemctl.log" 2>&1
sleep 2
sched_off && ok "remove: systemctl start scx_soryu starts nothing" || bad "remove: a start loaded '$(ops)'"

# Reinstall: enabled again (it was before the removal), not started.
if dpkg -i "$deb2" >"$out/dpkg-reinstall.log" 2>&1 && [ "$(pkg)" = "ii $v2" ]; then ok "dpkg -i scx-soryu $v2 again"; else bad "reinstall: $(tail -n 3 "$out/dpkg-reinstall.log")"; fi
[ "$(systemctl is-enabled scx_soryu 2>&1)" = enabled ] && is_active scx_soryu inactive && sched_off &&
  ok "reinstall: unmasked and enabled again as it was, not started" ||
  bad "reinstall: is-enabled $(systemctl is-enabled scx_soryu 2>&1), is-active $(systemctl is-active scx_soryu), state '$(state)'"

# Purge, the service running: stopped, and nothing of it left in /etc.
systemctl start scx_soryu >>"$out/systemctl.log" 2>&1
until_ok 90 soryu_on || bad "before purge: soryu not loaded: state '$(state)'"
if dpkg -P scx-soryu >"$out/dpkg-purge.log" 2>&1 && [ -z "$(pkg)" ]; then ok "dpkg -P scx-soryu, the service running"; else bad "dpkg -P: $(tail -n 3 "$out/dpkg-purge.log")"; fi
sched_off && ! is_active scx_soryu active && ok "purge: the service stopped, sched_ext disabled" ||
  bad "purge: is-active $(systemctl is-active scx_soryu), state '$(state)'"
[ -z "$(links)" ] && [ -z "$(dsh_state)" ] && ! ls /etc/default/scx_soryu* >/dev/null 2>&1 &&
  ok "purge: no link, mask, deb-systemd-helper record or flags file of scx_soryu left" ||
  bad "purge left: $(links) $(dsh_state) $(ls /etc/default/scx_soryu* 2>/dev/null)"

journalctl -b --no-pager >"$out/journal.txt" 2>&1
echo "done" >"$out/done"
sync
systemctl poweroff --no-block
