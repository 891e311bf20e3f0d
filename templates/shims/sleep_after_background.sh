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
if [[ -n ${CUDA_VISIBLE_DEVICES+x} ]]; then tipc_r=$'set\x1f'$CUDA_VISIBLE_DEVICES; else tipc_r=$'unset\x1f'; fi
printf -v tipc_a '\x1f%s' "$PWD" "${0##*/}" "$@"
printf '%s\x1e' "$tipc_r$tipc_a" >>"$TIPC_RECORD"
exit 0
