#!/usr/bin/env bash
# run_timings.sh NP: `r1pi --serve --timings FILE.csv` on the generated R1 model on NP ranks writes
# the CLI's columns, one row per forward across requests: after two completions (the second
# starting from what the prompt cache holds) the rows feed exactly the tokens the two answers say
# were fed (timings.prompt_n prompt tokens, then one per generated token but the last), each row
# is written while the server still runs (to the temporary file beside FILE that becomes FILE when
# the server stops: an older FILE stays whole until then), and on several ranks every decode row
# moved bytes.
source "$(dirname "$0")/lib.sh"
np=${1:?usage: run_timings.sh NP}
model=$(make_model r1)
csv=$SCRATCH/timings.csv
start_server timings "$np" -m "$model" --timings "$csv"
fed=0
for body in '{"prompt": "Once upon a time", "max_tokens": 5, "temperature": 0}' \
            '{"prompt": "Once upon a time there was", "max_tokens": 3, "temperature": 0}'; do
  answer=$(curl -sS --max-time 60 -H 'Content-Type: application/json' -d "$body" "http://127.0.0.1:$PORT/v1/completions") ||
    die "the request failed"
  n=$(python3 -c 'import json, sys; j = json.load(sys.stdin); print(j["timings"]["prompt_n"] + j["usage"]["completion_tokens"] - 1)' <<<"$answer") ||
    die "not an answer: $answer"
  fed=$((fed + n))
done
live=$(ls "$SCRATCH"/.timings.csv.r1pi-tmp-* 2>/dev/null | head -n 1)
[ -n "$live" ] && [ -s "$live" ] || die "no temporary timings file beside $csv while the server runs"
[ ! -e "$csv" ] || die "$csv exists before the server stops (it should appear whole at the end)"
rows_fed=$(awk -F, 'NR > 1 {s += $2} END {print s + 0}' "$live")  # read before the server stops
stop_and_check timings "$np"
[ -s "$csv" ] || die "no timings file $csv after the server stopped"
[ -z "$(ls "$SCRATCH"/.timings.csv.r1pi-tmp-* 2>/dev/null)" ] || die "the temporary file is left beside $csv"
[ "$(head -n 1 "$csv")" = "pos,tokens,pred_ms,sync_ms,sent_bytes,recv_bytes,accepted" ] || { cat "$csv"; die "not the CLI's header"; }
[ "$rows_fed" -eq "$fed" ] || { cat "$csv"; die "the rows feed $rows_fed tokens while the server ran; the answers say $fed"; }
if [ "$np" -gt 1 ]; then
  silent=$(awk -F, 'NR > 1 && $2 == 1 && ($5 == 0 || $6 == 0)' "$csv" | wc -l)
  [ "$silent" -eq 0 ] || { cat "$csv"; die "$silent decode rows moved no bytes on $np ranks"; }
fi
echo "PASS: $TEST_NAME: $(($(wc -l <"$csv") - 1)) rows over 2 requests on $np rank(s), $fed tokens fed"
