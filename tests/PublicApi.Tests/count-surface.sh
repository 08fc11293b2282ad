#!/usr/bin/env bash
# Counts the public surface in the API baselines (tests/PublicApi.Tests/Snapshots/*.verified.txt, PublicApiGenerator):
# types, and members = properties, indexers, methods, constructors, fields/constants, events, operators, enum values.
# The five shipped packages are counted, the .AzureServiceBus.Testing package aside; the types of the lease keeper and
# of the Service Bus processors (the columns marked 31/33) are counted apart, so that a cut of the rest of the surface
# reads on its own. Usage: tests/PublicApi.Tests/count-surface.sh [snapshot-folder]
set -euo pipefail
dir="${1:-$(dirname "$0")/Snapshots}"
# The lease keeper's and the Service Bus processors' types (simple names; nested types are counted with their outer type).
apart='^(LeaseKeeper|LeaseHandle|LeaseKeeperOptions|LeaseKeeperStatistics|LeaseLostEventArgs|ServiceBusLeaseKeeperExtensions|LeaseKeeperServiceCollectionExtensions|LeaseHealthCheckBuilderExtensions|LeaseHealthCheckOptions|ServiceBusPumpProcessor|ServiceBusPumpProcessorOptions|ServiceBusPumpMessageEventArgs|ServiceBusClientPumpExtensions|ServiceBusPumpProcessorServiceCollectionExtensions|ServiceBusPumpSession[A-Za-z]*)$'
printf '%-48s %6s %8s %12s %14s\n' package types members 'types(31/33)' 'members(31/33)'
tt=0; tm=0; at=0; am=0
for f in "$dir"/PriorityAsync*.verified.txt; do
  pkg=$(basename "$f" .verified.txt)
  [[ "$pkg" == *.Testing ]] && continue
  read -r t m a_t a_m < <(awk -v apart="$apart" '
    function typename(line,   s) {
      s = line; sub(/^.*(class|struct|interface|enum|record) /, "", s); sub(/[ :<(].*$/, "", s); return s }
    /^ *namespace / { next }
    # a type declaration: remember whether it (or its outer type) is counted apart, and whether it is an enum
    /^ *(public|protected)[a-z ]* (class|struct|interface|enum|record) / {
      depth = match($0, /[^ ]/) - 1
      name = typename($0)
      if (depth <= 4) { outer_apart = (name ~ apart) }
      isapart[depth] = outer_apart
      isenum[depth] = ($0 ~ / enum /)
      cur = depth
      if (outer_apart) at++; else t++
      next }
    /^ *\[/ { next }
    /^ *[{}] *$/ { next }
    /^ *where / { next }
    {
      depth = match($0, /[^ ]/) - 1
      # a member line is one level inside the innermost open type
      d = depth - 4
      if (!(d in isapart)) next
      member = 0
      if (isenum[d] && $0 ~ /^ *[A-Za-z_][A-Za-z0-9_]* = .*,$/) member = 1
      else if ($0 ~ /^ *(public|protected) / || $0 ~ /^ *[A-Za-z_].*[);]$/ || $0 ~ /\{ get/) member = 1
      if (member) { if (isapart[d]) am++; else m++ } else if (ENVIRON["DEBUG_COUNT"] != "") print "skipped: " $0 > "/dev/stderr"
    }
    END { printf "%d %d %d %d\n", t, m, at, am }' "$f")
  printf '%-48s %6d %8d %12d %14d\n' "$pkg" "$t" "$m" "$a_t" "$a_m"
  tt=$((tt + t)); tm=$((tm + m)); at=$((at + a_t)); am=$((am + a_m))
done
printf '%-48s %6d %8d %12d %14d\n' total "$tt" "$tm" "$at" "$am"
