// Package oracle holds differential tests that compare openkeel-magnum's
// re-implementations with the Python reference libraries.
//
// The tests need a Python with those libraries in OPENKEEL_TEST_PYTHON:
//
//	eval "$(scripts/ci/python-oracle.sh)"
//	go test ./test/oracle/
//
// Without it they skip, except when CI=true, where they fail. policy_test.go
// compares internal/policy with oslo.policy 6.0.1 (testdata/policy_oracle.py
// evaluates the cases on the Python side).
package oracle
