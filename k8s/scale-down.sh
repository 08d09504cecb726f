#!/usr/bin/env bash
# Shrinks the StatefulSet dht to TARGET_REPLICAS nodes without losing data: for each ordinal from the highest
# down to TARGET_REPLICAS, the node decommissions itself (streams its records to the nodes that gain them and
# leaves the cluster view), then the StatefulSet is scaled down by one and the pod's claim is deleted.
#
#   k8s/scale-down.sh [-n NAMESPACE] TARGET_REPLICAS
#
# Needs kubectl (with access to the namespace, and to exec in its pods) on this machine: each step runs the
# `dht` command line of the image in a pod (`kubectl exec POD -- dht ...`), which asks that pod's actuator
# (DHT_HOST, its management port 8081) with that pod's cluster secret (DHT_CLUSTER_SECRET, from the Secret
# dht-cluster-secret): the secret never leaves the pods, nor is it on a command line.
# Resumable: run it again after an interruption; a pod already leaving or gone is not asked again.
#
# Environment: LEAVE_TIMEOUT (s, default 3600) how long one node may take to stream out and leave;
# REFUSED_TIMEOUT (s, default 600) how long to retry a decommission the cluster refuses (409: cleanup pending,
# a member down, another change); POD_TIMEOUT (s, default 180) for a pod to go and its claim to be deleted.
set -euo pipefail

readonly STS=dht                       # statefulset.yaml
readonly CLAIM_TEMPLATE=data           # its volumeClaimTemplate: the claim of pod dht-N is data-dht-N
readonly API_PORT=8080                 # DHT_SELF = http://$(POD_NAME).<serviceName>:8080
LEAVE_TIMEOUT=${LEAVE_TIMEOUT:-3600}
REFUSED_TIMEOUT=${REFUSED_TIMEOUT:-600}
POD_TIMEOUT=${POD_TIMEOUT:-180}

usage() {
    echo "usage: $0 [-n NAMESPACE] TARGET_REPLICAS" >&2
    exit 2
}

KUBECTL=(kubectl)
TARGET=
while [[ $# -gt 0 ]]; do
    case $1 in
        -n|--namespace) [[ $# -ge 2 ]] || usage; KUBECTL+=(-n "$2"); shift 2 ;;
        -h|--help) usage ;;
        -*) usage ;;
        *) [[ -z $TARGET ]] || usage; TARGET=$1; shift ;;
    esac
done
[[ $TARGET =~ ^[0-9]+$ ]] || usage

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }
k() { "${KUBECTL[@]}" "$@"; }

command -v kubectl >/dev/null || die "kubectl is not on the PATH"

if (( TARGET < 1 )); then
    die "refusing to go below 1 node: the last member has nobody to stream its records to, so it cannot decommission.
    To drop the whole cluster and its data: kubectl delete -k k8s/, then kubectl delete pvc -l app.kubernetes.io/name=dht
    (or each ${CLAIM_TEMPLATE}-${STS}-N)."
fi

CURRENT=$(k get statefulset "$STS" -o jsonpath='{.spec.replicas}') || die "no statefulset $STS here"
SERVICE=$(k get statefulset "$STS" -o jsonpath='{.spec.serviceName}')
if (( TARGET >= CURRENT )); then
    log "statefulset $STS has $CURRENT replicas (<= $TARGET): nothing to do (scale up with kubectl scale)"
    exit 0
fi

node_url() { echo "http://$STS-$1.$SERVICE:$API_PORT"; }

trap 'exit 130' INT TERM

# `dht status --output json` of POD on stdout (GET /actuator/cluster/status: the view, the change in progress),
# on one line, for the greps below.
cluster_view() {
    local view
    view=$("${KUBECTL[@]}" exec "$1" -- dht status --output json) || return 1
    tr -s '[:space:]' ' ' <<<"$view"
}

# `dht decommission` in POD (POST /actuator/cluster/decommission to its own actuator); sets EXIT (the command's
# exit status: 0 started, 2 refused, else cannot reach) and BODY (what it printed).
post_decommission() {
    EXIT=0
    BODY=$("${KUBECTL[@]}" exec "$1" -- dht decommission 2>&1) || EXIT=$?
}

# True if the view JSON on stdin names URL (as a member, or as the node of the change in progress).
names() { grep -Eq "\"node\"[[:space:]]*:[[:space:]]*\"${1//./\\.}\""; }

# --- one node at a time ------------------------------------------------------------------------------------
for (( ordinal = CURRENT - 1; ordinal >= TARGET; ordinal-- )); do
    pod=$STS-$ordinal
    url=$(node_url "$ordinal")
    log "== $pod ($url): decommission, then scale $STS to $ordinal"

    view=$(cluster_view "$STS-0") || die "cannot read the cluster view (dht status) on $STS-0"
    if ! names "$url" <<<"$view"; then
        log "$pod is no member of the cluster view on $STS-0 (it left before): skipping to the scale-down"
    elif grep -Eq "\"change\"[[:space:]]*:[[:space:]]*\\{[[:space:]]*\"kind\"[[:space:]]*:[[:space:]]*\"decommission\"[^}]*\"node\"[[:space:]]*:[[:space:]]*\"${url//./\\.}\"" <<<"$view"; then
        log "$pod is already decommissioning: waiting for it"
    else
        deadline=$(( SECONDS + REFUSED_TIMEOUT ))
        while :; do
            post_decommission "$pod"
            case $EXIT in
                0) log "$pod decommissioning: it streams its records out, then leaves ($BODY)"; break ;;
                2) [[ $BODY != *"403 Forbidden"* ]] || die "403 from $pod: its DHT_CLUSTER_SECRET is not the nodes' cluster secret ($BODY)"
                   log "refused: $BODY" ;;
                *) log "unexpected answer from $pod (exit $EXIT): $BODY" ;;
            esac
            (( SECONDS < deadline )) || die "$pod did not start its decommission within ${REFUSED_TIMEOUT}s (last: exit $EXIT $BODY).
    Nothing was changed for it; fix the cause (every member up, no cleanup pending, no other change) and rerun."
            sleep 5
        done
    fi

    # The leaver is gone from the view once the change finished: dht-0 never leaves (TARGET >= 1).
    deadline=$(( SECONDS + LEAVE_TIMEOUT ))
    while :; do
        if view=$(cluster_view "$STS-0"); then
            if ! names "$url" <<<"$view"; then
                log "$pod has left the cluster: $view"
                break
            fi
            phase=$(sed -n 's/.*"phase"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' <<<"$view")
            streamed=$(sed -n 's/.*"streamed"[[:space:]]*:[[:space:]]*\({[^}]*}\).*/\1/p' <<<"$view")
            log "waiting for $pod to leave: phase ${phase:-?}, streamed on $STS-0 ${streamed:-?}"
        else
            log "cannot read the view on $STS-0 now; retrying"
        fi
        (( SECONDS < deadline )) || die "$pod still in the cluster view after ${LEAVE_TIMEOUT}s. The decommission goes on
    by itself (watch kubectl exec $STS-0 -- dht status; kubectl exec $STS-0 -- dht abort undoes it before the read switch).
    Rerun this script to continue; the StatefulSet was not scaled for $pod."
        sleep 5
    done

    log "scaling $STS to $ordinal replicas"
    k scale statefulset "$STS" --replicas="$ordinal"
    [[ -z $(k get pod "$pod" --ignore-not-found -o name) ]] || k wait --for=delete "pod/$pod" --timeout="${POD_TIMEOUT}s" \
        || die "$pod did not go within ${POD_TIMEOUT}s; its claim ${CLAIM_TEMPLATE}-$pod is kept. Rerun when it is gone."
    log "deleting its claim ${CLAIM_TEMPLATE}-$pod (the data it held now lives on the other nodes)"
    k delete pvc "${CLAIM_TEMPLATE}-$pod" --ignore-not-found --timeout="${POD_TIMEOUT}s"
done

log "done: $STS has $TARGET replicas; each node drops the records it no longer replicates in the background"
log "(cleanupPending in kubectl exec POD -- dht status --output json; a next change waits for it)"
