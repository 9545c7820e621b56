"""The policy registry: names, import paths for users' own policies, and parameter errors."""

from __future__ import annotations

import pytest

from ns3_hpsched.errors import ConfigError
from ns3_hpsched.sched import POLICIES, make_policy
from ns3_hpsched.sched.fair import Fair

from .sched_views import oracle

NAMES = ["fair", "fifo-lm", "varys", "aalo", "sincronia", "grouper", "beamer"]


def test_registry_holds_the_seven_compared_policies():
    """Exactly the seven policies of the comparison are registered, each under its own name."""
    assert sorted(POLICIES) == sorted(NAMES)
    assert all(cls.name == name for name, cls in POLICIES.items())


@pytest.mark.parametrize("name", NAMES)
def test_every_policy_describes_itself_and_decides_on_the_oracle(name):
    """describe() gives the name and parameters; decide() covers every active flow exactly once."""
    policy = make_policy(name, theta_bytes=1) if name == "fifo-lm" else make_policy(name)
    assert policy.describe()["name"] == name
    assert isinstance(policy.describe()["params"], dict)
    flows = sorted(f for group in policy.decide(oracle()).order for f in group)
    assert flows == [1, 2, 3, 4]


def test_unknown_name_lists_the_valid_ones():
    """An unknown name names the field and lists every built-in policy."""
    with pytest.raises(ConfigError) as err:
        make_policy("sjf")
    assert err.value.field == "scheduler.name"
    assert all(name in err.value.fix for name in NAMES)


def test_import_path_builds_a_users_policy():
    """'package.module:Class' imports any Policy subclass."""
    assert isinstance(make_policy("ns3_hpsched.sched.fair:Fair"), Fair)


@pytest.mark.parametrize("path", ["no_such_module_xyz:Policy", "ns3_hpsched.sched.fair:Nope",
                                  "ns3_hpsched.errors:ConfigError", ":Fair"])
def test_bad_import_paths_are_config_errors(path):
    """A missing module or class, or a class that is not a Policy, is a ConfigError on scheduler.name."""
    with pytest.raises(ConfigError) as err:
        make_policy(path)
    assert err.value.field == "scheduler.name"


def test_unknown_parameter_names_the_field_and_the_accepted_ones():
    """A parameter the policy does not take is reported as scheduler.params.<name>."""
    with pytest.raises(ConfigError) as err:
        make_policy("aalo", queues=4)
    assert err.value.field == "scheduler.params.queues"
    assert "n_queues" in err.value.fix


@pytest.mark.parametrize("name, params, field", [
    ("aalo", {"n_queues": 0}, "n_queues"),
    ("aalo", {"multiplier": 1}, "multiplier"),
    ("aalo", {"first_threshold_bytes": 0}, "first_threshold_bytes"),
    ("aalo", {"tie_break": "random"}, "tie_break"),
    ("fifo-lm", {"theta_bytes": -1}, "theta_bytes"),
    ("fifo-lm", {"theta_percentile": 0}, "theta_percentile"),
    ("fifo-lm", {"theta_percentile": 101}, "theta_percentile"),
    ("varys", {"madd": "yes"}, "madd"),
    ("sincronia", {"mode": "lazy"}, "mode"),
    ("sincronia", {"epoch_s": 0}, "epoch_s"),
    ("sincronia", {"epoch_reset": 0}, "epoch_reset"),
    ("beamer", {"tie_break": None}, "tie_break"),
])
def test_bad_parameter_values_name_their_field(name, params, field):
    """Each invalid value raises a ConfigError naming scheduler.params.<name> with a fix."""
    with pytest.raises(ConfigError) as err:
        make_policy(name, **params)
    assert err.value.field == f"scheduler.params.{field}"
    assert err.value.fix


def test_fifo_lm_without_theta_needs_setup():
    """FIFO-LM with a learnt threshold refuses to decide before setup(workload)."""
    with pytest.raises(ConfigError, match="setup"):
        make_policy("fifo-lm").decide(oracle())



class Tunable(POLICIES["fair"]):
    """A user's policy taking open-ended keyword parameters."""

    name = "tunable"

    def __init__(self, **params):
        self.params = params


def test_policies_with_open_keyword_parameters_receive_them_all():
    """A plug-in whose __init__ takes **params gets every parameter instead of a ConfigError."""
    policy = make_policy(f"{__name__}:Tunable", alpha=1, beta="x")
    assert policy.params == {"alpha": 1, "beta": "x"}
