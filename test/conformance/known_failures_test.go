package conformance

// knownFailures are the records of the published corpus that do not pass,
// each with a one-line reason (docs/compatibility.md names them). Every
// other record must pass; a listed record that passes is an error, so the
// list stays exact. FINDINGS.md has the diagnosis of each.
var knownFailures = map[string]string{}
