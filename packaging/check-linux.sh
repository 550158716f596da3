#!/usr/bin/env bash
# Checks the Linux build the way a user meets it, with no Python environment in sight:
#   1. the bundle's `foundry doctor` (dist/foundry), under Xvfb so that Qt opens a real window;
#   2. `dpkg -i` of the .deb, then the installed `foundry doctor`, desktop files and approvals API;
#   3. the installed app under Xvfb: the sample assistant answers a message, and a screenshot of
#      the window goes to docs/screenshots/packaged-app-xvfb.png (SCREENSHOT=path to change).
#
#   packaging/check-linux.sh [--build] [--keep-installed]
#
# --build runs packaging/build-linux.sh first (also done when dist/ has no build). The package
# is removed again at the end unless it was installed before or --keep-installed is given.
# Needs root or sudo (dpkg, and apt-get for Xvfb, xdotool and ImageMagick when missing).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=false
KEEP_INSTALLED=false
for arg in "$@"; do
    case $arg in
    --build) BUILD=true ;;
    --keep-installed) KEEP_INSTALLED=true ;;
    *) echo "usage: packaging/check-linux.sh [--build] [--keep-installed]" >&2; exit 2 ;;
    esac
done

PACKAGE=foundry-studio
COMMAND=foundry
APP_ID=dev.foundry.Foundry
SCREENSHOT=${SCREENSHOT:-docs/screenshots/packaged-app-xvfb.png}
MESSAGE="Hello! My e-mail is ada@example.com. What can you do for me?"
INSTALLED=/usr/bin/$COMMAND
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
WORK=$(mktemp -d)
USER_HOME=$WORK/home
XVFB_PID=
APP_PID=
SERVER_PID=
REMOVE_PACKAGE=false

step() { printf '\n== %s\n' "$*"; }
fail() { echo "check-linux.sh: FAILED: $*" >&2; exit 1; }

stop() {  # stop PID: end a process this script started, and reap it
    if [ -n "$1" ] && kill "$1" 2>/dev/null; then
        wait "$1" 2>/dev/null || true
    fi
}

cleanup() {
    stop "$APP_PID"
    stop "$SERVER_PID"
    stop "$XVFB_PID"
    if $REMOVE_PACKAGE; then
        $SUDO dpkg -r "$PACKAGE" >/dev/null || echo "check-linux.sh: could not remove $PACKAGE" >&2
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

# A command as a user's desktop session runs it: no virtual environment, no pyenv, no
# PYTHONPATH, the system PATH, a home of its own ($USER_HOME) and the X display of this check.
clean_env() {
    mkdir -p "$USER_HOME"
    env -i PATH=/usr/bin:/bin HOME="$USER_HOME" LANG=C.UTF-8 DISPLAY=":$DISPLAY_NUMBER" "$@"
}

# The libraries the .deb depends on (DEPENDS in build-linux.sh): a tarball's user installs them as
# the README says, and the bundle's doctor below needs them before any .deb brings them.
deb_dependencies() {
    sed -n '/^DEPENDS="/,/"$/p' packaging/build-linux.sh | tr -d '\\\n"' | sed 's/^DEPENDS=//' |
        tr ',' ' '
}

install_tools() {
    local missing=()
    for package in $(deb_dependencies); do
        dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
    done
    command -v Xvfb >/dev/null || missing+=(xvfb)
    command -v xdotool >/dev/null || missing+=(xdotool)
    command -v import >/dev/null || missing+=(imagemagick)
    command -v curl >/dev/null || missing+=(curl)
    [ ${#missing[@]} = 0 ] && return
    step "installing ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
}

start_xvfb() {
    Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$WORK/display" 2>"$WORK/xvfb.log" &
    XVFB_PID=$!
    for _ in $(seq 50); do
        [ -s "$WORK/display" ] && break
        sleep 0.2
    done
    DISPLAY_NUMBER=$(head -1 "$WORK/display")
    [ -n "$DISPLAY_NUMBER" ] || fail "Xvfb did not start: $(cat "$WORK/xvfb.log")"
    echo "Xvfb on :$DISPLAY_NUMBER"
}

# `foundry doctor` through $1, which must pass with a real X11 window.
run_doctor() {
    local output status=0
    output=$(clean_env "$1" doctor) || status=$?
    echo "$output"
    [ "$status" = 0 ] || fail "$1 doctor exited with $status"
    grep -q '^OK *Qt window .*platform: xcb' <<<"$output" || fail "$1 doctor: no X11 window"
}

deb_file() {
    local version
    version=$(sed -n 's/^version = "\(.*\)"$/\1/p' pyproject.toml | head -1)
    echo "dist/${PACKAGE}_${version}_$(dpkg --print-architecture).deb"
}

install_deb() {
    local deb=$1
    dpkg -s "$PACKAGE" >/dev/null 2>&1 || $KEEP_INSTALLED || REMOVE_PACKAGE=true
    if ! $SUDO dpkg -i "$deb"; then
        echo "installing the missing dependencies with apt-get"
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -f -y -qq >/dev/null
    fi
    dpkg -s "$PACKAGE" | grep -q '^Status: install ok installed' || fail "$deb did not install"
    for file in $INSTALLED /usr/share/applications/$APP_ID.desktop \
        /usr/share/metainfo/$APP_ID.metainfo.xml /usr/share/icons/hicolor/256x256/apps/$APP_ID.png; do
        [ -e "$file" ] || fail "$deb did not install $file"
    done
}

# The approvals API (FastAPI on uvicorn) answers with the token and refuses without it.
check_api() {
    local url token=check-linux-token
    clean_env FOUNDRY_API_TOKEN=$token "$INSTALLED" serve --port 0 >"$WORK/serve.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 30); do
        url=$(sed -n 's|^Foundry approvals API on \(http://[^ ]*\)$|\1|p' "$WORK/serve.log")
        [ -n "$url" ] && break
        kill -0 "$SERVER_PID" 2>/dev/null || fail "foundry serve exited: $(cat "$WORK/serve.log")"
        sleep 1
    done
    [ -n "$url" ] || fail "foundry serve did not announce its address in 30 s"
    [ "$(curl -s -H "Authorization: Bearer $token" "$url/approvals")" = "[]" ] ||
        fail "GET $url/approvals with the token did not list the (no) approvals"
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$url/approvals")" = 401 ] ||
        fail "GET $url/approvals without the token was not refused"
    stop "$SERVER_PID"
    SERVER_PID=
    echo "the approvals API answered at $url"
}

# The id of the newest session in the clean home, once the app has one.
newest_session() {
    clean_env "$INSTALLED" sessions list --limit 1 2>/dev/null | awk '{print $1}'
}

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
    local seconds=$1 what=$2
    shift 2
    for _ in $(seq "$seconds"); do
        "$@" && return 0
        kill -0 "$APP_PID" 2>/dev/null || fail "the app exited while waiting for $what"
        sleep 1
    done
    fail "no $what after $seconds s"
}

assistant_answered() {
    local session
    session=$(newest_session)
    [ -n "$session" ] && clean_env "$INSTALLED" sessions show "$session" 2>/dev/null |
        grep -q '^\[assistant\] .'
}

sample_agent_open() {
    WINDOW=$(DISPLAY=":$DISPLAY_NUMBER" xdotool search --onlyvisible --name 'Supervised Assistant' \
        2>/dev/null | head -1)
    [ -n "$WINDOW" ]
}

run_app() {
    clean_env "$INSTALLED" >"$WORK/app.log" 2>&1 &
    APP_PID=$!
    wait_for 60 "window with the sample assistant" sample_agent_open
    sleep 2  # let the window finish its first paint and give the message field focus
    DISPLAY=":$DISPLAY_NUMBER" xdotool windowfocus "$WINDOW" sleep 0.5 type --delay 15 "$MESSAGE"
    DISPLAY=":$DISPLAY_NUMBER" xdotool key --window "$WINDOW" ctrl+Return
    wait_for 120 "answer from the sample assistant" assistant_answered
    sleep 5  # the supervisors report after the answer is stored
    mkdir -p "$(dirname "$SCREENSHOT")"
    DISPLAY=":$DISPLAY_NUMBER" import -window "$WINDOW" "$SCREENSHOT"
    echo "screenshot: $SCREENSHOT"
    clean_env "$INSTALLED" sessions show "$(newest_session)"
}

DEB=$(deb_file)
if $BUILD || [ ! -x "dist/$COMMAND/$COMMAND" ] || [ ! -f "$DEB" ]; then
    step "building"
    packaging/build-linux.sh
fi
install_tools
start_xvfb

step "the bundle's doctor (dist/$COMMAND/$COMMAND)"
USER_HOME=$WORK/bundle-home run_doctor "$PWD/dist/$COMMAND/$COMMAND"

step "dpkg -i $DEB"
install_deb "$DEB"

step "the installed package's doctor ($INSTALLED -> $(readlink -f $INSTALLED))"
run_doctor "$INSTALLED"

step "the installed package's approvals API"
check_api

step "the installed app under Xvfb"
run_app

step "all checks passed"
