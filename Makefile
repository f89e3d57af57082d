# SAND: the one entry point. CI calls the same targets a person does (see .ci/run).
SHELL := /bin/bash
export SAND_HOME ?= $(CURDIR)/.sand
VENV := $(CURDIR)/.venv
PY := $(VENV)/bin/python
MVN := mvn -q -B -Dstyle.color=never

.PHONY: help install up down status test test-unit test-e2e test-cluster lint format demo bench knix-suite clean distclean cluster \
	cluster-status cluster-kill cluster-start cluster-down cluster-backup cluster-restore cluster-upgrade \
	cluster-rotate-admin-key
HOSTS ?= 3

help:
	@echo "make up        install what is missing, start Kafka, Cassandra, Docker, nginx and SAND; print addresses"
	@echo "make demo      make up, then deploy examples/hello and invoke it"
	@echo "make test      make up, then lint, Java tests (unit + integration) and pytest (unit + e2e)"
	@echo "make status    one line per component"
	@echo "make lint      ruff check, ruff format --check, mypy, shellcheck, mvn spotless:check (javac warns: -Xlint)"
	@echo "make format    rewrite what the formatters of make lint would change (ruff format, mvn spotless:apply)"
	@echo "make down      stop what make up started"
	@echo "make bench     run the benchmarks in benchmarks/ (results in benchmarks/results/; BENCH=--quick or --full)"
	@echo "make knix-suite  KNIX's own tests/ through mfn-sdk 0.8.9 against SAND_URL (default http://127.0.0.1:8080)"
	@echo "make clean     make down, then remove the state dir ($(SAND_HOME)) and build outputs"
	@echo "make cluster HOSTS=3   SAND on hosts h1..hN of this machine (network namespaces), nginx on :8080"
	@echo "make cluster-status | make cluster-kill HOST=h2 | make cluster-start HOST=h2 | make cluster-down"
	@echo "make cluster-backup [DIR=...] | make cluster-restore DIR=... | make cluster-upgrade (rolling, onto this build)"
	@echo "make cluster-rotate-admin-key [STEP=finish]   a new admin key; the old one works too until STEP=finish"
	@echo "make test-cluster      the fault tests: a cluster of their own, hosts killed and cut (tests/cluster/)"

install:
	@deploy/install.sh

up:
	@deploy/up.sh

down:
	@deploy/down.sh

status:
	@deploy/status.sh

cluster: install
	@deploy/cluster.sh up $(HOSTS)

cluster-status:
	@deploy/cluster.sh status

cluster-kill:
	@deploy/cluster.sh kill $(HOST)

cluster-start:
	@deploy/cluster.sh start $(HOST)

cluster-down:
	@deploy/cluster.sh down

# Backups of the cluster state and the global data layer, on every Cassandra node (docs/operations.md "Backups");
# DIR defaults to $SAND_HOME/cluster/backups/<UTC time>.
cluster-backup:
	@deploy/cluster.sh backup $(DIR)

cluster-restore:
	@deploy/cluster.sh restore $(DIR)

cluster-upgrade: install
	@deploy/cluster.sh upgrade

cluster-rotate-admin-key:
	@deploy/cluster.sh rotate-admin-key $(STEP)

# Every linter, over the whole tree; each runs even when one before it failed, and make lint fails if any did
# (README "make lint"). The Java formatter's check runs offline: deploy/install.sh fetched it.
lint: install
	@rc=0; \
	echo "==> ruff check"; $(VENV)/bin/ruff check . || rc=1; \
	echo "==> ruff format --check"; $(VENV)/bin/ruff format --check . || rc=1; \
	echo "==> mypy (strict: grainworker, sandclient; default: sandemu; pyproject.toml [tool.mypy])"; \
	$(VENV)/bin/mypy || rc=1; \
	echo "==> shellcheck"; shellcheck $$(git ls-files '*.sh') .ci/run || rc=1; \
	echo "==> mvn spotless:check (Java formatting and imports)"; $(MVN) -o spotless:check || rc=1; \
	echo "==> promtool check rules, check config (deploy/prometheus)"; deploy/prometheus/check.sh || rc=1; \
	exit $$rc

# What the formatters of make lint would change, changed: Python (ruff format, then ruff check's fixes, e.g. the
# imports ruff format leaves unsorted) and Java (Spotless).
format: install
	@$(VENV)/bin/ruff format .
	@$(VENV)/bin/ruff check --fix --exit-zero .
	@$(MVN) -o spotless:apply

test-unit: install
	@echo "==> Java unit tests"
	@$(MVN) test
	@echo "==> Console unit tests (node --test: graphs, errors on nodes, the waterfall's rows)"
	@npm --prefix console test --silent
	@echo "==> Python unit tests"
	@examples/image-pipeline/fetch.sh
	@$(PY) -m pytest -q -m "not e2e"

test-e2e: up
	@echo "==> Java integration tests (against the running system)"
	@$(MVN) -Dsand.it=true test
	@echo "==> Python end-to-end tests (against the running system)"
	@$(PY) -m pytest -q -m "e2e and not cluster"

# Everything: the single-host system's tests, then (that system stopped: the cluster needs the machine's CPUs) the
# fault tests on a 3-host cluster of their own.
test: up lint
	@echo "==> Java tests, unit and integration (against the running system)"
	@$(MVN) -Dsand.it=true test
	@echo "==> Console unit tests (node --test: graphs, errors on nodes, the waterfall's rows)"
	@npm --prefix console test --silent
	@echo "==> Python tests, unit and end-to-end (against the running system)"
	@examples/image-pipeline/fetch.sh
	@$(PY) -m pytest -q -m "not cluster"
	@$(MAKE) --no-print-directory down
	@$(MAKE) --no-print-directory test-cluster

# The fault tests start a cluster of their own (its own namespaces, subnet and nginx port) and stop it.
test-cluster: install
	@echo "==> Fault tests on a 3-host cluster (kill -9 of hosts, agents, a broker, a frontend, a sandbox; a partition; Cassandra stopped)"
	@$(PY) -m pytest -q -s -m cluster tests/cluster

demo: up
	@deploy/demo.sh

bench: up
	@examples/image-pipeline/fetch.sh
	@$(PY) benchmarks/run_all.py $(BENCH)

# KNIX's published test suite against a running SAND (docs/knix.md "KNIX's test suite"); KNIX_REPO names a clone.
SAND_URL ?= http://127.0.0.1:8080
knix-suite:
	@$(PY) benchmarks/knix_suite.py --url $(SAND_URL) $(if $(KNIX_REPO),--repo $(KNIX_REPO))

clean: down
	rm -rf "$(SAND_HOME)" grainworker/_gen target */target console/dist

distclean: clean
	rm -rf "$(VENV)" console/node_modules
	-docker image ls --format '{{.Repository}}:{{.Tag}}' | grep -E '^sand-sandbox(-base)?:' | xargs -r docker image rm
