"""Evaluates policy cases with oslo.policy for the differential test of the
policy module (src/policy/oracle_tests.rs).

Usage: python policy_oracle.py cases.json results.json

cases.json: {"defaults": [...], "configs": [...], "cases": [...]}, written by
the Rust test. Each config builds one oslo.policy Enforcer (the policy file,
enforce_new_defaults, and the registered defaults with or without their
scope types). Each case (a rule name, or an ad-hoc check string parsed with oslo's parser)
is evaluated with Enforcer.enforce(do_raise=True),
which is what Magnum's policy.enforce calls, and classified as:

  allow   enforce returned a true value
  deny    PolicyNotAuthorized
  scope   InvalidScope
  error   any other exception (Magnum would answer 500)
"""

import json
import logging
import sys
import warnings

from oslo_config import cfg
from oslo_policy import _parser
from oslo_policy import policy


def build_enforcer(defaults, config):
    conf = cfg.ConfigOpts()
    conf([], project="openkeel-oracle", default_config_files=[], default_config_dirs=[])
    enforcer = policy.Enforcer(conf, policy_file=config.get("policy_file") or "does-not-exist.yaml")
    conf.set_override("enforce_new_defaults", config["enforce_new_defaults"], group="oslo_policy")
    conf.set_override("policy_dirs", config.get("policy_dirs") or [], group="oslo_policy")
    rules = []
    for d in defaults:
        deprecated = None
        if d.get("deprecated_name"):
            deprecated = policy.DeprecatedRule(
                name=d["deprecated_name"],
                check_str=d["deprecated_check_string"],
                deprecated_reason="oracle",
                deprecated_since="oracle",
            )
        scope = d.get("scope_types") if config["enforce_scope"] else None
        rules.append(
            policy.RuleDefault(
                name=d["name"],
                check_str=d["check_string"],
                deprecated_rule=deprecated,
                scope_types=scope or None,
            )
        )
    enforcer.register_defaults(rules)
    enforcer.load_rules()
    # The files do not change during the run: skip oslo's per-call checks of
    # their modification times.
    enforcer.use_conf = False
    return enforcer


def outcome(enforcer, case):
    rule = case.get("rule", "")
    if "check" in case:
        # An ad-hoc check string: oslo parses it into a check object, which
        # enforce evaluates without any scope.
        rule = _parser.parse_rule(case["check"])
    try:
        ok = enforcer.enforce(rule, case["target"], case["creds"], do_raise=True)
    except policy.InvalidScope:
        return "scope"
    except policy.PolicyNotAuthorized:
        return "deny"
    except RecursionError:
        return "error"
    except Exception:  # noqa: BLE001 - any exception is an outcome
        return "error"
    return "allow" if ok else "deny"


def main():
    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")
    sys.setrecursionlimit(1000)
    with open(sys.argv[1]) as f:
        data = json.load(f)
    enforcers = [build_enforcer(data["defaults"], c) for c in data["configs"]]
    results = [outcome(enforcers[c["config"]], c) for c in data["cases"]]
    with open(sys.argv[2], "w") as f:
        json.dump(results, f)


if __name__ == "__main__":
    main()
