# Build, install and uninstall scx_soryu and its systemd service.
#
#   make build                             cargo build --release (as your user)
#   make test                              the unit tests (cargo test)
#   sudo make install                      PREFIX=/usr/local
#   sudo make install PREFIX=/usr
#   make install DESTDIR=/some/stage PREFIX=/usr    staged, e.g. for a package
#   sudo make uninstall                    same PREFIX and DESTDIR as install
#   make deb                               a Debian package (pkg/deb/), as
#                                          your user: no root needed
#
# install never builds: it installs target/release/scx_soryu (BIN=) as it
# is, and stops with the build command when it is missing, so a
# `sudo make install` leaves target/ alone.
#
# What install puts (BINDIR = $(PREFIX)/bin):
#   $(DESTDIR)$(BINDIR)/scx_soryu
#   $(DESTDIR)$(UNITDIR)/scx_soryu.service   from service/scx_soryu.service.in,
#                                            ExecStart=$(BINDIR)/scx_soryu
#   $(DESTDIR)/etc/default/scx_soryu         service/scx_soryu.default, only
#                                            when there is none yet
# UNITDIR is a directory systemd reads units from:
#   PREFIX=/usr        /usr/lib/systemd/system
#   PREFIX=/usr/local  /usr/local/lib/systemd/system
#   any other PREFIX   /etc/systemd/system ($(PREFIX)/lib/systemd/system
#                      would not be read)
# or UNITDIR=... to choose.
#
# uninstall removes the binary and the unit, and the environment file only
# when it is the shipped default unchanged: edited flags are kept (and the
# path printed). Without DESTDIR, on a system running systemd, install ends
# with `systemctl daemon-reload`, and uninstall starts with
# `systemctl disable --now scx_soryu` and ends with a daemon-reload; with
# DESTDIR, neither calls systemctl.
#
# deb builds $(DEBDIR)/scx-soryu_$(VERSION)_ARCH.deb (DEBDIR defaults to
# target/debian) from $(BIN), like install never building it: it stages
# `make install DESTDIR=$(DEBDIR)/stage PREFIX=/usr` and packs that with
# pkg/deb/build.sh (dpkg-deb, and dpkg-shlibdeps for Depends: Debian's
# dpkg-dev). VERSION is Cargo.toml's version unless given on the command
# line (make deb VERSION=0.1.1); pkg/deb/build.sh lists its environment
# (DEPENDS=, DEB_ARCH=, MAINTAINER=).

PREFIX ?= /usr/local
override PREFIX := $(patsubst %/,%,$(PREFIX))
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
ifeq ($(PREFIX),/usr)
UNITDIR ?= /usr/lib/systemd/system
else ifeq ($(PREFIX),/usr/local)
UNITDIR ?= /usr/local/lib/systemd/system
else
UNITDIR ?= /etc/systemd/system
endif
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/scx-soryu
# The documentation installed: the README and the pages of docs/.
DOCS := README.md $(wildcard docs/*.md)
DOC_IMGS := $(wildcard docs/img/*.svg)
# The unit reads this path; it is not a setting.
ENVFILE := /etc/default/scx_soryu

CARGO ?= cargo
BPF_CLANG ?= clang-19
BIN ?= target/release/scx_soryu

# Debian package: the version is read from Cargo.toml's [package] unless
# VERSION= is on the command line (an environment VERSION is ignored).
DEBDIR ?= target/debian
ifneq ($(origin VERSION),command line)
VERSION := $(shell sed -n '/^\[package\]/,/^\[/s/^version *= *"\(.*\)"/\1/p' Cargo.toml)
endif

UNIT := scx_soryu.service
UNIT_IN := service/scx_soryu.service.in
ENV_DEFAULT := service/scx_soryu.default

# systemctl only for the real root, and only when systemd is running
# (/run/systemd/system exists exactly then: sd_booted()).
SYSTEMD_LIVE = [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ] && command -v systemctl >/dev/null

.PHONY: build test install uninstall deb check-prefix check-bin

# scx_utils' build script runs $BPF_CLANG (plain `clang` by default, which
# Debian's clang-19 does not provide), so every cargo step is given it.
build:
	BPF_CLANG=$(BPF_CLANG) $(CARGO) build --release

test:
	BPF_CLANG=$(BPF_CLANG) $(CARGO) test

check-prefix:
	@case "$(PREFIX)" in /*) ;; *) echo "PREFIX must be an absolute path (got '$(PREFIX)')" >&2; exit 1;; esac

check-bin:
	@if [ ! -x "$(BIN)" ]; then \
	    echo "$(BIN) is missing: build it first, as your user, with" >&2; \
	    echo "  make build    (that is: BPF_CLANG=$(BPF_CLANG) cargo build --release)" >&2; \
	    exit 1; \
	fi
	@newer=$$(find src build.rs Cargo.toml Cargo.lock -newer "$(BIN)" -type f 2>/dev/null | head -n 1); \
	if [ -n "$$newer" ]; then \
	    echo "warning: $$newer is newer than $(BIN); using it anyway (make build to rebuild)" >&2; \
	fi

install: check-prefix check-bin
	install -d "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(UNITDIR)" "$(DESTDIR)/etc/default"
	install -m 0755 "$(BIN)" "$(DESTDIR)$(BINDIR)/scx_soryu"
	install -d "$(DESTDIR)$(MANDIR)/man8" "$(DESTDIR)$(DOCDIR)/img"
	"$(BIN)" --man | gzip -9n > "$(DESTDIR)$(MANDIR)/man8/scx_soryu.8.gz"
	chmod 0644 "$(DESTDIR)$(MANDIR)/man8/scx_soryu.8.gz"
	install -m 0644 $(DOCS) "$(DESTDIR)$(DOCDIR)/"
	install -m 0644 $(DOC_IMGS) "$(DESTDIR)$(DOCDIR)/img/"
	sed 's|@BINDIR@|$(BINDIR)|g' "$(UNIT_IN)" > "$(DESTDIR)$(UNITDIR)/$(UNIT).tmp"
	chmod 0644 "$(DESTDIR)$(UNITDIR)/$(UNIT).tmp"
	mv -f "$(DESTDIR)$(UNITDIR)/$(UNIT).tmp" "$(DESTDIR)$(UNITDIR)/$(UNIT)"
	@if [ -e "$(DESTDIR)$(ENVFILE)" ]; then \
	    echo "kept $(DESTDIR)$(ENVFILE) as it is (the shipped default is $(ENV_DEFAULT))"; \
	else \
	    echo "install -m 0644 $(ENV_DEFAULT) $(DESTDIR)$(ENVFILE)"; \
	    install -m 0644 "$(ENV_DEFAULT)" "$(DESTDIR)$(ENVFILE)"; \
	fi
	@if $(SYSTEMD_LIVE); then \
	    echo "systemctl daemon-reload"; systemctl daemon-reload; \
	    echo "now: systemctl enable --now scx_soryu (or, if it runs already: systemctl restart scx_soryu)"; \
	fi

uninstall: check-prefix
	@if $(SYSTEMD_LIVE) && [ -e "$(UNITDIR)/$(UNIT)" ]; then \
	    echo "systemctl disable --now $(UNIT)"; systemctl disable --now $(UNIT) || true; \
	fi
	rm -f "$(DESTDIR)$(BINDIR)/scx_soryu" "$(DESTDIR)$(UNITDIR)/$(UNIT)" "$(DESTDIR)$(UNITDIR)/$(UNIT).tmp"
	rm -f "$(DESTDIR)$(MANDIR)/man8/scx_soryu.8.gz" $(addprefix "$(DESTDIR)$(DOCDIR)/",$(notdir $(DOCS))) \
	    $(addprefix "$(DESTDIR)$(DOCDIR)/img/",$(notdir $(DOC_IMGS)))
	-rmdir "$(DESTDIR)$(DOCDIR)/img" "$(DESTDIR)$(DOCDIR)" 2>/dev/null
	@if [ ! -e "$(DESTDIR)$(ENVFILE)" ]; then :; \
	elif cmp -s "$(ENV_DEFAULT)" "$(DESTDIR)$(ENVFILE)"; then \
	    echo "rm -f $(DESTDIR)$(ENVFILE)"; rm -f "$(DESTDIR)$(ENVFILE)"; \
	else \
	    echo "kept $(DESTDIR)$(ENVFILE): it differs from the shipped default (edited flags); remove it by hand if unwanted"; \
	fi
	@if $(SYSTEMD_LIVE); then \
	    echo "systemctl daemon-reload"; systemctl daemon-reload; \
	fi

# The stage is rebuilt every time; the sub-make's command line pins the
# layout whatever PREFIX, BINDIR or UNITDIR this make was given.
deb: check-bin
	@rm -rf "$(DEBDIR)/stage"
	@out=$$($(MAKE) -s --no-print-directory install BIN="$(BIN)" DESTDIR="$(abspath $(DEBDIR))/stage" \
	    PREFIX=/usr BINDIR=/usr/bin UNITDIR=/usr/lib/systemd/system MANDIR=/usr/share/man \
	    DOCDIR=/usr/share/doc/scx-soryu 2>&1) || { echo "$$out" >&2; exit 1; }
	@pkg/deb/build.sh "$(DEBDIR)/stage" "$(VERSION)" "$(DEBDIR)"
	@rm -rf "$(DEBDIR)/stage"
