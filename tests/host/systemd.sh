#!/usr/bin/env bash
# soryu as a real service under systemd. The VM tests boot the host's root
# with virtme-ng's own init; this one boots a small Debian 12 root whose
# init is systemd (vm/sysroot.sh, cached; each run boots a fresh copy) on
# the pinned sched_ext guest kernel. Inside, as a user would
# (tests/host/systemd/checks.sh, run by a oneshot unit once the system is
# up):
#   - soryu's own unit, put there by `make install`, with SCX_FLAGS set in
#     /etc/default/scx_soryu: `systemctl enable --now` loads soryu, the
#     flags reach the loaded scheduler, `journalctl -u scx_soryu` shows its
#     reports, a SIGKILL of the daemon is followed by a restart,
#     `systemctl stop` gives the kernel back its default scheduler, and
#     without /sys/kernel/sched_ext (hidden under an empty tmpfs) the unit
#     starts nothing and the journal says why;
#   - sched-ext's own scx.service (tests/host/systemd/scx.service, a copy
#     of that project's unit) with SCX_SCHEDULER=scx_soryu in /etc/default/scx
#     loads soryu with its flags, and starting either unit stops the other;
#   - the start limit: with flags the daemon refuses, systemd restarts it
#     StartLimitBurst times, then leaves the unit failed and stops trying;
#   - the .deb (two builds, `make deb`): installed (not enabled, not
#     started), upgraded with the service running (restarted on the new
#     binary, edited flags kept, still enabled), removed (stopped, masked,
#     flags kept), reinstalled (enabled again, not started) and purged
#     while running (stopped; no link, mask or record left).
#
#   bash tests/host/systemd.sh        (root; after make build)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=tests/host/lib.sh
. tests/host/lib.sh
checks_begin

bin=target/release/scx_soryu
[ -x "$bin" ] || { bad "no $bin: run make build first"; checks_done; exit 1; }
eval "$(vm/kernel.sh)"
base=$(vm/sysroot.sh) || { bad "vm/sysroot.sh could not build the systemd root"; checks_done; exit 1; }
root=$tmp/root
cp -a "$base" "$root"

make -s install DESTDIR="$root" PREFIX=/usr >/dev/null
echo 'SCX_FLAGS="--report-sec 2 --starve-ms 150 --report-json /var/lib/soryu-test.jsonl"' >"$root/etc/default/scx_soryu"
# libbpf reads the running kernel's config (CONFIG_HZ and friends)
install -D -m 644 "$SORYU_KCONFIG" "$root/boot/config-$SORYU_KVER"
install -D -m 755 tests/host/systemd/checks.sh "$root/srv/soryu/checks.sh"
# sched-ext's unit and its flags file, installed as that project installs
# them (disabled).
install -m 644 tests/host/systemd/scx.service "$root/etc/systemd/system/scx.service"
install -m 644 tests/host/systemd/scx.default "$root/etc/default/scx"
# Two builds of the package, the second a newer version, for the upgrade.
v1=$(sed -n '/^\[package\]/,/^\[/s/^version *= *"\(.*\)"/\1/p' Cargo.toml)
v2=$v1+up1
for v in "$v1" "$v2"; do
  make -s deb BIN="$bin" DEBDIR="$tmp/debs" VERSION="$v" >"$tmp/deb.log" 2>&1 ||
    { bad "make deb VERSION=$v failed"; sed 's/^/     | /' "$tmp/deb.log"; checks_done; exit 1; }
done
install -d "$root/srv/debs"
cp "$tmp"/debs/*.deb "$root/srv/debs/"
echo "$v1 $v2" >"$root/srv/debs/versions"
mkdir -p "$root/srv/out"
cat >"$root/etc/systemd/system/soryu-checks.service" <<'UNIT'
[Unit]
Description=scx_soryu service checks (tests/host/systemd.sh)
After=multi-user.target
[Service]
Type=oneshot
ExecStart=/bin/bash /srv/soryu/checks.sh
StandardOutput=journal+console
[Install]
WantedBy=multi-user.target
UNIT
systemctl --root="$root" enable soryu-checks.service >/dev/null 2>&1
check "the unit is installed, not enabled" test ! -e "$root/etc/systemd/system/multi-user.target.wants/scx_soryu.service"

# --systemd: the guest's pid 1 is systemd; --rw: the copy is writable.
start=$(date +%s)
timeout "${SORYU_SYSTEMD_TIMEOUT:-1200}" vng --disable-kvm --force-9p -v --systemd \
  -r "$SORYU_VMLINUZ" --root "$root" --rw --cpus 2 --memory 1G \
  </dev/null >"$tmp/console.log" 2>&1 || true
secs=$(($(date +%s) - start))
results=target/vm-results/systemd
rm -rf "$results" && mkdir -p "$results"
cp "$tmp/console.log" "$root/srv/out/"* "$results/" 2>/dev/null || true

if [ -e "$root/srv/out/done" ]; then
  ok "the guest booted with systemd, ran the checks and powered off (${secs}s; logs in $results)"
else
  bad "the checks did not finish within ${SORYU_SYSTEMD_TIMEOUT:-1200}s (${secs}s; console: $results/console.log)"
  tail -n 20 "$tmp/console.log" | sed 's/^/    /' || true
fi
[ -f "$root/srv/out/guest-info" ] && sed 's/^/  guest: /' "$root/srv/out/guest-info"
while read -r verdict what; do
  if [ "$verdict" = ok ]; then ok "guest: $what"; else bad "guest: $what"; fi
done <"$root/srv/out/results" 2>/dev/null || true
grep -q '^ok the kernel runs soryu' "$root/srv/out/results" 2>/dev/null || bad "soryu was never seen loaded by the service"
checks_done
