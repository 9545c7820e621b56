"""Model profiles: how many bytes a job synchronises and how long it computes per iteration.

A data-parallel job exchanges its full gradient every iteration: ``parameters`` fp32
values, 4 bytes each (no compression, no mixed-precision all-reduce). The compute time
is one forward+backward pass of one worker's batch on the named GPU.

Sources of the compute times (per worker, FP32, one NVIDIA V100):

* ResNet-50 v1.5: 367 img/s at batch 112 on 1x V100 16GB (NVIDIA DeepLearningExamples,
  ``PyTorch/Classification/ConvNets/resnet50v1.5/README.md``, "Training performance:
  NVIDIA DGX-1 16GB"), so 112 / 367 = 0.305 s per iteration. A measured value.
* VGG-16 and Inception-v3: *estimates*. Public ``tf_cnn_benchmarks`` runs on one V100
  in FP32 at batch 64 (e.g. Lambda Labs' GPU benchmark posts, 2019) report roughly
  230-250 img/s for VGG-16 and 260-280 img/s for Inception-v3; we use 245 and 270 img/s.
  Not checked against a primary table here.
* BERT-base and GPT-2 small: *estimates* from the usual 6 * parameters * tokens FLOPs per
  training step (Kaplan et al. 2020, "Scaling laws for neural language models", sec. 2.1)
  at 40 % of the V100's 15.7 TFLOPS FP32 peak (NVIDIA V100 datasheet). Batches: BERT-base
  32 sequences of 128 tokens (its phase-1 pre-training length, Devlin et al. 2019),
  GPT-2 small 8 sequences of 1024 tokens (its context, Radford et al. 2019).

Parameter counts: ResNet-50 25,557,032 and VGG-16 138,357,544 and Inception-v3
27,161,264 (torchvision model summaries, with the classifier and the Inception-v3 aux
head); BERT-base 109,482,240 (``bert-base-uncased``, Hugging Face ``BertModel``) and GPT-2
small 124,439,808 (Hugging Face ``GPT2Model``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import validate

__all__ = ["ModelProfile", "MODELS", "get_model", "BYTES_PER_PARAMETER"]

#: fp32 gradients: 4 bytes per parameter.
BYTES_PER_PARAMETER = 4
#: NVIDIA V100 (SXM2) peak FP32 throughput, FLOP/s (V100 datasheet).
V100_FP32_PEAK_FLOPS = 15.7e12
#: Fraction of peak a well-tuned transformer training step reaches (an estimate).
TRANSFORMER_UTILISATION = 0.40


@dataclass(frozen=True)
class ModelProfile:
    """What one data-parallel worker of a model does per iteration.

    Parameters
    ----------
    name:
        Registry key, e.g. ``"resnet50"``.
    parameters:
        Number of trainable parameters.
    compute_s:
        Seconds of forward+backward for one worker's ``batch`` on ``gpu``.
    gpu:
        The GPU the compute time was measured or estimated for.
    batch:
        Per-worker batch size (images or sequences) behind ``compute_s``.
    source:
        Where ``compute_s`` comes from, and whether it is measured or estimated.
    """

    name: str
    parameters: int
    compute_s: float
    gpu: str
    batch: int
    source: str

    @property
    def gradient_bytes(self) -> int:
        """Bytes of one full fp32 gradient (what every iteration synchronises)."""
        return BYTES_PER_PARAMETER * self.parameters


def _transformer_step_s(parameters: int, tokens: int) -> float:
    """Estimated seconds of one training step: 6*N*tokens FLOPs at 40 % of V100 peak."""
    return 6 * parameters * tokens / (TRANSFORMER_UTILISATION * V100_FP32_PEAK_FLOPS)


_TRANSFORMER_SOURCE = ("estimate: 6*parameters*tokens FLOPs (Kaplan et al. 2020) at 40% of "
                       "the V100's 15.7 TFLOPS FP32 peak")

#: Model profiles by name.
MODELS: dict[str, ModelProfile] = {m.name: m for m in (
    ModelProfile("resnet50", 25_557_032, 112 / 367, "V100-16GB", 112,
                 "measured: 367 img/s FP32, NVIDIA DeepLearningExamples resnet50v1.5 README"),
    ModelProfile("vgg16", 138_357_544, 64 / 245, "V100", 64,
                 "estimate: ~245 img/s FP32, public tf_cnn_benchmarks results (e.g. Lambda Labs)"),
    ModelProfile("inception_v3", 27_161_264, 64 / 270, "V100", 64,
                 "estimate: ~270 img/s FP32, public tf_cnn_benchmarks results (e.g. Lambda Labs)"),
    ModelProfile("bert_base", 109_482_240, _transformer_step_s(109_482_240, 32 * 128), "V100", 32,
                 _TRANSFORMER_SOURCE + "; 32 sequences of 128 tokens"),
    ModelProfile("gpt2_small", 124_439_808, _transformer_step_s(124_439_808, 8 * 1024), "V100", 8,
                 _TRANSFORMER_SOURCE + "; 8 sequences of 1024 tokens"),
)}


def get_model(name: str, field: str = "workload.model") -> ModelProfile:
    """The profile called ``name``; a :class:`ConfigError` naming ``field`` if unknown."""
    return MODELS[validate.choice(field, name, MODELS, "model")]
