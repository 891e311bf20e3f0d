#!/usr/bin/env bash
# timeout [OPTION]... DURATION COMMAND [ARG]...: runs COMMAND at once (the run has its own
# bound); what it runs is recorded with `timeout [OPTION]... DURATION` before it (TIPC_WRAP), so a
# cap only one side has is a difference.
wrap=$'\x1ftimeout'
while [[ $# -gt 0 && $1 == -* ]]; do
    case $1 in
    -s | -k | --signal | --kill-after) wrap+=$'\x1f'"$1"$'\x1f'"${2:-}" && shift 2 ;;
    *) wrap+=$'\x1f'"$1" && shift ;;
    esac
done
wrap+=$'\x1f'"${1:-}"
shift
TIPC_WRAP="${TIPC_WRAP:-}$wrap" exec "$@"
