#!/usr/bin/env bash
# The test cluster's credentials: one CA, the API server's serving certificate (IP SAN 127.0.0.1), its client
# certificate for the kubelet, the service-account key pair, a static token per client and a kubeconfig each.
# Usage: scripts/cluster/pki.sh   (writes $CLUSTER_STATE/pki and the kubeconfigs; overwrites what is there)
# After hack/local-up-cluster.sh's generate_certs, with one CA and static tokens instead of client certificates.
set -euo pipefail
# shellcheck source=scripts/cluster/lib.sh
source "$(dirname "$0")/lib.sh"

mkdir -p "$CLUSTER_PKI"
cd "$CLUSTER_PKI"
openssl_quiet() { openssl "$@" 2>/dev/null; }
openssl_quiet req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 -subj "/CN=ascend-test-ca" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
# leaf NAME CN EXTENSION...: a key and a certificate signed by the CA.
leaf() {
    local name=$1 common_name=$2
    shift 2
    openssl_quiet req -newkey rsa:2048 -nodes -keyout "$name.key" -out "$name.csr" -subj "/CN=$common_name"
    printf '%s\n' "basicConstraints=CA:FALSE" "keyUsage=critical,digitalSignature,keyEncipherment" "$@" >"$name.ext"
    openssl_quiet x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$name.crt" -days 3650 \
        -extfile "$name.ext"
    rm -f "$name.csr" "$name.ext"
}
leaf apiserver kube-apiserver "extendedKeyUsage=serverAuth" \
    "subjectAltName=DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:127.0.0.1,IP:10.0.0.1"
leaf apiserver-kubelet-client kube-apiserver "extendedKeyUsage=clientAuth"
# The kubelet's serving certificate, so the API server verifies it when it calls the kubelet (logs, exec).
leaf kubelet "$NODE_NAME" "extendedKeyUsage=serverAuth" "subjectAltName=IP:127.0.0.1,DNS:localhost"
openssl_quiet genrsa -out sa.key 2048
openssl_quiet rsa -in sa.key -pubout -out sa.pub

token() { head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
admin=$(token) node=$(token) scheduler=$(token) controller_manager=$(token)
cat >tokens.csv <<CSV
$admin,admin,admin,"system:masters"
$node,system:node:$NODE_NAME,node-$NODE_NAME,"system:nodes"
$scheduler,system:kube-scheduler,kube-scheduler
$controller_manager,system:kube-controller-manager,kube-controller-manager
CSV
chmod 600 tokens.csv ./*.key

kubeconfig() {
    cat >"$CLUSTER_STATE/$1.kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters: [{name: ascend-test, cluster: {server: "https://127.0.0.1:6443", certificate-authority: $CLUSTER_PKI/ca.crt}}]
users: [{name: $1, user: {token: "$2"}}]
contexts: [{name: ascend-test, context: {cluster: ascend-test, user: $1}}]
current-context: ascend-test
YAML
    chmod 600 "$CLUSTER_STATE/$1.kubeconfig"
}
kubeconfig admin "$admin"
kubeconfig kubelet "$node"
kubeconfig scheduler "$scheduler"
kubeconfig controller-manager "$controller_manager"
