#!/bin/bash
# Megatron-Bridge: Qwen3-30B-A3B pre-training on 4 nodes of 8 GPUs, 2 pipeline stages, 8-way expert
# parallelism, FP8 with current scaling, the distributed optimizer. Written for vTrain's import examples:
# `vtrain import examples/import/qwen3-30b-a3b-bridge.sh`.
torchrun --nproc-per-node 8 --nnodes 4 scripts/training/run_recipe.py \
    --recipe qwen3_30b_a3b_pretrain_config \
    --dataset mock \
    model.tensor_model_parallel_size=1 \
    model.pipeline_model_parallel_size=2 \
    model.expert_model_parallel_size=8 \
    model.expert_tensor_parallel_size=1 \
    model.sequence_parallel=false \
    model.seq_length=4096 \
    dataset.sequence_length=4096 \
    model.recompute_granularity=selective \
    "model.recompute_modules=[core_attn,moe_act]" \
    model.moe_token_dispatcher_type=alltoall \
    train.micro_batch_size=1 \
    train.global_batch_size=512 \
    train.train_iters=100000 \
    mixed_precision=bf16_with_fp8_current_scaling_mixed \
    ddp.use_distributed_optimizer=true \
    optimizer.use_distributed_optimizer=true \
    ddp.overlap_grad_reduce=true \
    ddp.overlap_param_gather=true \
    optimizer.lr=3e-4 \
    checkpoint.save=/checkpoints/qwen3-30b-a3b \
    logger.log_interval=10
