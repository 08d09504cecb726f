#!/usr/bin/env bash
# Shrinks the StatefulSet dht to TARGET_REPLICAS nodes without losing data: for each ordinal from the highest
# down to TARGET_REPLICAS, the node decommissions itself (streams its records to the nodes that gain them and
# leaves the cluster view), then the StatefulSet is scaled down by one and the pod's claim is deleted.
#
#   k8s/scale-down.sh [-n NAMESPACE] TARGET_REPLICAS
#
# Needs kubectl (with access to the namespace) and curl on this machine: the image need not have curl, the
# actuator is reached through `kubectl port-forward` to each pod's management port 8081. The cluster secret
# is read from the Secret dht-cluster-secret (key `secret`) and sent to curl on stdin, never as an argument.
# Resumable: run it again after an interruption; a pod already leaving or gone is not asked again.
#
# Environment: LEAVE_TIMEOUT (s, default 3600) how long one node may take to stream out and leave;
# REFUSED_TIMEOUT (s, default 600) how long to retry a decommission the cluster refuses (409: cleanup pending,
# a member down, another change); POD_TIMEOUT (s, default 180) for a pod to go and its claim to be deleted.
set -euo pipefail

readonly STS=dht                       # statefulset.yaml
readonly CLAIM_TEMPLATE=data           # its volumeClaimTemplate: the claim of pod dht-N is data-dht-N
readonly SECRET_NAME=dht-cluster-secret
readonly SECRET_KEY=secret
readonly API_PORT=8080                 # DHT_SELF = http://$(POD_NAME).<serviceName>:8080
readonly MANAGEMENT_PORT=8081          # the actuator
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
command -v curl >/dev/null || die "curl is not on the PATH (the image has none either: it is run here, through port-forward)"

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

SECRET=$(k get secret "$SECRET_NAME" -o jsonpath="{.data.$SECRET_KEY}" | base64 -d) \
    || die "cannot read the cluster secret from Secret $SECRET_NAME (key $SECRET_KEY)"
[[ -n $SECRET ]] || die "Secret $SECRET_NAME holds an empty $SECRET_KEY"

node_url() { echo "http://$STS-$1.$SERVICE:$API_PORT"; }

# --- port-forward ------------------------------------------------------------------------------------------
FORWARD_PID=
FORWARD_LOG=$(mktemp)
cleanup() {
    stop_forward
    rm -f "$FORWARD_LOG"
}
stop_forward() {
    if [[ -n $FORWARD_PID ]]; then
        kill "$FORWARD_PID" 2>/dev/null || true
        wait "$FORWARD_PID" 2>/dev/null || true
        FORWARD_PID=
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Sets PORT to a local port forwarded to POD's management port (one forward at a time).
forward() {
    local pod=$1 i
    stop_forward
    : >"$FORWARD_LOG"
    "${KUBECTL[@]}" port-forward "pod/$pod" ":$MANAGEMENT_PORT" >"$FORWARD_LOG" 2>&1 &
    FORWARD_PID=$!
    for (( i = 0; i < 100; i++ )); do
        PORT=$(sed -n 's/^Forwarding from 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$FORWARD_LOG" | head -n 1)
        [[ -n $PORT ]] && return 0
        kill -0 "$FORWARD_PID" 2>/dev/null || break
        sleep 0.1
    done
    log "port-forward to $pod failed: $(cat "$FORWARD_LOG")"
    stop_forward
    return 1
}

# GET /actuator/cluster of POD on stdout.
cluster_view() {
    forward "$1" || return 1
    curl -sS --fail --max-time 10 "http://127.0.0.1:$PORT/actuator/cluster"
}

# POST /actuator/cluster/decommission to POD; sets STATUS and BODY.
post_decommission() {
    local out
    forward "$1" || { STATUS=000; BODY="no port-forward"; return 0; }
    out=$(mktemp)
    STATUS=$(printf 'X-Dht-Cluster-Secret: %s\n' "$SECRET" \
        | curl -sS --max-time 60 -o "$out" -w '%{http_code}' -X POST -H @- \
            "http://127.0.0.1:$PORT/actuator/cluster/decommission") || STATUS=000
    BODY=$(cat "$out")
    rm -f "$out"
}

# True if the view JSON on stdin names URL (as a member, or as the node of the change in progress).
names() { grep -Eq "\"node\"[[:space:]]*:[[:space:]]*\"${1//./\\.}\""; }

# --- one node at a time ------------------------------------------------------------------------------------
for (( ordinal = CURRENT - 1; ordinal >= TARGET; ordinal-- )); do
    pod=$STS-$ordinal
    url=$(node_url "$ordinal")
    log "== $pod ($url): decommission, then scale $STS to $ordinal"

    view=$(cluster_view "$STS-0") || die "cannot read GET /actuator/cluster on $STS-0"
    if ! names "$url" <<<"$view"; then
        log "$pod is no member of the cluster view on $STS-0 (it left before): skipping to the scale-down"
    elif grep -Eq "\"change\"[[:space:]]*:[[:space:]]*\\{[[:space:]]*\"kind\"[[:space:]]*:[[:space:]]*\"decommission\"[^}]*\"node\"[[:space:]]*:[[:space:]]*\"${url//./\\.}\"" <<<"$view"; then
        log "$pod is already decommissioning: waiting for it"
    else
        deadline=$(( SECONDS + REFUSED_TIMEOUT ))
        while :; do
            post_decommission "$pod"
            case $STATUS in
                202) log "$pod decommissioning (202): it streams its records out, then leaves"; break ;;
                409) log "refused (409): $BODY" ;;
                403) die "403 from $pod: the Secret $SECRET_NAME does not hold the nodes' cluster secret" ;;
                *)   log "unexpected answer $STATUS from $pod: $BODY" ;;
            esac
            (( SECONDS < deadline )) || die "$pod did not start its decommission within ${REFUSED_TIMEOUT}s (last: $STATUS $BODY).
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
    by itself (watch GET /actuator/cluster on $STS-0; POST /actuator/cluster/abort undoes it before the read switch).
    Rerun this script to continue; the StatefulSet was not scaled for $pod."
        sleep 5
    done
    stop_forward

    log "scaling $STS to $ordinal replicas"
    k scale statefulset "$STS" --replicas="$ordinal"
    [[ -z $(k get pod "$pod" --ignore-not-found -o name) ]] || k wait --for=delete "pod/$pod" --timeout="${POD_TIMEOUT}s" \
        || die "$pod did not go within ${POD_TIMEOUT}s; its claim ${CLAIM_TEMPLATE}-$pod is kept. Rerun when it is gone."
    log "deleting its claim ${CLAIM_TEMPLATE}-$pod (the data it held now lives on the other nodes)"
    k delete pvc "${CLAIM_TEMPLATE}-$pod" --ignore-not-found --timeout="${POD_TIMEOUT}s"
done

log "done: $STS has $TARGET replicas; each node drops the records it no longer replicates in the background"
log "(cleanupPending in GET /actuator/cluster of each pod; a next change waits for it)"
