#!/bin/sh
# An external mechanism that misbehaves on purpose (for the protocol tests).
# $1 says how, at a request of the kind in $2 (default before_propose), after
# answering $3 of them well (default 0):
#   crash    exit 3
#   hang     sleep far past any time limit (with a child, to check the group is killed)
#   garbage  answer with text that is not JSON
#   wrongkey answer with an unknown key
#   badhello answer the hello with a hook that does not exist
#   nohooks  answer the hello with no hooks
#   silent   take only accept (a hook a loop of crashes never calls)
mode=$1
at=${2:-before_propose}
good=${3:-0}
while IFS= read -r line; do
  case "$line" in
    *'"type":"hello"'*)
      case "$mode" in
        badhello) echo '{"hooks":["before_propose","teleport"]}' ;;
        nohooks) echo '{"hooks":[]}' ;;
        silent) echo '{"hooks":["accept"]}' ;;
        *) echo '{"hooks":["before_propose","on_candidate","on_result"]}' ;;
      esac
      continue ;;
    *"\"type\":\"$at\""*)
      if [ "$good" -gt 0 ]; then good=$((good - 1)); echo '{}'; continue; fi
      case "$mode" in
        crash) exit 3 ;;
        hang) sleep 300 & wait; exit 0 ;;
        garbage) echo 'sure, here is my answer!'; continue ;;
        wrongkey) echo '{"vetoo":true}'; continue ;;
      esac ;;
  esac
  case "$line" in
    *'"type":"accept"'*) echo '{"decision":"default"}' ;;
    *) echo '{}' ;;
  esac
done
