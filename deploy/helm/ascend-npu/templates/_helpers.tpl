{{/* Labels every object of the chart carries. */}}
{{- define "ascend-npu.labels" -}}
app.kubernetes.io/part-of: ascend-rs
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{/* A daemon's labels: the chart's, its name and component, and the pool's. Argument: (list $ name component). */}}
{{- define "ascend-npu.daemonLabels" -}}
{{- $root := index . 0 -}}
app.kubernetes.io/name: {{ index . 1 }}
app.kubernetes.io/component: {{ index . 2 }}
{{- with $root.Values.pool.name }}
ascend.huawei.com/pool: {{ . }}
{{- end }}
{{- end }}

{{/* An image of deploy/docker by name. */}}
{{- define "ascend-npu.image" -}}
{{- $root := index . 0 -}}
{{ printf "%s/%s:%s" $root.Values.image.registry (index . 1) ($root.Values.image.tag | default $root.Chart.AppVersion) }}
{{- end }}

{{/* A cluster-wide object's name: the base name and the release's namespace, so that two pools' releases never
     claim the same object. */}}
{{- define "ascend-npu.clusterName" -}}
{{- printf "%s-%s" (index . 1) (index . 0).Release.Namespace -}}
{{- end }}

{{/* Where the daemons run: Linux nodes an operator labelled as NPU nodes (deploy/README.md, step 3), of this pool's
     chip when pool.chipType is set; tolerating the pool's taints. */}}
{{- define "ascend-npu.placement" -}}
nodeSelector:
  kubernetes.io/os: linux
  {{- with .Values.pool.chipType }}
  ascend.huawei.com/chip-type: {{ . | quote }}
  {{- end }}
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
        - matchExpressions:
            - key: ascend.huawei.com/chip-type
              operator: Exists
tolerations:
  - key: ascend.huawei.com/chip-type
    {{- if .Values.pool.chipType }}
    operator: Equal
    value: {{ .Values.pool.chipType | quote }}
    {{- else }}
    operator: Exists
    {{- end }}
    effect: NoSchedule
  {{- range .Values.pool.extraTolerationKeys }}
  - key: {{ . }}
    operator: Exists
    effect: NoSchedule
  {{- end }}
{{- end }}

{{/* libdcmi.so is found in the standard driver directories; its own dependencies are resolved here. */}}
{{- define "ascend-npu.driverEnv" -}}
- name: NODE_NAME
  valueFrom:
    fieldRef:
      fieldPath: spec.nodeName
- name: LD_LIBRARY_PATH
  value: /usr/local/Ascend/driver/lib64:/usr/local/Ascend/driver/lib64/driver:/usr/local/Ascend/driver/lib64/common:/usr/local/dcmi
{{- end }}

{{/* The host's device nodes and driver, which every daemon reads through libdcmi. */}}
{{- define "ascend-npu.driverMounts" -}}
- name: dev
  mountPath: /dev
- name: driver
  mountPath: /usr/local/Ascend/driver
  readOnly: true
- name: dcmi
  mountPath: /usr/local/dcmi
  readOnly: true
{{- end }}

{{- define "ascend-npu.driverVolumes" -}}
# Chips that appear after the pod started (driver reload, chip reset) are only visible through the host's /dev.
- name: dev
  hostPath:
    path: /dev
    type: Directory
# The driver must be installed: a missing directory keeps the pod in ContainerCreating with a hostPath type error,
# which points at the first link of the troubleshooting chain.
- name: driver
  hostPath:
    path: /usr/local/Ascend/driver
    type: Directory
# Where some driver packages put libdcmi.so; absent on others, hence created empty if missing.
- name: dcmi
  hostPath:
    path: /usr/local/dcmi
    type: DirectoryOrCreate
{{- end }}

{{/* The API token of the one container that calls the API server: a short-lived projected token the kubelet rotates,
     the cluster CA and the pod's namespace, the three files of an automounted token (kube-rs's in-cluster
     configuration reads all three). The pods do not automount one, so no other container has a token. */}}
{{- define "ascend-npu.apiTokenVolume" -}}
- name: api-token
  projected:
    sources:
      - serviceAccountToken:
          path: token
          expirationSeconds: 3600
      - configMap:
          name: kube-root-ca.crt
          items:
            - key: ca.crt
              path: ca.crt
      - downwardAPI:
          items:
            - path: namespace
              fieldRef:
                fieldPath: metadata.namespace
{{- end }}

{{- define "ascend-npu.apiTokenMount" -}}
- name: api-token
  mountPath: /var/run/secrets/kubernetes.io/serviceaccount
  readOnly: true
{{- end }}

{{/* Whether to create a Prometheus operator object: "auto" when the cluster serves its kind. (list $ setting kind) */}}
{{- define "ascend-npu.wantMonitoring" -}}
{{- $root := index . 0 -}}{{- $setting := toString (index . 1) -}}
{{- if or (eq $setting "true") (and (eq $setting "auto") ($root.Capabilities.APIVersions.Has (printf "monitoring.coreos.com/v1/%s" (index . 2)))) -}}
yes
{{- end -}}
{{- end }}

{{/* The node setup init step (ascend-ctk node-setup, values nodeSetup) of a node daemon's pod, from that daemon's
     image: (list . "<image>"). It enters the host's root filesystem, mounted by "ascend-npu.nodeSetupVolume". */}}
{{- define "ascend-npu.nodeSetupInit" -}}
{{- $root := index . 0 }}
{{- $setup := $root.Values.nodeSetup -}}
- name: node-setup
  image: {{ include "ascend-npu.image" (list $root (index . 1)) }}
  imagePullPolicy: {{ $root.Values.image.pullPolicy }}
  command: ["/usr/local/bin/ascend-ctk"]
  args:
    - node-setup
    - --host-root=/host
    - --install-dir={{ $setup.installDir }}
    {{- if $setup.runtime }}
    - --runtime={{ $setup.runtime }}
    - --runtime-name={{ $root.Values.runtimeClass.handler }}
    {{- if $setup.runtimeConfig }}
    - --config={{ $setup.runtimeConfig }}
    {{- end }}
    {{- if not $setup.enableCdi }}
    - --no-cdi
    {{- end }}
    {{- end }}
  resources:
    {{- toYaml $setup.resources | nindent 4 }}
  securityContext:
    # Privileged and root: it changes root into the host's filesystem and writes the toolkit, the CDI spec and the
    # engine's configuration there.
    privileged: true
    runAsUser: 0
    readOnlyRootFilesystem: true
  volumeMounts:
    - name: host-root
      mountPath: /host
{{- end }}

{{- define "ascend-npu.nodeSetupVolume" -}}
# The host's root filesystem, for the node setup init step only.
- name: host-root
  hostPath:
    path: /
    type: Directory
{{- end }}
