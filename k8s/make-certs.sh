#!/usr/bin/env bash
# Makes a CA and one certificate per pod of the dht StatefulSet with openssl, and the Secret dht-tls that
# k8s-tls/ mounts (k8s/README.md, "TLS"). Each pod certificate is for the pod's stable names and the client Service:
#   dht-N.dht, dht-N.dht.NS.svc, dht-N.dht.NS.svc.cluster.local, dht-client, dht-client.NS.svc(.cluster.local)
# and good for server and client authentication (the peers' mutual TLS). Keys are EC P-256.
#
# Usage: k8s/make-certs.sh [-n NAMESPACE] [-r REPLICAS] [-d DIR] [--apply]
#   DIR (default ./dht-tls) keeps ca.key: run again with the same DIR to issue new pod certificates from the same
#   CA (rotation: the pods reload them without a restart). Without --apply, prints the Secret's YAML instead of
#   creating it. Never commit DIR.
set -euo pipefail

namespace=default
replicas=3
dir=./dht-tls
apply=false
days=365
while [ $# -gt 0 ]; do
  case "$1" in
    -n) namespace=$2; shift 2 ;;
    -r) replicas=$2; shift 2 ;;
    -d) dir=$2; shift 2 ;;
    --apply) apply=true; shift ;;
    *) echo "usage: $0 [-n NAMESPACE] [-r REPLICAS] [-d DIR] [--apply]" >&2; exit 2 ;;
  esac
done
mkdir -p "$dir"
umask 077

if [ ! -f "$dir/ca.key" ]; then
  openssl ecparam -name prime256v1 -genkey -noout -out "$dir/ca.key"
  openssl req -x509 -new -key "$dir/ca.key" -sha256 -days 3650 -subj "/CN=dht cluster CA ($namespace)" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" -out "$dir/ca.crt"
fi

files=(--from-file=ca.crt="$dir/ca.crt")
for ((i = 0; i < replicas; i++)); do
  pod=dht-$i
  names="DNS:$pod.dht,DNS:$pod.dht.$namespace.svc,DNS:$pod.dht.$namespace.svc.cluster.local"
  names="$names,DNS:dht-client,DNS:dht-client.$namespace.svc,DNS:dht-client.$namespace.svc.cluster.local"
  openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out "$dir/$pod.key"
  openssl req -new -key "$dir/$pod.key" -subj "/CN=$pod.dht" -out "$dir/$pod.csr"
  printf '%s\n' "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature" \
    "extendedKeyUsage=serverAuth,clientAuth" "subjectAltName=$names" > "$dir/$pod.ext"
  openssl x509 -req -in "$dir/$pod.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial -sha256 \
    -days "$days" -extfile "$dir/$pod.ext" -out "$dir/$pod.crt" 2>/dev/null
  rm -f "$dir/$pod.csr" "$dir/$pod.ext"
  openssl verify -CAfile "$dir/ca.crt" "$dir/$pod.crt" >/dev/null
  files+=(--from-file="$pod.crt=$dir/$pod.crt" --from-file="$pod.key=$dir/$pod.key")
done

if $apply; then
  kubectl -n "$namespace" create secret generic dht-tls "${files[@]}" --dry-run=client -o yaml | kubectl -n "$namespace" apply -f -
else
  kubectl -n "$namespace" create secret generic dht-tls "${files[@]}" --dry-run=client -o yaml
fi
