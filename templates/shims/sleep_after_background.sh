#!/usr/bin/env bash
# `sleep` for the scripts that start a server in the background (`nohup ... &`, then `sleep`): it
# returns once the script's other children (the backgrounded recorder) have ended, at most after
# 5 s, so the server's command is recorded before its clients', as the real sleep orders them; then
# it records itself (one write).
for ((tipc_i = 0; tipc_i < 500; tipc_i++)); do
    others=$(pgrep -P "$PPID" | grep -vxF "$$")
    [[ -z ${others//[[:space:]]/} ]] && break
    /bin/sleep 0.01
done
r=$(
    if [[ -n ${CUDA_VISIBLE_DEVICES+x} ]]; then printf 'set\x1f%s' "$CUDA_VISIBLE_DEVICES"; else printf 'unset\x1f'; fi
    printf '\x1f%s' "$PWD"
    printf '\x1f%s' "${0##*/}" "$@"
    printf '\x1e'
)
printf '%s' "$r" >>"$TIPC_RECORD"
exit 0
