#!/usr/bin/env bash
# The whole-tree oracle's recorder: records itself (its name and arguments) and succeeds.
# tipc_record NAME ARG...: the whole-tree oracle's record of one command, written with one write.
tipc_record() {
    local rec
    if [[ -n ${CUDA_VISIBLE_DEVICES+x} ]]; then rec=$'set\x1f'$CUDA_VISIBLE_DEVICES; else rec=$'unset\x1f'; fi
    printf -v rec '%s\x1f%s' "$rec" "$PWD"
    for arg in "$@"; do printf -v rec '%s\x1f%s' "$rec" "$arg"; done
    printf '%s\x1e' "$rec" >>"$TIPC_RECORD"
}
tipc_record "${0##*/}" "$@"
exit 0
