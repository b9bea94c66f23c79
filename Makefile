# agent-session-operator
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

K8S_VERSION ?= 1.37.0
IMG ?= agent-session-operator:dev
GO ?= go
CONTROLLER_GEN ?= $(GO) tool controller-gen
# helm-docs has a module of its own (hack/tools): it is built against Helm 3.15 and its
# Kubernetes 0.30 modules, which must not mix with the operator's in go.mod.
HELM_DOCS ?= $(GO) tool -modfile=hack/tools/go.mod helm-docs
# kube-api-linter is a golangci-lint of its own build (its cmd/golangci-lint-kube-api-linter,
# with the golangci-lint its module pins): a module of its own, built from the module proxy
# on first use and kept in Go's build cache like every `go tool`.
KUBE_API_LINTER ?= $(GO) tool -modfile=hack/tools/kal/go.mod golangci-lint-kube-api-linter
# The envtest binaries (kube-apiserver, etcd, kubectl) are built once per machine into a
# cache outside the repo; the script prints their directory as its last line.
ENVTEST_ASSETS = $(shell K8S_VERSION=$(K8S_VERSION) hack/envtest-binaries.sh | tail -n 1)
# agent-sandbox's controller and sandboxd, built from the module go.mod requires.
SANDBOX_ASSETS = $(shell hack/agent-sandbox.sh bin | tail -n 1)
TEST_TIMEOUT ?= 25m
BENCH_FLAGS ?=

.PHONY: all
all: build

##@ General
.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  %-16s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development
.PHONY: manifests
manifests: ## Generate CRDs, RBAC and webhook configuration.
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd:generateEmbeddedObjectMeta=false,allowDangerousTypes=true webhook paths="./..." output:crd:artifacts:config=config/crd/bases
	hack/agent-sandbox.sh crds config/agent-sandbox/crds
	hack/agent-sandbox.sh controller config/agent-sandbox/controller

.PHONY: generate
generate: ## Generate deepcopy code.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: docs
docs: ## Generate the API reference (docs/reference/api.md) from the types with crd-ref-docs.
	$(GO) tool crd-ref-docs --source-path=./api/v1alpha1 --config=hack/crd-ref-docs.yaml \
		--renderer=markdown --output-path=docs/reference/api.md

.PHONY: fmt
fmt: ## go fmt.
	$(GO) fmt ./...

.PHONY: vet
vet: ## go vet.
	$(GO) vet ./...

.PHONY: lint
lint: ## golangci-lint with .golangci.yml, then kube-api-linter on api/ with .golangci-kal.yml.
	$(GO) tool golangci-lint run ./...
	$(KUBE_API_LINTER) run --config .golangci-kal.yml ./api/...

.PHONY: verify
verify: manifests generate docs helm-docs ## Regenerate and fail if anything generated is stale; helm lint --strict.
	@if [ -n "$$(git status --porcelain -- api config docs dist/chart/README.md)" ]; then \
		echo "generated files are stale; run 'make manifests generate docs helm-docs' and commit:"; \
		git status --porcelain -- api config docs dist/chart/README.md; git diff --stat -- api config docs dist/chart/README.md; exit 1; fi
	@diff -r config/crd/bases dist/chart/crds >/dev/null && diff -q config/rbac/role.yaml dist/chart/files/manager-role.yaml >/dev/null \
		&& diff -q config/webhook/manifests.yaml dist/chart/files/webhook-manifests.yaml >/dev/null \
		&& diff -q config/prometheus/rules.yaml dist/chart/files/rules.yaml >/dev/null \
		&& diff -q config/prometheus/dashboard.json dist/chart/files/dashboard.json >/dev/null \
		&& ( for f in config/agent-sandbox/crds/*.yaml; do diff -q $$f dist/chart/files/agent-sandbox/ >/dev/null || exit 1; done ) \
		&& diff -q config/agent-sandbox/controller/rbac.generated.yaml dist/chart/files/agent-sandbox/controller-role.yaml >/dev/null \
		&& diff -q config/agent-sandbox/controller/extensions-rbac.generated.yaml dist/chart/files/agent-sandbox/extensions-role.yaml >/dev/null \
		|| { echo "dist/chart is stale; run 'make helm-chart-sync' and commit"; exit 1; }
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "not gofmt-formatted:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	@hack/check-rules.sh config/prometheus/rules.yaml
	@hack/test-rules.sh config/prometheus/rules.yaml
	@$(MAKE) --no-print-directory helm-lint
	@hack/check-license.sh

.PHONY: envtest
envtest: ## Build kube-apiserver, etcd and kubectl (once per machine); prints their directory last.
	@K8S_VERSION=$(K8S_VERSION) hack/envtest-binaries.sh

.PHONY: agent-sandbox
agent-sandbox: ## Build agent-sandbox's controller and sandboxd from the Go module proxy (once per machine); prints their directory last.
	@hack/agent-sandbox.sh bin

##@ Test
.PHONY: mcp-npm
mcp-npm: ## Install Node 22, the MCP conformance suites (0.1.16, 0.2.0-alpha.12), the everything server and the TS and A2A SDKs (once per machine).
	@hack/mcp-npm.sh >/dev/null

.PHONY: test
test: vet mcp-npm ## Unit tables, envtest suites, e2e and chaos (what CI runs).
	# -count=1: e2e and chaos build the binaries themselves, which the test cache cannot see.
	KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" AGENT_SANDBOX_ASSETS="$(SANDBOX_ASSETS)" $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

.PHONY: test-chaos
test-chaos: ## Only the chaos suite (part of make test): process kills, API server restart, provider faults.
	KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" $(GO) test -timeout $(TEST_TIMEOUT) -count=1 -v ./test/chaos/

# Each fuzz target runs FUZZTIME from its committed corpus (testdata/fuzz); the seeds alone
# already run in make test. FUZZTIME is a count of executions, not a duration: Go 1.26's
# fuzz coordinator can report a spurious "context deadline exceeded" when a duration ends
# while a worker is mid-call (golang/go#75804, fixed in Go 1.27), which a loaded CI machine
# hits; a count has no deadline to race. 200000x is a few seconds per target here.
FUZZTIME ?= 200000x
# Minimizing a new interesting input (making the cached copy smaller) finds nothing; by
# default it may take 60s per input, which made FuzzQuery alone take 13 minutes on a loaded
# machine. A count bounds it, and has no deadline to race either.
FUZZMINIMIZE ?= 2000x
# A target may name its own count (pkg:Fuzz:COUNT). internal/delivery:FuzzRender renders
# each input for five formats, about 1.5 ms an execution with coverage on: 200000x took
# 7m42s, so it runs 20000x.
FUZZ_TARGETS = internal/sessionkey:FuzzParse internal/sessionkey:FuzzObjectName \
	internal/sessionkey:FuzzChatTypeOfTo internal/events:FuzzParseFilter \
	internal/transcript:FuzzDecodeRecord internal/transcript:FuzzParseHistoryQuery \
	internal/sse:FuzzReader internal/provider:FuzzStreamDecoders internal/textutil:FuzzTruncate \
	internal/transcript/search:FuzzQuery internal/hookauth:FuzzVerify internal/delivery:FuzzRender:20000x \
	internal/policy:FuzzParseCarried

.PHONY: test-fuzz
test-fuzz: ## Run every fuzz target for FUZZTIME executions (default 200000x; a target may name its own).
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; fn=$${rest%%:*}; n=$${rest#"$$fn"}; n=$${n#:}; n=$${n:-$(FUZZTIME)}; \
		echo "fuzz $$pkg $$fn ($$n)"; \
		$(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $$n -fuzzminimizetime $(FUZZMINIMIZE) ./$$pkg/ || exit 1; \
	done

.PHONY: test-unit
test-unit: ## Unit tables only: -short skips every suite that starts a control plane.
	$(GO) test -short ./...

# The cluster test: root, Linux; apt-installs containerd, runc and the CNI plugins when missing
# and builds kubelet, kube-scheduler, kube-controller-manager, kube-proxy and helm once per
# machine (hack/cluster-binaries.sh) next to the envtest binaries.
CLUSTER_TIMEOUT ?= 60m

.PHONY: cluster-binaries
cluster-binaries: ## Build kubelet, kube-scheduler, kube-controller-manager, kube-proxy and helm (once per machine).
	@K8S_VERSION=$(K8S_VERSION) hack/cluster-binaries.sh

.PHONY: test-cluster
test-cluster: ## The operator as real Pods under a real kubelet in a network namespace: sandboxes (agent-sandbox, gVisor), install, webhook, sends, restart, upgrade, Helm, two shards.
	hack/cluster-packages.sh
	@K8S_VERSION=$(K8S_VERSION) hack/envtest-binaries.sh >/dev/null
	@K8S_VERSION=$(K8S_VERSION) hack/cluster-binaries.sh >/dev/null
	$(GO) test -tags cluster -count=1 -v -timeout $(CLUSTER_TIMEOUT) ./test/chart/ ./test/cluster/

.PHONY: test-cluster-sandbox
test-cluster-sandbox: ## Only the cluster test's sandbox story (root): a sandboxed Agent's exec in its sandbox Pod (gVisor when runsc is there), suspend, resume, refusals.
	hack/cluster-packages.sh
	@K8S_VERSION=$(K8S_VERSION) hack/envtest-binaries.sh >/dev/null
	@K8S_VERSION=$(K8S_VERSION) hack/cluster-binaries.sh >/dev/null
	$(GO) test -tags cluster -count=1 -v -timeout $(CLUSTER_TIMEOUT) -run '^TestSandboxInCluster$$' ./test/cluster/

.PHONY: bench
bench: ## Benchmarks: one JSON line per figure, then a summary table. The sandbox-pods suite (real Pods under a kubelet) needs root; skipped otherwise.
	KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" AGENT_SANDBOX_ASSETS="$(SANDBOX_ASSETS)" $(GO) run ./test/bench $(BENCH_FLAGS)

# bench-check holds the hot paths to their targets between features: the suites that finish
# in a few minutes, each figure against the bound its target prints (a ratio to the null
# controller measured in the same run where the figure has one). Not part of CI.
BENCH_CHECK_SUITES ?= ^(turn|webhook|send-c1|send|transcript)$$

.PHONY: bench-check
bench-check: ## The hot-path suites (turn, webhook, send-c1, send, transcript); fails when a figure misses the target printed beside it.
	KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" $(GO) run ./test/bench -check -run '$(BENCH_CHECK_SUITES)' $(BENCH_FLAGS)

# bench-peer is not part of make test: it installs OpenClaw (about 840 MB, cached outside the
# repo by hack/openclaw-npm.sh) and runs both systems side by side. Everything a first run on
# a fresh machine installs or builds (the envtest binaries, OpenClaw, the manager and the
# transcript-store the bench starts) happens before BENCH_PEER_TIMEOUT's clock starts; the
# clock bounds the measuring alone (the bench builds the two binaries again into a temp
# directory: from the build cache, in seconds). Stopped by it, the bench still prints the
# table of what it measured.
BENCH_PEER_TIMEOUT ?= 30m

.PHONY: bench-peer
bench-peer: ## Side by side with OpenClaw's gateway: one JSON line per figure, baseline = OpenClaw.
	@K8S_VERSION=$(K8S_VERSION) hack/envtest-binaries.sh >/dev/null
	hack/openclaw-npm.sh >/dev/null
	$(GO) build -o bin/benchpeer ./test/benchpeer
	$(GO) build -o /dev/null ./cmd/manager
	$(GO) build -o /dev/null ./cmd/transcript-store
	KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" timeout --kill-after=60s $(BENCH_PEER_TIMEOUT) bin/benchpeer $(BENCH_PEER_FLAGS)

##@ Build
.PHONY: build
build: ## Build the binaries into bin/.
	$(GO) build -o bin/ ./cmd/...

# run-local builds what it needs in parallel (the envtest binaries, the project, the npm
# packages), a line per stage with the time since the start, then runs bin/devcluster.
.PHONY: run-local
run-local: ## Local control plane + CRDs + webhook + manager + transcript-store + samples + the everything MCP server.
	@K8S_VERSION=$(K8S_VERSION) RUN_LOCAL_STARTED=$$(date +%s) hack/run-local.sh

# The kubectl plugin's release: VERSION is the chart's appVersion.
VERSION ?= v$(shell sed -n 's/^appVersion: "\(.*\)"$$/\1/p' dist/chart/Chart.yaml)
RELEASE_DIR ?= dist/release

.PHONY: release-archives
release-archives: ## kubectl-sessions_VERSION_OS_ARCH.tar.gz (binary + LICENSE) for linux/darwin amd64/arm64 and sha256sums.txt into RELEASE_DIR.
	hack/release-archives.sh $(RELEASE_DIR) $(VERSION)

.PHONY: krew-manifest
krew-manifest: release-archives ## plugins/sessions.yaml (krew-index layout) from the release archives' sums.
	mkdir -p plugins
	hack/krew-manifest.sh $(RELEASE_DIR) $(VERSION) > plugins/sessions.yaml

.PHONY: docker-build
docker-build: ## Build the container image (needs a Docker engine).
	docker build -t $(IMG) .

SANDBOX_IMG ?= agent-session-operator-sandbox:dev

.PHONY: docker-build-sandbox
docker-build-sandbox: ## Build the default sandbox image (sandboxd, busybox; the manager's --sandbox-image) from Dockerfile.sandbox.
	docker build -f Dockerfile.sandbox -t $(SANDBOX_IMG) .

##@ Deploy
KUBECTL ?= $(ENVTEST_ASSETS)/kubectl
HELM ?= $(shell hack/cluster-binaries.sh helm | tail -n 1)/helm
NAMESPACE ?= agent-session-operator-system
# The install manifest: config/default (or INSTALL_DIR) with only the image set to IMG.
INSTALL_DIR ?= config/default
INSTALL_YAML = KUBECTL=$(KUBECTL) hack/install-yaml.sh $(IMG) $(INSTALL_DIR)

.PHONY: build-installer
build-installer: manifests helm-chart-sync ## Write dist/install.yaml: everything config/default installs, image IMG.
	mkdir -p dist
	$(INSTALL_YAML) > dist/install.yaml

.PHONY: deploy
deploy: manifests ## Install into the current cluster with image IMG (INSTALL_DIR=config/overlays/cert-manager for cert-manager).
	$(INSTALL_YAML) | $(KUBECTL) apply --server-side -f -

.PHONY: undeploy
undeploy: ## Remove what deploy created (CRDs, and with them every session).
	$(INSTALL_YAML) | $(KUBECTL) delete --ignore-not-found -f -

.PHONY: helm-chart-sync
helm-chart-sync: manifests ## Copy the generated CRDs, manager role and webhooks into dist/chart.
	cp config/crd/bases/*.yaml dist/chart/crds/
	cp config/rbac/role.yaml dist/chart/files/manager-role.yaml
	cp config/webhook/manifests.yaml dist/chart/files/webhook-manifests.yaml
	cp config/prometheus/rules.yaml config/prometheus/dashboard.json dist/chart/files/
	cp config/agent-sandbox/crds/*.yaml dist/chart/files/agent-sandbox/
	cp config/agent-sandbox/controller/rbac.generated.yaml dist/chart/files/agent-sandbox/controller-role.yaml
	cp config/agent-sandbox/controller/extensions-rbac.generated.yaml dist/chart/files/agent-sandbox/extensions-role.yaml

.PHONY: helm-lint
helm-lint: ## Lint the Helm chart; a warning fails (--strict).
	$(HELM) lint --strict dist/chart

.PHONY: helm-docs
helm-docs: ## Generate dist/chart/README.md from the "# --" comments of values.yaml (helm-docs).
	$(HELM_DOCS) --chart-search-root=dist/chart --skip-version-footer --log-level=warning

.PHONY: helm-install
helm-install: ## helm upgrade --install the chart into NAMESPACE with image IMG.
	$(HELM) upgrade --install agent-session-operator dist/chart --namespace $(NAMESPACE) --create-namespace \
		--set image.repository=$(firstword $(subst :, ,$(IMG))) --set image.tag=$(or $(word 2,$(subst :, ,$(IMG))),latest) --wait

.PHONY: helm-uninstall
helm-uninstall: ## helm uninstall the chart (its CRDs stay, as Helm keeps them).
	$(HELM) uninstall agent-session-operator --namespace $(NAMESPACE)
