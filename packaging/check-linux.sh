#!/usr/bin/env bash
# Checks the Linux build the way a user meets it, with no Python environment in sight:
#   1. the bundle's `foundry doctor` (dist/foundry), under Xvfb so that Qt opens a real window;
#      then, with no OTLP endpoint set, its doctor and its app's start-up (a chat ready for input)
#      run by packaging/import_probe.py, which lists what they imported: nothing of the
#      OpenTelemetry SDK or exporter (telemetry is imported lazily);
#   2. lintian on the .deb (when installed): no errors;
#   3. `dpkg -i` of the .deb, then the installed `foundry doctor`, desktop files and approvals API;
#   4. the installed app opened as a file manager opens an agent (`gio open` on the sample's
#      tsagent.json, through the MIME type and the desktop entry): once the chat says it is ready
#      the sample assistant answers a message, and a screenshot of the window goes to
#      docs/screenshots/packaged-app-xvfb.png (SCREENSHOT=path to change);
#   5. that chat sent by the installed `foundry sessions export ID --otlp` to a loopback OTLP/HTTP
#      receiver (packaging/otlp_receiver.py, on the system Python), which must count the spans
#      the command says it exported.
#
#   packaging/check-linux.sh [--build] [--keep-installed]
#
# --build runs packaging/build-linux.sh first (also done when dist/ has no build); LINTIAN=false
# leaves lintian out (it takes minutes). The package
# is removed again at the end unless it was installed before or --keep-installed is given.
# Every wait counts real seconds. Every process it starts runs in a session of its own, and
# every process of those sessions is ended at exit, whatever happened.
# Needs root or sudo (dpkg, and apt-get for Xvfb, xdotool, ImageMagick and the libraries).
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
LINTIAN=${LINTIAN:-true}
MESSAGE="Hello! My e-mail is ada@example.com. What can you do for me?"
INSTALLED=/usr/bin/$COMMAND
SAMPLE_AGENT_FILE=/usr/lib/foundry/_internal/agents/assistant/tsagent.json
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
WORK=$(mktemp -d)
USER_HOME=$WORK/home
SESSIONS=()  # the session ids of the processes this script started
REMOVE_PACKAGE=false

step() { printf '\n== %s (%d s)\n' "$*" "$SECONDS"; }
fail() { echo "check-linux.sh: FAILED after $SECONDS s: $*" >&2; exit 1; }

# Starts a command in the background in a session of its own; its id (the session's) is $STARTED.
start() {
    setsid "$@" &
    STARTED=$!
    SESSIONS+=("$STARTED")
}

# Ends every process of the session $1 (TERM, then KILL after 10 s) and reaps its leader.
stop_session() {
    local session=$1 pids second signal=TERM
    for second in $(seq 20); do
        pids=$(ps -o pid= -s "$session" 2>/dev/null || true)
        [ -n "$pids" ] || break
        [ "$second" -le 10 ] || signal=KILL
        # shellcheck disable=SC2086
        kill -$signal $pids 2>/dev/null || true
        sleep 1
    done
    wait "$session" 2>/dev/null || true
}

cleanup() {
    local session
    for session in "${SESSIONS[@]}"; do
        stop_session "$session"
    done
    if $REMOVE_PACKAGE; then
        $SUDO dpkg -r "$PACKAGE" >/dev/null || echo "check-linux.sh: could not remove $PACKAGE" >&2
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

# A command as a user's desktop session runs it: no virtual environment, no pyenv, no
# PYTHONPATH, the system PATH, a home of its own ($USER_HOME) and the X display of this check.
user_env() {
    mkdir -p "$USER_HOME"
    USER_ENV=(env -i PATH=/usr/bin:/bin HOME="$USER_HOME" LANG=C.UTF-8 DISPLAY=":$DISPLAY_NUMBER")
}

clean_env() {
    user_env
    "${USER_ENV[@]}" "$@"
}

start_clean() {  # start_clean COMMAND...: start (below) in the clean environment
    user_env
    start "${USER_ENV[@]}" "$@"
}

# until_true SECONDS DESCRIPTION COMMAND...: runs COMMAND until it succeeds, for SECONDS real
# seconds; fails the check when the app ($APP_SESSION, once started) is gone.
until_true() {
    local deadline=$((SECONDS + $1)) what=$2
    shift 2
    while [ "$SECONDS" -lt "$deadline" ]; do
        "$@" && return 0
        [ -z "${APP_SESSION:-}" ] || [ -n "$(ps -o pid= -s "$APP_SESSION")" ] ||
            fail "the app exited while waiting for $what: $(tail -20 "$(app_log)" 2>/dev/null)"
        sleep 1
    done
    fail "no $what after $1 s"
}

apt_install() {
    [ $# = 0 ] && return
    step "installing $*"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}

missing_packages() {
    local package
    for package in "$@"; do
        dpkg -s "$package" >/dev/null 2>&1 || echo "$package"
    done
}

# What this check runs, and the libraries the build needs to compute Depends.
install_tools() {
    local build_libraries
    build_libraries=$(sed -n 's/^BUILD_LIBRARIES="\(.*\)"$/\1/p' packaging/build-linux.sh)
    # shellcheck disable=SC2046,SC2086
    apt_install $(missing_packages xvfb xdotool imagemagick curl lintian libglib2.0-bin \
        shared-mime-info desktop-file-utils $build_libraries)
}

# The .deb's Depends: a tarball's user installs them as the README says, and the bundle's doctor
# below needs them before the .deb brings them.
install_deb_dependencies() {
    # shellcheck disable=SC2046
    apt_install $(missing_packages $(dpkg-deb -f "$1" Depends | tr ',' '\n' |
        sed 's/[(|].*//; s/ //g'))
}

start_xvfb() {
    start Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$WORK/display" 2>"$WORK/xvfb.log"
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

run_lintian() {
    local report
    report=$(lintian --tag-display-limit 0 "$1" 2>&1 || true)
    echo "${report:-lintian: no tags}"
    ! grep -q '^E: ' <<<"$report" || fail "lintian reports errors on $1"
}

install_deb() {
    local deb=$1
    dpkg -s "$PACKAGE" >/dev/null 2>&1 || $KEEP_INSTALLED || REMOVE_PACKAGE=true
    $SUDO dpkg -i "$deb" || fail "dpkg -i $deb failed"
    dpkg -s "$PACKAGE" | grep -q '^Status: install ok installed' || fail "$deb did not install"
    for file in $INSTALLED /usr/share/applications/$APP_ID.desktop \
        /usr/share/metainfo/$APP_ID.metainfo.xml /usr/share/icons/hicolor/256x256/apps/$APP_ID.png \
        /usr/share/mime/packages/$APP_ID.xml $SAMPLE_AGENT_FILE; do
        [ -e "$file" ] || fail "$deb did not install $file"
    done
}

# The approvals API (FastAPI on uvicorn) answers with the token and refuses without it.
check_api() {
    local url token=check-linux-token
    start_clean FOUNDRY_API_TOKEN=$token "$INSTALLED" serve --port 0 >"$WORK/serve.log" 2>&1
    local server=$STARTED deadline=$((SECONDS + 60))
    while [ "$SECONDS" -lt "$deadline" ]; do
        url=$(sed -n 's|^Foundry approvals API on \(http://[^ ]*\)$|\1|p' "$WORK/serve.log")
        [ -n "$url" ] && break
        [ -n "$(ps -o pid= -s "$server")" ] || fail "foundry serve exited: $(cat "$WORK/serve.log")"
        sleep 1
    done
    [ -n "$url" ] || fail "foundry serve did not announce its address in 60 s"
    [ "$(curl -s -H "Authorization: Bearer $token" "$url/approvals")" = "[]" ] ||
        fail "GET $url/approvals with the token did not list the (no) approvals"
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$url/approvals")" = 401 ] ||
        fail "GET $url/approvals without the token was not refused"
    stop_session "$server"
    [ -z "$(ps -o pid= -s "$server")" ] || fail "foundry serve did not end"
    echo "the approvals API answered at $url; foundry serve ended"
}

# The file manager's view: the sample's tsagent.json is an agent, opened by Foundry.
check_file_association() {
    local type app
    type=$(clean_env gio info -a standard::content-type "$SAMPLE_AGENT_FILE" |
        sed -n 's/^ *standard::content-type: //p')
    app=$(clean_env gio mime "$type")
    echo "$SAMPLE_AGENT_FILE: $type; $(tr '\n\t' '  ' <<<"$app")"
    [ "$type" = application/x-tsagent+json ] || fail "tsagent.json is $type, not an agent"
    grep -q "$APP_ID.desktop" <<<"$app" || fail "Foundry does not open $type"
}

app_log() {
    find "$USER_HOME" -name foundry.log 2>/dev/null | head -1
}

chat_ready() {  # chat_ready [AGENT_FILE]: the sample's by default
    local log
    log=$(app_log)
    [ -n "$log" ] &&
        grep -q "chat .* is ready for input (agent $(dirname "${1:-$SAMPLE_AGENT_FILE}"))" "$log"
}

newest_session() {
    clean_env "$INSTALLED" sessions list --limit 1 2>/dev/null | awk '{print $1}'
}

assistant_answered() {
    local session
    session=$(newest_session)
    [ -n "$session" ] && clean_env "$INSTALLED" sessions show "$session" 2>/dev/null |
        grep -q '^\[assistant\] .'
}

app_window() {
    WINDOW=$(DISPLAY=":$DISPLAY_NUMBER" xdotool search --onlyvisible --name 'Supervised Assistant' \
        2>/dev/null | head -1)
    [ -n "$WINDOW" ]
}

run_app() {
    start_clean gio open "$SAMPLE_AGENT_FILE" >"$WORK/open.log" 2>&1
    APP_SESSION=$STARTED
    until_true 180 "'chat is ready for input' in the app's log" chat_ready
    until_true 30 "window with the sample assistant" app_window
    ps -o args= -s "$APP_SESSION" | grep -q "$COMMAND gui $SAMPLE_AGENT_FILE\$" ||
        fail "the app is not '$COMMAND gui $SAMPLE_AGENT_FILE': $(ps -o args= -s "$APP_SESSION")"
    echo "the chat is ready in '$COMMAND gui $SAMPLE_AGENT_FILE', started by gio open"
    DISPLAY=":$DISPLAY_NUMBER" xdotool windowfocus "$WINDOW" sleep 0.5 type --delay 15 "$MESSAGE"
    DISPLAY=":$DISPLAY_NUMBER" xdotool key --window "$WINDOW" ctrl+Return
    until_true 240 "answer from the sample assistant" assistant_answered
    sleep 5  # the supervisors report after the answer is stored
    mkdir -p "$(dirname "$SCREENSHOT")"
    DISPLAY=":$DISPLAY_NUMBER" import -window "$WINDOW" "$SCREENSHOT"
    echo "screenshot: $SCREENSHOT"
    clean_env "$INSTALLED" sessions show "$(newest_session)"
}

# wait_for_file SECONDS FILE: until FILE is there, not empty.
wait_for_file() {
    until_true "$1" "$2" test -s "$2"
}

# The modules of the OpenTelemetry SDK, its exporter and Foundry's export, one a line, in the
# list packaging/import_probe.py wrote to $1. (opentelemetry's API is not among them: the mcp
# SDK imports it for its own spans, endpoint or not.)
export_modules() {
    grep -E '^(opentelemetry\.(sdk|exporter|proto)|google\.protobuf|foundry\.telemetry\.export)' \
        "$1" || true
}

# probe_imports PROGRAM COMMAND...: the bundle's PROGRAM COMMAND run in its own interpreter by
# packaging/import_probe.py (in the clean environment: no endpoint), which writes the modules it
# imported to $PROBED when the command returns or the process is sent TERM.
probe_imports() {
    local program=$1
    shift
    PROBED=$WORK/imported-by-$1
    start_clean "$program" -m cProfile -o /dev/null "$PWD/packaging/import_probe.py" "$PROBED" \
        "$@" >"$PROBED.log" 2>&1
    PROBE_SESSION=$STARTED
}

# fail_on_export_modules WHO: fails when $PROBED lists a module of the SDK or the exporter.
fail_on_export_modules() {
    local imported
    imported=$(export_modules "$PROBED")
    [ -z "$imported" ] || fail "$1 imported the telemetry export with no endpoint: $imported"
}

# Telemetry is imported lazily: with no OTLP endpoint set, neither the bundle's doctor nor the
# app's start-up (an agent's chat open and ready, so its engine started) imports the SDK.
check_no_telemetry_imports() {
    local program=$1 agent_file=$2 status=0
    local USER_HOME=$WORK/probe-home  # seen by the functions called from here
    probe_imports "$program" doctor
    wait "$PROBE_SESSION" || status=$?
    [ -s "$PROBED" ] || fail "the probed doctor listed nothing: $(tail -5 "$PROBED.log")"
    fail_on_export_modules "the doctor (exit $status)"
    echo "the doctor (exit $status) imported nothing of the SDK, the exporter or foundry's export"

    probe_imports "$program" gui "$agent_file"
    APP_SESSION=$PROBE_SESSION
    until_true 180 "'chat is ready for input' in the probed app's log" chat_ready "$agent_file"
    APP_SESSION=
    kill -TERM "$PROBE_SESSION"  # the probe writes its list, then the app ends by the signal
    wait_for_file 30 "$PROBED"
    stop_session "$PROBE_SESSION"
    grep -qx foundry.telemetry.live "$PROBED" || fail "the probed app started no engine"
    fail_on_export_modules "the app's start-up"
    echo "the app's start-up, up to its chat ready for input, imported nothing of them either"
}

# `foundry sessions export SESSION --otlp` of the installed package to a loopback OTLP/HTTP
# receiver (packaging/otlp_receiver.py, on the system Python): the command says it exported
# N > 0 spans to the receiver's /v1/traces, and the receiver counted those N spans in the
# requests it was POSTed there, and was sent nothing else.
check_otlp_export() {
    local session=$1 port endpoint output said exported spans bytes
    start_clean /usr/bin/python3 "$PWD/packaging/otlp_receiver.py" "$WORK/otlp-port" \
        >"$WORK/otlp.log" 2>&1
    local receiver=$STARTED
    wait_for_file 30 "$WORK/otlp-port"
    port=$(cat "$WORK/otlp-port")
    endpoint=http://127.0.0.1:$port
    output=$(clean_env OTEL_EXPORTER_OTLP_ENDPOINT="$endpoint" "$INSTALLED" \
        sessions export "$session" --otlp 2>&1) || fail "the OTLP export failed: $output"
    echo "$output"
    said="^exported \([0-9]*\) spans\{0,1\} of $session to $endpoint/v1/traces\$"
    exported=$(sed -n "s|$said|\1|p" <<<"$output")
    [ "${exported:-0}" -gt 0 ] || fail "the OTLP export did not say it exported spans"
    stop_session "$receiver"
    sed 's/^/receiver: /' "$WORK/otlp.log"
    ! grep -qv '^POST /v1/traces [0-9]* bytes [0-9]* spans$' "$WORK/otlp.log" ||
        fail "the receiver was sent something other than traces"
    spans=$(awk '{sum += $5} END {print sum + 0}' "$WORK/otlp.log")
    bytes=$(awk '{sum += $3} END {print sum + 0}' "$WORK/otlp.log")
    [ "$spans" = "$exported" ] || fail "$exported spans exported, the receiver counted $spans"
    echo "the receiver got $(grep -c . "$WORK/otlp.log") POST(s) of $bytes bytes with $spans spans"
}

DEB=$(deb_file)
install_tools
if $BUILD || [ ! -x "dist/$COMMAND/$COMMAND" ] || [ ! -f "$DEB" ]; then
    step "building"
    packaging/build-linux.sh
fi
install_deb_dependencies "$DEB"
start_xvfb

step "the bundle's doctor (dist/$COMMAND/$COMMAND)"
USER_HOME=$WORK/bundle-home run_doctor "$PWD/dist/$COMMAND/$COMMAND"

step "what the bundle's doctor and start-up import with no OTLP endpoint"
check_no_telemetry_imports "$PWD/dist/$COMMAND/$COMMAND" \
    "$PWD/dist/$COMMAND/_internal/agents/$(basename "$(dirname "$SAMPLE_AGENT_FILE")")/tsagent.json"

if $LINTIAN; then
    step "lintian $DEB"
    run_lintian "$DEB"
fi

step "dpkg -i $DEB"
install_deb "$DEB"

step "the installed package's doctor ($INSTALLED -> $(readlink -f $INSTALLED))"
run_doctor "$INSTALLED"

step "the installed package's approvals API"
check_api

step "the installed app, opened with gio open $SAMPLE_AGENT_FILE under Xvfb"
check_file_association
run_app

step "the installed package's OTLP export of that chat"
check_otlp_export "$(newest_session)"

step "all checks passed"
