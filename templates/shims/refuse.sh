#!/bin/sh
# A tool the upstream oracle refuses (the device query, the network, package managers, git): it
# says so on stderr and fails, as the tool would fail on a machine without it.
case ${0##*/} in
wget | curl) echo "${0##*/}: no network in the upstream oracle" >&2 ;;
*) echo "${0##*/}: neutralised by the upstream oracle" >&2 ;;
esac
exit 1
