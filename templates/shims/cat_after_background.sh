#!/usr/bin/env bash
# `cat` for a script that starts each run in the background (`eval "${cmd} > ${log} 2>&1 &"`) and
# then prints its log (PaddleDetection's test_pipeline_infer_python.sh): it returns once the
# script's other children (the backgrounded recorder) have ended, at most after 5 s, so each run is
# recorded before the next one starts, as a real run's order would be; then it is the real `cat`.
for ((tipc_i = 0; tipc_i < 500; tipc_i++)); do
    others=$(pgrep -P "$PPID" | grep -vxF "$$")
    [[ -z ${others//[[:space:]]/} ]] && break
    /bin/sleep 0.01
done
for tipc_cat in /usr/bin/cat /bin/cat; do
    if [[ -x $tipc_cat ]]; then
        exec "$tipc_cat" "$@"
    fi
done
exit 127
