"""Scheduling policies: from a :class:`View` of the cluster to a :class:`Decision`.

One module per policy, the shared time-unit demands (:mod:`.demand`), the mapping of an
order onto K physical priority classes (:mod:`.classes`), the flow-level allocator that
turns classes into rates (:mod:`.allocator`) and a registry by name (:mod:`.registry`).
Policies never touch a backend; the only memory any keeps is Aalo's queue entry times and
Sincronia's epoch order, both cleared by ``setup``. Grouper-R and Beamer-R are this
project's reconstructions of Grouper and Beamer, whose algorithms are not public.
"""

from .aalo import Aalo
from .allocator import allocate, max_min_allocate
from .base import Policy
from .beamer import BeamerR
from .classes import class_per_coflow, flow_ids, order_to_classes
from .demand import bottleneck_s, coflow_demand, demand_matrix, port_bytes
from .fair import Fair
from .fifo_lm import FifoLM
from .grouper import GrouperR, stage_demands, stage_ranks
from .registry import POLICIES, make_policy, policy_class
from .sincronia import Sincronia, bssi
from .ties import TIE_BREAKS
from .varys import Varys, madd_rates
from .view import CoflowState, Decision, FlowState, JobState, StageState, View

__all__ = [
    "Policy", "View", "Decision", "FlowState", "CoflowState", "JobState", "StageState",
    "POLICIES", "make_policy", "policy_class", "order_to_classes", "flow_ids", "class_per_coflow",
    "Fair", "FifoLM", "Varys", "Aalo", "Sincronia", "GrouperR", "BeamerR",
    "bssi", "madd_rates", "stage_demands", "stage_ranks",
    "port_bytes", "coflow_demand", "bottleneck_s", "demand_matrix", "TIE_BREAKS",
    "max_min_allocate", "allocate",
]
