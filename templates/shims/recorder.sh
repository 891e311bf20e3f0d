#!/usr/bin/env bash
# The upstream oracle's recorder: one record per command (its cwd, CUDA_VISIBLE_DEVICES, the
# wrappers it runs under in TIPC_WRAP, argv[0] and the arguments), one write each, so that a
# backgrounded server and a `sleep` never interleave; TIPC_RECORD_FAIL fails a chosen command.
# one write per record: a backgrounded server and a `sleep` record at the same time
# (built with printf -v: no subshell, whose fork is most of a record's cost)
if [[ -n ${CUDA_VISIBLE_DEVICES+x} ]]; then tipc_r=$'set\x1f'$CUDA_VISIBLE_DEVICES; else tipc_r=$'unset\x1f'; fi
tipc_r+=$'\x1f'$PWD
tipc_r+=${TIPC_WRAP:-}
printf -v tipc_a '\x1f%s' "${0##*/}" "$@"
printf '%s\x1e' "$tipc_r$tipc_a" >>"$TIPC_RECORD"
if [[ -n ${TIPC_RECORD_FAIL:-} ]]; then
    for arg in "$@"; do
        if [[ $arg == *"$TIPC_RECORD_FAIL"* ]]; then
            exit "${TIPC_RECORD_CODE:-1}"
        fi
    done
fi
exit 0
