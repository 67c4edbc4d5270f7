// Package conformance replays the HTTP exchanges recorded from Magnum's own
// API unit tests (spec/exchanges/exchanges.json) against the openkeel-magnum
// API and compares status, the headers that matter and the bodies, as
// spec/exchanges/README.md ("How to compare") describes.
//
// The package itself (exchanges.go) holds the corpus reader (Load, Record)
// and the comparison (Compare); other packages' replay tests use them. The
// replay proper is TestExchanges:
//
//	go test ./test/conformance                      # the published corpus
//	go test ./test/conformance -run TestExchanges -v -args -report /tmp/report.txt
//	OKM_EXCHANGES=/path/to/other.json go test ./test/conformance
//	go test ./test/conformance -args -exchanges /path/to/other.json
//
// The corpus is -exchanges, else $OKM_EXCHANGES, else
// ${OKM_SPEC_DIR:-../shared/spec}/exchanges/exchanges.json relative to the
// repository root. Any file in the same record format works; when the file
// is missing the test skips (fails under CI=true). -report writes every
// mismatch, the pass count per Magnum test module and the summary line
// "N passed, M failed (...)".
//
// Each record (except app "wsme-test-app", a toy application of Magnum's
// type tests) is served by a new api.New handler built as in the recording
// environment (README "The test environment"):
//
//   - database: a fresh in-memory SQLite database migrated with
//     (*db.DB).Upgrade, then db_before inserted table by table with the
//     recorded ids and columns: JSON columns in Python's json.dumps format
//     and recorded key order (None as "{}" / "[]", as Magnum's object layer
//     stores it), booleans, naive UTC datetimes in SQLAlchemy's text form;
//   - configuration: conf_overrides api/max_limit, quotas/
//     max_clusters_per_project, cluster_template/kubernetes_allowed_
//     network_drivers and kubernetes_default_network_driver are mapped onto
//     api.Options and conductor.Settings; Magnum's defaults otherwise
//     (max_clusters_per_project 20, service_down_time 180 s). [DEFAULT]
//     host = fake-mini has no counterpart the API shows;
//   - policy: Magnum's in-code defaults through the real policy engine;
//     policy_overrides are written to a policy file in the test's
//     temporary directory and, as Magnum's policy fixture (set_rules with
//     overwrite) does, replace the whole rule set: other rules are
//     undefined and deny. A mocked policy.enforce allows every raising
//     check, and answers its return value to the one non-raising check
//     (clustertemplate:publish);
//   - caller: X-Project-Id / X-User-Id / X-Roles (roles split on ",", a
//     missing header is [""]), is_admin forced to the recorded
//     context.is_admin (a MagicMock context counts as admin); a context the
//     test injected replaces project, user and roles;
//   - paste:* records: a Keystone-like authenticator that refuses the
//     token-less requests, with the recorded paste file's public routes;
//   - conductor: a real conductor.Conductor over that database, with a fake
//     OpenStack that answers as the record's attr_validator mocks (image
//     os_distro "ubuntu", name "mock_name", magnum_driver when the mock
//     returns one; the exception a mock raises, with its message, from the
//     lookup it stands for; unmocked Glance calls fail as in the unit tests)
//     and a driver registry that has no driver unless the test mocked
//     Driver.get_driver (then a permissive driver claims every cluster type
//     and its operations succeed without changing anything). Template
//     requests get no registry unless get_default_driver is mocked, so that
//     the template keeps driver null as with the mocked get_driver. The
//     RPC stand-ins of the tests are replaced by our conductor's own work;
//     where that makes the answer differ, the record is a known failure.
//
// Request bodies are sent as recorded, except that when the recorded
// answer quotes the whole body (a WSME "Value: '{...}'" error), its keys are
// sent in the quoted order, the order the test sent (the corpus stores
// bodies with sorted keys).
//
// Every record must pass except those listed in knownFailures
// (known_failures_test.go), each with a one-line reason; FINDINGS.md has
// the diagnosis. A listed record that passes, or a listed id missing from
// the corpus, fails the test (for the published corpus only).
package conformance
