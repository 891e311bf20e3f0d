#!/usr/bin/env bash
# The upstream oracle's recorder: one record per command (its cwd, CUDA_VISIBLE_DEVICES, the
# wrappers it runs under in TIPC_WRAP, argv[0] and the arguments), one write each, so that a
# backgrounded server and a `sleep` never interleave; TIPC_RECORD_FAIL fails a chosen command.
# one write per record: a backgrounded server and a `sleep` record at the same time
r=$(
    if [[ -n ${CUDA_VISIBLE_DEVICES+x} ]]; then printf 'set\x1f%s' "$CUDA_VISIBLE_DEVICES"; else printf 'unset\x1f'; fi
    printf '\x1f%s' "$PWD"
    printf '%s' "${TIPC_WRAP:-}"
    printf '\x1f%s' "${0##*/}" "$@"
    printf '\x1e'
)
printf '%s' "$r" >>"$TIPC_RECORD"
if [[ -n ${TIPC_RECORD_FAIL:-} ]]; then
    for arg in "$@"; do
        if [[ $arg == *"$TIPC_RECORD_FAIL"* ]]; then
            exit "${TIPC_RECORD_CODE:-1}"
        fi
    done
fi
exit 0
