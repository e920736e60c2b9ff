#!/bin/sh
# A well-behaved external mechanism (for the protocol tests): it takes
# before_propose, on_candidate and on_result; it gives one line of guidance,
# vetoes a candidate whose description says BAD, and counts the results it
# was sent in $GOOD_COUNT_FILE when that is set.
n=0
while IFS= read -r line; do
  case "$line" in
    *'"type":"hello"'*) echo '{"hooks":["before_propose","on_candidate","on_result"]}' ;;
    *'"type":"before_propose"'*) echo '{"guidance":["try something new"]}' ;;
    *'"type":"on_candidate"'*)
      case "$line" in
        *BAD*) echo '{"veto":true,"reason":"looks bad"}' ;;
        *) echo '{}' ;;
      esac ;;
    *'"type":"on_result"'*)
      n=$((n + 1))
      [ -n "${GOOD_COUNT_FILE:-}" ] && echo "$n" >"$GOOD_COUNT_FILE"
      echo '{}' ;;
    *) echo '{"unexpected":true}' ;;
  esac
done
