# shellcheck shell=bash
# A wrapper a script runs its commands under (timeout, nohup, setsid, env): recorded as a command
# of its own (the wrapper and its arguments up to the command), then the command runs.
name=${0##*/}
args=()
case $name in
timeout)
    while [[ $# -gt 0 && $1 == -* ]]; do
        case $1 in -s|-k|--signal|--kill-after) args+=("$1" "${2:-}"); shift 2 ;; *) args+=("$1"); shift ;; esac
    done
    args+=("${1:-}"); shift ;;
setsid)
    while [[ $# -gt 0 && $1 == -* ]]; do args+=("$1"); shift; done ;;
env)
    while [[ $# -gt 0 && ( $1 == -* || $1 == *=* ) ]]; do args+=("$1"); shift; done ;;
esac
tipc_record "$name" "${args[@]}"
if [[ $# -eq 0 ]]; then
    [[ $name == env ]] && exec /usr/bin/env "${args[@]}"
    exit 0
fi
[[ $name == env ]] && exec /usr/bin/env "${args[@]}" "$@"
exec "$@"
