#!/bin/sh
# A scripted stand-in for the coding agent of [outer.author], for the
# end-to-end tests. It reads its prompt on stdin (keeping a copy in
# ./prompt-seen.md), writes ./mechanism as $AUTHOR_MODE says, and prints a
# report like Claude Code's:
#   good     (default) a mechanism that takes before_propose and on_result
#            and forces the search's next point X = 0.905, 0.910, ... (past
#            the toy's plateau)
#   crash    a mechanism that answers its hello, then exits
#   nothing  write no mechanism at all
# It also writes ./probe.txt: whether it can see the loop's ratchet.toml.
cat >prompt-seen.md
# What it can see of the loop it works for (its folder is
# <loop>/.ratchet/mechanisms/<name>): in the sandbox, nothing.
if [ -e ../../../ratchet.toml ]; then echo "loop visible" >probe.txt; else echo "loop hidden" >probe.txt; fi
case "${AUTHOR_MODE:-good}" in
  good)
    cat >mechanism <<'MECH'
#!/bin/sh
# Written by the stand-in agent: steps X past the plateau, 0.005 at a time.
n=0
while IFS= read -r line; do
  case "$line" in
    *'"type":"hello"'*) echo '{"hooks":["before_propose","on_result"]}' ;;
    *'"type":"before_propose"'*)
      n=$((n + 1))
      printf '{"search_hints":{"next":{"X":0.%03d}}}\n' $((900 + 5 * n)) ;;
    *) echo '{}' ;;
  esac
done
MECH
    ;;
  crash)
    printf '#!/bin/sh\nread -r hello\necho %s\nread -r next\nexit 3\n' \
      "'{\"hooks\":[\"before_propose\"]}'" >mechanism ;;
  nothing) ;;
esac
printf '{"type":"result","subtype":"success","is_error":false,"result":"DESCRIPTION: wrote a mechanism","total_cost_usd":0.2}\n'
